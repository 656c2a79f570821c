"""The LLM refiner: storyboard + creator notes (instructions) + critiques (evidence) -> a Proposal of edits.

A malformed edit is dropped here and recorded in `not_changed`; whether an edit can apply (unknown or locked
shots, bad values) is checked for every refiner in one place, storage.edits.sanitize.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.base import Result
from agents.llm import LLMClient
from prompts import render
from storage.schema import CAMERA_MOVES, EDIT, EDIT_OPS, EDITABLE_SHOT_FIELDS, Critique, Note, Proposal, Storyboard, Unchanged


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EditOut(_Closed):
    """An Edit as the model writes it (no shape validator: bad edits are dropped one by one, not the proposal)."""

    op: Literal[EDIT_OPS]  # type: ignore[valid-type]
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


def to_proposal(out: ProposalOut) -> Proposal:
    """The model's answer as a Proposal: each edit parsed into its kind; a malformed one is dropped and explained
    (whether an edit can apply to the storyboard is checked once for every refiner, in storage.edits.sanitize)."""
    edits, not_changed = [], [Unchanged(what=u.what, why=u.why) for u in out.not_changed]
    for e in out.edits:
        try:
            edits.append(EDIT.validate_python(e.model_dump()))
        except ValidationError as err:
            target = e.shot_id or e.character or e.field or "the film"
            not_changed.append(Unchanged(what=f"{e.op} {target}", why=f"proposed but dropped: {err.errors()[0]['msg']}"))
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
        return Result(value=to_proposal(out), usage=usage, model=self.model)
