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
    AddShot,
    Character,
    Edit,
    Limits,
    Line,
    MoveShot,
    RemoveShot,
    SetCharacter,
    SetShot,
    SetStory,
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
    target = get("shot_id") or get("character") or get("field") or "the film"
    return f"{get('op', 'edit')} {target}"


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
        if isinstance(e, (SetShot, RemoveShot, MoveShot)) and shots[e.shot_id].locked:
            drop(e, f"shot {shot_id} is locked")
            continue
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
        if isinstance(e, SetShot) and e.field == "music":
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
    if a.film != b.film:
        story["film"] = (a.film.model_dump(), b.film.model_dump())
    ca, cb = {c.name: c.description for c in a.characters}, {c.name: c.description for c in b.characters}
    chars = {n: (ca.get(n), cb.get(n)) for n in sorted(set(ca) | set(cb)) if ca.get(n) != cb.get(n)}
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
