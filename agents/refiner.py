"""The LLM refiner: storyboard + creator notes (instructions) + critiques (evidence) -> a Proposal of edits.

Its input is bounded: the story bible, the scenes in scope in full (the scenes the notes and critiques are about,
chosen by app/refining.py), every other scene as a one-line summary, and the critiques' evidence about the scenes
in scope, with each scene's music cue and levels, the film's levels and each character's voice (as the render casts it:
the service fills it in), so sound edits (a line, a voice, a cue, a level) are made over what the film sounds like.
A malformed edit is dropped here and recorded in `not_changed`; whether an edit can apply (unknown or
locked shots, bad values) is checked for every refiner in one place, storage.edits.sanitize, and whether it stays
inside the scope in app/refining.py.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from typing import Literal, get_args

from pydantic import Field, ValidationError

from agents.base import AgentError, Result
from agents.json_answer import Closed as _Closed
from agents.llm import LLMClient, Progress, strict_json_schema
from agents.llm_config import env_name
from prompts import render
from storage.run import RefineProgress, RunContext
from storage.schema import (
    CAMERA_MOVES,
    EDIT,
    EDIT_OPS,
    EDITABLE_SHOT_FIELDS,
    LEVEL_FIELDS,
    STORY_FIELDS,
    Critique,
    Edit,
    Note,
    Proposal,
    Scope,
    Storyboard,
    Unchanged,
)


class EditOut(_Closed):
    """An Edit as the model writes it (no shape validator: bad edits are dropped one by one, not the proposal).
    One flat object for every kind, unused fields null; the sound edits' fields default to null, so an answer
    written before them still reads."""

    op: Literal[EDIT_OPS]  # type: ignore[valid-type]
    shot_id: str | None
    field: str | None
    character: str | None
    old: str | None
    new: str | None
    rationale: str
    sources: list[str] = Field(description="note ids and persona ids")
    scene_id: str | None = Field(default=None, description="set_music, set_level (null: the film's level)")
    line: int | None = Field(default=None, description="set_line, remove_line, add_line: the line's number, from 1")
    delivery: str | None = Field(default=None, description="set_line, add_line: how it is said")
    pitch: float | None = Field(default=None, description="set_voice: semitones, -12..12 (null keeps it)")
    pace: float | None = Field(default=None, description="set_voice: 0.5..2, > 1 faster (null keeps it)")
    speaker: str | None = Field(default=None, description="set_voice: a speaker id (null keeps it)")


# The fields each kind of edit takes from the model's flat answer (`old` is the storyboard's, filled by sanitize).
_KINDS = {cls.model_fields["op"].default: cls for cls in get_args(get_args(Edit)[0])}


class UnchangedOut(_Closed):
    what: str
    why: str


class ProposalOut(_Closed):
    summary: str
    edits: list[EditOut]
    not_changed: list[UnchangedOut]


def proposal_schema(storyboard: Storyboard) -> dict:
    """ProposalOut's schema with `shot_id` one of the storyboard's shot ids and `field` one of the editable fields
    (or null): a server that decodes by the schema can only name shots and fields that exist. The answer is still
    read as ProposalOut, so an answer from a server that does not (text mode) loses only its bad edits."""
    schema = copy.deepcopy(_PROPOSAL_SCHEMA)
    props = schema["$defs"]["EditOut"]["properties"]
    enums = {
        "shot_id": [s.shot_id for s in storyboard.shots()],
        "field": [*EDITABLE_SHOT_FIELDS, *STORY_FIELDS, *LEVEL_FIELDS],
        "scene_id": [sc.scene_id for sc in storyboard.scenes],
    }
    for name, values in enums.items():
        if values:
            props[name] = {"anyOf": [{"type": "string", "enum": values}, {"type": "null"}]}
    return schema


_PROPOSAL_SCHEMA = strict_json_schema(ProposalOut)


def to_proposal(out: ProposalOut) -> Proposal:
    """The model's answer as a Proposal: each edit parsed into its kind; a malformed one is dropped and explained
    (whether an edit can apply to the storyboard is checked once for every refiner, in storage.edits.sanitize)."""
    edits, not_changed = [], [Unchanged(what=u.what, why=u.why) for u in out.not_changed]
    for e in out.edits:
        kind = _KINDS[e.op]
        data = {k: v for k, v in e.model_dump().items() if k in kind.model_fields and k != "old"}
        try:
            edits.append(EDIT.validate_python(data))
        except ValidationError as err:
            target = e.shot_id or e.scene_id or e.character or e.field or "the film"
            not_changed.append(
                Unchanged(what=f"{e.op} {target}", why=f"proposed but dropped: {err.errors()[0]['msg']}")
            )
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


def _rest_of(scene, shown: set[str]) -> str:
    """What a scene shown in part leaves out, in a line (a range of shots bounds the refiner's input)."""
    rest = [s for s in scene.shots if s.shot_id not in shown]
    if not rest:
        return ""
    seconds = sum(s.duration for s in rest)
    return f"its other {len(rest)} shots ({rest[0].shot_id}–{rest[-1].shot_id}, {seconds:.0f} s) are not in scope"


class LLMRefiner:
    """Refiner role over an OpenAI-compatible model (agents.base.Refiner)."""

    def __init__(self, client: LLMClient, model: str | None = None):
        self.client = client
        self.model = model or client.config.refiner_model
        self.mode = f"llm:{self.model}"

    def messages(
        self,
        storyboard: Storyboard,
        notes: list[Note],
        critiques: list[Critique],
        scope: Scope | None = None,
        *,
        shot_notes: bool = True,
    ) -> list[dict]:
        """The request: the bible, the scenes in `scope` in full (all of them for the whole film), the rest in a line."""
        scope = scope or Scope()
        full = set(scope.scene_ids(storyboard))
        shown = set(scope.shot_ids(storyboard))  # a range of shots: only those, not their whole scenes
        scenes = [(sc, sc.scene_id in full) for sc in storyboard.scenes]
        board = storyboard.model_dump(
            mode="json", include={"title", "logline", "style_guide", "characters", "locations"}
        )
        for c in board["characters"] + board["locations"]:
            c.pop("references", None)
        system = render(
            "refiner_system.j2", editable_fields=EDITABLE_SHOT_FIELDS, camera_moves=CAMERA_MOVES, scoped=not scope.whole
        )
        user = render(
            "refiner_user.j2",
            bible_json=json.dumps(board, ensure_ascii=False),
            scenes=[
                (
                    sc,
                    json.dumps(
                        [
                            s.model_dump(mode="json", exclude={"keyframe", "locked"})
                            for s in sc.shots
                            if s.shot_id in shown
                        ],
                        ensure_ascii=False,
                    )
                    if whole
                    else "",
                    _rest_of(sc, shown) if whole else "",
                )
                for sc, whole in scenes
            ],
            scoped=not scope.whole,
            scope=scope.label(),
            film=storyboard.film,
            notes=notes,
            critiques=critiques,
            shot_notes=shot_notes,
            issues_by_agreement=agreement(critiques),
            locked=[s.shot_id for sc, whole in scenes if whole for s in sc.shots if s.locked and s.shot_id in shown],
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def refine(
        self,
        storyboard: Storyboard,
        notes: list[Note],
        critiques: list[Critique],
        ctx: RunContext | None = None,
    ) -> Result[Proposal]:
        """A proposal for `ctx.scope` (None: the whole film): those scenes in full, the others in one line."""
        ctx = ctx or RunContext()
        deadline = self.client.deadline(ctx)
        messages = self.fitting(storyboard, notes, critiques, ctx.scope)

        def on_tokens(p: Progress) -> None:
            ctx.progress(RefineProgress(tokens=p.tokens, tokens_per_s=round(p.tokens_per_s, 1), note=p.note))

        # a cut-off proposal is not repaired (the repair would be cut off too): the line says how to ask for less
        out, usage = self.client.structured(
            "refiner",
            self.model,
            messages,
            ProposalOut,
            schema=proposal_schema(storyboard),
            on_progress=on_tokens,
            cancel=ctx.cancel,
            deadline=deadline,
            on_length="raise",
            length_hint=(f"refine fewer scenes at a time (--scene) or raise {env_name('refiner_max_tokens')}"),
        )
        return Result(value=to_proposal(out), usage=usage, model=self.model)

    def fitting(
        self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique], scope: Scope | None
    ) -> list[dict]:
        """The request, made to fit the context: without the critics' per-shot notes if need be (their issues stay),
        else one line naming what to change."""
        ctx, source = self.client.context_tokens(self.model)
        room = ctx - self.client.max_tokens_for("refiner", self.model)
        for shot_notes in (True, False):
            messages = self.messages(storyboard, notes, critiques, scope, shot_notes=shot_notes)
            size = self.client.estimate_tokens(messages)
            if size <= room:
                return messages
        what = (scope or Scope()).label()
        raise AgentError(
            f"refiner ({self.model}): the {what} with its notes and critiques is about {size:,} tokens; "
            f"the context ({ctx:,}, {source}) leaves {room:,} beside the answer: refine fewer scenes at a "
            f"time (chief refine --scene), or raise {env_name('context_tokens')}"
        )
