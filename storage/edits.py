"""Edits on a storyboard: checking a proposal's edits (one place, for every refiner), applying them, and
diffing two storyboards. Pure functions."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from storage.schema import (
    CAMERA_MOVES,
    EDIT,
    EDITABLE_SHOT_FIELDS,
    AddLine,
    AddShot,
    Character,
    CharacterVoice,
    Edit,
    Limits,
    Line,
    MoveShot,
    RemoveLine,
    RemoveShot,
    Scene,
    SetCharacter,
    SetLevel,
    SetLine,
    SetMusic,
    SetShot,
    SetStory,
    SetVoice,
    Shot,
    Storyboard,
    Strict,
    Unchanged,
    first_error,
    lines_from_script,
    new_id,
    script,
)


class EditError(ValueError):
    """An edit cannot apply to this storyboard (names the edit and why)."""


# ---------------------------------------------------------------------------------------- checking


def check_value(field: str, new: str) -> str | None:
    """Why `new` is not a valid value for shot field `field`, or None."""
    try:
        if field == "duration" and not 0 < float(new) <= 60:
            return "duration must be within 0..60 seconds"
        if field == "seed" and not 0 <= int(new) < 2**32:
            return "seed must be a non-negative 32-bit integer"
    except ValueError:
        return f"{field} must be a number, got {new!r}"
    if field == "camera" and new not in CAMERA_MOVES:
        return f"camera must be one of {', '.join(CAMERA_MOVES)}"
    if field == "continuity" and new.strip().lower() not in ("true", "false", "1", "0", "yes", "no"):
        return "continuity must be true or false"
    if field == "prompt" and not new.strip():
        return "a prompt cannot be empty"
    if field == "dialogue":
        try:
            lines = lines_from_script(new)
        except ValidationError as err:
            return f"a line is invalid: {err.errors()[0]['msg']}"
        if len(lines) > 50:
            return "a shot holds at most 50 lines"
    if field in ("sounds", "music") and len(new) > 1000:
        return f"{field} must be at most 1000 characters"
    return None


def current_value(board: Storyboard, shot: Shot, field: str) -> str:
    """A shot field's value as an edit's `old` text: dialogue as its script, music as its scene's cue."""
    if field == "dialogue":
        return script(shot.dialogue)
    if field == "music":
        return board.scene_of(shot.shot_id).music
    return str(getattr(shot, field))


def _describe(raw: Any) -> str:
    get = raw.get if isinstance(raw, dict) else lambda k, d=None: getattr(raw, k, d)
    target = get("shot_id") or get("scene_id") or get("character") or get("field") or "the film"
    return f"{get('op', 'edit')} {target}"


LINE_OPS = (SetLine, AddLine, RemoveLine)


def voice_after(e: SetVoice, current: CharacterVoice | None) -> CharacterVoice:
    """The voice `e` makes: its changes over `current` (the character's stored voice), else over the voice the
    refiner saw (`e.old`: stored or cast from the names), else over the default voice."""
    base = current or e.old or CharacterVoice()
    changes = {k: v for k, v in (("pitch", e.pitch), ("pace", e.pace), ("speaker", e.speaker)) if v is not None}
    return CharacterVoice.model_validate({**base.model_dump(), **changes})


def level_of(board: Storyboard, scene_id: str | None, field: str) -> float:
    """A scene's level offset (dB over the film's), or the film's level when `scene_id` is None."""
    if scene_id is None:
        return getattr(board.film, field)
    return getattr(_scene(board, scene_id), field)


def _scene(board: Storyboard, scene_id: str) -> Scene:
    for sc in board.scenes:
        if sc.scene_id == scene_id:
            return sc
    raise KeyError(f"no scene {scene_id!r}")


