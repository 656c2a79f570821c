"""Text for other tools: files other programs parse (FCPXML and OTIO, CMX 3600 EDL, SRT and WebVTT), a spreadsheet's
CSV cells, and a terminal.

Notes, titles, persona and account names come from people, from files and from LLMs. Each tool reads some characters
as instructions: XML 1.0 cannot hold C0 controls such as U+0001, lone surrogates or U+FFFE/U+FFFF (a writer then
produces a file no parser reads); a spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` as a formula; a
terminal runs escape sequences (ESC and the C1 controls: cursor moves, OSC 52 clipboard writes, titles, hyperlinks)
and reorders text at bidi overrides and isolates. Each helper here makes text safe for one of them:

- `plain`: one line without control or format characters, for files (XML, EDL, subtitles).
- `csv_cell`: a cell a spreadsheet shows as text (OWASP's CSV-injection advice: a leading `'`).
- `terminal`: what a terminal shows as it is written, decided by Unicode category (`str.isprintable`), not by a list
  of known sequences: every control (Cc), format (Cf), surrogate, private-use and unassigned character goes.
"""

from __future__ import annotations

import re
import unicodedata

# C0 and C1 controls and DEL (tab, newline and carriage return become spaces first), lone surrogates, and the
# two noncharacters XML 1.0 excludes
_UNFIT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
# An escape sequence's body after ESC (or its C1 form) as terminals read it: CSI parameters and final byte, an
# OSC/DCS/APC/PM/SOS string up to its terminator (BEL or ST), or one character. Each class is disjoint from what
# ends it, so the pattern is linear in the text.
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[\x20-\x3f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
# Characters a spreadsheet starts a formula with (and their full-width forms), and the whitespace before them that
# some spreadsheets skip
_FORMULA = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
_CELL_SPACE = " \t\r\n\x0b\x0c"


def plain(text: str) -> str:
    """`text` on one line (runs of whitespace as one space) without characters XML, EDL or subtitles cannot hold,
    nor format characters (bidi overrides and isolates, zero-width marks) that reorder or hide what an editor
    shows."""
    kept = _UNFIT.sub("", " ".join(text.split()))
    kept = "".join(c for c in kept if unicodedata.category(c) != "Cf")
    return " ".join(kept.split())


def csv_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a string that starts with `=`, `+`, `-`, `@` (after any whitespace),
    a tab or a carriage return gets a leading `'` (OWASP). Numbers and other values are left as they are."""
    if not isinstance(value, str) or not value:
        return value
    if value[0] in _CELL_SPACE or value.lstrip(_CELL_SPACE)[:1] in _FORMULA:
        return "'" + value
    return value


def terminal(text: object, *, lines: bool = False) -> str:
    """`text` as a terminal should show it: escape sequences removed whole, then every character that is not
    printable (controls, format characters such as bidi overrides and isolates, surrogates, private-use and
    unassigned code points) dropped, and other separators (tab, a line or paragraph separator) made a space.
    With `lines`, newlines (and tabs) are kept: text of several lines, such as a command's output."""
    out = []
    for c in _ESCAPE.sub("", str(text)):
        if c.isprintable():
            out.append(c)
        elif lines and c in "\n\t":
            out.append(c)
        elif c in "\t\n\x0b\x0c\r" or unicodedata.category(c) in ("Zs", "Zl", "Zp"):
            out.append(" ")
    return "".join(out)


def json_text(text: str) -> str:
    """JSON text (as `json.dumps` writes it) safe for a terminal: every character that is not printable (but the
    newlines of its indentation) is written as its `\\uXXXX` escape instead, so the value read back is the same."""
    out = []
    for c in text:
        if c.isprintable() or c == "\n":
            out.append(c)
        elif ord(c) > 0xFFFF:
            hi, lo = divmod(ord(c) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + hi:04x}\\u{0xDC00 + lo:04x}")
        else:
            out.append(f"\\u{ord(c):04x}")
    return "".join(out)
