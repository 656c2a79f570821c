"""The loudness measurement (`generation.audio.listen.sub_blocks`, BS.1770's K-weighting) of a film whose sound stops
in digital silence between lines, with the filter's subnormal guard (`SUBNORMAL_GUARD`, the product's) against the
same filter without it, side by side in one run (medians of `--repeat` interleaved runs), and the figures of both.

The film: `--minutes` of stereo at 48 kHz, a 2-s spoken-level burst every 10 s and digital silence between (an
animatic's lines with no score or ambience under them). Without the guard the recursive filter's state decays into
subnormal numbers in each silence, where every operation is dozens of times slower.

python -m bench.loudness_silence [--minutes 10] [--repeat 3] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from generation.audio import listen
from generation.audio.pcm import RATE


def film(minutes: float) -> np.ndarray:
    x = np.zeros((round(minutes * 60 * RATE), 2), np.float32)
    rng = np.random.default_rng(0)
    for start in range(0, round(minutes * 60), 10):
        a = start * RATE
        x[a : a + 2 * RATE] = rng.standard_normal((len(x[a : a + 2 * RATE]), 2)) * 0.1
    return x


def timed(x: np.ndarray, guard: float) -> tuple[float, float | None]:
    kept = listen.SUBNORMAL_GUARD
    listen.SUBNORMAL_GUARD = guard
    try:
        t = time.process_time()
        lufs = listen.integrated(x)
        return time.process_time() - t, lufs
    finally:
        listen.SUBNORMAL_GUARD = kept


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 minute of film")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    minutes = 1.0 if args.quick else args.minutes
    x = film(minutes)
    guarded, plain, figures = [], [], set()
    for _ in range(args.repeat):
        for guard, into in ((listen.SUBNORMAL_GUARD, guarded), (0.0, plain)):
            seconds, lufs = timed(x, guard)
            into.append(seconds)
            figures.add((guard != 0.0, lufs))
    result = {
        "minutes": minutes,
        "cpu_s_guarded": round(statistics.median(guarded), 3),
        "cpu_s_unguarded": round(statistics.median(plain), 3),
        "ratio_unguarded_vs_guarded": round(statistics.median(plain) / statistics.median(guarded), 1),
        "lufs": sorted(figures),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{minutes:g} min of stereo, a burst every 10 s: K-weighted blocks in {result['cpu_s_guarded']:.3f} s of "
            f"CPU with the guard, {result['cpu_s_unguarded']:.3f} s without "
            f"({result['ratio_unguarded_vs_guarded']}x); integrated loudness {sorted(figures)}"
        )
    return result


if __name__ == "__main__":
    main()
