"""The embedded default backend: an animatic (previz) renderer. CPU only, no weights.

It draws each shot as a storyboard panel — a palette read from the prompt, a composition from
the seed, the prompt text, the shot id, a simple camera move — at the right duration and fps.
It is a preview, and every frame says so.
"""

from __future__ import annotations

import hashlib
import math
import textwrap
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from generation.base import CancelToken, ClipInfo, Progress, ShotRequest, file_sha256, frames_for
from generation.video_io import write_video

# Words that set a shot's light and colour: (hue 0..1 or None, brightness 0..1, saturation 0..1).
MOODS: dict[str, tuple[float | None, float | None, float | None]] = {
    "night": (0.65, 0.18, 0.5),
    "dark": (None, 0.2, 0.4),
    "storm": (0.6, 0.25, 0.25),
    "shadow": (None, 0.25, 0.3),
    "moon": (0.62, 0.3, 0.35),
    "rain": (0.58, 0.35, 0.25),
    "fog": (0.55, 0.55, 0.1),
    "mist": (0.55, 0.6, 0.1),
    "sunset": (0.06, 0.6, 0.8),
    "dawn": (0.08, 0.65, 0.6),
    "golden": (0.11, 0.7, 0.75),
    "fire": (0.03, 0.6, 0.9),
    "warm": (0.08, 0.65, 0.6),
    "sun": (0.13, 0.85, 0.6),
    "bright": (None, 0.88, 0.5),
    "day": (0.55, 0.8, 0.45),
    "sea": (0.55, 0.5, 0.6),
    "ocean": (0.56, 0.45, 0.65),
    "whale": (0.6, 0.45, 0.5),
    "water": (0.52, 0.55, 0.55),
    "forest": (0.33, 0.45, 0.55),
    "snow": (0.58, 0.92, 0.1),
    "desert": (0.1, 0.78, 0.5),
    "city": (0.7, 0.45, 0.3),
    "blood": (0.0, 0.35, 0.9),
    "neon": (0.85, 0.55, 0.95),
    "lighthouse": (0.12, 0.55, 0.55),
    "scary": (None, 0.2, 0.3),
    "brighter": (None, 0.85, 0.5),
    "well-lit": (None, 0.82, 0.5),
    "contrast": (None, None, None),
}
PREVIEW_LABEL = "ANIMATIC · PREVIZ"


Palette = Mapping[str, tuple[float | None, float | None, float | None]]


