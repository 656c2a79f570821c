"""Who is acting: the account whose projects a read or write may touch (stdlib only).

Every project belongs to an account (`projects.owner`, migration 0010). The repository asks `current()` whenever it
resolves a project id (`storage.repository.Unit._project_row`) or lists projects: someone else's project is "not
found", the same words as one that does not exist. A teacher reads every project, and an account reads the projects
shared with it or with the class (`CLASS`); only the owner writes one (a write transaction that reaches someone
else's project is refused: `storage.repository.ReadOnly`).

Who acts comes from, in order: a *source* a front end installs (the web app's reads the signed-in user of the event
being handled, app/ui/common.py `request_actor`), then the `ACTOR` context variable (the CLI's `--user`, a test's
`acting(...)`). None of them (the server's own upkeep, migrations) means no one in particular: nothing is filtered.
A job's thread copies its request's context (app/server/jobs.py), so it acts as the user who started it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

LOCAL_OWNER = "local"  # the account of whoever runs CHIEF on this machine; a data folder's projects before 0010
CLASS = "@class"  # a share with every account (no account name can start with '@')
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
# Words with a meaning of their own where a name is asked for: the CLI's default account, the share with everyone
# (`chief share P class`, app/services/sharing.py). No account takes one, nor a name that looks like one (name_key).
RESERVED = (LOCAL_OWNER, "class", CLASS)
# Characters that look alike in the fonts a page or a terminal shows names in (Unicode's confusables, UTS #39, for what
# a name may hold), after case folding: i, l, 1 and | as one letter, 0 as o; then sequences that read as one letter.
_LOOKALIKE = str.maketrans({"i": "l", "1": "l", "|": "l", "0": "o"})
_SEQUENCES = (("rn", "m"), ("vv", "w"), ("cl", "d"))


@dataclass(frozen=True)
class Actor:
    name: str
    teacher: bool = False

    def may_open(self, owner: str) -> bool:
        """Whether this account reads every project of `owner` (its own; a teacher's: everyone's). Shared projects
        are read too (storage.repository: the shares table); only the owner writes."""
        return self.teacher or owner == self.name

    def readers(self) -> tuple[str, str]:
        """The `shares.reader` values that open a shared project to this account."""
        return (self.name, CLASS)


ACTOR: ContextVar[Actor | None] = ContextVar("chief_actor", default=None)
_sources: list[Callable[[], Actor | None]] = []


def current() -> Actor | None:
    """The account acting now (None: no one in particular, e.g. the server's own upkeep)."""
    for source in _sources:
        actor = source()
        if actor is not None:
            return actor
    return ACTOR.get()


def owner_of_new() -> str:
    """The owner of a project made (or imported) now."""
    actor = current()
    return actor.name if actor is not None else LOCAL_OWNER


def add_source(source: Callable[[], Actor | None]) -> None:
    """Install a front end's way of telling who acts (once; it answers None outside its own events)."""
    if source not in _sources:
        _sources.append(source)


@contextmanager
def acting(actor: Actor | None) -> Iterator[None]:
    """Run the block as `actor`."""
    token = ACTOR.set(actor)
    try:
        yield
    finally:
        ACTOR.reset(token)


def name_key(name: str) -> str:
    """The form names are compared in: NFKC (full-width and other compatibility forms to their plain letters), look-alike
    letters and digits to one of each kind, case folded. Two names with one key are one name ("Alice", "aIice" and
    "a1ice" are "alice"; so is "aiice": telling i from l by its dot is asking too much of a name read aloud)."""
    folded = unicodedata.normalize("NFKC", name).casefold().translate(_LOOKALIKE)
    for seq, one in _SEQUENCES:
        folded = folded.replace(seq, one)
    return folded


def check_name(name: str) -> str:
    if not NAME.match(name or ""):
        raise ValueError(
            f"{name!r} is not an account name: 1 to 32 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name
