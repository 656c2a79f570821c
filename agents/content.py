"""Message content parts (images as JPEG data URLs, videos as MP4 data URLs) and what they cost in tokens."""

from __future__ import annotations

import base64
import functools
import io
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

R = TypeVar("R")


def image_part(path: str, detail: str = "low", max_side: int = 512, quality: int = 85) -> dict[str, Any]:
    """An `image_url` content part: the image resized to `max_side` and sent as a base64 JPEG data URL."""
    st = os.stat(path)
    data = _jpeg_base64(str(path), st.st_mtime_ns, st.st_size, max_side, quality)
    return {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}", "detail": detail}}


@functools.lru_cache(maxsize=512)
def _jpeg_base64(path: str, _mtime_ns: int, _size: int, max_side: int, quality: int) -> str:
    """Encoded once per file version: every critic of a panel sees the same frames."""
    from PIL import Image

    with Image.open(path) as im:
        im = im.convert("RGB")
        im.thumbnail((max_side, max_side))
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=quality)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def video_part(path: str) -> dict[str, Any]:
    """A `video_url` content part with the MP4 inline (vLLM serving Qwen2.5-VL/Qwen3-VL takes these)."""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return {"type": "video_url", "video_url": {"url": f"data:video/mp4;base64,{data}"}}


def subsample(items: Sequence[R], k: int) -> list[R]:
    """At most `k` items, evenly spread, first and last kept."""
    n = len(items)
    if n <= k:
        return list(items)
    if k == 1:
        return [items[0]]
    return [items[round(i * (n - 1) / (k - 1))] for i in range(k)]


def count_parts(messages: list[dict], kind: str) -> int:
    """How many content parts of `kind` ("image_url", "video_url") the messages carry."""
    return sum(1 for m in messages if isinstance(m.get("content"), list) for p in m["content"] if p.get("type") == kind)


def estimate_tokens(messages: list[dict], *, image_tokens: int = 85, video_tokens: int = 2048) -> int:
    """Prompt tokens, roughly: text characters / 4, 4 per message, and a fixed cost per image and per video."""
    chars = 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(p.get("text", "")) for p in content if p.get("type") == "text")
    return (
        math.ceil(chars / 4)
        + 4 * len(messages)
        + image_tokens * count_parts(messages, "image_url")
        + video_tokens * count_parts(messages, "video_url")
    )
