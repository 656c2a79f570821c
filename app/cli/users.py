"""`chief users …`: the accounts of a shared server (`chief serve --users`). Passwords come on stdin only
(`--password-stdin`), never as an argument (other users of the machine can read a command line); they are stored
as salted scrypt hashes (app/server/accounts.py) and never printed."""

from __future__ import annotations

import sys

import click

from app.cli.common import Ctx, command
from app.errors import StudioError


@click.group()
def users():
    """Accounts for `chief serve --users`: add, passwd, remove, list."""


def _password() -> str:
    """The first line of stdin, without its line end (the password itself is never echoed)."""
    line = sys.stdin.readline()
    if not line:
        raise StudioError("no password on stdin: pipe it in (e.g. printf '%s' \"$PW\" | chief users add NAME …)")
    return line.rstrip("\r\n")


def _stdin_flag(fn):
    return click.option(
        "--password-stdin",
        "password_stdin",
        is_flag=True,
        required=True,
        help="Read the password from the first line of stdin (required: never on the command line).",
    )(fn)


@command(project=False, name="add")
@click.argument("name")
@click.option("--teacher", is_flag=True, help="A teacher sees and opens every project.")
@_stdin_flag
def add(c: Ctx, name, teacher, password_stdin):
    """Add account NAME; its password is read from stdin. A name that looks like another account's (Alice, aIice
    beside alice) or like a reserved word (local, class) is refused."""
    a = c.studio.accounts.add(name, _password(), teacher=teacher)
    c.out(a, f"added {'teacher' if a.teacher else 'account'} {a.name}")


@command(project=False, name="passwd")
@click.argument("name")
@_stdin_flag
def passwd(c: Ctx, name, password_stdin):
    """Set the password of NAME from stdin; its signed-in web sessions end."""
    c.studio.accounts.set_password(name, _password())
    c.out({"name": name, "changed": True}, f"password of {name} changed")


@command(project=False, name="remove")
@click.argument("name")
def remove(c: Ctx, name):
    """Remove account NAME (refused while it owns projects); its signed-in web sessions end."""
    c.studio.accounts.remove(name)
    c.out({"name": name, "removed": True}, f"removed {name}")


@command(project=False, name="list")
def list_cmd(c: Ctx):
    """List accounts: name, teacher or not, projects owned."""
    rows = c.studio.accounts.list()
    lines = [f"{a.name}{'  (teacher)' if a.teacher else ''}  {a.projects} project(s)" for a in rows]
    c.out(rows, "\n".join(lines) or "no accounts yet: chief users add NAME --password-stdin")


for _cmd in (add, passwd, remove, list_cmd):
    users.add_command(_cmd)

COMMANDS = [users]
