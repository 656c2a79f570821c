"""An archive's media checked as uploads are, before anything of the archive is written.

`storage.archives` checks an archive's structure, hashes and records; what its media files are is checked here
(`check`, called by `Studio.import_project` between reading the archive and writing it), by what the store's name
says each one is: a FLAC track and a WAV sound (narration, a stem) as an uploaded track is (`check_audio`: the
container from its bytes, an audio stream, at most 8 channels, the declared and the decoded length, the decode capped
against bombs), an MP4 clip or film as a video CHIEF reads (its bytes an MP4, a video stream, no external reference,
no longer than a film may be), a PNG or JPEG still as an uploaded picture is, a LoRA (`.safetensors`) as `chief lora
add` checks one: a safetensors file within a LoRA's size, then the same fit against the video model
(`Loras.check`, passed in as `lora_check`). A refusal is one line naming the member.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.errors import StudioError
from generation.audio.upload import UploadLimits, check_audio
from generation.base import RenderError
from generation.ffmpeg_input import InputRefused, container
from generation.loras import check_file
from storage.archives import Archive, ArchiveError
from storage.schema import Limits

FILM_MARGIN = 60.0  # seconds over the longest film a sound or video may last (title card, tails)


def check(archive: Archive, limits: Limits, lora_check: Callable[[Path], object] | None = None) -> None:
    """Refuse (ArchiveError, one line) the archive if any of its media is not what its name says it is, or a LoRA
    it holds does not fit the video model (`lora_check(path)` raises, as it does for `chief lora add`)."""
    tracks = {sha for b in archive.file.versions for sha in b.version.storyboard.tracks()}
    film = limits.max_film_minutes * 60 + FILM_MARGIN
    for sha, (ext, path) in sorted(archive.media.items()):
        member = f"media/{sha[:2]}/{sha}.{ext}"
        role = "a music track" if sha in tracks else ROLES.get(ext, "a file")
        try:
            if ext == "flac":
                _only(path, "flac", "a FLAC track")
                check_audio(path, UploadLimits(max_bytes=1 << 62))  # a track kept as uploaded: 20 minutes at most
            elif ext == "wav":
                _only(path, "wav", "a WAV sound")
                check_audio(path, UploadLimits(max_bytes=1 << 62, max_seconds=film))
            elif ext == "mp4":
                _video(path, film)
            elif ext in ("png", "jpg"):
                _still(path, ext)
            elif ext == "safetensors":
                check_file(path)
                if lora_check is not None:
                    lora_check(path)
        except (InputRefused, ValueError, OSError, RenderError, StudioError) as e:
            reason = str(e).removeprefix(f"{path.name}: ").replace("\n", " ")
            raise ArchiveError(f"{member} ({role}): {reason}") from None


ROLES = {
    "flac": "a music track",
    "wav": "narration or a sound stem",
    "mp4": "a clip or film",
    "png": "a still",
    "jpg": "a still",
    "safetensors": "a LoRA",
}


def _only(path: Path, kind: str, what: str) -> None:
    container(path, frozenset({kind}), what)


def _video(path: Path, max_seconds: float) -> None:
    from generation.video_io import inspect

    _only(path, "mov", "an MP4 video")
    info = inspect(path)  # a video stream, and no reference to another file
    if info["duration"] > max_seconds:
        raise InputRefused(f"a {info['duration']:.0f}-s video is longer than any film ({max_seconds:.0f} s)")


def _still(path: Path, ext: str) -> None:
    from PIL import Image, UnidentifiedImageError

    from app.context import MAX_UPLOAD_PIXELS

    want = {"png": "PNG", "jpg": "JPEG"}[ext]
    try:
        with Image.open(path) as im:
            if im.format != want:
                raise InputRefused(f"not a {want} image (a {im.format} image)")
            if im.width * im.height > MAX_UPLOAD_PIXELS:
                raise InputRefused(f"{im.width}x{im.height} is more than {MAX_UPLOAD_PIXELS:,} pixels")
            im.verify()
    except (UnidentifiedImageError, SyntaxError, Image.DecompressionBombError) as e:
        raise InputRefused(f"not a readable {want} image ({type(e).__name__})") from None
