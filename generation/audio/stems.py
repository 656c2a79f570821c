"""Hearing some stems only: the film with its sound replaced by the sum of the chosen stems, at the level they have
in the film (the screening room's solo and mute).

Made on the server, not in the page with Web Audio: the player keeps one synchronised file (seeking and the
timeline strip work as for the film), and what is heard is a file a test can measure. Web Audio would have decoded
three 10-minute stems in the page (about 115 MB of float samples each) and kept them in step with the video by
hand."""

from __future__ import annotations

from pathlib import Path

from generation.ffmpeg import run_ffmpeg

from .loudness import measure
from .mix import STEMS


def with_stems(
    film: Path, stems: dict[str, Path], chosen: list[str], mix_lufs: float, ceiling: float, out: Path
) -> Path:
    """`film` with its sound replaced by the sum of the `chosen` stems (WAVs as long as the film), written to `out`
    (the picture stream-copied, the sound AAC). The sum gets the gain the mix's normalisation gave the sum of all
    three stems (measured now: `mix_lufs`, the mix's loudness, minus the all-stems sum's), so a soloed stem plays at
    the level it has in the film; a last limiter keeps its peaks under `ceiling` (dBFS, the mix's)."""
    present = [n for n in STEMS if n in stems]
    total = out.with_name("all-stems.wav")
    inputs = [a for n in present for a in ("-i", str(stems[n]))]
    run_ffmpeg(
        ["-nostats", *inputs, "-filter_complex", f"amix=inputs={len(present)}:normalize=0:duration=longest[a]",
         "-map", "[a]", "-c:a", "pcm_s16le", "-y", str(total)]
    )  # fmt: skip
    whole = measure(total).integrated_lufs
    total.unlink()
    gain = 0.0 if whole == float("-inf") else mix_lufs - whole
    limit = 10 ** (ceiling / 20)
    ins = "".join(f"[{i + 1}:a]" for i in range(len(chosen)))
    graph = (
        f"{ins}amix=inputs={len(chosen)}:normalize=0:duration=longest,volume={gain:.2f}dB,"
        f"alimiter=limit={limit:.4f}:attack=1:release=50:level=false[a]"
    )
    run_ffmpeg(
        ["-nostats", "-i", str(film), *[a for n in chosen for a in ("-i", str(stems[n]))], "-filter_complex", graph,
         "-map", "0:v:0", "-map", "[a]", "-c:v", "copy", "-c:a", "aac", "-b:a", "160k", "-ar", "48000",
         "-movflags", "+faststart", "-y", str(out)]
    )  # fmt: skip
    return out