def _sound(e: Edit, board: Storyboard, shots: dict[str, Shot]) -> tuple[Edit | None, str | None]:
    """A sound edit checked against `board`: (the edit with `old` from the board, None) to keep, (None, why) to
    drop, (None, None) when it changes nothing."""
    if isinstance(e, (SetMusic, SetLevel)) and e.scene_id is not None:
        if e.scene_id not in {sc.scene_id for sc in board.scenes}:
            return None, f"there is no scene {e.scene_id!r}"
    if isinstance(e, LINE_OPS):
        lines = shots[e.shot_id].dialogue
        count = f"shot {e.shot_id} has {len(lines)} line(s)"
        if isinstance(e, AddLine):
            if e.line is not None and e.line > len(lines) + 1:
                return None, f"{count}: a new line is at most line {len(lines) + 1}"
            if e.character and e.character not in {c.name for c in board.characters}:
                return None, f"no character {e.character!r} in the character bible to say it"
            return e, None
        if e.line > len(lines):
            return None, count
        was = lines[e.line - 1]
        old = script([was])
        if isinstance(e, SetLine):
            if e.new is None and e.delivery is None:
                return None, "a line edit needs new words or a delivery"
            if (e.new or was.line) == was.line and (e.delivery if e.delivery is not None else was.delivery) == (
                was.delivery
            ):
                return None, None
        return e.model_copy(update={"old": old}), None
    if isinstance(e, SetVoice):
        who = next((c for c in board.characters if c.name == e.character), None)
        if who is None:
            return None, f"no character {e.character!r} in the character bible"
        before = who.voice or CharacterVoice()  # the refiner's own `old` is not trusted: the board's (as cast)
        if e.speaker and before.engine == "piper" and not e.speaker.isdigit():
            return None, f"a Piper voice's speaker is a speaker id (a number), not {e.speaker!r}"
        e = e.model_copy(update={"old": before})
        return (e, None) if voice_after(e, None) != before else (None, None)
    if isinstance(e, SetMusic):
        old = _scene(board, e.scene_id).music
        return (e.model_copy(update={"old": old}), None) if old != e.new else (None, None)
    if isinstance(e, SetLevel):
        old = level_of(board, e.scene_id, e.field)
        return (e.model_copy(update={"old": old}), None) if old != e.new else (None, None)
    return e, None


def sanitize(
    edits: Iterable[dict | Edit], board: Storyboard, known_sources: set[str] | None = None, limits: Limits | None = None
) -> tuple[list[Edit], list[Unchanged]]:
    """The edits that can apply to `board`, with `old` values taken from the board; every edit dropped is
    explained (unknown or locked shot, bad value, malformed, or — with `limits` — taking the storyboard past a
    cap it kept). Edits that change nothing vanish."""
    shots = {s.shot_id: s for s in board.shots()}
    running = board  # the board with the kept edits applied, for the caps
    bible = {c.name: c.description for c in board.characters}
    keep: list[Edit] = []
    dropped: list[Unchanged] = []

    def drop(raw: Any, why: str) -> None:
        dropped.append(Unchanged(what=_describe(raw), why=f"proposed but dropped: {why}"))

    for raw in edits:
        try:
            e = EDIT.validate_python(raw.model_dump() if isinstance(raw, BaseModel) else raw)
        except ValidationError as err:
            drop(raw, err.errors()[0]["msg"])
            continue
        shot_id = getattr(e, "shot_id", None)
        if shot_id is not None and shot_id not in shots:
            drop(e, f"there is no shot {shot_id!r}")
            continue
        if isinstance(e, (SetShot, RemoveShot, MoveShot, *LINE_OPS)) and shots[e.shot_id].locked:
            drop(e, f"shot {shot_id} is locked")
            continue
        if isinstance(e, (*LINE_OPS, SetVoice, SetMusic, SetLevel)):
            checked, why = _sound(e, board, shots)
            if why:
                drop(e, why)
            if checked is None:
                continue
            e = checked
        if isinstance(e, SetShot):
            if problem := check_value(e.field, e.new):
                drop(e, problem)
                continue
            current = current_value(board, shots[e.shot_id], e.field)
            if current == e.new:
                continue
            e = e.model_copy(update={"old": current})
        elif isinstance(e, MoveShot) and e.new and e.new not in shots:
            drop(e, f"there is no shot {e.new!r} to move after")
            continue
        elif isinstance(e, SetCharacter):
            if bible.get(e.character) == e.new:
                continue
            e = e.model_copy(update={"old": bible.get(e.character)})
        elif isinstance(e, SetStory):
            current = getattr(board, e.field)
            if current == e.new:
                continue
            e = e.model_copy(update={"old": current})
        if known_sources is not None:
            e = e.model_copy(update={"sources": [s for s in dict.fromkeys(e.sources) if s in known_sources]})
        if limits is not None:
            try:
                after = apply_edits(running, [e])
            except EditError:  # does not apply after the edits before it: accepting decides (and checks again)
                after = None
            broken = after is not None and limits.problem(after)
            if broken and broken != limits.problem(running):
                cap, what = broken
                drop(e, f"{what}, over the storyboard cap {cap} ({getattr(limits, cap):g})")
                continue
            running = after or running
        keep.append(e)
    return keep, dropped


