"""`chief edit`: change a shot's fields by hand, the CLI twin of editing its card in the web app."""

from __future__ import annotations

import click

from app.cli.common import Ctx, branch_note, command, secho, version_option
from storage.edits import SHOT_KEYS


def _pairs(assignments: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    for a in assignments:
        key, eq, value = a.partition("=")
        if not eq or not key.strip():
            raise click.UsageError(f"{a!r} is not KEY=VALUE (keys: {', '.join(SHOT_KEYS)})")
        out.append((key.strip(), value))
    return out


@command
@version_option
@click.argument("shot")
@click.argument("assignments", nargs=-1, required=True, metavar="KEY=VALUE...")
def edit(c: Ctx, project, version, shot, assignments):
    """Make a new version with SHOT's fields changed, e.g.

        chief edit P sh03 duration=4 "line.1=Not tonight." "line.1.delivery=whispered" "music=low cello, 60 bpm"

    Keys: prompt, negative_prompt, duration, seed, camera, narration, sounds, continuity, description (what is
    seen, voiced between the lines on the described track), music (the cue of the shot's scene), dialogue (all its lines as a script, one "NAME (delivery): text" a line) and one line:
    line.N=TEXT, line.N.character=NAME, line.N.delivery=WORDS (1-based; N one past the last adds a line, an empty
    line.N= removes it). An unknown key or a bad value is refused and nothing is saved. A changed line, sound or
    cue or description renders no picture again: the shot's clip is reused."""
    pid = c.studio.resolve_project(project)
    c.header()
    v, _ = c.studio.edit_shot(pid, shot, _pairs(assignments), version)
    board = v.storyboard
    warnings = [w for w in board.line_warnings() + board.description_warnings() if w.startswith(f"shot {shot} ")]
    for w in warnings:
        secho(f"warning: {w}", fg="yellow", err=True)
    c.out(v, f"v{v.number}: {v.message}{branch_note(c.studio, v)}")


COMMANDS = [edit]
