"""`chief queue`: the jobs of `chief serve`'s fair queue as its server recorded them (the `jobs` table)."""

from __future__ import annotations

import click

from app.cli.common import Ctx, command


def _at(t) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S") if t is not None else "-"


@command(project=False, name="queue")
@click.option("--live", is_flag=True, help="Only jobs queued or running.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000), help="The newest N jobs.")
def queue(c: Ctx, live, limit):
    """List the web server's jobs, newest first: user, kind, state, and when each was queued, started and ended (UTC).
    A teacher (and this machine's own account) sees everyone's; another account its own."""
    rows = c.studio.queued_jobs(live=live, limit=limit)
    lines = [
        f"{r.id}  {r.owner}  {r.kind}  {r.state}  queued {_at(r.queued_at)}  started {_at(r.started_at)}  "
        f"ended {_at(r.ended_at)}"
        for r in rows
    ]
    c.out(rows, "\n".join(lines) or "no jobs recorded")


COMMANDS = [queue]