# ---------------------------------------------------------------------------------------- applying


def apply_edits(board: Storyboard, edits: list[Edit]) -> Storyboard:
    """A new storyboard with the edits applied in order. Locked shots refuse every edit."""
    data = board.model_copy(deep=True)
    for n, e in enumerate(edits, 1):
        try:
            _apply(data, e)
        except (KeyError, ValueError, ValidationError) as err:
            msg = err.errors()[0]["msg"] if isinstance(err, ValidationError) else str(err).strip("'\"")
            raise EditError(f"edit {n} ({e.op} {e.target}): {msg}") from None
    try:
        return Storyboard.model_validate(data.model_dump())
    except ValidationError as err:
        raise EditError(f"the edited storyboard is invalid: {err.errors()[0]['msg']}") from None


def _locate(board: Storyboard, shot_id: str) -> tuple[list[Shot], int]:
    for scene in board.scenes:
        for i, s in enumerate(scene.shots):
            if s.shot_id == shot_id:
                return scene.shots, i
    raise KeyError(f"no shot {shot_id!r}")


def _apply(board: Storyboard, e: Edit) -> None:
    if isinstance(e, SetStory):
        setattr(board, e.field, e.new)
    elif isinstance(e, SetCharacter):
        for c in board.characters:
            if c.name == e.character:
                c.description = e.new
                return
        board.characters.append(Character(name=e.character, description=e.new))
    elif isinstance(e, SetVoice):
        who = next((c for c in board.characters if c.name == e.character), None)
        if who is None:
            raise KeyError(f"no character {e.character!r}")
        who.voice = voice_after(e, who.voice)
    elif isinstance(e, SetMusic):
        _scene(board, e.scene_id).music = e.new
    elif isinstance(e, SetLevel):
        setattr(_scene(board, e.scene_id) if e.scene_id else board.film, e.field, e.new)
    elif isinstance(e, AddShot):
        shots, i = _locate(board, e.shot_id) if e.shot_id else (board.scenes[0].shots, -1)
        anchor = shots[i] if i >= 0 else shots[0]
        shots.insert(
            i + 1,
            Shot(
                shot_id=new_id("sh"),
                prompt=e.new,
                duration=anchor.duration,
                seed=anchor.seed + 1,
                characters=list(anchor.characters),
            ),
        )
    else:
        shots, i = _locate(board, e.shot_id)
        if shots[i].locked:
            raise ValueError("the shot is locked")
        if isinstance(e, (SetLine, AddLine, RemoveLine)):
            _apply_line(shots, i, e)
        elif isinstance(e, SetShot) and e.field == "music":
            board.scene_of(e.shot_id).music = e.new
        elif isinstance(e, SetShot):
            value: object = e.new
            if e.field == "dialogue":
                value = [ln.model_dump() for ln in lines_from_script(e.new, shots[i].characters)]
            elif e.field == "duration":
                value = float(e.new)
            elif e.field == "seed":
                value = int(e.new)
            elif e.field == "continuity":
                value = e.new.strip().lower() in ("1", "true", "yes", "on")
            shots[i] = Shot.model_validate({**shots[i].model_dump(), e.field: value})
        elif isinstance(e, RemoveShot):
            if sum(len(s.shots) for s in board.scenes) == 1:
                raise ValueError("cannot remove the only shot")
            shots.pop(i)
            board.scenes = [s for s in board.scenes if s.shots]
        elif isinstance(e, MoveShot):
            shot = shots.pop(i)
            if not e.new:
                board.scenes[0].shots.insert(0, shot)
            else:
                dest, j = _locate(board, e.new)
                dest.insert(j + 1, shot)
            board.scenes = [s for s in board.scenes if s.shots]


