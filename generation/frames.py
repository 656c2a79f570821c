"""Frames out of clips: evenly spaced samples (what critics "watch"), the last frame (continuity
conditioning), and a labelled contact sheet (one row per shot) for people.

Only the chosen frames are converted and piped out of ffmpeg (`select` filter); the frame count
comes from counting packets, which decodes nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from storage.fileio import atomic_path

from .ffmpeg_input import VIDEO, input_args
from .video_io import inspect, stream_stats

DECODE_SECONDS = 120.0  # the frames of one clip out of ffmpeg: far longer than any clip takes


def timecode(seconds: float) -> str:
    """`MM:SS.mmm` (or `H:MM:SS.mmm` past an hour): how frames are labelled for critics and sheets."""
    ms = round(max(0.0, seconds) * 1000)
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    return (f"{h}:" if h else "") + f"{m:02d}:{ms / 1000:06.3f}"


def frame_count(clip: Path, info: dict | None = None) -> int:
    """Video frames in `clip`: from the mp4 sample table when there is one, else by counting packets."""
    info = info or inspect(clip)
    return info["frames"] if info["frames"] is not None else stream_stats(clip, "v")[0]


def sample_frames(clip: Path, k: int, *, offset: float = 0.0) -> list[tuple[int, float, Image.Image]]:
    """`k` evenly spaced frames, first and last included, as (frame index, offset + index/fps, image).

    A clip with fewer than `k` frames gives every frame once.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    info = inspect(clip)
    n = frame_count(clip, info)
    if n == 0:
        raise ValueError(f"no frames in {Path(clip).name}")
    idx = [0] if k == 1 else sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})
    images = _decode(clip, idx, info["width"], info["height"])
    return [(i, offset + i / info["fps"], im) for i, im in zip(idx, images)]


def decode(clip: Path, indices: list[int], info: dict | None = None) -> list[Image.Image]:
    """The frames numbered `indices` (ascending) of `clip`, in one ffmpeg pass."""
    info = info or inspect(clip)
    return _decode(clip, indices, info["width"], info["height"])


def _decode(clip: Path, indices: list[int], w: int, h: int) -> list[Image.Image]:
    expr = "+".join(f"eq(n\\,{i})" for i in indices)
    frames = rgb_frames(clip, w, h, f"select='{expr}'", passthrough=True, most=len(indices))
    if len(frames) != len(indices):
        raise RuntimeError(f"asked {len(indices)} frames of {Path(clip).name}, decoded {len(frames)}")
    return [Image.fromarray(f) for f in frames]


def rgb_frames(
    clip: Path,
    width: int,
    height: int,
    filters: str,
    *,
    passthrough: bool = False,
    most: int | None = None,
    timeout: float = DECODE_SECONDS,
) -> np.ndarray:
    """The frames of `clip`'s video after `filters` (ffmpeg's `-vf`: a `select`, a `scale`; what comes out must be
    `width` x `height`) as uint8 RGB `(n, height, width, 3)`, in one ffmpeg pass (the one raw decoder: the samples
    critics watch, the offline critic's measurements). `passthrough`: frames keep their own timestamps (none
    duplicated or dropped to a rate); `most`: ffmpeg is stopped if it writes more than this many frames.
    Raises ValueError when ffmpeg cannot decode the clip or takes over `timeout` seconds."""
    from .ffmpeg import FfmpegError, run

    size = width * height * 3
    args = ["-loglevel", "error", *input_args(clip, VIDEO, "a video file"), "-map", "0:v:0", "-vf", filters]
    args += [*(["-fps_mode", "passthrough"] if passthrough else []), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    try:
        proc = run(args, timeout=timeout, capture=True, max_output=None if most is None else most * size, check=False)
    except FfmpegError as e:
        raise ValueError(f"could not decode {Path(clip).name}: {e}") from None
    if proc.code != 0 or not proc.stdout:
        raise ValueError(f"could not decode {Path(clip).name}: {proc.stderr[-200:]}")
    n = len(proc.stdout) // size
    return np.frombuffer(proc.stdout[: n * size], np.uint8).reshape(n, height, width, 3)


def contact_sheet(
    rows: list[tuple[str, list[Image.Image]]],
    out: Path,
    *,
    thumb_height: int = 96,
    label_width: int = 150,
    pad: int = 4,
) -> Path:
    """One row per shot: its label (e.g. "s03\\n00:12.500", newlines allowed) then its frames."""
    if not rows:
        raise ValueError("contact sheet needs at least one row")
    thumbs = [[_fit_height(im, thumb_height) for im in images] for _, images in rows]
    row_w = max(sum(t.width + pad for t in ts) for ts in thumbs)
    sheet = Image.new("RGB", (label_width + row_w + pad, len(rows) * (thumb_height + pad) + pad), (24, 24, 24))
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default(size=14)
    for r, ((label, _), ts) in enumerate(zip(rows, thumbs)):
        y = pad + r * (thumb_height + pad)
        draw.multiline_text((pad + 2, y + 4), label, fill=(235, 235, 235), font=font, spacing=4)
        x = label_width
        for t in ts:
            sheet.paste(t, (x, y))
            x += t.width + pad
    return save_jpeg(sheet, out, max(sheet.size))


def _fit_height(im: Image.Image, h: int) -> Image.Image:
    w = max(1, round(im.width * h / im.height))
    return im.convert("RGB").resize((w, h), Image.Resampling.BILINEAR)


def save_jpeg(img: Image.Image, path: Path, max_side: int = 512, quality: int = 85) -> Path:
    """Save as JPEG with the longer side at most `max_side` (aspect kept); atomic write."""
    path = Path(path)
    img = img.convert("RGB")
    if max(img.size) > max_side:
        img = img.copy()
        img.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    with atomic_path(path) as tmp:
        img.save(tmp, "JPEG", quality=quality)
    return path
