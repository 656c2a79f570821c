"""The repository: every read and write of a project, in the domain types of storage.records.

One action is one transaction. `repo.write()` opens a write transaction (`BEGIN IMMEDIATE`: two
processes never interleave a read-then-write) and yields a `Unit` whose methods all run in it;
`repo.read()` yields a `Unit` over a read snapshot. Nothing outside storage/ sees SQLAlchemy.

Two rules live here, once: a small action folds into the open working draft (`Unit.fold`: the draft amended in
place, its message the running summary, until something is made from it: `_draft_open`, `close_draft`), and every
project id becomes a project in one place (`Unit._project_row`: someone else's project is not found, a project the
actor only reads is `ReadOnly` in a write transaction; storage.owners says who acts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import JSON, delete, func, or_, select

from storage.db import (
    AgentCallRow,
    Base,
    ClipMediaRow,
    ClipRow,
    CritiqueRow,
    Database,
    JobRow,
    KeyframeRow,
    MediaRow,
    NoteRow,
    ProjectRow,
    ProposalRow,
    RenderRow,
    SessionRow,
    ShareRow,
    TakeRow,
    TakeScreeningRow,
    UserRow,
    VersionRow,
)
from storage.owners import current, owner_of_new
from storage.records import (
    ClipMediaRecord,
    ClipRecord,
    CritiqueRecord,
    JobRecord,
    KeyframeRecord,
    MediaRecord,
    Project,
    ProposalRecord,
    RenderRecord,
    SessionRecord,
    TakeRecord,
    TakeScreeningRecord,
    UsageRecord,
    Version,
    VersionBundle,
    VersionNode,
)
from storage.schema import Note, Persona, Scope, Storyboard, new_id, utcnow

R = TypeVar("R", bound=BaseModel)

_SHA = re.compile(r"\b[0-9a-f]{64}\b")  # a media file named in a record
LOCAL = ""  # the clip-cache scope of clips rendered on this machine


class NotFound(ValueError):
    """A project, version or proposal that is not there (one line for the user)."""


class ReadOnly(ValueError):
    """A write to a project the acting account may only read (shared with it, or a teacher's view): one line."""


class Repository:
    def __init__(self, db: Database) -> None:
        self.db = db

    @contextmanager
    def read(self) -> Iterator[Unit]:
        with self.db.reader() as s:
            yield Unit(s)

    @contextmanager
    def write(self) -> Iterator[Unit]:
        with self.db.session() as s:
            yield Unit(s, writing=True)


class Unit:
    """The repository's operations inside one transaction (see Repository.read / write). In a write transaction a
    project the acting account may only read is refused (`ReadOnly`) where its id becomes a project."""

    def __init__(self, session, writing: bool = False) -> None:
        self.s, self.writing = session, writing

    # ------------------------------------------------------------------ projects
    def add_project(
        self,
        board: Storyboard,
        *,
        idea: str,
        kind: str,
        message: str,
        panel: list[str],
        personas: list[Persona] | None = None,
        title: str | None = None,
    ) -> Version:
        """A new project whose v1 is `board`; returns v1."""
        pid, vid = new_id("p"), new_id("v")
        self.s.add(
            ProjectRow(id=pid, title=title or board.title, idea=idea, current_version_id=vid, owner=owner_of_new())
        )
        self.s.flush()
        self.s.add(_version_row(vid, pid, None, 1, kind, message, board, panel, personas or []))
        self.s.flush()
        return self.version(pid, 1)

    def project(self, pid: str) -> Project:
        return self._project(self._project_row(pid))

    def projects(self, include_trashed: bool = False) -> list[Project]:
        """The projects the acting account may open (storage.owners), newest first."""
        rows = [
            p
            for p in self.s.scalars(_visible(select(ProjectRow).order_by(ProjectRow.created_at.desc())))
            if include_trashed or p.trashed_at is None
        ]
        counts = dict(self.s.execute(select(VersionRow.project_id, func.count()).group_by(VersionRow.project_id)).all())
        numbers = dict(
            self.s.execute(
                select(VersionRow.id, VersionRow.number).where(VersionRow.id.in_([p.current_version_id for p in rows]))
            ).all()
        )
        return [self._project(p, counts.get(p.id, 0), numbers.get(p.current_version_id, 1)) for p in rows]

    def project_titles(self) -> list[tuple[str, str]]:
        """(id, title) of every project the acting account may open, for resolving what the user typed."""
        return [tuple(r) for r in self.s.execute(_visible(select(ProjectRow.id, ProjectRow.title))).all()]

    def set_trashed(self, pid: str, trashed: bool) -> None:
        self._project_row(pid).trashed_at = utcnow() if trashed else None

    def find_tagged(self, tag: str) -> Version | None:
        """The v1 whose message carries `(tag)` (see Studio.create_project) in a project the acting account may
        open, or None."""
        q = select(VersionRow).where(VersionRow.number == 1, VersionRow.message.contains(f"({tag})"))
        q = _visible(q.join(ProjectRow, ProjectRow.id == VersionRow.project_id), shared=False)
        row = self.s.scalars(q.limit(1)).first()
        return self._version(row) if row is not None else None

    # ------------------------------------------------------------------ versions
    def version(self, pid: str, ref: int | str | None = None) -> Version:
        """A version by number (3, "3", "v3"), by id, or the project's current one (None)."""
        return self._version(self._version_row(pid, ref))

    def lineage(self, version: Version) -> Iterator[Version]:
        """`version`, then its parent, its parent's parent, … back to v1 (read lazily: stop when found)."""
        v = version
        while True:
            yield v
            if v.parent_number is None:
                return
            v = self.version(v.project_id, v.parent_number)

    def version_nodes(self, pid: str) -> list[VersionNode]:
        """The version tree, oldest first, with what is attached to each version."""
        proj = self._project_row(pid)
        rows = self.s.execute(
            select(
                VersionRow.id,
                VersionRow.number,
                VersionRow.parent_id,
                VersionRow.kind,
                VersionRow.message,
                VersionRow.created_at,
                VersionRow.draft,
            )
            .where(VersionRow.project_id == pid)
            .order_by(VersionRow.number)
        ).all()
        numbers = {r.id: r.number for r in rows}

        def count(model) -> dict[str, int]:
            return dict(
                self.s.execute(
                    select(model.version_id, func.count())
                    .where(model.version_id.in_(list(numbers)))
                    .group_by(model.version_id)
                ).all()
            )

        renders, crits, notes, props = count(RenderRow), count(CritiqueRow), count(NoteRow), count(ProposalRow)
        return [
            VersionNode(
                number=r.number,
                id=r.id,
                parent=numbers.get(r.parent_id),
                kind=r.kind,
                message=r.message,
                created_at=r.created_at,
                current=r.id == proj.current_version_id,
                draft=r.draft,
                renders=renders.get(r.id, 0),
                critiques=crits.get(r.id, 0),
                notes=notes.get(r.id, 0),
                proposals=props.get(r.id, 0),
            )
            for r in rows
        ]

    def add_child(
        self,
        parent: Version,
        board: Storyboard,
        kind: str,
        message: str,
        *,
        panel: list[str] | None = None,
        personas: list[Persona] | None = None,
        draft: bool = False,
    ) -> tuple[Version, bool]:
        """A child of `parent`, made current. branched: `parent` already had a child (someone moved on from it).
        `parent` is no longer a draft (a version with a child is immutable); the child is one when `draft`."""
        has_child = self.s.scalars(select(VersionRow.id).where(VersionRow.parent_id == parent.id).limit(1)).first()
        number = (
            self.s.scalar(select(func.max(VersionRow.number)).where(VersionRow.project_id == parent.project_id)) or 0
        ) + 1
        branched = has_child is not None and kind != "fork"
        if branched:
            message += f" (branched from v{parent.number}, which already had a newer version)"
        row = _version_row(
            new_id("v"),
            parent.project_id,
            parent.id,
            number,
            kind,
            message,
            board,
            panel if panel is not None else parent.panel,
            personas if personas is not None else parent.personas,
            draft=draft,
        )
        self.close_draft(parent)
        self.s.add(row)
        self.s.flush()
        self._project_row(parent.project_id).current_version_id = row.id
        return self._version(row), branched

    def fold(self, parent: Version, board: Storyboard, kind: str, message: str) -> tuple[Version, bool]:
        """A small action's change (a keyframe, a re-roll, a picked take, a reference): `parent` amended in place
        when it is an open draft (its storyboard replaced, `message` added to its summary), else a new draft child
        of `parent` (branched as `add_child` says). Returns (version, branched); the version is made current."""
        row = self.s.get(VersionRow, parent.id)
        if row is None or not self._draft_open(row):
            return self.add_child(parent, board, kind, message, draft=True)
        row.storyboard = board.model_dump(mode="json")
        row.message = draft_summary(row.message, message)
        self.s.flush()
        self._project_row(row.project_id).current_version_id = row.id
        return self._version(row), False

    def close_draft(self, version: Version) -> None:
        """`version` is an ordinary version from now on (rendered, critiqued, proposed from, saved over, branched)."""
        row = self.s.get(VersionRow, version.id)
        if row is not None and row.draft:
            row.draft = False

    def _draft_open(self, row: VersionRow) -> bool:
        """A draft may be amended while nothing was made from its storyboard: no child, render, critique or
        proposal (each of those closes it too; checked here as well, so an imported row cannot say otherwise)."""
        if not row.draft:
            return False
        return all(
            self.s.scalars(select(model.id).where(getattr(model, col) == row.id).limit(1)).first() is None
            for model, col in (
                (VersionRow, "parent_id"),
                (RenderRow, "version_id"),
                (CritiqueRow, "version_id"),
                (ProposalRow, "version_id"),
            )
        )

    def children(self, version: Version) -> list[Version]:
        """The versions made from `version`, oldest first."""
        rows = self.s.scalars(select(VersionRow).where(VersionRow.parent_id == version.id).order_by(VersionRow.number))
        return [self._version(r) for r in rows]

    def set_current(self, version: Version) -> None:
        self._project_row(version.project_id).current_version_id = version.id

    # ------------------------------------------------------------------ media and the clip cache
    def add_media(self, media: list[MediaRecord]) -> None:
        for m in media:
            if self.s.get(MediaRow, m.sha256) is None:
                self.s.add(_row(MediaRow, m))
        self.s.flush()

    def media_shas(self) -> set[str]:
        """Every media file the database names."""
        return set(self.s.scalars(select(MediaRow.sha256)))

    def media(self, shas: list[str]) -> dict[str, MediaRecord]:
        rows = self.s.scalars(select(MediaRow).where(MediaRow.sha256.in_(list(shas))))
        return {r.sha256: _record(MediaRecord, r) for r in rows}

    def clip(self, key: str, pid: str | None = None) -> ClipRecord | None:
        """The cached clip for `key` that project `pid` may use: one rendered here, else one imported with
        that project (never one that came with another project's archive). Without `pid`: rendered here only."""
        row = self.s.get(ClipRow, (key, LOCAL)) or (self.s.get(ClipRow, (key, pid)) if pid else None)
        return None if row is None else _record(ClipRecord, row)

    def put_clip(self, clip: ClipRecord, media: Sequence[MediaRecord] = ()) -> None:
        """Cache a clip rendered here (replacing an entry for the same key whose file went missing)."""
        self.add_media(list(media))
        self.s.merge(_row(ClipRow, clip, scope=LOCAL))

    def add_clips(self, clips: list[ClipRecord], pid: str) -> None:
        """Clip-cache entries imported with project `pid`, for its renders only."""
        for c in clips:
            if self.s.get(ClipRow, (c.key, pid)) is None:
                self.s.add(_row(ClipRow, c, scope=pid))

    def clip_media(self, clip_sha256: str, kind: str) -> ClipMediaRecord | None:
        row = self.s.get(ClipMediaRow, (clip_sha256, kind))
        return None if row is None else _record(ClipMediaRecord, row)

    def put_clip_media(self, records: list[ClipMediaRecord], media: list[MediaRecord]) -> None:
        """Cache pictures cut from clips (replacing an entry whose files went missing)."""
        self.add_media(media)
        for r in records:
            self.s.merge(_row(ClipMediaRow, r))

    # ------------------------------------------------------------------ renders
    def add_render(self, version: Version, render: RenderRecord) -> None:
        self.close_draft(version)
        self.s.add(_row(RenderRow, render, version_id=version.id))

    def renders(self, version: Version) -> list[RenderRecord]:
        rows = self.s.scalars(
            select(RenderRow).where(RenderRow.version_id == version.id).order_by(RenderRow.created_at, RenderRow.id)
        )
        return [_record(RenderRecord, r, version=version.number) for r in rows]

    def latest_render(self, version: Version) -> RenderRecord | None:
        row = self.s.scalars(
            select(RenderRow).where(RenderRow.version_id == version.id).order_by(RenderRow.created_at.desc()).limit(1)
        ).first()
        return None if row is None else _record(RenderRecord, row, version=version.number)

    # ------------------------------------------------------------------ critiques
    def add_critiques(self, version: Version, critiques: list[CritiqueRecord]) -> None:
        if critiques:
            self.close_draft(version)
        for c in critiques:
            self.s.add(_row(CritiqueRow, c, version_id=version.id, data=c.critique.model_dump(mode="json")))

    def critiques(self, version: Version, latest_only: bool = True) -> list[CritiqueRecord]:
        """The latest panel run on the version (or every run, oldest first), by persona id within a run."""
        q = select(CritiqueRow).where(CritiqueRow.version_id == version.id)
        if latest_only:
            latest = self.s.scalars(
                q.with_only_columns(CritiqueRow.batch).order_by(CritiqueRow.created_at.desc()).limit(1)
            ).first()
            if latest is None:
                return []
            q = q.where(CritiqueRow.batch == latest)
        rows = self.s.scalars(q.order_by(CritiqueRow.created_at, CritiqueRow.batch, CritiqueRow.persona_id))
        names = {p.id: p.name for p in version.personas}
        return [
            _record(
                CritiqueRecord, r, version=version.number, persona_name=names.get(r.persona_id, ""), critique=r.data
            )
            for r in rows
        ]

    # ------------------------------------------------------------------ notes
    def add_note(self, version: Version, note: Note) -> Note:
        row = _row(NoteRow, note, version_id=version.id)
        self.s.add(row)
        self.s.flush()
        return note.model_copy(update={"created_at": row.created_at})

    def notes(self, version: Version) -> list[Note]:
        rows = self.s.scalars(
            select(NoteRow).where(NoteRow.version_id == version.id).order_by(NoteRow.created_at, NoteRow.id)
        )
        return [_record(Note, r) for r in rows]

    def update_note(self, version: Version, note_id: str, text: str) -> Note:
        row = self._note_row(version, note_id)
        row.text = Note(text=text).text  # validated like a new note
        return _record(Note, row)

    def delete_note(self, version: Version, note_id: str) -> None:
        self.s.delete(self._note_row(version, note_id))

    def _note_row(self, version: Version, note_id: str) -> NoteRow:
        row = self.s.get(NoteRow, note_id)
        if row is None or row.version_id != version.id:
            raise NotFound(f"v{version.number} has no note {note_id!r}")
        return row

    # ------------------------------------------------------------------ proposals
    def add_proposal(self, version: Version, record: ProposalRecord) -> None:
        self.close_draft(version)
        self.s.add(_row(ProposalRow, record, version_id=version.id, data=record.proposal.model_dump(mode="json")))

    def proposals(self, version: Version) -> list[ProposalRecord]:
        rows = self.s.scalars(
            select(ProposalRow)
            .where(ProposalRow.version_id == version.id)
            .order_by(ProposalRow.created_at, ProposalRow.id)
        )
        return [self._proposal(r, version.number) for r in rows]

    def proposal(self, pid: str, proposal_id: str | None = None, ref: int | str | None = None) -> ProposalRecord:
        """A proposal by id (in this project), or the latest one on version `ref`."""
        self._project_row(pid)
        if proposal_id:
            row = self.s.get(ProposalRow, proposal_id)
            version = self.s.get(VersionRow, row.version_id) if row is not None else None
            if row is None or version is None or version.project_id != pid:
                raise NotFound(f"no proposal {proposal_id!r} in this project")
        else:
            version = self._version_row(pid, ref)
            row = self.s.scalars(
                select(ProposalRow)
                .where(ProposalRow.version_id == version.id)
                .order_by(ProposalRow.created_at.desc())
                .limit(1)
            ).first()
            if row is None:
                raise NotFound(f"v{version.number} has no proposal yet: run `chief refine` first")
        return self._proposal(row, version.number)

    def mark_accepted(self, proposal_id: str, version: Version) -> None:
        """Record the first version that accepting the proposal made."""
        row = self.s.get(ProposalRow, proposal_id)
        row.accepted_version_id = row.accepted_version_id or version.id

    # ------------------------------------------------------------------ keyframes, takes and take screenings
    def add_keyframe(self, version: Version, record: KeyframeRecord) -> None:
        self.s.add(_row(KeyframeRow, record, version_id=version.id))

    def keyframes(self, pid: str, shot_id: str | None = None, version: Version | None = None) -> list[KeyframeRecord]:
        """A project's keyframe candidates (of one shot, or made on one version), oldest first."""
        return [_record(KeyframeRecord, r, version=n) for r, n in self._attached(KeyframeRow, pid, shot_id, version)]

    def keyframe(self, pid: str, keyframe_id: str) -> KeyframeRecord:
        found = [k for k in self.keyframes(pid) if k.id == keyframe_id]
        if not found:
            raise NotFound(f"no keyframe {keyframe_id!r} in this project")
        return found[0]

    def keyframe_by_key(self, key: str) -> KeyframeRecord | None:
        """A generated still with this image key, in any project (stills are content-addressed like clips)."""
        row = self.s.scalars(select(KeyframeRow).where(KeyframeRow.key == key).limit(1)).first()
        if row is None:
            return None
        return _record(KeyframeRecord, row, version=self.s.get(VersionRow, row.version_id).number)

    def add_take(self, version: Version, record: TakeRecord) -> None:
        self.s.add(_row(TakeRow, record, version_id=version.id))

    def takes(self, pid: str, shot_id: str | None = None, version: Version | None = None) -> list[TakeRecord]:
        """A project's takes (of one shot, or rendered on one version), in the order they were made."""
        return [_record(TakeRecord, r, version=n) for r, n in self._attached(TakeRow, pid, shot_id, version)]

    def add_take_screening(self, version: Version, record: TakeScreeningRecord) -> None:
        self.s.add(_row(TakeScreeningRow, record, version_id=version.id))

    def take_screenings(
        self, pid: str, shot_id: str | None = None, version: Version | None = None
    ) -> list[TakeScreeningRecord]:
        return [
            _record(TakeScreeningRecord, r, version=n)
            for r, n in self._attached(TakeScreeningRow, pid, shot_id, version)
        ]

    def _attached(self, model, pid: str, shot_id: str | None, version: Version | None) -> list[tuple]:
        """Rows of `model` on a project's versions (or one version), with their version numbers, oldest first."""
        self._project_row(pid)
        q = (
            select(model, VersionRow.number)
            .join(VersionRow, VersionRow.id == model.version_id)
            .where(VersionRow.project_id == pid)
        )
        if shot_id is not None:
            q = q.where(model.shot_id == shot_id)
        if version is not None:
            q = q.where(model.version_id == version.id)
        return list(self.s.execute(q.order_by(model.created_at, model.id)).tuples())

    # ------------------------------------------------------------------ agent usage
    def add_usage(self, version: Version, usage: UsageRecord) -> None:
        if usage.calls:
            self.s.add(_row(AgentCallRow, usage, version_id=version.id))

    def usage(self, version: Version) -> list[UsageRecord]:
        rows = self.s.scalars(
            select(AgentCallRow)
            .where(AgentCallRow.version_id == version.id)
            .order_by(AgentCallRow.created_at, AgentCallRow.id)
        )
        return [_record(UsageRecord, r) for r in rows]

    # ------------------------------------------------------------------ whole projects (archives)
    def import_project(self, project: Project, bundles: list[VersionBundle]) -> str:
        """A project with the given (fresh) ids, its versions parents first, and what each one holds."""
        versions = [b.version for b in bundles]
        numbers = {v.number: v.id for v in versions}
        self.s.add(
            _row(
                ProjectRow,
                project,
                current_version_id=numbers[project.current_version],
                trashed_at=None,
                owner=owner_of_new(),  # the importer's, whoever made the archive
            )
        )
        self.s.flush()
        for v in sorted(versions, key=lambda v: v.number):
            parent = numbers[v.parent_number] if v.parent_number else None
            self.s.add(
                _version_row(
                    v.id,
                    project.id,
                    parent,
                    v.number,
                    v.kind,
                    v.message,
                    v.storyboard,
                    v.panel,
                    v.personas,
                    v.created_at,
                    draft=v.draft,
                )
            )
            self.s.flush()
        for b in bundles:
            for r in b.renders:
                self.add_render(b.version, r)
            for n in b.notes:
                self.add_note(b.version, n)
            for u in b.usage:
                self.add_usage(b.version, u)
            for k in b.keyframes:
                self.add_keyframe(b.version, k)
            for t in b.takes:
                self.add_take(b.version, t)
            for ts in b.take_screenings:
                self.add_take_screening(b.version, ts)
        self.s.flush()
        for b in bundles:
            self.add_critiques(b.version, b.critiques)
            for p in b.proposals:
                self.add_proposal(b.version, p)
                if p.accepted_as is not None:
                    self.s.get(ProposalRow, p.id).accepted_version_id = numbers[p.accepted_as]
        return project.id

    def bundle(self, version: Version) -> VersionBundle:
        """The version and everything attached to it."""
        pid = version.project_id
        return VersionBundle(
            version=version,
            renders=self.renders(version),
            notes=self.notes(version),
            critiques=self.critiques(version, latest_only=False),
            proposals=self.proposals(version),
            usage=self.usage(version),
            keyframes=self.keyframes(pid, version=version),
            takes=self.takes(pid, version=version),
            take_screenings=self.take_screenings(pid, version=version),
        )

    # ------------------------------------------------------------------ rows -> records
    def _project_row(self, pid: str) -> ProjectRow:
        """The one way from a project id to its row: a project the acting account may not open (storage.owners) is
        not found, in the same words as one that does not exist; one it may only read (shared with it, or a
        teacher's view of a student's) is refused in a write transaction."""
        row = self.s.get(ProjectRow, pid)
        access = None if row is None else self._access(row)
        if row is None or access is None:
            raise NotFound(f"no project {pid!r}")
        if access == "read" and self.writing:
            raise ReadOnly(
                f"project {pid!r} is {row.owner}'s, open to you read-only: export it and import the archive to work on "
                "a copy of your own"
            )
        return row

    def _access(self, row: ProjectRow) -> str | None:
        """ "write" (no one in particular, or the owner), "read" (a teacher, or shared with the actor or the class)
        or None (someone else's)."""
        actor = current()
        if actor is None or row.owner == actor.name:
            return "write"
        if actor.teacher or self.s.scalar(
            select(func.count()).where(ShareRow.project_id == row.id, ShareRow.reader.in_(actor.readers()))
        ):
            return "read"
        return None

    # ------------------------------------------------------------------ sharing (app/services/sharing.py)
    def check_writable(self, pid: str) -> None:
        """Refuse as a write transaction would: not found, or `ReadOnly`."""
        writing, self.writing = self.writing, True
        try:
            self._project_row(pid)
        finally:
            self.writing = writing

    def access(self, pid: str) -> tuple[str, str]:
        """(owner, "write" | "read") of a project the actor may open; NotFound otherwise."""
        row = self.s.get(ProjectRow, pid)
        access = None if row is None else self._access(row)
        if row is None or access is None:
            raise NotFound(f"no project {pid!r}")
        return row.owner, access

    def owners(self) -> dict[str, str]:
        """project id -> owner, for every project the actor may open."""
        return dict(self.s.execute(_visible(select(ProjectRow.id, ProjectRow.owner))).tuples().all())

    def own_row(self, pid: str) -> ProjectRow:
        """A project the actor owns (a teacher: any), for sharing and hand-over; anyone else's is not found."""
        row = self.s.get(ProjectRow, pid)
        actor = current()
        if row is None or (actor is not None and row.owner != actor.name and not actor.teacher):
            if row is not None and actor is not None and self._access(row) == "read":
                raise ReadOnly(
                    f"project {pid!r} is {row.owner}'s: only its owner (or a teacher) shares or hands it over"
                )
            raise NotFound(f"no project {pid!r}")
        return row

    def share(self, pid: str, reader: str) -> bool:
        """Share `pid` read-only with `reader` (an account or CLASS); False when it already was."""
        self.own_row(pid)
        if self.s.get(ShareRow, (pid, reader)) is not None:
            return False
        self.s.add(ShareRow(project_id=pid, reader=reader))
        return True

    def unshare(self, pid: str, reader: str) -> bool:
        self.own_row(pid)
        return bool(
            self.s.execute(delete(ShareRow).where(ShareRow.project_id == pid, ShareRow.reader == reader)).rowcount
        )  # pyright: ignore[reportAttributeAccessIssue]

    def shares(self, pid: str) -> list[str]:
        """Who reads `pid` besides its owner (account names, CLASS), by name."""
        self._project_row(pid)
        return list(self.s.scalars(select(ShareRow.reader).where(ShareRow.project_id == pid).order_by(ShareRow.reader)))

    def hand_over(self, pid: str, to: str) -> str:
        """Give `pid` to account `to` (its shares stay); returns the former owner."""
        row = self.own_row(pid)
        before, row.owner = row.owner, to
        self.s.execute(delete(ShareRow).where(ShareRow.project_id == pid, ShareRow.reader == to))
        return before

    # ------------------------------------------------------------------ accounts (app/server/accounts.py)
    def add_user(self, name: str, password_hash: str, teacher: bool) -> None:
        self.s.add(UserRow(name=name, password_hash=password_hash, teacher=teacher))

    def user(self, name: str) -> tuple[str, bool] | None:
        """(password hash, teacher) of account `name`, or None."""
        row = self.s.get(UserRow, name)
        return None if row is None else (row.password_hash, row.teacher)

    def users(self) -> list[tuple[str, bool, datetime, int]]:
        """(name, teacher, created, projects owned) of every account, by name."""
        owned = dict(self.s.execute(select(ProjectRow.owner, func.count()).group_by(ProjectRow.owner)).all())
        rows = self.s.scalars(select(UserRow).order_by(UserRow.name))
        return [(r.name, r.teacher, r.created_at, owned.get(r.name, 0)) for r in rows]

    def set_password(self, name: str, password_hash: str) -> None:
        self.s.get_one(UserRow, name).password_hash = password_hash

    def remove_user(self, name: str) -> None:
        self.s.delete(self.s.get_one(UserRow, name))

    def owned(self, name: str) -> int:
        """How many projects (trashed ones too) account `name` owns."""
        return self.s.scalar(select(func.count()).where(ProjectRow.owner == name)) or 0

    # ------------------------------------------------------------------ signed-in sessions (app/server/sessions.py)
    def put_session(self, session: SessionRecord) -> None:
        self.s.add(_row(SessionRow, session))

    def session(self, sid: str) -> SessionRecord | None:
        row = self.s.get(SessionRow, sid)
        return None if row is None else _record(SessionRecord, row)

    def seen_sessions(self, seen: dict[str, float]) -> None:
        """Note the last request of each session in `seen` (id -> epoch seconds); ended ones are skipped."""
        for sid, at in seen.items():
            row = self.s.get(SessionRow, sid)
            if row is not None:
                row.seen_at = max(row.seen_at, at)

    def end_sessions(self, account: str | None = None, ids: Sequence[str] = ()) -> list[str]:
        """End the sessions `ids` and every session of `account` (when given): the ids of those ended."""
        q = select(SessionRow.id).where(or_(SessionRow.id.in_(list(ids)), SessionRow.account == (account or "\0")))
        ended = list(self.s.scalars(q))
        if ended:
            self.s.execute(delete(SessionRow).where(SessionRow.id.in_(ended)))
        return ended

    def end_idle_sessions(self, before: float) -> int:
        """End the sessions with no request since `before` (epoch seconds)."""
        return self.s.execute(delete(SessionRow).where(SessionRow.seen_at < before)).rowcount

    # ------------------------------------------------------------------ who may fetch which file (app/server/security.py)
    def readable_media(self) -> set[str]:
        """Every media file (sha256) that a project the acting account may open names (its own, shared with it or the
        class; a teacher's: all), counted as `owner_media_bytes` counts them: what the web app may serve it."""
        return self._named_media(_visible(select(ProjectRow.id)))

    # ------------------------------------------------------------------ the web server's jobs (app/server/jobs.py)
    def put_job(self, job: JobRecord) -> None:
        """Write job `job` as it is now (queued, started or ended)."""
        self.s.merge(_row(JobRow, job))

    def jobs(self, states: Sequence[str] = (), limit: int = 500) -> list[JobRecord]:
        """The newest jobs first (those in `states` only, when given)."""
        q = select(JobRow).order_by(JobRow.queued_at.desc()).limit(limit)
        if states:
            q = q.where(JobRow.state.in_(states))
        return [_record(JobRecord, r) for r in self.s.scalars(q)]

    def job_seconds(self, kind: str, limit: int) -> list[float]:
        """How long the newest `limit` finished ("done") jobs of `kind` ran, newest first."""
        q = (
            select(JobRow.started_at, JobRow.ended_at)
            .where(JobRow.kind == kind, JobRow.state == "done", JobRow.started_at.is_not(None))
            .order_by(JobRow.ended_at.desc())
            .limit(limit)
        )
        return [(e - s).total_seconds() for s, e in self.s.execute(q).all() if e is not None]

    def queue_seconds(self, project: str, version: int) -> float | None:
        """Seconds the started jobs on version `version` of `project` waited in the queue (`started_at - queued_at`),
        summed; None when none of its jobs has started (nothing recorded)."""
        q = select(JobRow.queued_at, JobRow.started_at).where(
            JobRow.project == project, JobRow.version == version, JobRow.started_at.is_not(None)
        )
        waits = [(s - q0).total_seconds() for q0, s in self.s.execute(q).all() if s is not None]
        return round(sum(waits), 3) if waits else None

    def jobs_since(self, owner: str, kind: str, since: datetime) -> int:
        """How many jobs of `kind` account `owner` had queued since `since` (refused ones are never written)."""
        q = select(func.count()).where(JobRow.owner == owner, JobRow.kind == kind, JobRow.queued_at >= since)
        return self.s.scalar(q) or 0

    def lose_jobs(self, servers: Sequence[str], ended: datetime) -> int:
        """Mark the queued and running jobs of the servers `servers` (HOST:PID, processes that are gone) "lost"."""
        rows = self.s.scalars(
            select(JobRow).where(JobRow.state.in_(("queued", "running")), JobRow.server.in_(servers))
        ).all()
        for r in rows:
            r.state, r.message, r.ended_at = "lost", "the server stopped before this job ended", ended
        return len(rows)

    def job_servers(self) -> list[str]:
        """The servers (HOST:PID) with jobs still queued or running."""
        q = select(JobRow.server).where(JobRow.state.in_(("queued", "running"))).distinct()
        return list(self.s.scalars(q))

    # ------------------------------------------------------------------ disk per account (app/server/quotas.py)
    def owner_media_bytes(self, owner: str) -> int:
        """The bytes of the media store account `owner`'s projects (trashed ones too) use: every distinct file any of
        its versions, renders, keyframes or takes names, with the pictures cut from its clips and their last frames. A file shared with
        another account counts for each of them; one used twice by the same account counts once."""
        named = self._named_media(select(ProjectRow.id).where(ProjectRow.owner == owner))
        sizes = self.s.execute(select(MediaRow.sha256, MediaRow.size).where(MediaRow.sha256.in_(named)))
        return sum(size for _, size in sizes)

    def _named_media(self, pids) -> set[str]:
        """The media files (sha256) the projects `pids` (a select of ids) name: their versions, renders, keyframes
        and takes, the pictures cut from their clips and the clips' last frames."""
        vids = select(VersionRow.id).where(VersionRow.project_id.in_(pids))
        named: set[str] = set()
        for board in self.s.scalars(select(VersionRow.storyboard).where(VersionRow.id.in_(vids))):
            named.update(_SHA.findall(json.dumps(board)))
        for r in self.s.execute(
            select(RenderRow.film_sha256, RenderRow.media, RenderRow.shots).where(RenderRow.version_id.in_(vids))
        ):
            named.update(_SHA.findall(json.dumps([r[0], r[1], r[2]])))
        for table in (KeyframeRow, TakeRow):
            named.update(self.s.scalars(select(table.sha256).where(table.version_id.in_(vids))))
        clips = list(named)
        for frames in self.s.scalars(select(ClipMediaRow.frames).where(ClipMediaRow.clip_sha256.in_(clips))):
            named.update(_SHA.findall(json.dumps(frames)))
        named.update(  # a clip's last frame (what the next shot continues from)
            sha for sha in self.s.scalars(select(ClipRow.last_frame_sha256).where(ClipRow.sha256.in_(clips))) if sha
        )
        return named

    def _project(self, row: ProjectRow, versions: int | None = None, current: int | None = None) -> Project:
        if versions is None:
            versions = self.s.scalar(select(func.count()).where(VersionRow.project_id == row.id)) or 0
        if current is None:
            current = self.s.scalar(select(VersionRow.number).where(VersionRow.id == row.current_version_id)) or 1
        return _record(Project, row, current_version=current, versions=versions)

    def _version_row(self, pid: str, ref: int | str | None) -> VersionRow:
        proj = self._project_row(pid)
        if ref is None or ref == "":
            row = self.s.get(VersionRow, proj.current_version_id)
        elif isinstance(ref, int) or str(ref).lstrip("vV").isdigit():
            num = int(str(ref).lstrip("vV"))
            row = self.s.scalars(
                select(VersionRow).where(VersionRow.project_id == pid, VersionRow.number == num)
            ).first()
        else:
            row = self.s.get(VersionRow, ref)
            row = row if row is not None and row.project_id == pid else None
        if row is None:
            raise NotFound(f"project {pid} has no version {ref!r}")
        return row

    def _version(self, row: VersionRow) -> Version:
        parent = (
            self.s.scalar(select(VersionRow.number).where(VersionRow.id == row.parent_id)) if row.parent_id else None
        )
        return _record(Version, row, parent_number=parent)

    def _proposal(self, row: ProposalRow, number: int) -> ProposalRecord:
        accepted = (
            self.s.scalar(select(VersionRow.number).where(VersionRow.id == row.accepted_version_id))
            if row.accepted_version_id
            else None
        )
        return _record(ProposalRecord, row, version=number, proposal=row.data, accepted_as=accepted)


def _visible(q, shared: bool = True):
    """`q` (over projects) limited to what the acting account may open (storage.owners): its own, and (`shared`)
    those shared with it or with the class."""
    actor = current()
    if actor is None:
        return q
    if not shared:
        return q.where(ProjectRow.owner == actor.name)
    if actor.teacher:
        return q
    readable = select(ShareRow.project_id).where(ShareRow.reader.in_(actor.readers()))
    return q.where(or_(ProjectRow.owner == actor.name, ProjectRow.id.in_(readable)))


# ---------------------------------------------------------------------------------- records <-> rows
# One way for every table: a column takes the record's field of the same name (a JSON column its JSON form, a
# scope NULL for the whole film, as rows made before scopes read) and a field the column of the same name; what
# differs is named at the call (the version id a record carries as its number, `data` for the critique or proposal).


def _row(table: type[Base], record: BaseModel, **columns: Any) -> Any:
    """`record` as a new row of `table`; `columns` set the rest. A None for a column with a default leaves it."""
    plain, as_json = record.model_dump(), record.model_dump(mode="json")
    scope = getattr(record, "scope", None)
    values: dict[str, Any] = {}
    for c in table.__table__.columns:
        if c.key in columns or c.key not in plain:
            continue
        value = as_json[c.key] if isinstance(c.type, JSON) else plain[c.key]
        if c.key == "scope" and isinstance(scope, Scope) and scope.whole:
            value = None
        if value is None and c.default is not None:
            continue
        values[c.key] = value
    return table(**values, **columns)


def _record(cls: type[R], row: Base, **fields: Any) -> R:
    """`row` as a `cls` record: each field from the column of the same name (a NULL JSON column is the field's
    default), `fields` the rest (what the row holds under another name, or only by reference)."""
    values = {
        c.key: getattr(row, c.key)
        for c in row.__table__.columns
        if c.key in cls.model_fields
        and c.key not in fields
        and not (getattr(row, c.key) is None and isinstance(c.type, JSON))
    }
    return cls.model_validate({**values, **fields})


def _version_row(
    vid: str,
    pid: str,
    parent_id: str | None,
    number: int,
    kind: str,
    message: str,
    board: Storyboard,
    panel: list[str],
    personas: list[Persona],
    created_at: datetime | None = None,
    *,
    draft: bool = False,
) -> VersionRow:
    """The one builder of a version row (a new project's v1, a child, an imported version)."""
    return VersionRow(
        id=vid,
        project_id=pid,
        parent_id=parent_id,
        number=number,
        kind=kind,
        message=message,
        storyboard=board.model_dump(mode="json"),
        panel=list(panel),
        personas=[p.model_dump(mode="json") for p in personas],
        draft=draft,
        **({"created_at": created_at} if created_at else {}),
    )


DRAFT_SUMMARY_CHARS = 2000  # a long session's summary keeps its first changes and says how many more followed


def draft_summary(summary: str, change: str) -> str:
    """A draft's message with one more change: "keyframes for 13 shots; re-roll keyframe of s004; pick take 2 of
    s007". Past DRAFT_SUMMARY_CHARS the later changes are counted, not listed ("… and 12 more changes")."""
    head, sep, more = summary.partition(" … and ")
    count = int(more.split(" ", 1)[0]) if sep and more.split(" ", 1)[0].isdigit() else 0
    if count or len(head) + len(change) + 2 > DRAFT_SUMMARY_CHARS:
        return f"{head} … and {count + 1} more change{'s' if count else ''}"
    return f"{head}; {change}" if head else change