def _apply_line(shots: list[Shot], i: int, e: SetLine | AddLine | RemoveLine) -> None:
    lines = list(shots[i].dialogue)
    if isinstance(e, AddLine):
        at = (e.line or len(lines) + 1) - 1
        if at > len(lines):
            raise ValueError(f"the shot has {len(lines)} line(s)")
        lines.insert(at, Line(character=e.character, line=e.new, delivery=e.delivery))
    elif e.line > len(lines):
        raise ValueError(f"the shot has {len(lines)} line(s)")
    elif isinstance(e, RemoveLine):
        lines.pop(e.line - 1)
    else:
        was = lines[e.line - 1]
        lines[e.line - 1] = Line(
            character=was.character,
            line=e.new if e.new is not None else was.line,
            delivery=e.delivery if e.delivery is not None else was.delivery,
        )
    shots[i] = Shot.model_validate({**shots[i].model_dump(), "dialogue": [ln.model_dump() for ln in lines]})


# ---------------------------------------------------------------------------------------- diffing


class ShotChange(Strict):
    shot_id: str
    status: Literal["added", "removed", "changed", "moved", "same"]
    fields: dict[str, tuple[Any, Any]] = {}  # field -> (old, new)


class StoryboardDiff(Strict):
    """Differences from one storyboard to another, shot by shot (by stable shot_id), and story-level."""

    from_version: int | None = None
    to_version: int | None = None
    shots: list[ShotChange]
    story: dict[str, tuple[Any, Any]] = {}
    characters: dict[str, tuple[str | None, str | None]] = {}
    scores: dict[str, tuple[float | None, float | None]] = {}  # panel scores of each side, when known


def diff_storyboards(a: Storyboard, b: Storyboard) -> StoryboardDiff:
    sa, sb = {s.shot_id: s for s in a.shots()}, {s.shot_id: s for s in b.shots()}
    common_a = [x for x in sa if x in sb]
    common_b = [x for x in sb if x in sa]
    changes: list[ShotChange] = []
    for sid in sb:
        if sid not in sa:
            changes.append(ShotChange(shot_id=sid, status="added"))
            continue
        fields = {
            f: (script(sa[sid].dialogue), script(sb[sid].dialogue))
            if f == "dialogue"
            else (getattr(sa[sid], f), getattr(sb[sid], f))
            for f in Shot.model_fields
            if getattr(sa[sid], f) != getattr(sb[sid], f)
        }
        moved = common_a.index(sid) != common_b.index(sid)
        changes.append(
            ShotChange(shot_id=sid, status="changed" if fields else "moved" if moved else "same", fields=fields)
        )
    changes += [ShotChange(shot_id=sid, status="removed") for sid in sa if sid not in sb]
    story = {
        f: (getattr(a, f), getattr(b, f))
        for f in ("title", "logline", "style_guide", "fps", "width", "height")
        if getattr(a, f) != getattr(b, f)
    }
    for sc in b.scenes:
        before = next((x for x in a.scenes if x.scene_id == sc.scene_id), None)
        if before is not None and before.music != sc.music:
            story[f"music {sc.scene_id}"] = (before.music, sc.music)
        for level in ("music_level", "effects_level"):
            if before is not None and getattr(before, level) != getattr(sc, level):
                story[f"{level.replace('_', ' ')} {sc.scene_id}"] = (getattr(before, level), getattr(sc, level))
    if a.film != b.film:
        story["film"] = (a.film.model_dump(), b.film.model_dump())
    ca, cb = {c.name: c.description for c in a.characters}, {c.name: c.description for c in b.characters}
    chars = {n: (ca.get(n), cb.get(n)) for n in sorted(set(ca) | set(cb)) if ca.get(n) != cb.get(n)}
    va, vb = {c.name: c.voice for c in a.characters}, {c.name: c.voice for c in b.characters}
    for n in [c.name for c in b.characters]:
        if n in va and va[n] != vb[n]:
            was, now = va[n], vb[n]
            story[f"voice {n}"] = (
                describe_voice(was) if was else "cast from the name",
                describe_voice(now) if now else "cast from the name",
            )
    return StoryboardDiff(shots=changes, story=story, characters=chars)


