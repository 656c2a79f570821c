"""SQLAlchemy 2 tables and the database handle (SQLite, WAL, foreign keys, Alembic migrations at start).

Rows hold JSON snapshots validated by storage.schema; the tables only index what we query by.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from storage.schema import utcnow


class DatabaseError(OSError):
    """The database cannot be opened, read or written: one line that says what, where and what to do."""


@contextmanager
def _clear_errors(path: Path) -> Iterator[None]:
    from sqlalchemy.exc import DatabaseError as SQLError

    try:
        yield
    except SQLError as e:
        raise DatabaseError(_explain(path, str(e.orig))) from e


def _explain(path: Path, reason: str) -> str:
    """What went wrong with the database file at `path`, and what to do about it."""
    low = reason.lower()
    if "not a database" in low or "malformed" in low or "encrypted" in low:
        return (
            f"{path} is not a CHIEF database or is damaged ({reason}): restore it from a backup, or move it "
            "away to start an empty one"
        )
    if "readonly" in low or "read-only" in low or not _writable(path.parent):
        return _read_only(path)
    return f"could not use the database {path}: {reason}"


def _read_only(path: Path) -> str:
    if path.exists() and _writable(path.parent):
        return f"the database {path} is read-only: make it writable, or set CHIEF_HOME to another folder"
    return (
        f"the data folder {path.parent} is read-only: CHIEF writes its database and journal there; make it "
        "writable, or set CHIEF_HOME to a writable folder"
    )


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class ProjectRow(Base):
    __tablename__ = "projects"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    idea: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The version commands act on by default: the newest one the creator made or chose.
    current_version_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    trashed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The account it belongs to (storage.owners; migration 0010): someone else's project is "not found"
    owner: Mapped[str] = mapped_column(String(32), default="local", server_default="local", index=True)


class UserRow(Base):
    """An account (app/server/accounts.py): its password only as a salted scrypt hash with its parameters."""

    __tablename__ = "users"
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(200))
    teacher: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ShareRow(Base):
    """A project shared read-only with an account, or with the class (`reader` = storage.owners.CLASS): migration
    0011. Its owner still writes it alone; a reader (and a teacher) reads it (storage.repository.Unit._project_row)."""

    __tablename__ = "shares"
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True)
    reader: Mapped[str] = mapped_column(String(32), primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SessionRow(Base):
    """A signed-in web session (app/server/sessions.py, migration 0013): `id` is the sha256 of the browser's token (the
    token itself is never stored), `stamp` the account's credentials when it signed in (a password change, removal or
    re-adding of the name ends it), `seen_at` its last request (seconds since the epoch, for idle sign-out)."""

    __tablename__ = "sessions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    account: Mapped[str] = mapped_column(String(32), index=True)
    stamp: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    seen_at: Mapped[float] = mapped_column(Float)


class VersionRow(Base):
    __tablename__ = "versions"
    __table_args__ = (UniqueConstraint("project_id", "number"),)
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("versions.id"), nullable=True)
    number: Mapped[int] = mapped_column(Integer)  # v1, v2, ... per project, in creation order
    kind: Mapped[str] = mapped_column(String(20))  # plan | import | edit | accept | fork | panel
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    storyboard: Mapped[dict[str, Any]] = mapped_column(JSON)
    panel: Mapped[list[Any]] = mapped_column(JSON, default=list)  # persona ids on the critics' panel
    personas: Mapped[list[Any]] = mapped_column(JSON, default=list)  # the project's own personas (Persona JSON)
    # The creator's open working draft: small actions amend it in place until it is rendered, critiqued, saved over
    # or branched from (storage.repository.Unit.fold); then it is an ordinary, immutable version.
    draft: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class MediaRow(Base):
    __tablename__ = "media"
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    ext: Mapped[str] = mapped_column(String(10))
    size: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ClipRow(Base):
    """The clip cache: content key -> media file. A clip rendered here (scope "") serves every project; a
    clip that came in an archive (scope = the imported project's id) serves that project only, since
    nothing proves that its pixels are what its key says."""

    __tablename__ = "clips"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    scope: Mapped[str] = mapped_column(String(40), primary_key=True, default="")
    sha256: Mapped[str] = mapped_column(ForeignKey("media.sha256"))
    backend: Mapped[str] = mapped_column(String(40))
    model: Mapped[str] = mapped_column(Text, default="")
    num_frames: Mapped[int] = mapped_column(Integer)
    fps: Mapped[int] = mapped_column(Integer)
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)  # render time
    last_frame_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ClipMediaRow(Base):
    """Pictures cut from a clip, cached by the clip's sha256: its thumbnail, or k sampled frames."""

    __tablename__ = "clip_media"
    clip_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(20), primary_key=True)  # "thumb" | "frames:K"
    fps: Mapped[float] = mapped_column(Float)
    frames: Mapped[list[Any]] = mapped_column(JSON)  # [{index, sha256}] in clip order
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RenderRow(Base):
    """A finished render of a version: its clips in order and the assembled film."""

    __tablename__ = "renders"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    version_id: Mapped[str] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    backend: Mapped[str] = mapped_column(String(40))
    model: Mapped[str] = mapped_column(Text, default="")
    label: Mapped[str] = mapped_column(Text, default="")
    shots: Mapped[list[Any]] = mapped_column(JSON)  # [{shot_id, key, sha256, status, start, end}]
    rendered: Mapped[int] = mapped_column(Integer)
    reused: Mapped[int] = mapped_column(Integer)
    seconds: Mapped[float] = mapped_column(Float)
    film_sha256: Mapped[str] = mapped_column(ForeignKey("media.sha256"))
    media: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # srt, vtt, otio, contact_sheet, narration -> sha
    # the film copied the clips' video packets (no re-encode); before 0007 a "yes"/"no" in `media`
    stream_copied: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    audio: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # RenderAudio; NULL: a silent film


