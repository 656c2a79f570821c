"""Applying a proposal's edits to a storyboard, and diffing two storyboards. Pure functions."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from storage.schema import Character, Edit, Shot, Storyboard, new_id


class EditError(ValueError):
    """An edit cannot apply to this storyboard (names the edit and why)."""


def apply_edits(board: Storyboard, edits: list[Edit]) -> Storyboard:
    """A new storyboard with the edits applied in order. Locked shots refuse every edit."""
    data = board.model_copy(deep=True)
    for n, e in enumerate(edits, 1):
        try:
            _apply(data, e)
        except (KeyError, ValueError, ValidationError) as err:
            msg = err.errors()[0]["msg"] if isinstance(err, ValidationError) else str(err).strip("'\"")
            raise EditError(f"edit {n} ({e.op} {e.shot_id or e.character or e.field}): {msg}") from None
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
    if e.op == "set_story":
        setattr(board, e.field, e.new)
        return
    if e.op == "set_character":
        for c in board.characters:
            if c.name == e.character:
                c.description = e.new
                return
        board.characters.append(Character(name=e.character, description=e.new))
        return
    if e.op == "add_shot":
        if e.shot_id:
            shots, i = _locate(board, e.shot_id)
        else:
            shots, i = board.scenes[0].shots, -1
        anchor = shots[i] if i >= 0 else shots[0]
        shots.insert(i + 1, Shot(shot_id=new_id("sh"), prompt=e.new, duration=anchor.duration, seed=anchor.seed + 1,
                                 characters=list(anchor.characters)))
        return
    shots, i = _locate(board, e.shot_id)
    if shots[i].locked:
        raise ValueError("the shot is locked")
    if e.op == "set":
        value: object = e.new
        if e.field in ("duration",):
            value = float(e.new)
        elif e.field == "seed":
            value = int(e.new)
        elif e.field == "continuity":
            value = e.new.strip().lower() in ("1", "true", "yes", "on")
        shots[i] = Shot.model_validate({**shots[i].model_dump(), e.field: value})
    elif e.op == "remove_shot":
        if sum(len(s.shots) for s in board.scenes) == 1:
            raise ValueError("cannot remove the only shot")
        shots.pop(i)
        board.scenes = [s for s in board.scenes if s.shots]
    elif e.op == "move_shot":
        shot = shots.pop(i)
        if not e.new:
            board.scenes[0].shots.insert(0, shot)
        else:
            dest, j = _locate(board, e.new)
            dest.insert(j + 1, shot)
        board.scenes = [s for s in board.scenes if s.shots]


@dataclass
class ShotChange:
    shot_id: str
    status: str  # added | removed | changed | moved | same
    fields: dict[str, tuple[object, object]]  # field -> (old, new)


def diff_storyboards(a: Storyboard, b: Storyboard) -> dict:
    """Shot-by-shot differences from a to b (by stable shot_id), plus story-level fields."""
    sa, sb = {s.shot_id: s for s in a.shots()}, {s.shot_id: s for s in b.shots()}
    order_a, order_b = list(sa), list(sb)
    common_a = [x for x in order_a if x in sb]
    common_b = [x for x in order_b if x in sa]
    changes: list[ShotChange] = []
    for sid in order_b:
        if sid not in sa:
            changes.append(ShotChange(sid, "added", {}))
            continue
        fields = {f: (getattr(sa[sid], f), getattr(sb[sid], f)) for f in Shot.model_fields
                  if getattr(sa[sid], f) != getattr(sb[sid], f)}
        moved = common_a.index(sid) != common_b.index(sid)
        changes.append(ShotChange(sid, "changed" if fields else "moved" if moved else "same", fields))
    for sid in order_a:
        if sid not in sb:
            changes.append(ShotChange(sid, "removed", {}))
    story = {f: (getattr(a, f), getattr(b, f)) for f in ("title", "logline", "style_guide", "fps", "width", "height")
             if getattr(a, f) != getattr(b, f)}
    ca, cb = {c.name: c.description for c in a.characters}, {c.name: c.description for c in b.characters}
    chars = {n: (ca.get(n), cb.get(n)) for n in sorted(set(ca) | set(cb)) if ca.get(n) != cb.get(n)}
    return {"shots": changes, "story": story, "characters": chars}