# ---------------------------------------------------------------------------------------- one shot by hand

_LINE_KEY = re.compile(r"^line\.([1-9][0-9]{0,2})(?:\.(line|character|delivery))?$")
SHOT_KEYS = (*EDITABLE_SHOT_FIELDS, "line.N", "line.N.character", "line.N.delivery")


def edit_shot(board: Storyboard, shot_id: str, changes: list[tuple[str, str]]) -> Storyboard:
    """The creator's hand edit of one shot (the CLI twin of editing its card): `changes` are (key, value) in
    order, a key a shot field (`music`: its scene's cue; `dialogue`: the whole script) or `line.N`,
    `line.N.character`, `line.N.delivery` (1-based; N one past the last adds a line; `line.N=` with nothing
    removes it). A locked shot may be edited (the lock stops the refiner). Raises EditError naming the first
    unknown key or bad value; nothing is half applied."""
    data = board.model_copy(deep=True)
    try:
        shots, i = _locate(data, shot_id)
    except KeyError:
        raise EditError(f"no shot {shot_id!r} in this storyboard") from None
    fields = shots[i].model_dump()
    lines = [ln.model_dump() for ln in shots[i].dialogue]
    scene = data.scene_of(shot_id)
    for key, value in changes:
        m = _LINE_KEY.match(key)
        if m:
            n, part = int(m.group(1)), m.group(2) or "line"
            if n > len(lines) + 1:
                raise EditError(f"{key}: the shot has {len(lines)} line(s); line.{len(lines) + 1} adds one")
            if n == len(lines) + 1:
                if part != "line":
                    raise EditError(f"{key}: set line.{n}=TEXT first to add a line")
                lines.append({"character": shots[i].characters[0] if len(shots[i].characters) == 1 else ""})
            if part == "line" and not value.strip():
                lines.pop(n - 1)
                continue
            lines[n - 1][part] = value
            try:
                Line.model_validate({"line": "-", **lines[n - 1]})
            except ValidationError as err:
                raise EditError(f"{key}: {err.errors()[0]['msg']}") from None
            continue
        if key not in EDITABLE_SHOT_FIELDS:
            raise EditError(f"unknown key {key!r}: keys are {', '.join(SHOT_KEYS)}")
        if problem := check_value(key, value):
            raise EditError(f"{key}: {problem}")
        if key == "music":
            scene.music = value
        elif key == "dialogue":
            lines = [ln.model_dump() for ln in lines_from_script(value, shots[i].characters)]
        else:
            fields[key] = value
    fields["dialogue"] = lines
    fields["continuity"] = str(fields["continuity"]).strip().lower() in ("1", "true", "yes", "on")
    try:
        shots[i] = Shot.model_validate(fields)
        return Storyboard.model_validate(data.model_dump())
    except ValidationError as err:
        raise EditError(f"the edited shot is invalid: {first_error(err)}") from None


# ---------------------------------------------------------------------------------------- in words


def db_words(x: float) -> str:
    """A level in dB with a true minus sign: '−6 dB', '+3 dB', '0 dB'."""
    x = round(x, 1)
    return f"{'−' if x < 0 else '+' if x > 0 else ''}{abs(x):g} dB"


