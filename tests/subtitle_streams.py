"""Reading a film's soft subtitle stream back (there is no ffprobe here: ffmpeg lists the streams and writes the
subtitle stream out as SRT)."""

from __future__ import annotations

import re
import subprocess


def soft_subtitles(film) -> tuple[str, str]:
    """(the `ffmpeg -i` lines of the film's subtitle streams, "" when it has none; its first subtitle stream's text
    as SRT, "" when none)."""
    from generation.video_io import ffmpeg_exe

    listing = subprocess.run([ffmpeg_exe(), "-hide_banner", "-i", str(film)], capture_output=True, text=True).stderr
    streams = "\n".join(re.findall(r"Stream #\d+:\d+.*Subtitle.*", listing))
    if not streams:
        return "", ""
    got = subprocess.run(
        [ffmpeg_exe(), "-v", "error", "-i", str(film), "-map", "0:s:0", "-f", "srt", "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    return streams, got.stdout


def srt_cues(text: str) -> list[tuple[str, str]]:
    """(timing line, text with its lines joined by " / ") per SRT block."""
    blocks = [b.splitlines() for b in text.strip().split("\n\n") if b.strip()]
    return [(b[1], " / ".join(b[2:])) for b in blocks]
