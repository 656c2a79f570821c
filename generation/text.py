"""Text for files other programs parse: FCPXML and OTIO (XML and JSON), CMX 3600 EDL, SRT and WebVTT.

Notes, titles and critiques come from people and from LLMs and may hold characters XML 1.0 cannot hold (C0
controls such as U+0001, lone surrogates, U+FFFE/U+FFFF): an XML writer then produces a file no parser reads.
`plain` drops them and every other control character, and puts the text on one line.
"""

from __future__ import annotations

import re

# C0 and C1 controls and DEL (tab, newline and carriage return become spaces first), lone surrogates, and the
# two noncharacters XML 1.0 excludes
_UNFIT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def plain(text: str) -> str:
    """`text` on one line (runs of whitespace as one space) without characters XML, EDL or subtitles cannot hold."""
    return " ".join(_UNFIT.sub("", " ".join(text.split())).split())
