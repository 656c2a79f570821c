"""Message content parts (images as JPEG data URLs, videos as MP4 data URLs, sound as base64 WAV `input_audio`)
and what they cost in tokens."""

from __future__ import annotations

import base64
import functools
import io
import math
import os
import struct
import wave
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


AUDIO_RATE = 16000  # Hz, mono 16-bit: what speech models take (Whisper-style encoders resample to it anyway)
AUDIO_TOKENS_PER_SECOND = 25  # Qwen2-Audio/Qwen2.5-Omni: one token per 40 ms; GPT-4o audio counts fewer


def audio_part(path: str, start: float, end: float) -> dict[str, Any]:
    """An `input_audio` content part (OpenAI's format): `path`'s sound from `start` to `end` seconds, cut and
    resampled to 16 kHz mono by the bundled ffmpeg, as a base64 WAV. Raises OSError when it cannot be cut."""
    st = os.stat(path)
    data = _wav_base64(str(path), st.st_mtime_ns, st.st_size, round(start, 3), round(end - start, 3))
    return {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}


@functools.lru_cache(maxsize=32)
def _wav_base64(path: str, _mtime_ns: int, _size: int, start: float, seconds: float) -> str:
    """Cut once per window: every critic of a panel hears the same part (at most 32 windows kept)."""
    from generation.ffmpeg import FfmpegTimeout, run  # standard library only: how ffmpeg runs
    from generation.ffmpeg_input import InputRefused, input_args  # and how a file is opened

    try:
        opened = input_args(Path(path))
    except InputRefused as e:
        raise OSError(str(e)) from None
    args = ["-loglevel", "error", "-ss", f"{start:.3f}", "-t", f"{seconds:.3f}", *opened]
    args += ["-vn", "-ac", "1", "-ar", str(AUDIO_RATE), "-f", "s16le", "pipe:1"]
    try:  # the window's 16-bit samples and a second more: anything past that is not this cut
        proc = run(args, timeout=120, capture=True, max_output=round((seconds + 1) * AUDIO_RATE) * 2, check=False)
    except FfmpegTimeout:
        raise OSError(f"cutting {seconds:g} s of sound from {Path(path).name} took over 120 s") from None
    if proc.code != 0:
        raise OSError(f"could not cut the sound of {Path(path).name}: {proc.tail(2)}")
    pcm = proc.stdout[: int(round(seconds * AUDIO_RATE)) * 2]  # ffmpeg may round the cut up by a sample
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:  # a real header (ffmpeg writing WAV to a pipe leaves its sizes unknown)
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(AUDIO_RATE)
        w.writeframes(pcm)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def audio_seconds(part: dict[str, Any]) -> float:
    """How long an `input_audio` part's sound is: a WAV's data over its byte rate (read from its header); an MP3
    counted at 32 kbit/s, as long as it could be."""
    audio = part.get("input_audio") or {}
    data = str(audio.get("data") or "")
    size = len(data) * 3 // 4 - data[-2:].count("=")
    if audio.get("format") == "wav":
        head = base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4))
        if len(head) >= 44 and head[:4] == b"RIFF" and head[8:12] == b"WAVE":
            byte_rate = struct.unpack("<I", head[28:32])[0]
            return max(0, size - 44) / byte_rate if byte_rate else 0.0
    return size / 4000


def subsample(items: Sequence[R], k: int) -> list[R]:
    """At most `k` items, evenly spread, first and last kept."""
    n = len(items)
    if n <= k:
        return list(items)
    if k == 1:
        return [items[0]]
    return [items[round(i * (n - 1) / (k - 1))] for i in range(k)]


def parts_of(messages: list[dict], kind: str) -> list[dict]:
    """The content parts of `kind` ("image_url", "video_url", "input_audio") the messages carry."""
    return [p for m in messages if isinstance(m.get("content"), list) for p in m["content"] if p.get("type") == kind]


def count_parts(messages: list[dict], kind: str) -> int:
    return len(parts_of(messages, kind))


def estimate_tokens(messages: list[dict], *, image_tokens: int = 85, video_tokens: int = 2048) -> int:
    """Prompt tokens, roughly: text characters / 4, 4 per message, a fixed cost per image and per video, and
    AUDIO_TOKENS_PER_SECOND for each second of sound."""
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
        + math.ceil(AUDIO_TOKENS_PER_SECOND * sum(audio_seconds(p) for p in parts_of(messages, "input_audio")))
    )
