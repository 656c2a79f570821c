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
from pathlib import Path

from generation.video_io import run_ffmpeg


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
        ["-nostats", "-i", str(path), "-map", "0:a:0", "-af", "ebur128=peak=true", "-f", "null", "-"], cancel=cancel
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
