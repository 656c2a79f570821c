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



@dataclass(frozen=True)
class Direction:
    kind: str  # duration, reframe, camera, narrate, unsay, include or steady
    shot_id: str
    value: str = ""  # seconds, a shot type, a camera move, or who/what to show

    def text(self) -> str:
        if self.kind == "duration":
            return f"let {self.shot_id} run about {float(self.value):.1f} s"
        if self.kind == "reframe":
            return f"reframe {self.shot_id} as a {self.value}"
        if self.kind == "camera":
            return f"give {self.shot_id} {CAMERA_WORDS[self.value]}"
        if self.kind == "narrate":
            return f"add a short spoken line to {self.shot_id} that says what happens"
        if self.kind == "unsay":
            return f"drop the spoken line on {self.shot_id} and let the picture tell it"
        if self.kind == "include":
            return f"show {self.value} in {self.shot_id}"
        return f"take the flashing out of {self.shot_id}"


def write(directions: list[Direction]) -> str:
    return "; ".join(d.text() for d in directions)


_ID = r"(?P<id>[A-Za-z0-9_\-]{1,40})"
_EXACT = [
    (re.compile(rf"^let {_ID} run about (?P<v>\d+(\.\d+)?) s$"), "duration"),
    (re.compile(rf"^reframe {_ID} as an? (?P<v>{'|'.join(SHOT_TYPES)})$"), "reframe"),
    (re.compile(rf"^give {_ID} (?P<v>{'|'.join(map(re.escape, CAMERA_WORDS.values()))})$"), "camera"),
    (re.compile(rf"^add a short spoken line to {_ID} that says what happens$"), "narrate"),
    (re.compile(rf"^drop the spoken line on {_ID} and let the picture tell it$"), "unsay"),
    (re.compile(rf"^show (?P<v>.{{1,120}}) in {_ID}$"), "include"),
    (re.compile(rf"^take the flashing out of {_ID}$"), "steady"),
]
CAMERA_OF_WORDS = {v: k for k, v in CAMERA_WORDS.items()}
SHORTER = re.compile(r"\b(shorter|trim|tighten|tighter|quicker|faster|snappier|cut (it )?down|too long|drags?)\b", re.I)
LONGER = re.compile(r"\b(longer|linger|breathe|hold (it|the shot|on)|more time|too short|rushed)\b", re.I)
CAMERA_HINTS = {"push in": "dolly_in", "dolly": "dolly_in", "zoom in": "zoom_in", "zoom out": "zoom_out",
                "pan left": "pan_left", "pan right": "pan_right", "tilt up": "tilt_up", "tilt down": "tilt_down",
                "handheld": "handheld", "hand-held": "handheld", "lock off": "static", "locked-off": "static",
                "still camera": "static"}


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
