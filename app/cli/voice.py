"""`chief voice`: a character's voice, shown, chosen (stored with the character, a new version) or previewed."""

from __future__ import annotations

from pathlib import Path

import click

from app.cli.common import Ctx, branch_note, command, version_option
from app.errors import StudioError


@command
@click.argument("character")
@click.option("--engine", type=click.Choice(["piper", "speech"]), help="Piper (offline) or the speech endpoint.")
@click.option("--speaker", help="A Piper speaker id (multi-speaker models) or the endpoint's voice name.")
@click.option("--pitch", type=click.FloatRange(-12, 12), help="Pitch shift in semitones.")
@click.option("--pace", type=click.FloatRange(0.5, 2.0), help="Speaking pace (> 1 faster).")
@click.option("--preview", is_flag=True, help="Speak a line in this voice into -o FILE (WAV) instead.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Where --preview writes (a .wav file).")
@version_option
def voice(c: Ctx, project, character, engine, speaker, pitch, pace, preview, output, version):
    """Show CHARACTER's voice; with options, store it with the character (a new version; no picture re-renders,
    only their lines are voiced again), e.g.

        chief voice P Mara --pitch 4 --pace 1.1        chief voice P Mara --engine speech --speaker alloy

    A character without a stored voice is cast one from the names (always the same for the same storyboard).
    --preview -o FILE speaks a line in the voice (after the change, when options are given); the change is stored
    only once the preview is written (a failed preview changes nothing)."""
    pid = c.studio.resolve_project(project)
    changes = {
        k: v for k, v in (("engine", engine), ("speaker", speaker), ("pitch", pitch), ("pace", pace)) if v is not None
    }
    if preview and not output:
        raise click.UsageError("--preview needs -o FILE.wav")
    v = c.studio.version(pid, version)
    made = False
    # the preview first, with the change tried: a preview that fails stores nothing (no new draft)
    wrote = c.studio.preview_voice(pid, character, Path(output), v.number, changes) if preview else None
    if changes:
        v, made = c.studio.set_voice(pid, character, changes, v.number)
    cast = c.studio.voices(pid, v.number)
    if character not in cast:  # only when no change was asked: set_voice refuses an unknown name
        known = ", ".join(cast) or "none"
        raise StudioError(f"no character {character!r} in this storyboard (characters: {known})")
    who = cast[character]
    c.out(
        {
            "project": pid,
            "version": v.number,
            "character": character,
            "voice": who.voice,
            "stored": who.stored,
            "changed": made,
            "preview": str(wrote) if wrote else None,
        },
        f"v{v.number}: {character}: {who.describe()}"
        + (branch_note(c.studio, v) if made else "")
        + (" (nothing changed: no new version)" if changes and not made else "")
        + (f"\npreview: {wrote}" if wrote else ""),
    )


COMMANDS = [voice]