def describe_voice(v: CharacterVoice) -> str:
    speaker = f", speaker {v.speaker}" if v.speaker else ""
    return f"{v.engine}{speaker}, pitch {v.pitch:+g} semitones, pace {v.pace:g}"


def _scene_words(board: Storyboard | None, scene_id: str) -> str:
    if board is not None:
        for k, sc in enumerate(board.scenes, 1):
            if sc.scene_id == scene_id:
                return f"Scene {k} “{sc.title}”" if sc.title else f"Scene {k}"
    return f"Scene {scene_id}"


def describe(e: Edit, board: Storyboard | None = None) -> str:
    """A sound edit in words, as the review and `chief refine`/`chief accept` show it ("Scene 3 “The storm”: music
    −6 dB", "Keeper's voice: lower, slower"); other edits as their op and target. `board`: the version the
    proposal was made on (for scene numbers and titles)."""
    if isinstance(e, SetLevel):
        stem = "music" if e.field == "music_level" else "effects"
        if e.scene_id is None:
            was = f"{db_words(e.old)} → " if e.old is not None else ""
            return f"Film: {stem} level {was}{db_words(e.new)}"
        change = db_words(e.new - e.old) if e.old is not None else f"{db_words(e.new)} over the film's"
        return f"{_scene_words(board, e.scene_id)}: {stem} {change}"
    if isinstance(e, SetMusic):
        what = "no music" if not e.new.strip() else ("music cue: " if e.old else "music: ") + e.new
        return f"{_scene_words(board, e.scene_id)}: {what}"
    if isinstance(e, SetVoice):
        before, after = e.old or CharacterVoice(), voice_after(e, None)
        words = []
        if after.pitch != before.pitch:
            shift = after.pitch - before.pitch
            words.append(f"{'lower' if shift < 0 else 'higher'} ({db_words(shift).replace('dB', 'semitones')})")
        if after.pace != before.pace:
            words.append(
                f"{'slower' if after.pace < before.pace else 'faster'} (pace {before.pace:g} → {after.pace:g})"
            )
        if after.speaker != before.speaker:
            words.append(f"speaker {after.speaker or 'default'}")
        return f"{e.character}'s voice: {', '.join(words) or 'unchanged'}"
    if isinstance(e, SetLine):
        parts = ([f"“{e.new}”"] if e.new is not None else []) + (
            [e.delivery or "no delivery"] if e.delivery is not None else []
        )
        return f"Shot {e.shot_id} line {e.line}: {', '.join(parts)}"
    if isinstance(e, AddLine):
        who = e.character or "(unattributed)"
        how = f" ({e.delivery})" if e.delivery else ""
        return f"Shot {e.shot_id}: new line {e.line or 'at the end'}, {who}{how}: “{e.new}”"
    if isinstance(e, RemoveLine):
        return f"Shot {e.shot_id}: line {e.line} removed" + (f" ({e.old})" if e.old else "")
    if isinstance(e, SetShot) and e.field == "sounds":
        return f"Shot {e.shot_id} sounds: {e.new or 'none'}"
    return f"{e.op} {e.target}"


def brief(e: Edit, board: Storyboard | None = None) -> str:
    """Any edit in a few words, for a request's answer ("Pip's voice: higher (+2 semitones)", "Shot s3 prompt:
    …"): a sound edit as `describe` says it, a picture edit by what it changes."""
    if isinstance(e, SetShot) and e.field != "sounds":
        new = e.new if len(e.new) <= 60 else e.new[:57] + "…"
        return f"Shot {e.shot_id} {e.field.replace('_', ' ')}: {new or '(none)'}"
    if isinstance(e, RemoveShot):
        return f"Shot {e.shot_id} removed"
    if isinstance(e, SetCharacter):
        return f"{e.character}'s description"
    if isinstance(e, SetStory):
        return f"the film's {e.field.replace('_', ' ')}"
    return describe(e, board)


# ---------------------------------------------------------------------------------------- three-way merge


