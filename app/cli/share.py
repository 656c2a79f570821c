"""`chief share …`: a project shared read-only with an account or the class, and a teacher's hand-over
(app/services/sharing.py). Acts as `--user` (default: this machine's own account)."""

from __future__ import annotations

import click

from app.cli.common import Ctx, command
from app.services.sharing import Access, reader_label


@click.group()
def share():
    """Share a project read-only (with an account or the class), stop sharing it, hand it over."""


def _human(a: Access) -> str:
    readers = ", ".join(reader_label(r) for r in a.readers) or "no one else"
    return f"{a.project_id}: {a.owner}'s; read by {readers}"


@command(name="add")
@click.argument("reader")
def add(c: Ctx, project, reader):
    """Let READER (an account, or `class` for everyone) read PROJECT; only its owner changes it."""
    a = c.studio.sharing.share(c.studio.resolve_project(project), reader)
    c.out(a, _human(a))


@command(name="remove")
@click.argument("reader")
def remove(c: Ctx, project, reader):
    """Stop sharing PROJECT with READER (an account, or `class`)."""
    a = c.studio.sharing.unshare(c.studio.resolve_project(project), reader)
    c.out(a, _human(a))


@command(name="list")
def list_cmd(c: Ctx, project):
    """Who owns PROJECT and who else reads it."""
    a = c.studio.sharing.access(c.studio.resolve_project(project))
    c.out(a, _human(a))


@command(name="hand")
@click.argument("to")
def hand(c: Ctx, project, to):
    """Hand PROJECT to account TO (a teacher's act: `chief --user TEACHER share hand …`)."""
    a, _ = c.studio.sharing.hand_over(c.studio.resolve_project(project), to)
    c.out(a, _human(a))


for _cmd in (add, remove, list_cmd, hand):
    share.add_command(_cmd)

COMMANDS = [share]
