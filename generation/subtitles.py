"""Subtitle files (SRT and WebVTT) from per-shot text.

Cues are plain (start, end, text) in seconds; text longer than a line is wrapped onto at most two
balanced lines, which is what players and the burn-in filter display well.
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass
from pathlib import Path

from generation.text import plain

LINE_CHARS = 42  # the usual broadcast subtitle line length


@dataclass
class Cue:
    start: float
    end: float
    text: str


def cues_for(shots: list[tuple[float, float, str]]) -> list[Cue]:
    """One cue per shot with text (blank text makes no cue), in time order. Text is `plain` (no control
    characters, one line) and never holds the cue-timing arrow `-->`."""
    cues = [Cue(float(s), float(e), plain(t).replace("-->", "→")) for s, e, t in shots if t and plain(t)]
    for c in cues:
        if c.end <= c.start:
            raise ValueError(f"cue ends before it starts: {c.start:.3f} → {c.end:.3f} ({c.text[:30]!r})")
    return sorted(cues, key=lambda c: c.start)


def split_window(start: float, end: float, texts: list[str]) -> list[tuple[float, float, str]]:
    """One (start, end, text) per text, the window [start, end] shared in order by word count (a longer line is
    on screen longer); blank texts are dropped."""
    texts = [t for t in texts if t and t.strip()]
    words = [max(1, len(t.split())) for t in texts]
    out, t0, total = [], float(start), sum(words)
    for i, (text, n) in enumerate(zip(texts, words)):
        t1 = float(end) if i == len(texts) - 1 else t0 + (end - start) * n / total
        out.append((t0, t1, text))
        t0 = t1
    return out


def wrap(text: str, width: int = LINE_CHARS) -> list[str]:
    """One line if it fits in `width`, else the two most even lines (never more than two)."""
    text = " ".join(text.split())
    if len(text) <= width:
        return [text]
    w = (len(text) + 1) // 2
    while len(lines := textwrap.wrap(text, w)) > 2:
        w += 1
    return lines


def timecode(seconds: float, sep: str = ",") -> str:
    """`HH:MM:SS,mmm` (SRT) or with sep="." `HH:MM:SS.mmm` (WebVTT), rounded to the millisecond."""
    ms = round(max(0.0, seconds) * 1000)
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def write_srt(cues: list[Cue], path: Path) -> Path:
    blocks = [
        f"{i}\n{timecode(c.start)} --> {timecode(c.end)}\n" + "\n".join(wrap(c.text)) for i, c in enumerate(cues, 1)
    ]
    return _write(path, "\n\n".join(blocks) + "\n" if blocks else "")


def write_vtt(cues: list[Cue], path: Path) -> Path:
    """WebVTT; `&`, `<` and `>` are escaped (cue text is markup there)."""
    blocks = [
        f"{timecode(c.start, '.')} --> {timecode(c.end, '.')}\n"
        + "\n".join(html.escape(ln, quote=False) for ln in wrap(c.text))
        for c in cues
    ]
    return _write(path, "WEBVTT\n\n" + "".join(b + "\n\n" for b in blocks))


def _write(path: Path, text: str) -> Path:
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return path
