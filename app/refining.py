"""Refining: the creator's notes, the refiner's proposal, and accepting edits into the next version.

The creator outranks the critics: notes are instructions, critiques are evidence. Every refiner's edits
pass through `storage.edits.sanitize` (unknown or locked shots, bad values and malformed edits are
dropped and explained), and accepting is one transaction that makes a child version.
"""

from __future__ import annotations

from pydantic import BaseModel

from app.context import Context
from app.errors import StudioError
from app.projects import Projects
from app.watching import Watching
from storage.edits import EditError, apply_edits, sanitize
from storage.records import ProposalRecord, UsageRecord, Version
from storage.schema import Note, Proposal, Usage, new_id, utcnow


class AcceptResult(BaseModel):
    version: Version
    branched: bool
    applied: list[int]


class EarlierNote(BaseModel):
    """A note on an earlier version of the current one's line, and whether the current version answers it."""

    note: Note
    version: int
    addressed: bool
    how: str  # "edit accepted in v3", "shot s2 changed since", "not yet"


class UsageSummary(BaseModel):
    """Agent cost attached to a version: in total and per role."""

    total: Usage
    roles: dict[str, Usage]


class Refining:
    def __init__(self, ctx: Context, projects: Projects, watching: Watching) -> None:
        self.ctx, self.projects, self.watching = ctx, projects, watching

    # ------------------------------------------------------------------ notes
    def add_note(self, pid: str, text: str, shot_id: str | None = None, ref: int | str | None = None) -> Note:
        with self.ctx.repo.write() as u:
            v = u.version(pid, ref)
            if shot_id is not None and shot_id not in {s.shot_id for s in v.storyboard.shots()}:
                raise StudioError(f"v{v.number} has no shot {shot_id!r}")
            return u.add_note(v, Note(text=text.strip(), shot_id=shot_id))

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
            v = current
            while v.parent_number is not None:
                v = u.version(pid, v.parent_number)
                notes = u.notes(v)
                if not notes:
                    continue
                changed = {c.shot_id: c for c in diff_storyboards(v.storyboard, current.storyboard).shots
                           if c.status != "same"}
                cited: dict[str, list] = {}
                for record in u.proposals(v):
                    for e in record.proposal.edits:
                        for src in e.sources:
                            cited.setdefault(src, []).append((record, e))
                for n in notes:
                    landed = [r.accepted_as for r, e in cited.get(n.id, [])
                              if r.accepted_as and _landed(e, v.storyboard, current.storyboard)]
                    if landed:
                        how = f"edit accepted in v{min(landed)}"
                    elif n.shot_id and n.shot_id in changed:
                        how = f"shot {n.shot_id} {changed[n.shot_id].status} since"
                    else:
                        how = "not yet"
                    out.append(EarlierNote(note=n, version=v.number, addressed=how != "not yet", how=how))
        return out

    # ------------------------------------------------------------------ proposals
    def refine(self, pid: str, ref: int | str | None = None) -> ProposalRecord:
        """The refiner's proposal for the version, from its notes (instructions) and latest critiques (evidence)."""
        v = self.projects.version(pid, ref)
        notes = self.notes(pid, v.number)
        crits = [c.critique for c in self.watching.critiques(pid, v.number)]
        if not notes and not crits:
            raise StudioError(f"v{v.number} has no notes and no critiques: add a note or run `chief critique` first")
        refiner = self.ctx.agents.refiner
        res = refiner.refine(v.storyboard, notes, crits)
        proposal: Proposal = res.value
        known = {n.id for n in notes} | {c.persona_id for c in crits}
        edits, dropped = sanitize(proposal.edits, v.storyboard, known)
        proposal = Proposal(summary=proposal.summary, edits=edits, not_changed=[*proposal.not_changed, *dropped])
        record = ProposalRecord(id=new_id("pr"), version=v.number, created_at=utcnow(), mode=refiner.mode,
                                proposal=proposal, usage=res.usage)
        with self.ctx.repo.write() as u:
            u.add_proposal(v, record)
            u.add_usage(v, UsageRecord(role="refiner", mode=refiner.mode, **res.usage.model_dump()))
        return record

    def proposal(self, pid: str, proposal_id: str | None = None, ref: int | str | None = None) -> ProposalRecord:
        """A proposal by id, or the latest proposal on the version."""
        with self.ctx.repo.read() as u:
            return u.proposal(pid, proposal_id, ref)

    def accept(self, pid: str, proposal_id: str | None = None, only: list[int] | None = None,
               edits: dict[int, str] | None = None, ref: int | str | None = None, once: bool = False) -> AcceptResult:
        """Accepted edits (1-based numbers; `edits` replaces an edit's new value) become a child version
        of the version the proposal was made on. If that version already has children, this is a branch.
        `once`: refuse a proposal that was already accepted (a second click never makes a second version)."""
        with self.ctx.repo.write() as u:
            record = u.proposal(pid, proposal_id, ref)
            if once and record.accepted_as is not None:
                raise StudioError(f"this proposal was already committed as v{record.accepted_as}")
            prop = record.proposal
            n = len(prop.edits)
            chosen = sorted(set(only or range(1, n + 1)) | set((edits or {}).keys()))
            bad = [i for i in chosen if not 1 <= i <= n]
            if bad:
                raise StudioError(f"no edit number(s) {bad}: the proposal has edits 1..{n}")
            if not chosen:
                raise StudioError("nothing to accept: the proposal has no edits")
            picked = []
            for i in chosen:
                e = prop.edits[i - 1]
                if edits and i in edits:
                    if not hasattr(e, "new") or e.op == "move_shot":
                        raise StudioError(f"edit {i} ({e.op}) has no text to replace")
                    e = type(e).model_validate({**e.model_dump(), "new": edits[i]})
                picked.append(e)
            parent = u.version(pid, record.version)
            try:
                board = apply_edits(parent.storyboard, picked)
            except EditError as e:
                raise StudioError(str(e)) from None
            self.projects.check_board(board)
            for child in u.children(parent):  # the same accept again (a double click, a retried command)
                if child.kind == "accept" and record.id in child.message and child.storyboard == board:
                    raise StudioError(f"these edits of proposal {record.id} were already accepted as v{child.number}: "
                                      "nothing new to commit")
            desc = f"accepted {len(picked)}/{n} edit(s) of proposal {record.id}" + (
                f" ({len(edits)} edited by hand)" if edits else "")
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
    if op == "remove_shot":
        return edit.shot_id not in {s.shot_id for s in after.shots()}
    if op == "add_shot":
        return len(after.shots()) > len(before.shots())
    return [s.shot_id for s in before.shots()] != [s.shot_id for s in after.shots()]  # move_shot
