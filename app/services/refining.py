"""Refining: the creator's notes, the refiner's proposal, and accepting edits into the next version.

The creator outranks the critics: notes are instructions, critiques are evidence. Every refiner's edits
pass through `storage.edits.sanitize` (unknown or locked shots, bad values and malformed edits are
dropped and explained), and accepting is one transaction that makes a child version.

A proposal has a scope: the scenes its edits may touch. It is the scope the creator asked for (`--scene`,
`--shots`), else the scenes the notes are about (by shot, scene, or an id their text names) and the few the critics
agree most urgently on; a note about the whole film makes it the whole film. The refiner sees those scenes in
full and the rest as summaries, and an edit outside the scope is dropped and explained: a note about one scene
never rewrites shots elsewhere unless it says so.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import islice

from pydantic import BaseModel, ValidationError

from agents.offline.notes import split_requests
from agents.refiner import trim
from app.context import Context, ProgressFn, no_progress, record_failed_usage
from app.errors import StudioError
from app.services.audio import Audio
from app.services.projects import Projects
from app.services.watching import Watching
from storage.edits import EditError, apply_edits, sanitize
from storage.records import ProposalRecord, UsageRecord, Version
from storage.run import Cancelled, CancelToken, RunContext
from storage.schema import (
    AddShot,
    Answer,
    Critique,
    Edit,
    EditFlag,
    MoveShot,
    Note,
    Proposal,
    Scope,
    Storyboard,
    Unchanged,
    Usage,
    first_error,
    new_id,
    utcnow,
)

CRITIC_SCENES = 3  # scenes the critics' most urgent shared issues add to a proposal's scope


class AcceptResult(BaseModel):
    version: Version
    branched: bool
    applied: list[int]


class EarlierNote(BaseModel):
    """A note on an earlier version of the current one's line, and whether the current version answers it: only an
    accepted edit that cites the note does; its shot having changed since (for any reason) is said, not counted."""

    note: Note
    version: int
    addressed: bool  # an accepted edit citing the note landed
    how: str  # "edit accepted in v3", "shot s2 changed since", "not addressed yet"


class UsageSummary(BaseModel):
    """Agent cost attached to a version: in total and per role."""

    total: Usage
    roles: dict[str, Usage]


class Refining:
    def __init__(self, ctx: Context, projects: Projects, watching: Watching, audio: Audio) -> None:
        self.ctx, self.projects, self.watching, self.audio = ctx, projects, watching, audio

    # ------------------------------------------------------------------ notes
    def add_note(
        self, pid: str, text: str, shot_id: str | None = None, ref: int | str | None = None, scope: Scope | None = None
    ) -> Note:
        """A note on one shot, on some scenes or shots (`scope`), or on the whole film."""
        scope = scope or Scope()
        with self.ctx.repo.write() as u:
            v = u.version(pid, ref)
            ids = {s.shot_id for s in v.storyboard.shots()}
            unknown = [x for x in [shot_id, *scope.shots] if x is not None and x not in ids]
            if unknown:
                raise StudioError(f"v{v.number} has no shot {unknown[0]!r}")
            unknown = [x for x in scope.scenes if x not in {sc.scene_id for sc in v.storyboard.scenes}]
            if unknown:
                raise StudioError(f"v{v.number} has no scene {unknown[0]!r}")
            if shot_id is not None and not scope.whole:
                raise StudioError("a note is about one shot, or some scenes or shots, not both")
            return u.add_note(v, Note(text=text.strip(), shot_id=shot_id, scope=scope))

    def notes(self, pid: str, ref: int | str | None = None) -> list[Note]:
        with self.ctx.repo.read() as u:
            return u.notes(u.version(pid, ref))

    def edit_note(self, pid: str, note_id: str, text: str, ref: int | str | None = None) -> Note:
        """Change a note's text on version `ref` (the refiner reads notes when it is asked, so this is safe)."""
        with self.ctx.repo.write() as u:
            return u.update_note(u.version(pid, ref), note_id, text.strip())

    def delete_note(self, pid: str, note_id: str, ref: int | str | None = None) -> None:
        with self.ctx.repo.write() as u:
            u.delete_note(u.version(pid, ref), note_id)

    def earlier_notes(self, pid: str, ref: int | str | None = None) -> list[EarlierNote]:
        """Notes on the version's ancestors, newest version first, each with whether the version answers it:
        an edit citing the note whose target differs now, else (a shot note) its shot changed since."""
        from storage.edits import diff_storyboards

        out: list[EarlierNote] = []
        with self.ctx.repo.read() as u:
            current = u.version(pid, ref)
            for v in islice(u.lineage(current), 1, None):
                notes = u.notes(v)
                if not notes:
                    continue
                changed = {
                    c.shot_id: c for c in diff_storyboards(v.storyboard, current.storyboard).shots if c.status != "same"
                }
                cited: dict[str, list] = {}
                for record in u.proposals(v):
                    for e in record.proposal.edits:
                        for src in e.sources:
                            cited.setdefault(src, []).append((record, e))
                for n in notes:
                    landed = [
                        r.accepted_as
                        for r, e in cited.get(n.id, [])
                        if r.accepted_as and _landed(e, v.storyboard, current.storyboard)
                    ]
                    if landed:
                        how = f"edit accepted in v{min(landed)}"
                    elif n.shot_id and n.shot_id in changed:
                        how = f"shot {n.shot_id} {changed[n.shot_id].status} since"
                    else:
                        how = "not addressed yet"
                    out.append(EarlierNote(note=n, version=v.number, addressed=bool(landed), how=how))
        return out

    # ------------------------------------------------------------------ proposals
    def refine(
        self,
        pid: str,
        ref: int | str | None = None,
        scope: Scope | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> ProposalRecord:
        """The refiner's proposal for the version, from its notes (instructions) and latest critiques (evidence),
        for `scope` (None: the scenes the notes and critiques are about, see the module's docstring)."""
        v = self.projects.version(pid, ref)
        board = self.voiced(v.storyboard)
        notes = self.notes(pid, v.number)
        crits = [c.critique for c in self.watching.critiques(pid, v.number)]
        if not notes and not crits:
            raise StudioError(f"v{v.number} has no notes and no critiques: add a note or screen it first (critique)")
        aside: list[Unchanged] = []
        if scope is not None and not scope.whole:
            notes, aside = notes_within(board, notes, scope)
        else:
            scope = touched(board, notes, crits)
        crits = [trim(c, set(scope.shot_ids(board))) for c in crits] if not scope.whole else crits
        refiner = self.ctx.agents.refiner
        cancel = cancel or CancelToken()
        try:
            res = refiner.refine(
                board, notes, crits, RunContext(cancel=cancel, progress=progress or no_progress, scope=scope)
            )
        except Cancelled:
            raise
        except Exception as e:
            record_failed_usage(self.ctx, v, "refiner", refiner.mode, e)
            raise
        cancel.raise_if_cancelled()  # stopped while the refiner answered: nothing is written
        proposal: Proposal = res.value
        known = {n.id for n in notes} | {c.persona_id for c in crits}
        edits, dropped = sanitize(proposal.edits, board, known, self.ctx.config.limits)
        edits, outside = within(board, edits, scope)
        summary = proposal.summary
        if len(edits) != len(proposal.edits):  # the refiner's own counts came before these checks
            summary = (
                f"{summary} — {len(edits)} of the {len(proposal.edits)} edit(s) proposed are kept "
                f"({len(dropped) + len(outside)} dropped: see not changed)"
            )
        proposal = settle(
            proposal,
            edits,
            board,
            notes,
            Proposal(summary=summary, not_changed=[*proposal.not_changed, *dropped, *outside, *aside]),
        )
        record = ProposalRecord(
            id=new_id("pr"),
            version=v.number,
            created_at=utcnow(),
            mode=refiner.mode,
            proposal=proposal,
            usage=res.usage,
            scope=scope,
        )
        with self.ctx.repo.write() as u:
            u.add_proposal(v, record)
            u.add_usage(v, UsageRecord(role="refiner", mode=refiner.mode, **res.usage.model_dump()))
        return record

    def voiced(self, board: Storyboard) -> Storyboard:
        """`board` with every character's voice as the render would cast it, so a refiner sees (and a voice edit
        is made over) the voice a character has now, cast from the names or stored. Only the refiner's copy:
        accepting applies the edits to the version as stored."""
        cast = self.audio.cast(board)
        chars = [c if c.voice else c.model_copy(update={"voice": cast[c.name].voice}) for c in board.characters]
        return board.model_copy(update={"characters": chars})

    def proposal(self, pid: str, proposal_id: str | None = None, ref: int | str | None = None) -> ProposalRecord:
        """A proposal by id, or the latest proposal on the version."""
        with self.ctx.repo.read() as u:
            return u.proposal(pid, proposal_id, ref)

    def accept(
        self,
        pid: str,
        proposal_id: str | None = None,
        only: list[int] | None = None,
        edits: dict[int, str] | None = None,
        ref: int | str | None = None,
        once: bool = False,
    ) -> AcceptResult:
        """Accepted edits (1-based numbers, default the ticked ones; `edits` replaces an edit's new value) become a child version
        of the version the proposal was made on. If that version already has children, this is a branch.
        `once`: refuse a proposal that was already accepted (a second click never makes a second version)."""
        with self.ctx.repo.write() as u:
            record = u.proposal(pid, proposal_id, ref)
            if once and record.accepted_as is not None:
                raise StudioError(f"this proposal was already committed as v{record.accepted_as}")
            prop = record.proposal
            n = len(prop.edits)
            default = [i for i in range(1, n + 1) if prop.is_ticked(i)]  # the notes' edits, not the critics' alone
            chosen = sorted(set(only or default) | set((edits or {}).keys()))
            bad = [i for i in chosen if not 1 <= i <= n]
            if bad:
                raise StudioError(f"no edit number(s) {bad}: the proposal has edits 1..{n}")
            if not chosen:
                raise StudioError(
                    "nothing to accept: the proposal has no edits"
                    if not n
                    else "no edit is ticked (the critics' edits are yours to pick): name them, e.g. --only 1,2"
                )
            picked = []
            for i in chosen:
                e = prop.edits[i - 1]
                if edits and i in edits:
                    if not hasattr(e, "new") or e.op == "move_shot":
                        raise StudioError(f"edit {i} ({e.op}) has no text to replace")
                    text = edits[i]
                    if e.op == "set_level":  # "−4 dB" as the review shows levels
                        text = text.replace("\u2212", "-").removesuffix("dB").strip()
                    try:
                        e = type(e).model_validate({**e.model_dump(), "new": text})
                    except ValidationError as err:
                        raise StudioError(f"edit {i} ({e.op}): {first_error(err)}") from None
                picked.append(e)
            parent = u.version(pid, record.version)
            try:
                board = apply_edits(parent.storyboard, picked)
            except EditError as e:
                raise StudioError(str(e)) from None
            self.projects.check_board(board)
            for child in u.children(parent):  # the same accept again (a double click, a retried command)
                if child.kind == "accept" and record.id in child.message and child.storyboard == board:
                    raise StudioError(
                        f"these edits of proposal {record.id} were already accepted as v{child.number}: "
                        "nothing new to commit"
                    )
            desc = f"accepted {len(picked)}/{n} edit(s) of proposal {record.id}" + (
                f" ({len(edits)} edited by hand)" if edits else ""
            )
            child, branched = u.add_child(parent, board, "accept", desc)
            u.mark_accepted(record.id, child)
        return AcceptResult(version=child, branched=branched, applied=chosen)

    # ------------------------------------------------------------------ cost
    def usage(self, pid: str, ref: int | str | None = None) -> UsageSummary:
        with self.ctx.repo.read() as u:
            rows = u.usage(u.version(pid, ref))
        roles: dict[str, Usage] = {}
        for r in rows:
            roles[r.role] = roles.get(r.role, Usage()) + Usage(**r.model_dump(include=set(Usage.model_fields)))
        return UsageSummary(total=sum(roles.values(), Usage()), roles=roles)


def _kept(before: list[Edit], after: list[Edit]) -> dict[int, int]:
    """Old edit number -> new, for `after` a subsequence of `before` (sanitize and the scope keep the order and each
    edit's op and target; they fill in `old` and trim `sources`)."""
    out, k = {}, 0
    for j, e in enumerate(after, 1):
        while k < len(before) and (before[k].op, before[k].target) != (e.op, e.target):
            k += 1
        if k < len(before):
            out[k + 1] = j
            k += 1
    return out


def key_words(board: Storyboard) -> dict[str, str]:
    """The idea's key things as stems -> words: the nouns of the logline (its objects, places, beings and events)."""
    from agents.offline.idea import word_classes
    from agents.offline.words import WORD, content_words

    out: dict[str, str] = {}
    for w in WORD.findall(board.logline.lower()):
        if "NOUN" in word_classes(w):
            for st in content_words(w):
                out.setdefault(st, w)
    return out


def _said_and_shown(board: Storyboard) -> frozenset[str]:
    from agents.offline.words import content_words

    return frozenset().union(*(content_words(f"{s.prompt} {s.narration} {s.spoken()}") for s in board.shots()))


def flags(board: Storyboard, edits: list[Edit]) -> list[EditFlag]:
    """Each edit that alone takes one of the idea's key things (`key_words`) out of every shot's picture and words:
    said, never silently done."""
    keys = key_words(board)
    before = _said_and_shown(board) & set(keys)
    out = []
    for n, e in enumerate(edits, 1):
        try:
            after = _said_and_shown(apply_edits(board, [e]))
        except EditError:
            continue
        if lost := sorted(keys[k] for k in before - after):
            out.append(
                EditFlag(
                    edit=n,
                    why=f"takes {', '.join(repr(w) for w in lost)} out of the film: the idea's key "
                    f"{'thing' if len(lost) == 1 else 'things'} (its logline), shown or said in no other shot",
                )
            )
    return out


def settle(proposal: Proposal, edits: list[Edit], board: Storyboard, notes: list[Note], into: Proposal) -> Proposal:
    """The checked `edits` (a subsequence of the refiner's) as the review shows them: the edits that answer a note
    first, ticked, then the critics' (ticked only where they also cite a note); each request of every note answered
    (a request the refiner did not answer says so; one whose edits were all dropped, that they were); flagged, each
    edit that takes the idea's key thing out of the film."""
    kept = _kept(list(proposal.edits), edits)
    note_ids = {n.id for n in notes}
    order = sorted(range(len(edits)), key=lambda i: not (set(edits[i].sources) & note_ids))  # stable
    renumber = {old: order.index(new - 1) + 1 for old, new in kept.items()}
    final = [edits[i] for i in order]
    ticked = [n for n, e in enumerate(final, 1) if set(e.sources) & note_ids]
    answers = []
    for a in proposal.answers:
        now = sorted({renumber[n] for n in a.edits if n in renumber})
        if a.status == "changed" and not now:
            a = a.model_copy(
                update={"status": "not changed", "answer": f"{a.answer} — proposed but dropped: see not changed"}
            )
        answers.append(a.model_copy(update={"edits": now}))
    seen = {(a.note_id, " ".join(a.request.split()).lower()) for a in answers}
    for n in notes:
        for request in split_requests(n.text):
            if (n.id, " ".join(request.split()).lower()) not in seen:
                answers.append(Answer(note_id=n.id, request=request, status="not answered", answer="not answered"))
    return into.model_copy(update={"edits": final, "answers": answers, "ticked": ticked, "flags": flags(board, final)})


def note_scenes(board: Storyboard, note: Note) -> list[str] | None:
    """The scenes a note is about: its shot's, its scope's, and those of any shot or scene id its text names;
    None for a note about the whole film."""
    scenes = set(Scope(shots=[note.shot_id]).scene_ids(board)) if note.shot_id else set()
    scenes |= set(note.scope.scene_ids(board)) if not note.scope.whole else set()
    words = set(re.findall(r"[A-Za-z0-9_\-]+", note.text))
    scenes |= {sc.scene_id for sc in board.scenes if sc.scene_id in words or any(s.shot_id in words for s in sc.shots)}
    return sorted(scenes) if scenes or note.shot_id or not note.scope.whole else None


def touched(board: Storyboard, notes: list[Note], critiques: list[Critique]) -> Scope:
    """The scope of a proposal nobody scoped: the whole film when a note is about the whole film; else the scenes
    the notes are about and up to CRITIC_SCENES more that the critics' urgent issues (4-5) point at, the issues
    more personas share first; the whole film when nothing points anywhere."""
    about = [note_scenes(board, n) for n in notes]
    scenes: set[str] = set()
    for a in about:
        if a is None:
            return Scope()
        scenes |= set(a)
    known = {s.shot_id for s in board.shots()}
    votes: Counter = Counter()
    for c in critiques:
        for i in c.top_issues:
            ids = [s for s in i.shot_ids if s in known]
            if i.urgency >= 4 and ids:
                for sc in Scope(shots=ids).scene_ids(board):
                    votes[sc] += i.urgency
    ranked = [sc for sc, _ in votes.most_common() if sc not in scenes]
    scenes |= set(ranked[:CRITIC_SCENES])
    order = [sc.scene_id for sc in board.scenes]
    return Scope(scenes=sorted(scenes, key=order.index)) if scenes else Scope()


def notes_within(board: Storyboard, notes: list[Note], scope: Scope) -> tuple[list[Note], list[Unchanged]]:
    """The notes that bear on `scope` (about its scenes, or about the whole film), and those left aside."""
    inside = set(scope.scene_ids(board))
    keep, aside = [], []
    for n in notes:
        about = note_scenes(board, n)
        if about is None or inside & set(about):
            keep.append(n)
        else:
            aside.append(
                Unchanged(
                    what=f"note {n.id}",
                    why=f"it is about {'scene' if len(about) == 1 else 'scenes'} "
                    f"{', '.join(about)}, outside this proposal's scope ({scope.label()})",
                )
            )
    return keep, aside


def within(board: Storyboard, edits: list[Edit], scope: Scope) -> tuple[list[Edit], list[Unchanged]]:
    """The edits that stay inside the scope (the story and characters are the whole film's: always inside)."""
    if scope.whole:
        return edits, []
    ids = set(scope.shot_ids(board))
    first = board.shots()[0].shot_id
    scenes = {sc.scene_id for sc in board.scenes if any(s.shot_id in ids for s in sc.shots)}
    keep, out = [], []
    for e in edits:
        shot = getattr(e, "shot_id", None)
        scene = getattr(e, "scene_id", None)
        if scene is not None:  # a scene's music or levels: a scene with a shot in scope
            ok = scene in scenes
        elif isinstance(e, AddShot):
            ok = shot in ids if shot else first in ids
        elif isinstance(e, MoveShot):
            ok = shot in ids and (e.new in ids if e.new else first in ids)
        else:
            ok = shot is None or shot in ids
        if ok:
            keep.append(e)
        else:
            out.append(
                Unchanged(
                    what=f"{e.op} {e.target}",
                    why=f"proposed but dropped: outside this proposal's scope ({scope.label()})",
                )
            )
    return keep, out


def _landed(edit, before, after) -> bool:
    """Whether what `edit` targets differs between two storyboards (so the edit, or a later one, landed)."""
    op = edit.op
    if op == "set":
        get = lambda b: getattr(next((s for s in b.shots() if s.shot_id == edit.shot_id), None), edit.field, None)  # noqa: E731
        return get(before) != get(after)
    if op == "set_story":
        return getattr(before, edit.field) != getattr(after, edit.field)
    if op == "set_character":
        desc = lambda b: next((c.description for c in b.characters if c.name == edit.character), None)  # noqa: E731
        return desc(before) != desc(after)
    if op in ("set_line", "add_line", "remove_line"):
        said = lambda b: next((s.dialogue for s in b.shots() if s.shot_id == edit.shot_id), None)  # noqa: E731
        return said(before) != said(after)
    if op == "set_voice":
        voice = lambda b: next((c.voice for c in b.characters if c.name == edit.character), None)  # noqa: E731
        return voice(before) != voice(after)
    if op in ("set_music", "set_level"):
        field = "music" if op == "set_music" else edit.field
        where = lambda b: next((sc for sc in b.scenes if sc.scene_id == edit.scene_id), b.film)  # noqa: E731
        return getattr(where(before), field, None) != getattr(where(after), field, None)
    if op == "remove_shot":
        return edit.shot_id not in {s.shot_id for s in after.shots()}
    if op == "add_shot":
        return len(after.shots()) > len(before.shots())
    return [s.shot_id for s in before.shots()] != [s.shot_id for s in after.shots()]  # move_shot
