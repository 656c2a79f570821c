"""The LLM refiner: storyboard + creator notes (instructions) + critiques (evidence) -> a Proposal of edits.

Its input is bounded: the story bible, the scenes in scope in full (the scenes the notes and critiques are about,
chosen by app/services/refining.py), every other scene as a one-line summary, and the critiques' evidence about the scenes
in scope, with each scene's music cue and levels, the film's levels and each character's voice (as the render casts it:
the service fills it in), so sound edits (a line, a voice, a cue, a level) are made over what the film sounds like.
A malformed edit is dropped here and recorded in `not_changed`; whether an edit can apply (unknown or
locked shots, bad values) is checked for every refiner in one place, storage.edits.sanitize, and whether it stays
inside the scope in app/services/refining.py.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import Field, ValidationError

from agents.base import AgentError, Result
from agents.json_answer import Closed as _Closed
from agents.llm import LLMClient, Progress, strict_json_schema
from agents.llm_config import env_name
from agents.offline.notes import split_requests
from prompts import render
from storage.run import RefineProgress, RunContext
from storage.schema import (
    CAMERA_MOVES,
    EDIT,
    EDIT_OPS,
    EDITABLE_SHOT_FIELDS,
    LEVEL_FIELDS,
    STORY_FIELDS,
    Answer,
    Critique,
    Edit,
    Note,
    Proposal,
    Scope,
    Storyboard,
    Unchanged,
    Usage,
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


class AnswerOut(_Closed):
    request: str = Field(description="the request's id, e.g. r1")
    edits: list[int] = Field(description="the numbers (from 1) of your edits that answer it; [] when none")
    reason: str = Field(description="with no edit: why not; else the change in a few words")


class ProposalOut(_Closed):
    """The proposal as the model writes it; `answers` defaults to none, so an answer without it still reads (every
    request is then reported 'not answered')."""

    summary: str
    edits: list[EditOut]
    not_changed: list[UnchangedOut]
    answers: list[AnswerOut] = Field(default_factory=list, description="one per request of the notes")


@dataclass(frozen=True)
class Request:
    """One request of a creator's note, as the refiner is asked to answer it (`id`: r1, r2, ...)."""

    id: str
    note_id: str
    text: str


def requests_of(notes: list[Note]) -> list[Request]:
    """Every note's requests (a note asking two things is two), numbered r1, r2, ... across the notes."""
    out = []
    for n in notes:
        for text in split_requests(n.text):
            out.append(Request(id=f"r{len(out) + 1}", note_id=n.id, text=text))
    return out


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


def to_proposal(out: ProposalOut, requests: list[Request] | None = None) -> Proposal:
    """The model's answer as a Proposal: each edit parsed into its kind; a malformed one is dropped and explained
    (whether an edit can apply to the storyboard is checked once for every refiner, in storage.edits.sanitize).
    Each of `requests` gets its answer: the edits the model named for it (numbers that exist), else its reason; a
    request it did not answer is 'not answered', never dropped."""
    edits, not_changed = [], [Unchanged(what=u.what, why=u.why) for u in out.not_changed]
    number: dict[int, int] = {}  # the model's edit number -> the proposal's
    for k, e in enumerate(out.edits, 1):
        kind = _KINDS[e.op]
        data = {k: v for k, v in e.model_dump().items() if k in kind.model_fields and k != "old"}
        try:
            edits.append(EDIT.validate_python(data))
            number[k] = len(edits)
        except ValidationError as err:
            target = e.shot_id or e.scene_id or e.character or e.field or "the film"
            not_changed.append(
                Unchanged(what=f"{e.op} {target}", why=f"proposed but dropped: {err.errors()[0]['msg']}")
            )
    given = {a.request.strip().strip("[]"): a for a in out.answers}
    answers = []
    for r in requests or []:
        a = given.get(r.id)
        if a is None:
            answers.append(Answer(note_id=r.note_id, request=r.text, status="not answered", answer="not answered"))
            continue
        made = sorted({number[n] for n in a.edits if n in number})
        reason = " ".join(a.reason.split())[:1000]
        if made:
            answers.append(Answer(note_id=r.note_id, request=r.text, edits=made, answer=reason, status="changed"))
        else:
            why = reason or ("its edits were dropped: see not changed" if a.edits else "no reason given")
            answers.append(Answer(note_id=r.note_id, request=r.text, answer=why, status="not changed"))
    return Proposal(summary=out.summary, edits=edits, not_changed=not_changed, answers=answers)


