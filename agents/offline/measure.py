"""What the frames of each shot measurably show: light, contrast, movement, general flashes between consecutive frames
at the clip's own frame rate, dominant colours, text-like marks. Every frame of a clip is decoded at low resolution
when the film view has the clip; otherwise only the sampled frames are read, and `every_frame` says so.

Measurements, not judgments: `critic.py` weighs them per persona, `describe.py` words them for a text-only model.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from agents.base import FilmView

W, H = 128, 72  # decoding size: enough for light, movement and text-like marks, small enough to read every frame
FLASH_STEP = 0.10  # WCAG 2.3.1: a change of relative luminance of 10% of the maximum ...
FLASH_DARK = 0.80  # ... where the darker state is below 0.80 ...
FLASH_AREA = 0.25  # ... over a large part of the screen (a quarter of the frame here)


@dataclass(frozen=True)
class ShotStats:
    shot_id: str
    fps: float
    frames: int
    every_frame: bool  # False: only the sampled frames were read (no clip): flashes between frames are unknown
    brightness: float  # mean luma 0..1
    contrast: float  # mean within-frame std of luma
    motion: float  # mean absolute luma change between consecutive frames read
    still: float  # share of consecutive pairs with no visible change
    change: float  # share of the picture that differs between the first and last frame (0: nothing moved)
    transitions: tuple[int, ...]  # per consecutive pair: +1 / -1 a general-flash change of luminance, 0 none
    colours: tuple[str, ...]  # dominant colour names, most area first
    text_band: str  # "", "bottom", "top", "full": where text-like marks sit
    drift: tuple[float, float]  # the picture's shift from first to last frame, as fractions of width and height
    first: np.ndarray  # relative luminance of the first and last frames (for flashes across a cut)
    last: np.ndarray
    thumb: np.ndarray  # 16x9 luma of the middle frame, zero mean and unit norm (for look-alike shots)
    hist_first: np.ndarray
    hist_last: np.ndarray


class Measurer:
    """Measures films, remembering each clip's statistics (clips are content-addressed: a path names its pixels)."""

    def __init__(self, capacity: int = 512) -> None:
        self._cache: OrderedDict[tuple, ShotStats] = OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity

    def film(self, film: FilmView) -> list[ShotStats]:
        """Statistics per shot in film order. Raises ValueError when a shot has neither a clip nor sampled frames."""
        out = []
        for shot in film.storyboard.shots():
            clip = film.clips.get(shot.shot_id)
            if clip:
                p = Path(clip)
                key = (str(p), p.stat().st_size, p.stat().st_mtime_ns)
                with self._lock:  # critics run concurrently: one decodes, the others wait and reuse
                    stats = self._cache.get(key)
                    if stats is None:
                        stats = measure_frames(shot.shot_id, *decode(p), every_frame=True)
                        self._cache[key] = stats
                        while len(self._cache) > self.capacity:
                            self._cache.popitem(last=False)
                    self._cache.move_to_end(key)
                out.append(stats if stats.shot_id == shot.shot_id else _renamed(stats, shot.shot_id))
                continue
            sampled = sorted(film.frames_of(shot.shot_id), key=lambda f: f.index)
            if not sampled:
                raise ValueError(f"shot {shot.shot_id} has no clip and no sampled frames to watch")
            frames = np.stack(
                [
                    np.asarray(Image.open(f.path).convert("RGB").resize((W, H), Image.Resampling.BILINEAR))
                    for f in sampled
                ]
            )
            span = (sampled[-1].time - sampled[0].time) / max(1, len(sampled) - 1)
            out.append(measure_frames(shot.shot_id, frames, 1 / span if span > 0 else 1.0, every_frame=False))
        return out


def _renamed(stats: ShotStats, shot_id: str) -> ShotStats:
    from dataclasses import replace

    return replace(stats, shot_id=shot_id)