class CritiqueRow(Base):
    __tablename__ = "critiques"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    version_id: Mapped[str] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), index=True)
    # The render watched; NULL for a keyframe screening (the stills are the shots' keyframes in the version).
    render_id: Mapped[str | None] = mapped_column(ForeignKey("renders.id", ondelete="CASCADE"), nullable=True)
    screening: Mapped[str] = mapped_column(String(20), default="film", server_default="film")  # film | keyframes
    persona_id: Mapped[str] = mapped_column(String(40))
    batch: Mapped[str] = mapped_column(String(40))  # one critique action = one batch (the panel's run)
    mode: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    usage: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    scope: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # Scope; NULL: the whole film
    coverage: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # Coverage; NULL: not recorded


class NoteRow(Base):
    __tablename__ = "notes"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    version_id: Mapped[str] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), index=True)
    shot_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    scope: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # Scope (scenes or shots); NULL: none
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ProposalRow(Base):
    __tablename__ = "proposals"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    version_id: Mapped[str] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    mode: Mapped[str] = mapped_column(String(200))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    usage: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    scope: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # Scope; NULL: the whole film
    accepted_version_id: Mapped[str | None] = mapped_column(ForeignKey("versions.id"), nullable=True)


class KeyframeRow(Base):
    """A keyframe candidate of a shot (generated or uploaded), kept whether or not a version approves it."""

    __tablename__ = "keyframes"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    version_id: Mapped[str] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), index=True)
    shot_id: Mapped[str] = mapped_column(String(40))
    sha256: Mapped[str] = mapped_column(ForeignKey("media.sha256"))
    source: Mapped[str] = mapped_column(String(20))  # generated | uploaded
    seed: Mapped[int | None] = mapped_column(Integer, nullable=True)
    backend: Mapped[str] = mapped_column(String(40), default="")
    model: Mapped[str] = mapped_column(Text, default="")
    label: Mapped[str] = mapped_column(Text, default="")
    key: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)  # image key of a generated still
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TakeRow(Base):
    """A take of a shot: the clip one seed rendered. Kept; picking one makes a child version."""

    __tablename__ = "takes"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    version_id: Mapped[str] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), index=True)
    shot_id: Mapped[str] = mapped_column(String(40))
    number: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(Integer)
    keyframe_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    key: Mapped[str] = mapped_column(String(64))  # the clip key
    sha256: Mapped[str] = mapped_column(ForeignKey("media.sha256"))
    backend: Mapped[str] = mapped_column(String(40))
    model: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TakeScreeningRow(Base):
    """The panel's votes on the takes of one shot."""

    __tablename__ = "take_screenings"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    version_id: Mapped[str] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), index=True)
    shot_id: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    mode: Mapped[str] = mapped_column(String(200))
    takes: Mapped[list[Any]] = mapped_column(JSON)  # take ids shown
    votes: Mapped[list[Any]] = mapped_column(JSON)  # [TakeVote]
    usage: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class AgentCallRow(Base):
    """Cost of agent calls, per action, summed per version for the user."""

    __tablename__ = "agent_calls"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    version_id: Mapped[str] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(20))
    mode: Mapped[str] = mapped_column(String(200))
    calls: Mapped[int] = mapped_column(Integer, default=1)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class JobRow(Base):
    """A job of the web server's queue (app/server/jobs.py, app/server/queue.py), written as it is queued, starts and ends: what
    `chief queue` lists, what the queue's estimates and the renders-per-hour quota are measured from, and the time a
    user's jobs waited (`started_at - queued_at`) for the teacher's report."""

    __tablename__ = "jobs"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner: Mapped[str] = mapped_column(String(32), index=True)  # the account that asked (storage.owners)
    kind: Mapped[str] = mapped_column(String(20))  # render | takes | keyframes | reference | critique | plan | refine
    project: Mapped[str] = mapped_column(String(40), default="")  # "" for a plan (no project yet)
    version: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the version it works on, when one
    label: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(12), index=True)  # queued | running | done | failed | stopped | lost
    message: Mapped[str] = mapped_column(Text, default="")  # the outcome in one line
    server: Mapped[str] = mapped_column(String(80), default="")  # HOST:PID of the server that ran it
    queued_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


