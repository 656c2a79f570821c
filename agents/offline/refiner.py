"""The offline refiner, an assistant editor: each creator note changes the shots it is about (prompts rewritten as
prompts, never the note pasted in), a film-level note changes the style guide or a character; then the panel's
most agreed concrete changes are taken where no note disagrees. What is left, and why, goes in `not_changed`.
Heuristic: rules over the note's words and the critics' directions, not a model.
"""

from __future__ import annotations

import re
from collections import defaultdict

from agents.base import Result
from agents.offline.directions import Direction, read
from agents.offline.notes import Hearing, Look, Reading, read_hearing, read_note, split_requests
from agents.offline.words import READ_WPS, SHOT_TYPES, capitalise, stem, without_shot_type
from storage.edits import brief
from storage.run import RunContext
from storage.schema import (
    Answer,
    CharacterVoice,
    Critique,
    Edit,
    Note,
    Proposal,
    RemoveShot,
    SetCharacter,
    SetLevel,
    SetLine,
    SetMusic,
    SetShot,
    SetStory,
    SetVoice,
    ShotField,
    Storyboard,
    Unchanged,
)

FLASHY = frozenset({"lightning", "flashing", "flash", "flashes", "strobe", "strobing", "flicker", "flickering"})
CLOSE = {
    "close-up": 1,
    "insert": 1,
    "reaction": 1,
    "medium": 0,
    "two-shot": 0,
    "over-the-shoulder": 0,
    "wide": -1,
    "establishing": -1,
}


# The shot field a critic's direction changes, by its kind.
DIRECTION_FIELD: dict[str, ShotField] = {
    "duration": "duration",
    "camera": "camera",
    "reframe": "prompt",
    "include": "prompt",
    "steady": "prompt",
    "narrate": "narration",
    "unsay": "narration",
}


def rewrite(prompt: str, looks: list[Look], add: list[str], drop: frozenset[str] = frozenset()) -> str:
    """The prompt with the looks merged in after its subject, clauses that go against them (or name `drop` words)
    removed, and `add` phrases included."""
    clauses = [c.strip() for c in prompt.split(",") if c.strip()]
    against = set().union(*(lk.against for lk in looks)) | set(drop)
    head = " ".join(w for w in clauses[0].split() if w.lower().strip(".;:") not in against)
    rest = [c for c in clauses[1:] if not set(re.findall(r"[a-z\-]+", c.lower())) & against]
    new = [lk.phrase for lk in looks if lk.phrase.lower() not in prompt.lower()]
    new += [a for a in add if a.lower() not in prompt.lower()]
    return ", ".join([head, *new, *rest])


def _has(text: str, phrase: str) -> bool:
    """Whether `text` mentions `phrase` (a plural or singular form of its last word counts: 'seagull(s)')."""
    words = phrase.lower().split()
    if not words:
        return False
    body = r"\s+".join(map(re.escape, words[:-1] + [stem(words[-1])]))
    return re.search(rf"\b{body}(s|es)?\b", text.lower()) is not None


def swap(prompt: str, replace: list[tuple[str, str]], remove: list[str], less: list[str]) -> str:
    """The prompt with each (old, new) replaced — a short new phrase takes the old one's place in its clause; a long
    one (a description) replaces the clauses that mention the old — and the clauses that mention what is removed or
    toned down taken out (a toned-down thing stays as a light mention). The opening clause (shot type and subject)
    is kept, only the words go."""
    clauses = [c.strip() for c in prompt.split(",") if c.strip()]
    head, rest, added = clauses[0], clauses[1:], []
    for old, new in replace:
        if not _has(prompt, old):
            continue
        short = "," not in new and len(new.split()) <= 5
        if short:
            pat = re.compile(rf"\b(an?\s+|the\s+)?{re.escape(old)}\b", re.I)
            sub = lambda m: (m.group(1) or "") + re.sub(r"^(an?|the)\s+", "", new, flags=re.I)  # noqa: E731
            head, rest = pat.sub(sub, head), [pat.sub(sub, c) for c in rest]
        else:
            head = re.sub(rf"\s*\b{re.escape(old)}\b", "", head, flags=re.I)
            rest = [c for c in rest if not _has(c, old)]
            added.append(new)
    for thing in remove + less:
        if not _has(prompt, thing):
            continue
        rest = [c for c in rest if not _has(c, thing)]
        head = re.sub(rf"(,|\s+with|\s+and)?\s+(?:\w+\s+)?{re.escape(thing)}\w*\b", "", head, flags=re.I)
        if thing in less:
            added.append(f"a little {thing}")
    return ", ".join(x for x in [head, *rest, *added] if x)


