"""Subtitle files (SRT and WebVTT) from per-shot text.

Cues are plain (start, end, text) in seconds; text longer than a line is wrapped onto at most two
balanced lines, which is what players and the burn-in filter display well. A cue may ask for its own two lines
with a newline (an SDH cue: its sound tags above what is said) when each fits a line.

SDH captions (for viewers who cannot hear) add what is heard to the words: `sound_tags` turns a shot's sounds in
words into short bracketed tags ("[thunder rolling]"), and `speaker` names who talks ("MARA: ...").
"""

from __future__ import annotations

import html
import re
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


def cues_for(shots: list[tuple[float, float, str]], *, breaks: bool = False) -> list[Cue]:
    """One cue per shot with text (blank text makes no cue), in time order. Text is `plain` (no control
    characters, one line) and never holds the cue-timing arrow `-->`; with `breaks`, text of two lines (an SDH cue:
    its sound tags, then what is said) keeps its newline, each line plain."""
    cues = [Cue(float(s), float(e), _clean(t, breaks)) for s, e, t in shots if t and _clean(t, breaks)]
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


def _clean(text: str, breaks: bool = False) -> str:
    """`plain`, never the cue-timing arrow `-->`; with `breaks`, two lines stay two (each plain)."""
    if not breaks:
        return plain(text).replace("-->", "→")
    parts = [p for p in (plain(x).replace("-->", "→") for x in text.split("\n")) if p]
    return "\n".join(parts) if len(parts) == 2 else " ".join(parts)


def wrap(text: str, width: int = LINE_CHARS) -> list[str]:
    """One line if it fits in `width`, else the two most even lines (never more than two). Text of two lines kept
    apart by a newline stays so when each fits in `width`."""
    parts = text.split("\n")
    if len(parts) == 2 and all(0 < len(p) <= width for p in parts):
        return parts
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


# ---------------------------------------------------------------- SDH

TAG_SECONDS = 3.0  # how long a sound tag stays on screen when no line is said with it
MAX_TAGS = 3  # sound tags shown at once (more is not read)
TAG_WORDS = 4  # a tag's longest phrase: "[distant thunder rolling]"
# What is always there and says nothing to follow the film: no tag.
_BACKGROUND = re.compile(r"\b(room tone|silence|silent|quiet|faint|ambien(?:ce|t)|hum|small close sound)\b", re.I)
# A phrase is cut before where it says where the sound is ("rain on a tin roof" → "rain").
_WHERE = frozenset(
    "on in at over under around across through from into onto against along behind by near to with close beneath "
    "above below past toward towards inside outside underfoot".split()
)
_ARTICLES = frozenset({"a", "an", "the", "some"})


def sound_tags(words: str) -> list[str]:
    """The tags SDH captions show for a shot's sounds in words: one per phrase (split at commas, semicolons, colons
    and " and "), without background that says nothing (room tone, a faint breeze), each cut to what makes the
    sound and how (at most TAG_WORDS words, before where it is: "waves on rocks" → "[waves]"), lower case, in
    brackets, each once: "rain lashing, thunder rolling" → ["[rain lashing]", "[thunder rolling]"]."""
    out: list[str] = []
    for phrase in re.split(r"[,;:]|\band\b", plain(words).lower()):
        if not phrase.strip() or _BACKGROUND.search(phrase):
            continue
        kept: list[str] = []
        for w in re.findall(r"[\w'-]+", phrase):
            if kept and w in _WHERE:
                break
            if not kept and w in _ARTICLES:
                continue
            kept.append(w)
        tag = f"[{' '.join(kept[:TAG_WORDS])}]"
        if kept and tag not in out:
            out.append(tag)
    return out


def speaker(name: str, text: str) -> str:
    """A line with its speaker named, as SDH captions name them: "MARA: Not tonight." """
    return f"{plain(name).upper()}: {text}"