_migrate_lock = threading.Lock()


def _on_connect(dbapi_conn, _record) -> None:
    dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (see Database)
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


class Database:
    """One SQLite file. `session()` is one transaction: committed on success, rolled back on error."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        _check_file(self.path)
        url = f"sqlite:///{self.path}"
        args = {"timeout": 30, "check_same_thread": False}
        # Writers take the write lock at BEGIN (IMMEDIATE), so two processes never interleave a
        # read-then-write transaction; readers use a plain BEGIN and never wait on a writer (WAL).
        self.engine = create_engine(url, connect_args=args)
        self.read_engine = create_engine(url, connect_args=args)
        for engine, begin in ((self.engine, "BEGIN IMMEDIATE"), (self.read_engine, "BEGIN")):
            event.listen(engine, "connect", _on_connect)
            event.listen(engine, "begin", lambda conn, b=begin: conn.exec_driver_sql(b))
        self._write = sessionmaker(self.engine, expire_on_commit=False)
        self._read = sessionmaker(self.read_engine, expire_on_commit=False)
        with _migrate_lock, _clear_errors(self.path):
            migrate(self.engine)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A write transaction: all or nothing."""
        with _clear_errors(self.path), self._write.begin() as s:
            yield s

    @contextmanager
    def reader(self) -> Iterator[Session]:
        """A read-only snapshot."""
        with _clear_errors(self.path), self._read.begin() as s:
            yield s

    def close(self) -> None:
        self.engine.dispose()
        self.read_engine.dispose()


def _check_file(path: Path) -> None:
    """Refuse, in one line, what SQLite would misread: a 0-byte file (it would silently start an empty
    database over whatever was lost) and a folder that cannot be created or written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DatabaseError(
            f"cannot create the data folder {path.parent} ({e.strerror or e}): create it, or set "
            "CHIEF_HOME to a writable folder"
        ) from None
    if path.is_file() and path.stat().st_size == 0:
        raise DatabaseError(
            f"{path} is empty (0 bytes), perhaps cut short by a crash or a full disk: restore it "
            "from a backup, or delete it to start an empty database"
        )
    if not _writable(path.parent) or (path.exists() and not os.access(path, os.W_OK)):
        raise DatabaseError(_read_only(path))


HEAD = "0013"  # the newest migration's revision (tests/storage/test_migrations.py: it is Alembic's head)


def _at_head(engine) -> bool:
    """Whether the database's recorded revision is HEAD, read from its version table in SQL (no Alembic)."""
    with engine.begin() as conn:
        has = conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'")
        if has.first() is None:
            return False
        return conn.exec_driver_sql("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]


def alembic_config():
    """Alembic's configuration for CHIEF's migrations (storage/migrations): what `migrate` and the tests upgrade with."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    return cfg


def migrate(engine) -> None:
    """Apply Alembic migrations up to head (storage/migrations, an append-only list). A database that a
    newer CHIEF migrated further is refused before anything is touched. A database already at HEAD (every open
    but a new database's or an upgrade's) is left as it is without loading Alembic: its import and the migration
    scripts' were 0.13 s of CPU at each `chief` command's first open."""
    if _at_head(engine):
        return
    from alembic import command
    from alembic.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    cfg = alembic_config()
    script = ScriptDirectory.from_config(cfg)
    with engine.begin() as conn:
        current = MigrationContext.configure(conn).get_current_revision()
        try:
            known = current is None or script.get_revision(current) is not None
        except CommandError:
            known = False
        if not known:
            raise DatabaseError(
                f"{engine.url.database} was written by a newer CHIEF (database revision {current}; "
                f"this one knows up to {script.get_current_head()}): upgrade CHIEF, or set "
                "CHIEF_HOME to another folder"
            )
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