class StaleEdit(ValueError):
    """A save made from an older page changes what was also changed since that page was loaded (one line)."""


def merge_boards(
    loaded: Storyboard, mine: Storyboard, head: Storyboard, head_name: str = "the newest version"
) -> Storyboard:
    """`mine` (the page's board as saved: `loaded`, the board it was loaded from, with the person's edits) applied
    onto `head` (the board as it is now): a three-way merge. Every field the person left as it was loaded keeps
    `head`'s value (a take picked, a keyframe drawn, an option set in another tab since); every field the person
    changed takes theirs. The same field changed on both sides to different values, a shot or scene the person edited
    that `head` removed, or shots reordered, added or removed on both sides: `StaleEdit`, nothing merged.

    Fields are compared as validated values (shots and scenes by id, board fields and nested options one by one)."""
    o, m, h = (b.model_dump() for b in (loaded, mine, head))
    so, sm, sh = ([(sc["scene_id"], [s["shot_id"] for s in sc["shots"]]) for sc in d["scenes"]] for d in (o, m, h))
    if sm == so:
        order = sh
    elif sh in (so, sm):
        order = sm
    else:
        raise StaleEdit(
            f"shots were added, removed or moved in {head_name} since this page was loaded, and on this page too: "
            "reload the page (your edits are kept in this browser) and make them again"
        )

    def scenes(d: dict) -> dict[str, dict]:
        return {sc["scene_id"]: sc for sc in d["scenes"]}

    def shots(d: dict) -> dict[str, dict]:
        return {s["shot_id"]: s for sc in d["scenes"] for s in sc["shots"]}

    o_sc, m_sc, h_sc = scenes(o), scenes(m), scenes(h)
    o_sh, m_sh, h_sh = shots(o), shots(m), shots(h)
    kept = {sid for _, ids in order for sid in ids}
    for sid, edited in m_sh.items():  # an edit to a shot the other side removed would be lost without a word
        if sid in o_sh and edited != o_sh[sid] and sid not in kept:
            raise StaleEdit(f"shot {sid} was removed in {head_name} since this page was loaded, and you edited it")

    def one(o_d: dict | None, m_d: dict | None, h_d: dict | None, where: str, skip: frozenset[str]) -> dict:
        if h_d is None or m_d is None or o_d is None:  # new on one side only: as that side has it
            return dict(m_d if m_d is not None else h_d or {})
        return _merge_fields(o_d, m_d, h_d, where, skip, head_name)

    out_scenes = []
    for scene_id, ids in order:
        scene = one(
            o_sc.get(scene_id), m_sc.get(scene_id), h_sc.get(scene_id), f"scene {scene_id}", frozenset({"shots"})
        )
        scene["shots"] = [one(o_sh.get(sid), m_sh.get(sid), h_sh.get(sid), f"shot {sid}", frozenset()) for sid in ids]
        out_scenes.append(scene)
    board = _merge_fields(o, m, h, "the storyboard", frozenset({"scenes"}), head_name)
    board["scenes"] = out_scenes
    return Storyboard.model_validate(board)


def _merge_fields(o: dict, m: dict, h: dict, where: str, skip: frozenset[str], head_name: str) -> dict:
    """`h` with every field `m` changed from `o` (nested mappings field by field); refused where `h` changed it too."""
    out = dict(h)
    for key in m.keys() | h.keys():
        if key in skip:
            continue
        ov, mv, hv = o.get(key), m.get(key), h.get(key)
        if mv == ov or mv == hv:
            continue  # the person left it (head's stands), or both made the same change
        if hv == ov:
            out[key] = mv
        elif isinstance(ov, dict) and isinstance(mv, dict) and isinstance(hv, dict):
            out[key] = _merge_fields(ov, mv, hv, f"{where} {key}", frozenset(), head_name)
        else:
            raise StaleEdit(
                f"{where}: {key} was changed in {head_name} since this page was loaded, and on this page too: reload "
                "the page (your edits are kept in this browser) and save again"
            )
    return out
