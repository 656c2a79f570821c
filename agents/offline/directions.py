"""Concrete changes a critic can ask for and an editor can make, as plain English both ways.

The offline critic writes them into `CritiqueIssue.suggestion` ("cut s004 down to about 4.0 s; reframe s009 as a
close-up"); the offline refiner reads them back, and reads an LLM critic's free-text suggestion loosely. They are
about the story and the shots — durations, framing, camera, spoken lines, who is on screen — never about a
renderer's look.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.words import CAMERA_WORDS, SHOT_TYPES

PHRASES = {  # kind -> how it is said; {id} the shot, {v} the value
    "duration": "let {id} run about {v} s",
    "reframe": "reframe {id} as {v}",
    "camera": "give {id} {v}",
    "narrate": "add a short spoken line to {id} that says what happens",
    "unsay": "drop the spoken line on {id} and let the picture tell it",
    "include": "show {v} in {id}",
    "steady": "take the flashing out of {id}",
}
VALUES = {
    "duration": r"\d+(\.\d+)?",
    "reframe": f"an? (?:{'|'.join(SHOT_TYPES)})",
    "camera": "|".join(map(re.escape, CAMERA_WORDS.values())),
    "include": ".{1,120}",
}


@dataclass(frozen=True)
class Direction:
    kind: str  # a key of PHRASES
    shot_id: str
    value: str = ""  # seconds, a shot type, a camera move, or who/what to show

    def text(self) -> str:
        v = f"{float(self.value):.1f}" if self.kind == "duration" else CAMERA_WORDS.get(self.value, self.value)
        if self.kind == "reframe":
            v = ("an " if v[0] in "aeiou" else "a ") + v
        return PHRASES[self.kind].format(id=self.shot_id, v=v)


def write(directions: list[Direction]) -> str:
    return "; ".join(d.text() for d in directions)


def _pattern(kind: str) -> re.Pattern[str]:
    text = re.escape(PHRASES[kind]).replace(r"\{id\}", r"(?P<id>[A-Za-z0-9_\-]{1,40})")
    return re.compile("^" + text.replace(r"\{v\}", f"(?P<v>{VALUES.get(kind, '')})") + "$")


_EXACT = [(_pattern(kind), kind) for kind in PHRASES]
CAMERA_OF_WORDS = {v: k for k, v in CAMERA_WORDS.items()}
SHORTER = re.compile(r"\b(shorter|trim|tighten|tighter|quicker|faster|snappier|cut (it )?down|too long|drags?)\b", re.I)
LONGER = re.compile(r"\b(longer|linger|breathe|hold (it|the shot|on)|more time|too short|rushed)\b", re.I)
CAMERA_HINTS = {
    "push in": "dolly_in",
    "dolly": "dolly_in",
    "zoom in": "zoom_in",
    "zoom out": "zoom_out",
    "pan left": "pan_left",
    "pan right": "pan_right",
    "tilt up": "tilt_up",
    "tilt down": "tilt_down",
    "handheld": "handheld",
    "hand-held": "handheld",
    "lock off": "static",
    "locked-off": "static",
    "still camera": "static",
}


def read(text: str, shot_ids: list[str], durations: dict[str, float]) -> list[Direction]:
    """The directions in a suggestion: this module's own phrasing exactly, else a loose reading of free text
    (an LLM critic's) applied to the issue's shots. Unknown shots and unreadable text give no direction."""
    out: list[Direction] = []
    loose: list[str] = []
    for part in (p.strip().rstrip(".") for p in text.split(";")):
        for pattern, kind in _EXACT:
            m = pattern.match(part)
            if m and m["id"] in durations:
                value = m.groupdict().get("v") or ""
                value = value.split(" ", 1)[1] if kind == "reframe" else value
                out.append(Direction(kind, m["id"], CAMERA_OF_WORDS.get(value, value)))
                break
        else:
            loose.append(part)
    for part in loose:
        for sid in [s for s in shot_ids if s in durations]:
            if SHORTER.search(part):
                out.append(Direction("duration", sid, f"{durations[sid] * 0.75:.2f}"))
            elif LONGER.search(part):
                out.append(Direction("duration", sid, f"{durations[sid] * 1.25:.2f}"))
            hint = next((cam for words, cam in CAMERA_HINTS.items() if words in part.lower()), None)
            if hint:
                out.append(Direction("camera", sid, hint))
            kind = next((k for k in ("close-up", "wide", "medium", "insert", "reaction") if k in part.lower()), None)
            if kind and re.search(r"\b(reframe|as an?|use an?|try an?|cut to an?)\b", part, re.I):
                out.append(Direction("reframe", sid, kind))
    return out
