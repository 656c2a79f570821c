"""How ffmpeg opens a file CHIEF did not write (an upload, an archive's media, a stored track, a speech answer).

ffmpeg, left to guess, picks a demuxer by the file's bytes and name, and some demuxers open other files: an HLS
playlist or a DASH manifest reads its segments, a concat list or an image sequence the files it names, an MP4's data
reference an "external track". A text file named `song.mp3` could so make any media the server can read the
uploader's track. Here the container is decided from the file's first bytes alone (magic numbers, never the name),
only an allow-listed demuxer is forced with `-f`, the only protocol is `file`, and the MP4 demuxer's external
references stay off. Anything else (text, manifests, lists, unknown bytes) is refused before ffmpeg runs.
"""

from __future__ import annotations

import re
from pathlib import Path

# demuxer (ffmpeg's `-f` name) -> what it is called in a refusal
NAMES = {
    "wav": "WAV",
    "flac": "FLAC",
    "ogg": "Ogg",
    "mp3": "MP3",
    "aac": "AAC (ADTS)",
    "mov": "MP4/M4A/MOV",
    "matroska": "Matroska/WebM",
}
AUDIO = frozenset(NAMES)  # a track may be any of these (a video's sound track too)
VIDEO = frozenset({"mov", "matroska"})  # a clip
# Demuxer options that keep it to the one file: the MP4 demuxer's data references (an external track, opened as a
# path relative to the file or an absolute one) are off by default; said here so no default can change it.
NO_REFERENCES = {"mov": ["-enable_drefs", "0", "-use_absolute_path", "0"]}
ISO_BOXES = {b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide", b"pnot"}  # an ISO-BMFF file's first box
HEAD = 64
# What ffmpeg logs (a line of its own, "[in#0 @ 0x…] …", never a tag's text) when an MP4 names another file for its
# samples; with drefs off it reads its own bytes instead.
EXTERNAL = re.compile(r"^\[[^\]\n]*\] (?:Skipped opening external track|stream \d+, error opening alias)", re.MULTILINE)


class InputRefused(ValueError):
    """The file is not opened (one line saying why)."""


def shown(path: Path | str) -> str:
    """The file's name for a one-line message: control characters (a newline in a name) replaced."""
    return re.sub(r"[\x00-\x1f\x7f]", "?", Path(path).name)


def container(path: Path, allowed: frozenset[str] = AUDIO, what: str = "an audio file") -> str:
    """The demuxer for `path`'s bytes (a key of NAMES); InputRefused, saying the file is not `what`, when they are
    no container CHIEF reads or one not `allowed`."""
    path = Path(path)
    with open(path, "rb") as f:
        head = f.read(HEAD)
        tagged = head[:3] == b"ID3" and len(head) >= 10
        if tagged:  # an ID3v2 tag (syncsafe size, optional footer) before MP3, AAC or FLAC frames
            size = 0
            for b in head[6:10]:
                size = (size << 7) | (b & 0x7F)
            f.seek(10 + size + (10 if head[5] & 0x10 else 0))
            head = f.read(HEAD)
    kind = _magic(head)
    if kind is None or (tagged and kind not in ("mp3", "aac", "flac")):
        seems = _what(path, head)
    elif kind not in allowed:
        seems = NAMES[kind]
    else:
        return kind
    reads = ", ".join(NAMES[k] for k in NAMES if k in allowed)
    raise InputRefused(f"{shown(path)}: not {what} ({seems}; CHIEF reads {reads})")


def _magic(h: bytes) -> str | None:
    if h[:4] in (b"RIFF", b"RF64") and h[8:12] == b"WAVE":
        return "wav"
    if h[:4] == b"fLaC":
        return "flac"
    if h[:4] == b"OggS":
        return "ogg"
    if h[:4] == b"\x1a\x45\xdf\xa3":  # EBML
        return "matroska"
    if h[4:8] in ISO_BOXES:
        return "mov"
    if len(h) >= 4 and h[0] == 0xFF:
        if h[1] & 0xF6 == 0xF0 and (h[2] >> 2) & 0xF < 13:  # ADTS: 12 sync bits, layer 0, a real rate index
            return "aac"
        version, layer, bitrate, rate = (h[1] >> 3) & 3, (h[1] >> 1) & 3, h[2] >> 4, (h[2] >> 2) & 3
        if h[1] & 0xE0 == 0xE0 and version != 1 and layer != 0 and bitrate != 15 and rate != 3:  # MPEG audio frame
            return "mp3"
    return None


def _what(path: Path, head: bytes) -> str:
    """Words for what a refused file seems to be (for the message only: the decision is the allow-list)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:7].upper() == b"#EXTM3U":
        return "an HLS playlist"
    if text.startswith(b"ffconcat"):
        return "an ffmpeg concat list"
    if text.startswith(b"<"):
        with open(path, "rb") as f:
            return "a DASH manifest" if b"<MPD" in f.read(4096) else "an XML or HTML file"
    if not head:
        return "an empty file"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # not just a character cut at the end of the read
            return "unknown bytes"
    return "a text file"


def input_args(path: Path, allowed: frozenset[str] = AUDIO, what: str = "an audio file") -> list[str]:
    """ffmpeg's input options for `path`: `-protocol_whitelist file`, `-f` the demuxer its bytes name (refused
    unless in `allowed`), that demuxer's references off, and the file as a `file:` URL (no name is read as another
    protocol). Raises InputRefused."""
    path = Path(path)
    kind = container(path, allowed, what)
    return ["-protocol_whitelist", "file", "-f", kind, *NO_REFERENCES.get(kind, []), "-i", f"file:{path.resolve()}"]


def refuse_references(path: Path, stderr: str) -> None:
    """Refuse a file whose header names another file for its media (ffmpeg reported it and did not follow it)."""
    if EXTERNAL.search(stderr):
        raise InputRefused(f"{shown(path)}: its media are in another file (an external reference), refused")
