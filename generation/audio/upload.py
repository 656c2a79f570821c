"""A creator's own track, checked before use and stored by content.

Every check runs before anything is written, each refusal is one line (`UploadRefused`), and a track is stored as
48 kHz FLAC named by the sha256 of the uploaded bytes (the same file uploaded twice is stored once). Checked, in
order: the file's size; its header's size (ID3v2 tags, RIFF chunks before the samples, FLAC metadata blocks, MP4
boxes before the media: a huge header is refused before ffmpeg parses it); that ffmpeg finds an audio stream, with
at most 8 channels and 192 kHz; the length its header declares; then the decode itself, capped at the longest
length allowed plus a second, so a file whose header hides its length (a decompression bomb: a tiny file that
decodes to hours) is stopped at the cap and refused.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from generation.video_io import ffmpeg_exe

from .pcm import RATE


class UploadRefused(ValueError):
    """The file is not used (one line saying why)."""


@dataclass(frozen=True)
class UploadLimits:
    max_bytes: int = 200 << 20
    max_seconds: float = 20 * 60.0
    max_header_bytes: int = 4 << 20
    max_channels: int = 8
    max_rate: int = 192_000
    timeout: float = 120.0


@dataclass(frozen=True)
class Track:
    sha256: str  # of the uploaded bytes
    path: Path  # the stored FLAC
    seconds: float
    channels: int
    codec: str
    label: str = "upload"


def store_track(path: Path, store_dir: Path, limits: UploadLimits = UploadLimits()) -> Track:
    """Check `path` and store it under `store_dir` as `<sha256>.flac`; refuses with `UploadRefused`."""
    path = Path(path)
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise UploadRefused(f"{path.name}: {size / 2**20:.0f} MiB is over the {limits.max_bytes >> 20} MiB limit")
    if size == 0:
        raise UploadRefused(f"{path.name}: the file is empty")
    header = header_bytes(path)
    if header > limits.max_header_bytes:
        raise UploadRefused(
            f"{path.name}: a {header / 2**20:.1f} MiB header (tags or metadata) is over the "
            f"{limits.max_header_bytes >> 20} MiB limit"
        )
    info = probe(path, limits.timeout)
    if info["channels"] > limits.max_channels or info["rate"] > limits.max_rate:
        raise UploadRefused(
            f"{path.name}: {info['channels']} channels at {info['rate']} Hz is over the limit "
            f"({limits.max_channels} channels, {limits.max_rate} Hz)"
        )
    if info["seconds"] is not None and info["seconds"] > limits.max_seconds:
        raise UploadRefused(f"{path.name}: {info['seconds']:.0f} s is longer than {limits.max_seconds:.0f} s")
    sha = _sha256(path)
    store_dir = Path(store_dir)
    final = store_dir / f"{sha}.flac"
    if final.is_file():
        return Track(sha, final, _decoded_seconds(final, limits), info["channels"], info["codec"])
    with tempfile.TemporaryDirectory(prefix="chief-upload-") as tmp:
        out = Path(tmp) / "track.flac"
        seconds = _decode(path, out, info["channels"], limits)
        if seconds > limits.max_seconds:
            declared = f"its header says {info['seconds']:.0f} s" if info["seconds"] is not None else "no length"
            raise UploadRefused(
                f"{path.name}: decodes to more than {limits.max_seconds:.0f} s ({declared}): a decompression bomb"
            )
        if seconds <= 0:
            raise UploadRefused(f"{path.name}: no audio could be decoded")
        store_dir.mkdir(parents=True, exist_ok=True)
        part = store_dir / f".{sha}.part"
        shutil.copyfile(out, part)
        part.replace(final)
    return Track(sha, final, seconds, info["channels"], info["codec"])


def probe(path: Path, timeout: float = 120.0) -> dict:
    """codec, rate, channels and the declared seconds (None when the header states none), from `ffmpeg -i`."""
    try:
        err = subprocess.run(
            [ffmpeg_exe(), "-hide_banner", "-nostdin", "-i", str(path)],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        ).stderr
    except subprocess.TimeoutExpired:
        raise UploadRefused(f"{Path(path).name}: reading its header took over {timeout:.0f} s") from None
    audio = re.search(r"Stream #\d+:\d+.*?: Audio: (\w+).*?, (\d+) Hz, ([^,]+)", err)
    if audio is None:
        raise UploadRefused(f"{Path(path).name}: not an audio file (ffmpeg finds no audio stream)")
    dur = re.search(r"Duration: (\d+):(\d+):([\d.]+)", err)
    layout = audio[3].strip()
    channels = {"mono": 1, "stereo": 2, "2.1": 3, "quad": 4, "5.0": 5, "5.1": 6, "6.1": 7, "7.1": 8}.get(layout)
    if channels is None:
        m = re.match(r"(\d+) channels", layout)
        channels = int(m[1]) if m else 2
    seconds = int(dur[1]) * 3600 + int(dur[2]) * 60 + float(dur[3]) if dur else None
    return {"codec": audio[1], "rate": int(audio[2]), "channels": channels, "seconds": seconds}


def _decode(path: Path, out: Path, channels: int, limits: UploadLimits) -> float:
    """Decode to 48 kHz FLAC, at most `max_seconds` + 1 s of it; returns the seconds decoded."""
    cap = limits.max_seconds + 1.0
    cmd = [
        ffmpeg_exe(),
        "-hide_banner",
        "-nostdin",
        "-v",
        "error",
        "-i",
        str(path),
        "-map",
        "0:a:0",
        "-t",
        f"{cap:.3f}",
    ]
    cmd += ["-ac", str(min(channels, 2)), "-ar", str(RATE), "-c:a", "flac", "-y", str(out)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=limits.timeout)
    except subprocess.TimeoutExpired:
        raise UploadRefused(f"{path.name}: decoding took over {limits.timeout:.0f} s") from None
    if proc.returncode != 0 or not out.is_file():
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise UploadRefused(f"{path.name}: could not be decoded: {tail}")
    return _decoded_seconds(out, limits)


def _decoded_seconds(flac: Path, limits: UploadLimits) -> float:
    info = probe(flac, limits.timeout)
    return info["seconds"] or 0.0


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def header_bytes(path: Path) -> int:
    """How many bytes come before the first audio data, for the formats whose headers can be made huge."""
    with open(path, "rb") as f:
        head = f.read(16)
        if head[:3] == b"ID3" and len(head) >= 10:  # ID3v2: a syncsafe size
            size = 0
            for b in head[6:10]:
                size = (size << 7) | (b & 0x7F)
            return 10 + size + (10 if head[5] & 0x10 else 0)
        if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
            pos = 12
            f.seek(pos)
            while chunk := f.read(8):
                if len(chunk) < 8 or chunk[:4] == b"data":
                    return pos
                pos += 8 + int.from_bytes(chunk[4:8], "little") + (int.from_bytes(chunk[4:8], "little") & 1)
                f.seek(pos)
            return pos
        if head[:4] == b"fLaC":
            pos = 4
            f.seek(pos)
            while block := f.read(4):
                if len(block) < 4:
                    return pos
                pos += 4 + int.from_bytes(block[1:4], "big")
                if block[0] & 0x80:  # the last metadata block
                    return pos
                f.seek(pos)
            return pos
        if head[4:8] in (b"ftyp", b"moov", b"free", b"wide"):  # MP4/M4A: every box before the media data
            pos = 0
            f.seek(0)
            while box := f.read(16):
                if len(box) < 8 or box[4:8] == b"mdat":
                    return pos
                size = int.from_bytes(box[:4], "big")
                if size == 1:
                    size = int.from_bytes(box[8:16], "big")
                if size < 8:
                    return pos
                pos += size
                f.seek(pos)
            return pos
    return 0