def trim(critique: Critique, shot_ids: set[str]) -> Critique:
    """A critique's evidence about these shots: their notes, and the issues about them or about no shot."""
    issues = [
        i.model_copy(update={"shot_ids": [s for s in i.shot_ids if s in shot_ids]})
        for i in critique.top_issues
        if not i.shot_ids or any(s in shot_ids for s in i.shot_ids)
    ]
    return critique.model_copy(
        update={"shot_notes": [n for n in critique.shot_notes if n.shot_id in shot_ids], "top_issues": issues}
    )


def merge(parts: list[Proposal], requests: list[Request]) -> Proposal:
    """The parts' proposals as one: edits in part order, an edit two parts proposed alike kept once (its sources
    joined), each request's answer the union of its parts' (the first part's reason when none changed it)."""
    edits: list[Edit] = []
    seen: dict[str, int] = {}
    not_changed: list[Unchanged] = []
    by_request: dict[tuple[str, str], list] = {}
    for p in parts:
        number = {}
        for k, e in enumerate(p.edits, 1):
            key = json.dumps(e.model_dump(mode="json", exclude={"rationale", "sources"}), sort_keys=True)
            if key in seen:
                first = edits[seen[key] - 1]
                edits[seen[key] - 1] = first.model_copy(
                    update={"sources": list(dict.fromkeys([*first.sources, *e.sources]))}
                )
            else:
                edits.append(e)
                seen[key] = len(edits)
            number[k] = seen[key]
        not_changed += [u for u in p.not_changed if u not in not_changed]
        for a in p.answers:
            by_request.setdefault((a.note_id, a.request), []).append(
                a.model_copy(update={"edits": [number[n] for n in a.edits]})
            )
    answers = []
    for r in requests:
        got = by_request.get((r.note_id, r.text), [])
        made = sorted({n for a in got for n in a.edits})
        if made:
            words = "; ".join(dict.fromkeys(a.answer for a in got if a.edits and a.answer))
            answers.append(Answer(note_id=r.note_id, request=r.text, edits=made, answer=words, status="changed"))
        elif any(a.status == "not changed" for a in got):
            why = next(a.answer for a in got if a.status == "not changed")
            answers.append(Answer(note_id=r.note_id, request=r.text, answer=why, status="not changed"))
        else:
            answers.append(Answer(note_id=r.note_id, request=r.text, status="not answered", answer="not answered"))
    return Proposal(summary="", edits=edits, not_changed=not_changed, answers=answers)


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
            requests=requests_of(notes),
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
        """A proposal for `ctx.scope` (None: the whole film): those scenes in full, the others in one line. When that
        does not fit the context, the scope is refined in parts, scene group by scene group (each with the story and
        all the notes), and the parts merged into one proposal that says so."""
        ctx = ctx or RunContext()
        deadline = self.client.deadline(ctx)
        requests = requests_of(notes)
        try:
            messages = self.fitting(storyboard, notes, critiques, ctx.scope)
        except TooLong as too_long:
            groups = self.groups(storyboard, notes, critiques, ctx.scope or Scope(), too_long)
            return self._in_parts(storyboard, notes, critiques, ctx, deadline, requests, groups, too_long)
        out, usage = self._ask(storyboard, messages, ctx, deadline, "")
        return Result(value=to_proposal(out, requests), usage=usage, model=self.model)

    def _ask(self, storyboard, messages, ctx: RunContext, deadline, part: str) -> tuple[ProposalOut, Usage]:
        def on_tokens(p: Progress) -> None:
            note = "; ".join(x for x in (part, p.note) if x)
            ctx.progress(RefineProgress(tokens=p.tokens, tokens_per_s=round(p.tokens_per_s, 1), note=note))

        if part:
            ctx.progress(RefineProgress(note=part))
        # a cut-off proposal is not repaired (the repair would be cut off too): the line says how to ask for less
        return self.client.structured(
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

    def _in_parts(self, storyboard, notes, critiques, ctx, deadline, requests, groups, too_long) -> Result[Proposal]:
        parts, usage, summaries = [], Usage(), []
        for k, (group, messages) in enumerate(groups, 1):
            ctx.cancel.raise_if_cancelled("refiner: cancelled")
            what = f"part {k} of {len(groups)} (scene{'s' if len(group) > 1 else ''} {_span(group)})"
            out, used = self._ask(storyboard, messages, ctx, deadline, what)
            usage = usage + used
            parts.append(to_proposal(out, requests))
            if out.summary.strip():
                summaries.append(f"{_span(group)}: {out.summary.strip()}")
        merged = merge(parts, requests)
        head = (
            f"Refined in {len(groups)} parts, scene group by scene group ({too_long.what} with its notes and critiques "
            f"is about {too_long.size:,} tokens; the context leaves {too_long.room:,} beside the answer)"
        )
        summary = f"{head}. " + " · ".join(summaries)
        return Result(value=merged.model_copy(update={"summary": summary[:4000]}), usage=usage, model=self.model)

    def groups(
        self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique], scope: Scope, too_long: TooLong
    ) -> list[tuple[list[str], list[dict]]]:
        """The scope's scenes in film order, grouped so that each group's request (its scenes in full, the rest in a
        line, the critiques trimmed to its shots, all the notes) fits; a scene that alone does not fit raises the
        size error naming it."""
        if scope.shots:
            raise AgentError(str(too_long))  # a range of shots is refined whole: name fewer shots
        _, room = self._room()
        out: list[tuple[list[str], list[dict]]] = []
        group: list[str] = []
        best: list[dict] | None = None
        for sc in scope.scene_ids(storyboard):
            trial = self._part(storyboard, notes, critiques, [*group, sc], room)
            if trial is not None:
                group, best = [*group, sc], trial
                continue
            if group and best is not None:
                out.append((group, best))
            alone = self._part(storyboard, notes, critiques, [sc], room)
            if alone is None:
                size = self.client.estimate_tokens(self.messages(storyboard, notes, [], Scope(scenes=[sc])))
                raise AgentError(
                    f"refiner ({self.model}): scene {sc} alone, with the notes and the story, is about {size:,} "
                    f"tokens; the context leaves {room:,} beside the answer: raise {env_name('context_tokens')}"
                )
            group, best = [sc], alone
        if group and best is not None:
            out.append((group, best))
        return out

    def _part(self, storyboard, notes, critiques, scenes: list[str], room: int) -> list[dict] | None:
        part = Scope(scenes=scenes)
        shots = set(part.shot_ids(storyboard))
        trimmed = [trim(c, shots) for c in critiques]
        for shot_notes in (True, False):
            messages = self.messages(storyboard, notes, trimmed, part, shot_notes=shot_notes)
            if self.client.estimate_tokens(messages) <= room:
                return messages
        return None

    def _room(self) -> tuple[int, int]:
        ctx, _ = self.client.context_tokens(self.model)
        return ctx, ctx - self.client.max_tokens_for("refiner", self.model)

    def fitting(
        self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique], scope: Scope | None
    ) -> list[dict]:
        """The request, made to fit the context: without the critics' per-shot notes if need be (their issues stay);
        else TooLong, whose line names what to change."""
        ctx, source = self.client.context_tokens(self.model)
        room = ctx - self.client.max_tokens_for("refiner", self.model)
        for shot_notes in (True, False):
            messages = self.messages(storyboard, notes, critiques, scope, shot_notes=shot_notes)
            size = self.client.estimate_tokens(messages)
            if size <= room:
                return messages
        what = (scope or Scope()).label()
        raise TooLong(
            f"refiner ({self.model}): the {what} with its notes and critiques is about {size:,} tokens; "
            f"the context ({ctx:,}, {source}) leaves {room:,} beside the answer: refine fewer scenes at a "
            f"time (chief refine --scene), or raise {env_name('context_tokens')}",
            what=f"the {what}",
            size=size,
            room=room,
        )


class TooLong(AgentError):
    """The request does not fit the context (its size and the room the context leaves beside the answer)."""

    def __init__(self, message: str, *, what: str, size: int, room: int) -> None:
        super().__init__(message)
        self.what, self.size, self.room = what, size, room


def _span(scenes: list[str]) -> str:
    return scenes[0] if len(scenes) == 1 else f"{scenes[0]}–{scenes[-1]}"
