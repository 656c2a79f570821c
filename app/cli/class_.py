"""`chief class report [--csv]`: the teacher's report (app/services/classroom.py): per account, each project's versions
with renders, disk use, time in the queue and the panel's scores. Run it as a teacher (`--user`) or as the
machine's own account."""

from __future__ import annotations

import click

from app.cli.common import Ctx, command, echo


@click.group(name="class")
def class_():
    """The class on this server: `report`."""


@command(project=False, name="report")
@click.option("--csv", "as_csv", is_flag=True, help="CSV on stdout (one row per version), for a spreadsheet.")
def report(c: Ctx, as_csv):
    """Each student's projects, versions, renders, disk use, time in the queue and the panel's scores per version."""
    from app.services.classroom import to_csv
    from generation.text import terminal

    lines = c.studio.classroom.report()
    if as_csv:
        echo(to_csv(lines), nl=False)
        return
    human = [
        f"{terminal(ln.account):<12} {terminal(ln.title)[:28]:<28} v{ln.version:<3} renders {ln.renders:<2} "
        f"{ln.disk_bytes / 1e6:7.1f} MB  queue {'not recorded' if ln.queue_seconds is None else f'{ln.queue_seconds:.0f} s'}"
        f"  score {'—' if ln.mean_score is None else f'{ln.mean_score:.1f}'}"
        for ln in lines
    ]
    c.out(lines, "\n".join(human) or "no projects yet")


class_.add_command(report)

COMMANDS = [class_]