def reframe(prompt: str, kind: str) -> str:
    return f"{SHOT_TYPES[kind][0]}: {without_shot_type(prompt)}"


class Editor:
    """One proposal being assembled: edits by (shot, field), what notes asked (to refuse critics who disagree)."""

    def __init__(self, board: Storyboard) -> None:
        self.board = board
        self.shots = {s.shot_id: s for s in board.shots()}
        self.order = list(self.shots)
        self.pending: dict[tuple[str, ShotField], dict] = {}
        self.asked: dict[str, dict[str, tuple[int, str]]] = defaultdict(
            dict
        )  # shot or "*" -> axis -> (sign, note text)
        self.extra: list[Edit] = []
        self.not_changed: list[Unchanged] = []
        self.levels: dict[tuple[str | None, str], dict] = {}  # (scene or None: the film, field) -> new, why, sources
        self.notes_end: int | None = None
        self.requests: list[dict] = []  # each request of the notes: its note, words, the edits it made, its reasons

    def add(self, edit: Edit) -> None:
        self.extra.append(edit)
        self.made(("x", len(self.extra) - 1))

    def made(self, ref: tuple) -> None:
        """Record that the request being read made (or joined) this edit."""
        if self.requests:
            self.requests[-1]["refs"].append(ref)

    def begin(self, note: Note, request: str) -> None:
        """Read one request of a note: what it makes, and what it leaves (why), are its answer."""
        self.requests.append({"note": note.id, "request": request, "refs": [], "left": len(self.not_changed)})

    def left(self, what: str, why: str) -> None:
        if all((u.what, u.why) != (what, why) for u in self.not_changed):
            self.not_changed.append(Unchanged(what=what, why=why))

    def current(self, sid: str, field: ShotField) -> str:
        key = (sid, field)
        return self.pending[key]["new"] if key in self.pending else str(getattr(self.shots[sid], field))

    def set(self, sid: str, field: ShotField, new: str, why: str, source: str, by_note: bool) -> bool:
        if self.shots[sid].locked:
            self.left(f"{sid} {field}", "the shot is locked")
            return False
        key = (sid, field)
        entry = self.pending.setdefault(key, {"new": "", "why": [], "src": [], "note": False})
        entry["new"] = new
        entry["why"].append(why)
        entry["src"] = list(dict.fromkeys([*entry["src"], source]))
        entry["note"] = entry["note"] or by_note
        if by_note:
            self.made(("p", sid, field))
        return True

    # ------------------------------------------------------------------ notes
    def note(self, note: Note) -> None:
        if note.shot_id and note.shot_id not in self.shots:
            self.left(f"note {note.text[:60]!r}", f"shot {note.shot_id} is not in this version")
            return
        r = read_note(note, self.board)
        why = f"your note {note.text[:120]!r}"  # ids stay in `sources` (an archive import renumbers them)
        if r.empty:
            why_not = r.hearing.unread or "no change a rule can read in it; edit the shot by hand"
            self.left(f"note {note.text[:60]!r}", why_not)
            return
        self.remember(r, note)
        if not r.hearing.empty:
            self.sound(r, note, why)
        elif r.scope == "character":
            self.character(r, note, why)
        elif not r.shots:
            self.film(r, note, why)
        else:
            for sid in r.shots:
                self.shot(sid, r, note, why)
        self.unfound(r, note)

    def unfound(self, r: Reading, note: Note) -> None:
        """Say plainly what a note asked to replace, remove or tone down that no shot it is about shows."""
        about = r.shots or self.order
        for thing in [old for old, _ in r.replace] + r.remove + r.less:
            if not any(
                _has(self.current(sid, "prompt"), thing) or _has(self.shots[sid].prompt, thing) for sid in about
            ):
                where = "the shots it is about" if r.shots else "any shot"
                self.left(
                    f"note {note.text[:60]!r}", f"{thing!r} is not in {where}, so nothing was replaced or removed"
                )

    def remember(self, r: Reading, note: Note) -> None:
        axes = {lk.axis: lk.sign for lk in r.looks}
        if r.pace:
            axes["pace"] = r.pace
        if r.frame:
            axes["frame"] = CLOSE[r.frame]
        if r.camera:
            axes["motion"] = -1 if r.camera == "static" else 1
        if r.line is not None:
            axes["speech"] = 1 if r.line else -1
        for sid in r.shots or ["*"]:
            for axis, sign in axes.items():
                self.asked[sid][axis] = (sign, note.text[:60])

    def shot(self, sid: str, r: Reading, note: Note, why: str) -> None:
        shot = self.shots[sid]
        if r.cut and r.scope == "shot":
            if shot.locked:
                self.left(f"remove {sid}", "the shot is locked")
            else:
                self.add(RemoveShot(shot_id=sid, rationale=why, sources=[note.id]))
            return
        if r.pace:
            self.set(sid, "duration", f"{shot.duration * (0.75 if r.pace > 0 else 1.3):.2f}", why, note.id, True)
        prompt = self.current(sid, "prompt")
        if r.frame:
            prompt = reframe(prompt, r.frame)
        if r.replace or r.remove or r.less:
            prompt = swap(prompt, r.replace, r.remove, r.less)
        if r.looks or r.add:
            prompt = rewrite(prompt, r.looks, r.add)
        if prompt != shot.prompt:
            self.set(sid, "prompt", prompt, why, note.id, True)
        gone = [old for old, _ in r.replace] + r.remove  # what the note takes out, the model is told to avoid
        if gone:
            self.avoid(sid, [g for g in gone if _has(shot.prompt, g)], why, note.id)
        if r.camera:
            self.set(sid, "camera", r.camera, why, note.id, True)
        if r.line is not None:
            self.set(sid, "narration", r.line, why, note.id, True)
        if r.avoid:
            self.avoid(sid, r.avoid, why, note.id)

    def avoid(self, sid: str, words: list[str], why: str, source: str) -> None:
        neg = self.current(sid, "negative_prompt")
        new = ", ".join(x for x in [neg, *[w for w in words if w.lower() not in neg.lower()]] if x)
        if new != neg:
            self.set(sid, "negative_prompt", new, why, source, True)

    def character(self, r: Reading, note: Note, why: str) -> None:
        c = next(c for c in self.board.characters if c.name == r.character)
        parts = [p for p in re.split(r";\s*", c.description)]
        against = set().union(*(lk.against for lk in r.looks)) | {w.lower() for w in r.avoid}
        parts = [p for p in parts if not set(re.findall(r"[a-z\-]+", p.lower())) & against]
        traits = list(dict.fromkeys(r.traits or [lk.phrase for lk in r.looks]))
        new = "; ".join([*parts, ", ".join(t for t in traits if t.lower() not in c.description.lower())]).strip("; ")
        if new != c.description and len(new) <= 1000:
            self.add(SetCharacter(character=c.name, new=new, rationale=why, sources=[note.id]))
        for s in self.board.shots():
            if r.avoid and (c.name in s.characters or c.name.lower() in s.prompt.lower()):
                self.avoid(s.shot_id, r.avoid, why, note.id)

    def film(self, r: Reading, note: Note, why: str) -> None:
        changes = [old for old, _ in r.replace] + r.remove + r.less  # film-wide: every shot that shows them
        for sid in self.order if changes else []:
            if any(_has(self.shots[sid].prompt, x) for x in changes):
                self.shot(
                    sid,
                    Reading(scope="keyword", shots=[sid], replace=r.replace, remove=r.remove, less=r.less),
                    note,
                    why,
                )
        if r.looks or r.style:
            guide = self.board.style_guide
            against = set().union(*(lk.against for lk in r.looks))
            clauses = [c.strip() for c in guide.split(",") if c.strip()]
            if r.style:
                clauses = [c for c in clauses if not c.lower().endswith(" look")]
            clauses = [c for c in clauses if not set(re.findall(r"[a-z\-]+", c.lower())) & against]
            new = [capitalise(" ".join(r.style)) + " look"] if r.style else []
            new += clauses + [lk.phrase for lk in r.looks if lk.phrase.lower() not in guide.lower()]
            self.add(
                SetStory(
                    field="style_guide",
                    new=", ".join(new)[:4000],
                    rationale=f"{why} (film-wide: the style guide is folded into every prompt)",
                    sources=[note.id],
                )
            )
        if r.pace:
            long = sorted(self.order, key=lambda s: self.shots[s].duration)[len(self.order) // 2 :]
            for sid in long if r.pace > 0 else self.order:
                self.set(
                    sid,
                    "duration",
                    f"{self.shots[sid].duration * (0.8 if r.pace > 0 else 1.2):.2f}",
                    why,
                    note.id,
                    True,
                )
        for sid in self.order if r.avoid else []:
            self.avoid(sid, r.avoid, why, note.id)
        if r.frame or r.camera or r.add or r.line is not None:
            self.left(f"note {note.text[:60]!r}", "framing, camera, additions and lines need a shot: give the note one")

    # ------------------------------------------------------------------ sound
    def sound(self, r: Reading, note: Note, why: str) -> None:
        """A note about the sound: levels and cues on the scenes it is about (the film's when none), effects and
        deliveries on its shots, a voice on its character."""
        h, what = r.hearing, f"note {note.text[:60]!r}"
        scenes = [sc for sc in self.board.scenes if any(s.shot_id in r.shots for s in sc.shots)]
        if h.music_db or h.effects_db:
            for field, db in (("music_level", h.music_db), ("effects_level", h.effects_db)):
                if not db:
                    continue
                if not scenes:
                    self.level(None, field, db, why, note.id, True)
                for sc in scenes:
                    has = sc.music.strip() if field == "music_level" else any(s.sounds.strip() for s in sc.shots)
                    if has:
                        self.level(sc.scene_id, field, db, why, note.id, True)
                    else:
                        stem = "music" if field == "music_level" else "sounds"
                        self.left(what, f"scene {sc.scene_id} has no {stem} to make louder or quieter")
        if h.cue is not None:
            for sc in scenes or (self.board.scenes if h.cue == "" else []):
                if sc.music != h.cue:
                    self.add(SetMusic(scene_id=sc.scene_id, new=h.cue, rationale=why, sources=[note.id]))
            if not scenes and h.cue:
                self.left(what, "a new cue needs its scene: name the scene or give the note one")
        if h.sounds or h.no_sounds:
            if not r.shots:
                self.left(what, "sounds need a shot or a scene: give the note one")
            for sid in r.shots:
                old = self.current(sid, "sounds")
                kept = [] if h.no_sounds else [p.strip() for p in old.split(",") if p.strip()]
                new = ", ".join(kept + [x for x in h.sounds if not _has(old, x)])
                if new != old and len(new) <= 1000:
                    self.set(sid, "sounds", new, why, note.id, True)
        if h.delivery:
            self.delivery(r, h, note, why)
        if h.voice:
            self.voice(h, note, why)

    def delivery(self, r: Reading, h: Hearing, note: Note, why: str) -> None:
        """The delivery on the lines the note is about: its character's in its shots (every shot when it names no
        shot), else every line of the one shot it is about."""
        what = f"note {note.text[:60]!r}"
        about = [self.shots[sid] for sid in (r.shots or self.order)]
        lines = [
            (s, n)
            for s in about
            for n, ln in enumerate(s.dialogue, 1)
            if (ln.character == h.character if h.character else len(r.shots) == 1)
        ]
        if not lines:
            why_not = "no line of theirs" if h.character else "which line: put the note on its shot or name the speaker"
            self.left(what, f"{why_not} in the shots it is about" if h.character else why_not)
            return
        if len(lines) > 6:
            self.left(what, f"{len(lines)} lines would change: put the note on one shot or scene")
            return
        for s, n in lines:
            if s.locked:
                self.left(f"{s.shot_id} line {n}", "the shot is locked")
            elif s.dialogue[n - 1].delivery != h.delivery:
                self.add(SetLine(shot_id=s.shot_id, line=n, delivery=h.delivery, rationale=why, sources=[note.id]))

    def voice(self, h: Hearing, note: Note, why: str) -> None:
        c = next(c for c in self.board.characters if c.name == h.character)
        old = c.voice or CharacterVoice()
        pitch, pace = h.voice or (0.0, 1.0)
        self.add(
            SetVoice(
                character=c.name,
                old=old,
                pitch=round(max(-12.0, min(12.0, old.pitch + pitch)), 2) if pitch else None,
                pace=round(max(0.5, min(2.0, old.pace * pace)), 3) if pace != 1.0 else None,
                rationale=why,
                sources=[note.id],
            )
        )

    def level(self, scene_id: str | None, field: str, db: float, why: str, source: str, by_note: bool) -> None:
        """A scene's (or the film's) level moved by `db`, within its range; a note's level is not undone by a critic."""
        key = (scene_id, field)
        entry = self.levels.get(key)
        if entry and entry["note"] and not by_note:
            return
        if scene_id is None:
            now, low = getattr(self.board.film, field), -60.0
        else:
            now, low = getattr(next(sc for sc in self.board.scenes if sc.scene_id == scene_id), field), -40.0
        if by_note:
            self.made(("l", scene_id, field))
        self.levels[key] = {
            "new": round(max(low, min(12.0, now + db)), 1),
            "why": [*(entry["why"] if entry else []), why],
            "src": list(dict.fromkeys([*(entry["src"] if entry else []), source])),
            "note": by_note or bool(entry and entry["note"]),
        }

    def heard(self, critiques: list[Critique]) -> set[int]:
        """The critics' notes about the music or the effects' level: a scene's level when two of them, or one
        urgently, ask it, and no note of yours decided that scene's level."""
        groups: dict[tuple[str, str, float], dict] = {}
        read: set[int] = set()  # the issues read here (id), which are no question for the creator
        for c in critiques:
            for issue in c.top_issues:
                h = read_hearing(f"{issue.summary}. {issue.suggestion}", self.board)
                for field, db in (("music_level", h.music_db), ("effects_level", h.effects_db)):
                    if not db or not issue.shot_ids:
                        continue
                    read.add(id(issue))
                    for sc in self.board.scenes:
                        if any(s.shot_id in issue.shot_ids for s in sc.shots):
                            g = groups.setdefault((sc.scene_id, field, db), {"who": [], "urgency": 0, "summary": ""})
                            g["who"] = list(dict.fromkeys([*g["who"], c.persona_id]))
                            g["urgency"] = max(g["urgency"], issue.urgency)
                            g["summary"] = g["summary"] or issue.summary
        for (scene_id, field, db), g in groups.items():
            who, what = ", ".join(g["who"]), f"{scene_id} {field.replace('_', ' ')}: {g['summary'][:120]}"
            if len(g["who"]) < 2 and g["urgency"] < 4:
                self.left(what, f"only {who} raised it")
            elif self.levels.get((scene_id, field), {}).get("note"):
                self.left(what, "your note already decides its level")
            else:
                for src in g["who"]:
                    self.level(
                        scene_id, field, db, f"{len(g['who'])} viewer(s) ({who}): {g['summary'][:160]}", src, False
                    )
        return read

    # ------------------------------------------------------------------ critics
    def critics(self, critiques: list[Critique], limit: int) -> None:
        heard = self.heard(critiques)
        durations = {sid: s.duration for sid, s in self.shots.items()}
        groups: dict[Direction, dict] = {}
        for c in critiques:
            for issue in c.top_issues:
                found = read(issue.suggestion, issue.shot_ids, durations)
                if not found and id(issue) not in heard:
                    self.left(issue.summary[:160], "a question for you, not a change a rule can make")
                for d in found:
                    g = groups.setdefault(d, {"who": [], "urgency": 0, "summary": issue.summary})
                    g["who"] = list(dict.fromkeys([*g["who"], c.persona_id]))
                    g["urgency"] = max(g["urgency"], issue.urgency)
        ranked = sorted(
            groups.items(), key=lambda kv: (-len(kv[1]["who"]), -kv[1]["urgency"], self.order.index(kv[0].shot_id))
        )
        taken = 0
        for d, g in ranked:
            what = f"{d.shot_id}: {g['summary'][:120]}"
            who = ", ".join(g["who"])
            if taken >= limit:
                self.left(what, "lower priority than the changes proposed")
                continue
            if len(g["who"]) < 2 and g["urgency"] < 4:
                self.left(what, f"only {who} raised it")
                continue
            refusal = self.disagrees(d)
            if refusal:
                self.left(what, refusal)
                continue
            if self.apply(d, f"{len(g['who'])} viewer(s) ({who}): {g['summary'][:160]}", g["who"]):
                taken += 1

    def disagrees(self, d: Direction) -> str:
        """Why a creator's note rules this direction out ("" when none does)."""
        shot = self.shots[d.shot_id]
        field = DIRECTION_FIELD[d.kind]
        if self.pending.get((d.shot_id, field), {}).get("note"):
            return f"your note already decides its {field}"
        axis, sign = {
            "duration": ("pace", 1 if d.kind == "duration" and d.value and float(d.value) < shot.duration else -1),
            "camera": ("motion", -1 if d.value == "static" else 1),
            "reframe": ("frame", CLOSE.get(d.value, 0)),
            "narrate": ("speech", 1),
            "unsay": ("speech", -1),
            "include": ("", 0),
            "steady": ("", 0),
        }[d.kind]
        for scope in (d.shot_id, "*"):
            asked = self.asked.get(scope, {}).get(axis)
            if asked and sign and asked[0] == -sign:
                return f"your note {asked[1]!r} asks the opposite"
        return ""

    def apply(self, d: Direction, why: str, who: list[str]) -> bool:
        sid, shot = d.shot_id, self.shots[d.shot_id]
        if d.kind == "duration":
            words = len(f"{self.current(sid, 'narration')} {shot.spoken()}".split())
            asked = min(max(float(d.value), shot.duration * 0.7), shot.duration * 1.3)  # one step at a time
            seconds = max(asked, round(words / READ_WPS, 2))  # never too short to read its line
            if abs(seconds - shot.duration) < 0.05:
                self.left(f"{sid} duration", "shorter would not leave time to say its line")
                return False
            return self.set(sid, "duration", f"{seconds:.2f}", why, who[0], False) and self.cite(sid, "duration", who)
        if d.kind == "camera":
            moving = sum(self.current(s, "camera") != "static" for s in self.order) + (d.value != "static")
            if d.value != "static" and moving / len(self.order) > 0.7:
                self.left(f"{sid} camera", "the camera already moves in most shots; more would feel restless")
                return False
            return self.set(sid, "camera", d.value, why, who[0], False) and self.cite(sid, "camera", who)
        if d.kind == "unsay":
            return self.set(sid, "narration", "", why, who[0], False) and self.cite(sid, "narration", who)
        if d.kind == "narrate":
            line = self.board.scene_of(sid).description.strip()
            if not line or any(line == s.narration for s in self.board.shots()):
                self.left(f"{sid} narration", "a new line would be invented story: write it yourself")
                return False
            return self.set(sid, "narration", line, why, who[0], False) and self.cite(sid, "narration", who)
        prompt = self.current(sid, "prompt")
        if d.kind == "reframe":
            prompt = reframe(prompt, d.value)
        elif d.kind == "include":
            prompt = rewrite(prompt, [], [f"{d.value} in the frame"])
        else:  # steady: no flashing in the picture, and the model told to avoid it
            prompt = rewrite(prompt, [], [], FLASHY)
            neg = self.current(sid, "negative_prompt")
            if "strob" not in neg:
                self.set(
                    sid,
                    "negative_prompt",
                    ", ".join(x for x in (neg, "flashing light, strobing") if x),
                    why,
                    who[0],
                    False,
                )
        if prompt == shot.prompt:
            return False
        return self.set(sid, "prompt", prompt, why, who[0], False) and self.cite(sid, "prompt", who)

    def cite(self, sid: str, field: ShotField, who: list[str]) -> bool:
        entry = self.pending[(sid, field)]
        entry["src"] = list(dict.fromkeys([*entry["src"], *who]))
        return True

    def proposal(self, n_notes: int, n_crits: int) -> Proposal:
        edits: list[Edit] = []
        number: dict[tuple, int] = {}  # a request's ref -> the edit's number
        for (sid, field), p in sorted(self.pending.items(), key=lambda kv: self.order.index(kv[0][0])):
            old = str(getattr(self.shots[sid], field))
            if p["new"] != old:
                number[("p", sid, field)] = len(edits) + 1
                edits.append(
                    SetShot(
                        shot_id=sid,
                        field=field,
                        old=old,
                        new=p["new"],
                        rationale="; ".join(dict.fromkeys(p["why"]))[:4000],
                        sources=p["src"],
                    )
                )
        for k, e in enumerate(self.extra):
            number[("x", k)] = len(edits) + 1
            edits.append(e)
        for (scene_id, field), p in self.levels.items():
            number[("l", scene_id, field)] = len(edits) + 1
            edits.append(
                SetLevel(
                    scene_id=scene_id,
                    field=field,  # type: ignore[arg-type]
                    new=p["new"],
                    rationale="; ".join(dict.fromkeys(p["why"]))[:4000],
                    sources=p["src"],
                )
            )
        answers = []
        for k, r in enumerate(self.requests):
            made = sorted({number[ref] for ref in r["refs"] if ref in number})
            end = self.requests[k + 1]["left"] if k + 1 < len(self.requests) else self.notes_end
            reasons = [u.why for u in self.not_changed[r["left"] : end]]
            if made:
                words = "; ".join(dict.fromkeys(brief(edits[n - 1], self.board) for n in made))
                answers.append(
                    Answer(note_id=r["note"], request=r["request"], edits=made, answer=words, status="changed")
                )
            else:
                why = "; ".join(dict.fromkeys(reasons)) or "no rule reads it as a change; edit it by hand"
                answers.append(Answer(note_id=r["note"], request=r["request"], answer=why, status="not changed"))
        summary = (
            f"{len(edits)} edit(s) from {n_notes} note(s) and {n_crits} critique(s); "
            f"{len(self.not_changed)} thing(s) left as they are"
        )
        return Proposal(summary=summary, edits=edits, not_changed=self.not_changed, answers=answers)


class OfflineRefiner:
    """Refiner role without a model (agents.base.Refiner)."""

    mode = "offline"

    def __init__(self, max_critic_edits: int = 8) -> None:
        self.max_critic_edits = max_critic_edits

    def refine(
        self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique], ctx: RunContext | None = None
    ) -> Result[Proposal]:
        """Edits for the notes, then the critics' directions; the service keeps those within `ctx.scope`."""
        (ctx or RunContext()).cancel.raise_if_cancelled("refiner (offline): cancelled")
        editor = Editor(storyboard)
        for note in notes:
            for request in split_requests(note.text):  # each request of a note is read, and answered, on its own
                editor.begin(note, request)
                editor.note(note.model_copy(update={"text": request}))
        editor.notes_end = len(editor.not_changed)  # what the critics leave is no request's answer
        editor.requests.append({"note": "", "request": "", "refs": [], "left": editor.notes_end})
        editor.critics(critiques, self.max_critic_edits)
        editor.requests.pop()
        return Result(editor.proposal(len(notes), len(critiques)), model="offline")
