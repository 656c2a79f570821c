"""What a shot's frames show, in a few words, computed offline: light, colours, movement, flashes, text-like marks.

For a critic model that cannot take images: it reads the storyboard plus these lines instead of the frames.
Measured, not seen: faces, objects and actions are beyond these measurements, and the lines never claim them.
"""

from __future__ import annotations

from agents.base import FilmView
from agents.offline.measure import Measurer, ShotStats, flashes_per_second


def describe_frames(film: FilmView, measurer: Measurer | None = None) -> dict[str, str]:
    """shot_id -> one line describing what its frames measurably show, for every shot in film order.

    Reads every frame of a shot's clip when `film.clips` has it, else the shot's sampled frames (and then says that
    flashes could not be measured). Pass the critic's `Measurer` to reuse clips it already measured."""
    stats = (measurer or Measurer()).film(film)
    rates = flashes_per_second(stats)
    return {s.shot_id: describe_shot(s, rates.get(s.shot_id)) for s in stats}


def describe_shot(s: ShotStats, flashes: float | None) -> str:
    light = (
        "very dark"
        if s.brightness < 0.15
        else "dark"
        if s.brightness < 0.3
        else "dim"
        if s.brightness < 0.42
        else "very bright"
        if s.brightness > 0.8
        else "bright"
        if s.brightness > 0.62
        else "mid-bright"
    )
    contrast = "low contrast" if s.contrast < 0.07 else "high contrast" if s.contrast > 0.22 else "moderate contrast"
    if s.frames < 2:
        move = "a single frame"
    elif s.motion < 0.002 and s.change < 0.03:
        move = "no visible movement"
    else:
        pace = "slight" if s.motion < 0.01 else "steady" if s.motion < 0.03 else "a lot of"
        dx, dy = s.drift
        way = (
            "the view drifts left"
            if dx < -0.08
            else "the view drifts right"
            if dx > 0.08
            else "the view drifts up"
            if dy < -0.08
            else "the view drifts down"
            if dy > 0.08
            else ""
        )
        move = f"{pace} movement" + (f" ({way})" if way else "")
    text = {
        "full": "mostly flat background with text-like marks (looks like a title card or text panel)",
        "bottom": "text-like marks along the bottom (a caption?)",
        "top": "text-like marks along the top",
        "": "",
    }[s.text_band]
    if not s.every_frame:
        flash = "flashes not measured (only sampled frames)"
    elif flashes is not None and flashes > 3:
        flash = f"FLASHING: {flashes:.0f} flashes a second"
    else:
        flash = "no flashing"
    seconds = f"{s.frames / s.fps:.1f} s" if s.every_frame and s.fps else f"{s.frames} sampled frames"
    parts = [f"{light} (luma {s.brightness:.2f}), {contrast}", "colours: " + ", ".join(s.colours), move, flash, text]
    return f"{seconds}: " + "; ".join(p for p in parts if p)