class AnimaticBackend:
    name = "animatic"
    model = ""
    label = "animatic (previz: drawn storyboard panels, not a model render)"
    supports_continuity = True
    default_fps = 12
    default_size = (640, 360)

    moods: Palette = MOODS  # the words that set a shot's light and colour

    def __init__(self, moods: Palette | None = None) -> None:
        """`moods`: another palette table. It draws other pixels, so it is named in `model` and clip keys never
        mix the two tables."""
        if moods is not None:
            self.moods = dict(moods)
            table = repr(sorted(self.moods.items())).encode()
            self.model = f"palette-{hashlib.sha256(table).hexdigest()[:12]}"

    def resolve(self, request: ShotRequest) -> ShotRequest:
        w, h = request.width or self.default_size[0], request.height or self.default_size[1]
        fps = request.fps or self.default_fps
        key_sha = request.keyframe_sha256 or (file_sha256(Path(request.keyframe)) if request.keyframe else None)
        return request.with_(
            width=w - w % 2,
            height=h - h % 2,
            fps=fps,
            steps=None,
            guidance=None,
            num_frames=frames_for(request.duration, fps),
            keyframe_sha256=key_sha,
        )

    def render(
        self, request: ShotRequest, out: Path, progress: Progress | None = None, cancel: CancelToken | None = None
    ) -> ClipInfo:
        r = self.resolve(request)
        w, h, fps, n = r.size()
        still = None
        if r.keyframe:  # motion from the approved keyframe: its first frame is the keyframe itself
            still = np.asarray(Image.open(r.keyframe).convert("RGB").resize((w, h)))
        else:
            canvas = _canvas(r.prompt, r.seed, w, h, self.moods)
        overlay = _overlay(r.caption or r.prompt, r.shot_id, w, h)
        rows = np.flatnonzero(overlay[..., 3].max(axis=1) > 0)  # blend only the rows the overlay covers
        ov, alpha = overlay[rows, :, :3], overlay[rows, :, 3:]
        init = None
        if r.init_image:
            init = np.asarray(Image.open(r.init_image).convert("RGB").resize((w, h)), dtype=np.float32)
        blend_frames = max(1, min(n // 3, fps // 2))

        def frames():
            for i in range(n):
                if cancel is not None:
                    cancel.raise_if_cancelled()
                t = i / max(1, n - 1)
                if still is not None:
                    frame = keyframe_view(still, r.camera, t, w, h, r.seed)
                else:
                    frame = _camera(canvas, r.camera, t, w, h, r.seed).astype(np.float32)
                frame = _subject(frame, r.seed, t)
                if init is not None and i < blend_frames:  # continuity: dissolve from the previous shot
                    a = i / blend_frames
                    frame = init * (1 - a) + frame * a
                frame[rows] = frame[rows] * (1 - alpha) + ov * alpha
                if progress is not None:
                    progress(i + 1, n)
                yield np.clip(frame, 0, 255).astype(np.uint8)

        count = write_video(frames(), out, fps)
        return ClipInfo(path=Path(out), num_frames=count, fps=fps, width=w, height=h)


def palette(prompt: str, seed: int, moods: Palette = MOODS) -> tuple[np.ndarray, np.ndarray, float]:
    """(top colour, bottom colour, contrast) from the prompt's mood words; the hash breaks ties."""
    words = [w.strip(".,;:!?\"'()").lower() for w in prompt.split()]
    h0 = int(hashlib.sha256(f"{prompt}|{seed}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    hues, lights, sats = [], [], []
    contrast = 0.35
    for w in words:
        mood = moods.get(w) or moods.get(w.rstrip("s"))
        if not mood:
            continue
        if w.startswith("contrast"):
            contrast = 0.8
            continue
        hue, light, sat = mood
        if hue is not None:
            hues.append(hue)
        lights.append(light)
        sats.append(sat)
    hue = (sum(hues) / len(hues)) if hues else h0
    light = (sum(lights) / len(lights)) if lights else 0.5 + 0.2 * (h0 - 0.5)
    sat = (sum(sats) / len(sats)) if sats else 0.5
    top = _hsv(hue, sat, min(1.0, light * (1 + contrast)))
    bottom = _hsv((hue + 0.08) % 1, sat, light * (1 - contrast))
    return top, bottom, contrast


def _hsv(h: float, s: float, v: float) -> np.ndarray:
    import colorsys

    return np.array(colorsys.hsv_to_rgb(h % 1, max(0, min(1, s)), max(0, min(1, v)))) * 255


def _canvas(prompt: str, seed: int, w: int, h: int, moods: Palette = MOODS) -> np.ndarray:
    """A scene larger than the frame (room for camera moves): gradient sky + seeded shapes."""
    cw, ch = int(w * 1.4), int(h * 1.4)
    top, bottom, contrast = palette(prompt, seed, moods)
    ramp = np.linspace(0, 1, ch, dtype=np.float32)[:, None, None]
    img = Image.fromarray((top * (1 - ramp) + bottom * ramp).repeat(cw, axis=1).astype(np.uint8))
    rng = np.random.default_rng(seed)
    draw = ImageDraw.Draw(img, "RGBA")
    horizon = int(ch * rng.uniform(0.55, 0.75))
    draw.rectangle([0, horizon, cw, ch], fill=tuple(int(c * 0.6) for c in bottom) + (255,))
    for _ in range(int(rng.integers(3, 7))):
        x, y = rng.uniform(0, cw), rng.uniform(0, horizon)
        r = rng.uniform(0.03, 0.12) * ch
        shade = top * rng.uniform(0.4, 1.2)
        draw.ellipse([x - r, y - r, x + r, y + r], fill=tuple(int(min(255, c)) for c in shade) + (200,))
    for _ in range(int(rng.integers(2, 5))):
        x0 = rng.uniform(0, cw)
        bw, bh = rng.uniform(0.04, 0.12) * cw, rng.uniform(0.1, 0.4) * ch
        draw.rectangle([x0, horizon - bh, x0 + bw, horizon], fill=tuple(int(c * 0.35) for c in bottom) + (255,))
    return np.asarray(img, dtype=np.float32)


def _camera(canvas: np.ndarray, move: str, t: float, w: int, h: int, seed: int) -> np.ndarray:
    ch, cw = canvas.shape[:2]
    mx, my = cw - w, ch - h
    x, y, zoom = mx / 2, my / 2, 1.0
    if move == "pan_left":
        x = mx * (1 - t)
    elif move == "pan_right":
        x = mx * t
    elif move == "tilt_up":
        y = my * (1 - t)
    elif move == "tilt_down":
        y = my * t
    elif move in ("zoom_in", "dolly_in"):
        zoom = 1 + 0.3 * t
    elif move == "zoom_out":
        zoom = 1.3 - 0.3 * t
    elif move == "handheld":
        x += math.sin(t * 17 + seed) * mx * 0.08
        y += math.cos(t * 13 + seed) * my * 0.08
    if zoom == 1.0:
        xi, yi = int(round(x)), int(round(y))
        return canvas[yi : yi + h, xi : xi + w]
    zw, zh = w / zoom, h / zoom
    x0, y0 = (cw - zw) / 2, (ch - zh) / 2
    crop = Image.fromarray(canvas.astype(np.uint8)).resize(
        (w, h), Image.Resampling.BILINEAR, box=(x0, y0, x0 + zw, y0 + zh)
    )
    return np.asarray(crop, dtype=np.float32)


# Where each camera move drifts the view while it pushes in: (dx, dy) as a share of the spare margin.
_DRIFT = {"pan_left": (-1, 0), "pan_right": (1, 0), "tilt_up": (0, -1), "tilt_down": (0, 1)}


def keyframe_view(still: np.ndarray, move: str, t: float, w: int, h: int, seed: int) -> np.ndarray:
    """The frame at time t (0..1) of a camera move that starts on the whole keyframe and pushes in (up to 25%),
    drifting the way the move goes (a pan drifts sideways, a tilt up or down, handheld wobbles)."""
    sh, sw = still.shape[:2]
    zoom = 1 + (0.05 if move == "static" else 0.25) * t
    zw, zh = sw / zoom, sh / zoom
    dx, dy = _DRIFT.get(move, (0, 0))
    if move == "handheld":
        dx, dy = np.sin(t * 17 + seed) * 0.5, np.cos(t * 13 + seed) * 0.5
    x0 = (sw - zw) / 2 * (1 + dx * t)
    y0 = (sh - zh) / 2 * (1 + dy * t)
    view = Image.fromarray(still).resize((w, h), Image.Resampling.BILINEAR, box=(x0, y0, x0 + zw, y0 + zh))
    return np.asarray(view, dtype=np.float32)


def _subject(frame: np.ndarray, seed: int, t: float) -> np.ndarray:
    """A moving silhouette so every shot has some motion (drawn into `frame`, a private copy)."""
    h, w = frame.shape[:2]
    rng = np.random.default_rng(seed + 1)
    x0, x1 = rng.uniform(0.15, 0.45), rng.uniform(0.55, 0.85)
    if rng.random() < 0.5:
        x0, x1 = x1, x0
    cx, cy, r = (x0 + (x1 - x0) * t) * w, rng.uniform(0.55, 0.75) * h, max(3, int(0.07 * h))
    top, left = max(0, int(cy - r)), max(0, int(cx - r))
    yy, xx = np.ogrid[top : min(h, int(cy + r) + 1), left : min(w, int(cx + r) + 1)]
    mask = (xx - cx) ** 2 + (yy - cy) ** 2 * 1.6 < r * r
    frame[top : top + mask.shape[0], left : left + mask.shape[1]][mask] *= 0.25
    return frame


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont:
    font = ImageFont.load_default(size=size)
    if not isinstance(font, ImageFont.FreeTypeFont):  # a Pillow without FreeType has only a fixed bitmap font
        raise RuntimeError("Pillow has no FreeType support: the animatic cannot draw its text")
    return font


def _overlay(text: str, shot_id: str, w: int, h: int) -> np.ndarray:
    """RGBA float overlay (alpha 0..1): caption box, shot id and the previz label."""
    img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    small = _font(max(8, h // 28))
    body = _font(max(9, h // 22))
    draw.rectangle([0, 0, w, h // 14 + 6], fill=(0, 0, 0, 150))
    draw.text((6, 3), PREVIEW_LABEL, fill=(255, 214, 10, 255), font=small)
    draw.text((w - 6, 3), shot_id, fill=(255, 255, 255, 255), font=small, anchor="ra")
    lines = textwrap.wrap(text, width=max(20, w // max(6, h // 40)))[:3]
    if lines:
        line_h = body.size + 4
        top = h - line_h * len(lines) - 10
        draw.rectangle([0, top - 4, w, h], fill=(0, 0, 0, 140))
        for i, line in enumerate(lines):
            draw.text((8, top + i * line_h), line, fill=(255, 255, 255, 255), font=body)
    arr = np.asarray(img, dtype=np.float32)
    arr[..., 3] /= 255.0
    return arr
