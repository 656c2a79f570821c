"""Sharing and hand-over: a project shared read-only with an account or with the class, and a teacher handing a
student's project to another account.

A reader (and a teacher, for every project) opens a shared project and sees everything in it; every write is refused
in one line where the repository turns an id into a project (`storage.repository.Unit._project_row` in a write
transaction raises `ReadOnly`), and no job starts on it (`writable`, the web app's job check). Only the owner (or a
teacher) shares; only a teacher (or the machine's own CLI, acting as no one in particular) hands a project over.
"""

from __future__ import annotations

from pydantic import BaseModel

from app.context import Context
from app.errors import StudioError
from storage.owners import CLASS, LOCAL_OWNER, current


class Access(BaseModel):
    """What the acting account may do with a project: its owner, whether it writes, who else reads it."""

    project_id: str
    owner: str
    writable: bool
    readers: list[str]

    @property
    def label(self) -> str:
        """ "" for one's own project, else a short mark for the page ("alice's · read-only")."""
        return "" if self.writable else f"{self.owner}'s · read-only"


def reader_label(reader: str) -> str:
    return "the class" if reader == CLASS else reader


class Sharing:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def access(self, pid: str) -> Access:
        with self.ctx.repo.read() as u:
            owner, how = u.access(pid)
            readers = u.shares(pid)
        return Access(project_id=pid, owner=owner, writable=how == "write", readers=readers)

    def writable(self, pid: str) -> None:
        """Refuse (one line) unless the actor may change `pid`: another account's is not found, a shared one is
        read-only. The web app checks this before it starts a job on a project."""
        with self.ctx.repo.read() as u:
            u.check_writable(pid)

    def owners(self) -> dict[str, str]:
        """project id -> owner of every project the actor opens."""
        with self.ctx.repo.read() as u:
            return u.owners()

    def share(self, pid: str, reader: str) -> Access:
        """Share `pid` read-only with account `reader` or with the class ("class")."""
        reader = self._reader(reader)
        with self.ctx.repo.write() as u:
            owner = u.own_row(pid).owner
            if reader == owner:
                raise StudioError(f"{reader!r} owns {pid}: it is already theirs")
            u.share(pid, reader)
        return self.access(pid)

    def unshare(self, pid: str, reader: str) -> Access:
        reader = self._reader(reader)
        with self.ctx.repo.write() as u:
            if not u.unshare(pid, reader):
                raise StudioError(f"{pid} is not shared with {reader_label(reader)}")
        return self.access(pid)

    def hand_over(self, pid: str, to: str) -> tuple[Access, str]:
        """Give `pid` to account `to`: a teacher's act (or the machine's own CLI acting as no one in particular).
        Returns the project's access now and its former owner."""
        actor = current()
        if actor is not None and not actor.teacher:
            raise StudioError("only a teacher hands a project to another account")
        self._account(to)
        with self.ctx.repo.write() as u:
            if u.own_row(pid).owner == to:
                raise StudioError(f"{pid} is already {to}'s")
            before = u.hand_over(pid, to)
        return self.access(pid), before

    def _reader(self, reader: str) -> str:
        if reader in ("class", CLASS):
            return CLASS
        self._account(reader)
        return reader

    def _account(self, name: str) -> None:
        if name == LOCAL_OWNER:
            return
        with self.ctx.repo.read() as u:
            if u.user(name) is None:
                raise StudioError(f"no account {name!r} (see `chief users list`)")
