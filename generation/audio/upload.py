"""A creator's own track, checked before use and stored by content.

Every check runs before anything is written, each refusal is one line (`UploadRefused`), and a track is stored as
48 kHz FLAC named by the sha256 of the uploaded bytes (the same file uploaded twice is stored once). Checked, in
order: the file's size; its header's size (ID3v2 tags, RIFF chunks before the samples, FLAC metadata blocks, MP4
boxes before the media: a huge header is refused before ffmpeg parses it); its container, from its bytes
(`generation.ffmpeg_input`: WAV, FLAC, Ogg, MP3, AAC, MP4/M4A, Matroska/WebM, opened with that demuxer forced and
local files only, so a playlist, manifest or list is refused before ffmpeg runs and no other file is ever read); that
ffmpeg finds an audio stream, with at most 8 channels (counted in the decoded samples) and 192 kHz; the length its
header declares; then the decode itself, capped at the longest length allowed plus a second, so a file whose header
hides its length (a decompression bomb: a tiny file that decodes to hours) is stopped at the cap and refused.
`check_audio` makes the same checks for a sound kept as it is (an archive's tracks and stems).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from generation.ffmpeg import FfmpegTimeout, FfmpegTooMuch, run
from generation.ffmpeg_input import InputRefused, input_args, refuse_references, shown

from .pcm import RATE


class UploadRefused(InputRefused):
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
    info = check_header(path, limits)
    sha = _sha256(path)
    store_dir = Path(store_dir)
    final = store_dir / f"{sha}.flac"
    if final.is_file():
        return Track(sha, final, _decoded_seconds(final, limits), info["channels"], info["codec"])
    with tempfile.TemporaryDirectory(prefix="chief-upload-") as tmp:
        out = Path(tmp) / "track.flac"
        _decode(path, ["-ac", str(min(info["channels"], 2)), "-ar", str(RATE), "-c:a", "flac", "-y", str(out)], limits)
        if not out.is_file():
            raise UploadRefused(f"{shown(path)}: no audio could be decoded")
        _check_decoded(path, _decoded_seconds(out, limits), info, limits)
        store_dir.mkdir(parents=True, exist_ok=True)
        part = store_dir / f".{sha}.part"
        shutil.copyfile(out, part)
        part.replace(final)
    return Track(sha, final, _decoded_seconds(final, limits), info["channels"], info["codec"])


def check_audio(path: Path, limits: UploadLimits = UploadLimits()) -> float:
    """Every check `store_track` makes, the decode included (to nowhere), for a sound that arrives to be kept as it
    is (an archive's track or stem); returns the seconds it decodes to. Refuses with `UploadRefused`."""
    path = Path(path)
    info = check_header(path, limits)
    pcm = _decode(path, ["-ac", "1", "-ar", str(COUNT_RATE), "-f", "u8", "pipe:1"], limits)  # one byte a sample
    seconds = len(pcm) / COUNT_RATE
    _check_decoded(path, seconds, info, limits)
    return seconds


COUNT_RATE = 8000  # Hz: the rate a sound is decoded at only to count its length
PROBE_BYTES = 64 << 20  # what 0.1 s of a file may decode to when its header is read


def check_header(path: Path, limits: UploadLimits) -> dict:
    """The checks before any decoding: size, the header's size, the container (from its bytes), an audio stream,
    its channels (counted in the decoded stream) and rate, and the length its header declares; returns `probe`'s
    figures."""
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise UploadRefused(f"{shown(path)}: {size / 2**20:.0f} MiB is over the {limits.max_bytes >> 20} MiB limit")
    if size == 0:
        raise UploadRefused(f"{shown(path)}: the file is empty")
    header = header_bytes(path)
    if header > limits.max_header_bytes:
        raise UploadRefused(
            f"{shown(path)}: a {header / 2**20:.1f} MiB header (tags or metadata) is over the "
            f"{limits.max_header_bytes >> 20} MiB limit"
        )
    info = probe(path, limits.timeout)
    if info["channels"] > limits.max_channels or info["rate"] > limits.max_rate:
        raise UploadRefused(
            f"{shown(path)}: {info['channels']} channels at {info['rate']} Hz is over the limit "
            f"({limits.max_channels} channels, {limits.max_rate} Hz)"
        )
    if info["seconds"] is not None and info["seconds"] > limits.max_seconds:
        raise UploadRefused(f"{shown(path)}: {info['seconds']:.0f} s is longer than {limits.max_seconds:.0f} s")
    return info


def _check_decoded(path: Path, seconds: float, info: dict, limits: UploadLimits) -> None:
    if seconds > limits.max_seconds:
        declared = f"its header says {info['seconds']:.0f} s" if info["seconds"] is not None else "no length"
        raise UploadRefused(
            f"{shown(path)}: decodes to more than {limits.max_seconds:.0f} s ({declared}): a decompression bomb"
        )
    if seconds <= 0:
        raise UploadRefused(f"{shown(path)}: no audio could be decoded")


def probe(path: Path, timeout: float = 120.0) -> dict:
    """codec, rate, channels and the declared seconds (None when the header states none). The file is opened as
    `generation.ffmpeg_input` says (refused unless its bytes are an audio container CHIEF reads); codec and length
    come from ffmpeg's reading of the header, the channels and rate from the first decoded samples (a WAV header
    ffmpeg writes), so a layout's name (9.1.6, 22.2, hexadecagonal) is never what is counted."""
    name = shown(path)
    try:
        opened = input_args(path)
    except InputRefused as e:
        raise UploadRefused(str(e)) from None
    args = [*opened, "-map", "0:a:0", "-t", "0.1", "-c:a", "pcm_s16le", "-f", "wav", "pipe:1"]
    try:  # 0.1 s of 16-bit samples: a few MB even at 1024 channels and 384 kHz
        proc = run(args, timeout=timeout, capture=True, max_output=PROBE_BYTES, check=False)
    except FfmpegTimeout:
        raise UploadRefused(f"{name}: reading its header took over {timeout:.0f} s") from None
    except FfmpegTooMuch:
        raise UploadRefused(f"{name}: 0.1 s of it decodes to more than {PROBE_BYTES >> 20} MiB") from None
    err = proc.stderr
    try:
        refuse_references(path, err)
    except InputRefused as e:
        raise UploadRefused(str(e)) from None
    source = err.split("\nOutput #")[0]  # ffmpeg's account of the file itself, not of what it writes
    audio = re.search(r"Stream #\d+:\d+.*?: Audio: (\w+)", source)
    if audio is None:
        raise UploadRefused(f"{name}: not an audio file (ffmpeg finds no audio stream)")
    decoded = wav_format(proc.stdout)
    if decoded is None:
        tail = (err.strip().splitlines() or ["?"])[-1]
        raise UploadRefused(f"{name}: no audio could be decoded: {tail}")
    dur = re.search(r"Duration: (\d+):(\d+):([\d.]+)", source)
    seconds = int(dur[1]) * 3600 + int(dur[2]) * 60 + float(dur[3]) if dur else None
    return {"codec": audio[1], "rate": decoded[1], "channels": decoded[0], "seconds": seconds}


def wav_format(data: bytes) -> tuple[int, int] | None:
    """(channels, rate) from a WAV header's `fmt ` chunk; None when `data` holds none."""
    if data[:4] not in (b"RIFF", b"RF64") or data[8:12] != b"WAVE":
        return None
    pos = 12
    while pos + 8 <= len(data):
        kind, size = data[pos : pos + 4], int.from_bytes(data[pos + 4 : pos + 8], "little")
        if kind == b"fmt " and pos + 16 <= len(data):
            return int.from_bytes(data[pos + 10 : pos + 12], "little"), int.from_bytes(
                data[pos + 12 : pos + 16], "little"
            )
        pos += 8 + size + (size & 1)
    return None


def _decode(path: Path, output: list[str], limits: UploadLimits) -> bytes:
    """Decode the first audio stream into `output` (ffmpeg's output options), at most `max_seconds` + 1 s of it (a
    bomb is stopped there); returns what ffmpeg wrote to its standard output."""
    cap = limits.max_seconds + 1.0
    args = ["-v", "error", *input_args(path), "-map", "0:a:0", "-t", f"{cap:.3f}", *output]
    try:
        proc = run(args, timeout=limits.timeout, capture=True, check=False)
    except FfmpegTimeout:
        raise UploadRefused(f"{shown(path)}: decoding took over {limits.timeout:.0f} s") from None
    if proc.code != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise UploadRefused(f"{shown(path)}: could not be decoded: {tail}")
    return proc.stdout


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
