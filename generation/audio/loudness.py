"""Delivery loudness: targets, two-pass ffmpeg `loudnorm`, and measurement with ffmpeg's `ebur128`.

Normalising measures first (`loudnorm` with `print_format=json`), then applies with the `measured_*` values and
`linear=true`, so the whole mix moves by one gain when the true-peak ceiling allows it; when it does not, loudnorm
limits dynamically, and the result says which (`mode`). What is reported is measured afterwards by `ebur128`
(integrated LUFS, true peak, loudness range), never the target echoed back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from generation.ffmpeg import run_ffmpeg
from generation.ffmpeg_input import input_args


@dataclass(frozen=True)
class Target:
    name: str
    lufs: float  # integrated
    true_peak: float  # dBTP ceiling
    lra: float = 20.0  # loudnorm's loudness-range target: wide, so a mix is not compressed to meet it


TARGETS = {
    "web": Target("web streaming", -14.0, -1.0),
    "ebu": Target("EBU R128", -23.0, -1.0),
}
# loudnorm's own true-peak detector and ebur128's differ by a few hundredths of a dB: aim a little under the
# ceiling so the figure ebur128 reports keeps it.
TP_MARGIN = 1.0


@dataclass(frozen=True)
class Loudness:
    """What ebur128 measured."""

    integrated_lufs: float
    true_peak_dbtp: float
    lra_lu: float


def measure(path: Path, cancel=None) -> Loudness:
    """Integrated loudness, true peak and loudness range of an audio (or video) file, by ffmpeg's ebur128."""
    err = run_ffmpeg(
        ["-nostats", *input_args(path), "-map", "0:a:0", "-af", "ebur128=peak=true", "-f", "null", "-"], cancel=cancel
    )
    summary = err[err.rfind("Summary:") :]
    if not summary:
        raise RuntimeError(f"ebur128 printed no summary for {Path(path).name}")
    i = re.search(r"I:\s*(-?[\d.]+|-inf) LUFS", summary)
    lra = re.search(r"LRA:\s*(-?[\d.]+) LU", summary)
    peak = re.search(r"True peak:\s*Peak:\s*(-?[\d.]+|-inf) dBFS", summary)
    if i is None or lra is None or peak is None:
        raise RuntimeError(f"ebur128's summary for {Path(path).name} lacks I, LRA or true peak")
    return Loudness(float(i[1]), float(peak[1]), float(lra[1]))


def loudnorm_filter(target: Target, measured: dict | None = None) -> str:
    """The loudnorm filter for pass 1 (`measured` None: print the measurement) or pass 2 (apply it)."""
    base = f"loudnorm=I={target.lufs}:TP={target.true_peak - TP_MARGIN}:LRA={target.lra}"
    if measured is None:
        return base + ":print_format=json"
    return (
        base + f":measured_I={measured['input_i']}:measured_TP={measured['input_tp']}"
        f":measured_LRA={measured['input_lra']}:measured_thresh={measured['input_thresh']}"
        f":offset={measured['target_offset']}:linear=true:print_format=json"
    )


def loudnorm_json(stderr: str) -> dict:
    """The JSON block loudnorm prints at the end of a run."""
    start = stderr.rfind("{")
    end = stderr.rfind("}")
    if start < 0 or end < start:
        raise RuntimeError("loudnorm printed no measurement")
    return json.loads(stderr[start : end + 1])


# ------------------------------------------------------------------ BS.1770 from block energies
# A film mixed in parts is measured from each part's 100-ms K-weighted mean squares (`listen.sub_blocks`): BS.1770
# integrates over 400-ms blocks on a 100-ms hop, so parts that start on that grid concatenate into exactly the
# film's blocks, and a gain g multiplies every mean square by g², without reading the audio again.
LRA_WINDOW = 3.0  # s: EBU Tech 3342's short-term loudness
LRA_RELATIVE_GATE = -20.0  # LU
OVERSAMPLE = 4  # true peak: BS.1770-4 Annex 2's 4× oversampling (48 kHz → 192 kHz)


def integrated_of(z) -> float:
    """Integrated loudness (LUFS, -inf when silent) of 100-ms sub-block mean squares `z`."""
    from .listen import gated_loudness

    loud = gated_loudness(z)
    return float("-inf") if loud is None else loud


def lra_of(z) -> float:
    """Loudness range (LU, EBU Tech 3342) of 100-ms sub-block mean squares: 3-s short-term blocks on the 100-ms
    hop, gated at -70 LUFS and 20 LU under their mean, the 10th to 95th percentile."""
    import numpy as np

    from .listen import ABSOLUTE_GATE, STEP

    per = round(LRA_WINDOW / STEP)
    z = np.asarray(z, np.float64)
    if len(z) < per:
        return 0.0
    blocks = np.convolve(z, np.ones(per) / per, mode="valid")
    with np.errstate(divide="ignore"):
        levels = -0.691 + 10 * np.log10(blocks)
    kept = blocks[levels > ABSOLUTE_GATE]
    if len(kept) == 0:
        return 0.0
    gate = -0.691 + 10 * np.log10(kept.mean()) + LRA_RELATIVE_GATE
    chosen = levels[levels > max(ABSOLUTE_GATE, gate)]
    low, high = np.percentile(chosen, [10, 95])
    return round(float(high - low), 2)


@lru_cache(maxsize=1)
def _interpolator():
    """A 48-tap windowed-sinc interpolation filter for 4× oversampling, as four 12-tap phases (the shape of
    BS.1770-4 Annex 2's)."""
    import numpy as np
    from scipy.signal import firwin

    kaiser: Any = ("kaiser", 8.0)  # firwin takes a (name, parameter) window; its stub says str
    h = np.asarray(firwin(12 * OVERSAMPLE, 1 / OVERSAMPLE, window=kaiser), np.float32) * OVERSAMPLE
    return [h[k::OVERSAMPLE] for k in range(OVERSAMPLE)], np


def oversampled(samples):
    """Per sample, the largest |value| of mono `samples` from it to the next at 4× the rate: the sample itself and the
    three points the interpolator puts after it (the max is kept phase by phase, never all four phases at once)."""
    phases, np = _interpolator()
    x = np.asarray(samples, np.float32)
    delay = len(phases[0]) // 2
    padded = np.concatenate([x, np.zeros(delay, np.float32)])
    out = np.abs(x)
    for ph in phases:
        np.maximum(out, np.abs(np.convolve(padded, ph)[delay : delay + len(x)]), out=out)
    return out


def true_peak(samples) -> float:
    """The true peak (linear) of mono samples: the largest |sample| oversampled 4×."""
    if len(samples) == 0:
        return 0.0
    return float(oversampled(samples).max())


def db(linear: float) -> float:
    import math

    return 20 * math.log10(linear) if linear > 0 else float("-inf")