def decode(clip: Path) -> tuple[np.ndarray, float]:
    """Every frame of the clip at W x H (uint8 RGB, frames first) and its frame rate."""
    from generation.frames import rgb_frames
    from generation.video_io import inspect

    fps = float(inspect(clip)["fps"])
    return rgb_frames(clip, W, H, f"scale={W}:{H}:flags=area"), fps


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance (linear light) of sRGB uint8 pixels."""
    c = rgb.astype(np.float32) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin[..., 0] * 0.2126 + lin[..., 1] * 0.7152 + lin[..., 2] * 0.0722


def flash_transitions(a: np.ndarray, b: np.ndarray) -> int:
    """+1 / -1 when a quarter of the frame brightens / darkens by a general-flash step from a to b, else 0."""
    d = b - a
    darker = np.minimum(a, b) < FLASH_DARK
    if ((d >= FLASH_STEP) & darker).mean() >= FLASH_AREA:
        return 1
    if ((d <= -FLASH_STEP) & darker).mean() >= FLASH_AREA:
        return -1
    return 0


def flashes_per_second(stats: list[ShotStats]) -> dict[str, float]:
    """The most general flashes in any one second, per shot, counted across cuts too.

    WCAG 2.3.1: a flash is a pair of opposing changes, so a change in the same direction as the one before it
    (dark, darker, darker still) is part of that change, and the count is opposing changes / 2. Each change is
    placed at its frame's own time (its clip's frame rate; a cut at the first frame of the shot it opens), and a
    one-second window slides over them. A shot flashes when its own changes (its cut in included) make the second
    flash in a window. Shots read from sampled frames only are left out (unknown), and windows do not span them."""
    changes: list[tuple[int, float, int, str]] = []  # (stretch of known frames, time in seconds, +1/-1, shot)
    stretch, start = 0, 0.0
    for prev, s in zip([None, *stats], stats):
        if not s.every_frame:
            stretch += 1  # what happens between its frames is unknown: no window reaches across it
            continue
        if prev is not None and prev.every_frame and (t := flash_transitions(prev.last, s.first)):
            changes.append((stretch, start, t, s.shot_id))
        changes += [(stretch, start + (k + 1) / s.fps, t, s.shot_id) for k, t in enumerate(s.transitions) if t]
        start += s.frames / s.fps
    worst: dict[str, float] = {s.shot_id: 0.0 for s in stats if s.every_frame}
    for i, (stretch, t0, _, _) in enumerate(changes):
        last, turns = 0, []  # the shot of each change in this window that is not the same way as the one before
        for part, t, sign, sid in changes[i:]:
            if part != stretch or t - t0 >= 1 - 1e-9:
                break
            if sign != last:
                turns.append(sid)
                last = sign
        for sid in set(turns):
            if turns.count(sid) >= 2:
                worst[sid] = max(worst[sid], len(turns) / 2)
    return worst


def measure_frames(shot_id: str, frames: np.ndarray, fps: float, *, every_frame: bool) -> ShotStats:
    """Statistics of one shot's frames (uint8 RGB, frames first)."""
    f = frames.astype(np.float32) / 255.0
    luma = f[..., 0] * 0.299 + f[..., 1] * 0.587 + f[..., 2] * 0.114
    lum = relative_luminance(frames)
    diffs = np.abs(np.diff(luma, axis=0)).mean(axis=(1, 2)) if len(luma) > 1 else np.zeros(0)
    mid = luma[len(luma) // 2]
    thumb = np.asarray(
        Image.fromarray((mid * 255).astype(np.uint8)).resize((16, 9), Image.Resampling.BILINEAR), np.float32
    )
    thumb = thumb - thumb.mean()
    thumb = thumb / (np.linalg.norm(thumb) or 1.0)
    return ShotStats(
        shot_id=shot_id,
        fps=float(fps),
        frames=len(frames),
        every_frame=every_frame,
        brightness=float(luma.mean()),
        contrast=float(luma.std(axis=(1, 2)).mean()),
        motion=float(diffs.mean()) if len(diffs) else 0.0,
        still=float((diffs < 0.002).mean()) if len(diffs) else 1.0,
        change=float((np.abs(luma[-1] - luma[0]) > 0.04).mean()),
        transitions=tuple(flash_transitions(a, b) for a, b in zip(lum, lum[1:])) if every_frame else (),
        colours=colour_names(frames),
        text_band=text_band(luma),
        drift=drift(luma[0], luma[-1]),
        first=lum[0],
        last=lum[-1],
        thumb=thumb,
        hist_first=_hist(frames[0]),
        hist_last=_hist(frames[-1]),
    )


def _hist(rgb: np.ndarray) -> np.ndarray:
    h = np.concatenate([np.histogram(rgb[..., c], bins=8, range=(0, 255))[0] for c in range(3)]).astype(np.float32)
    return h / max(1.0, h.sum())


NAMES = (
    (15, "red"),
    (40, "orange"),
    (70, "yellow"),
    (160, "green"),
    (195, "teal"),
    (250, "blue"),
    (290, "purple"),
    (345, "pink"),
    (361, "red"),
)


def colour_names(frames: np.ndarray, top: int = 3) -> tuple[str, ...]:
    """The colours covering most of the picture ("dark blue", "grey"), each over a sixth of it."""
    import colorsys

    px = frames[:: max(1, len(frames) // 8), ::6, ::6].reshape(-1, 3) / 255.0
    counts: dict[str, int] = {}
    for r, g, b in px:
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        if v < 0.15:
            name = "black"
        elif s < 0.18:
            name = "white" if v > 0.85 else "grey" if v > 0.35 else "dark grey"
        else:
            hue = next(n for limit, n in NAMES if h * 360 < limit)
            name = f"dark {hue}" if v < 0.4 else hue
        counts[name] = counts.get(name, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    return tuple(n for n, c in ranked[:top] if c >= len(px) / 6) or (ranked[0][0],)


def text_band(luma: np.ndarray) -> str:
    """Where text-like marks (rows dense with small sharp edges, the rest of the picture clean) sit in the middle
    frame: bottom, top, full (a flat card with marks in the middle) or ''."""
    frame = luma[len(luma) // 2]
    rows = (np.abs(np.diff(frame, axis=1)) > 0.12).mean(axis=1) > 0.06
    h = len(rows)
    top, bottom, middle = rows[: h // 5].mean(), rows[-h // 4 :].mean(), rows[h // 4 : -h // 4].mean()
    flat = (np.abs(frame - np.median(frame)) < 0.06).mean()
    if middle > 0.12 and flat > 0.6:
        return "full"
    if middle > 0.1:
        return ""  # marks everywhere: texture, not text
    return "bottom" if bottom > 0.2 else "top" if top > 0.2 else ""


def drift(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """How far the picture shifted from a to b (phase correlation), as fractions of width and height."""
    fa, fb = np.fft.fft2(a - a.mean()), np.fft.fft2(b - b.mean())
    cross = fa * np.conj(fb)
    corr = np.fft.ifft2(cross / (np.abs(cross) + 1e-9)).real
    y, x = np.unravel_index(int(np.argmax(corr)), corr.shape)
    h, w = corr.shape
    dy, dx = (y - h if y > h // 2 else y), (x - w if x > w // 2 else x)
    return round(-dx / w, 3), round(-dy / h, 3)
