"""The LLM refiner: storyboard + creator notes (instructions) + critiques (evidence) -> a Proposal of edits.

The model's edits are checked before anyone sees them: an edit on a locked or unknown shot, or one that
is malformed, is dropped and recorded in `not_changed`, so the creator sees why it is missing.
"""

from __future__ import annotations

import json
from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.base import Result
from agents.llm import LLMClient
from prompts import render
from storage.schema import CAMERA_MOVES, EDITABLE_SHOT_FIELDS, Critique, Edit, EditOp, Note, Proposal, Storyboard, Unchanged


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EditOut(_Closed):
    """An Edit as the model writes it (no shape validator: bad edits are dropped one by one, not the proposal)."""

    op: EditOp
    shot_id: str | None
    field: str | None
    character: str | None
    old: str | None
    new: str | None
    rationale: str
    sources: list[str] = Field(description="note ids and persona ids")


class UnchangedOut(_Closed):
    what: str
    why: str


class ProposalOut(_Closed):
    summary: str
    edits: list[EditOut]
    not_changed: list[UnchangedOut]


def _check_value(field: str, new: str) -> str | None:
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
    return None


def postcheck(out: ProposalOut, storyboard: Storyboard, notes: list[Note], critiques: list[Critique]) -> Proposal:
    """A Proposal with only applicable edits; each dropped edit is explained in not_changed."""
    shots = {s.shot_id: s for s in storyboard.shots()}
    bible = {c.name: c.description for c in storyboard.characters}
    known_sources = {n.id for n in notes} | {c.persona_id for c in critiques}
    edits: list[Edit] = []
    not_changed = [Unchanged(what=u.what, why=u.why) for u in out.not_changed]

    def drop(e: EditOut, why: str) -> None:
        target = e.shot_id or e.character or "the film"
        not_changed.append(Unchanged(what=f"{e.op} {e.field or ''} on {target}".replace("  ", " "), why=f"proposed but dropped: {why}"))

    for e in out.edits:
        if e.shot_id is not None and e.shot_id not in shots and not (e.op == "add_shot" and e.shot_id == ""):
            drop(e, f"there is no shot {e.shot_id!r}")
            continue
        shot = shots.get(e.shot_id or "")
        if shot is not None and shot.locked and e.op in ("set", "remove_shot", "move_shot"):
            drop(e, f"shot {shot.shot_id} is locked")
            continue
        old = e.old
        if e.op == "set" and shot is not None and e.field in EDITABLE_SHOT_FIELDS and e.new is not None:
            if problem := _check_value(e.field, e.new):
                drop(e, problem)
                continue
            old = str(getattr(shot, e.field))
            if old == e.new:
                continue  # no change
        if e.op == "move_shot" and e.new not in ("", None) and e.new not in shots:
            drop(e, f"there is no shot {e.new!r} to move after")
            continue
        if e.op == "set_character" and e.character:
            old = bible.get(e.character)
        sources = [s for s in dict.fromkeys(e.sources) if s in known_sources]
        try:
            edits.append(Edit(op=e.op, shot_id=e.shot_id or None, field=e.field, character=e.character,
                              old=old, new=e.new, rationale=e.rationale, sources=sources))
        except ValidationError as err:
            drop(e, err.errors()[0]["msg"])
    return Proposal(summary=out.summary, edits=edits, not_changed=not_changed)


def agreement(critiques: list[Critique]) -> str:
    """'shot: persona, persona' for shots that more than one persona raised an issue or a note about."""
    who: dict[str, set[str]] = defaultdict(set)
    for c in critiques:
        for i in c.top_issues:
            for s in i.shot_ids:
                who[s].add(c.persona_id)
        for n in c.shot_notes:
            who[n.shot_id].add(c.persona_id)
    return "; ".join(f"{s}: {', '.join(sorted(p))}" for s, p in who.items() if len(p) > 1)


class LLMRefiner:
    """Refiner role over an OpenAI-compatible model (agents.base.Refiner)."""

    def __init__(self, client: LLMClient, model: str | None = None):
        self.client = client
        self.model = model or client.config.refiner_model
        self.mode = f"llm:{self.model}"

    def messages(self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique]) -> list[dict]:
        board = storyboard.model_dump(mode="json", exclude={"fps", "width", "height"})
        system = render("refiner_system.j2", editable_fields=EDITABLE_SHOT_FIELDS, camera_moves=CAMERA_MOVES)
        user = render(
            "refiner_user.j2",
            storyboard_json=json.dumps(board, ensure_ascii=False),
            notes=notes,
            critiques=critiques,
            issues_by_agreement=agreement(critiques),
            locked=[s.shot_id for s in storyboard.shots() if s.locked],
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def refine(self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique]) -> Result:
        out, usage = self.client.structured("refiner", self.model, self.messages(storyboard, notes, critiques), ProposalOut)
        return Result(value=postcheck(out, storyboard, notes, critiques), usage=usage, model=self.model)
