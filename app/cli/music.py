"""`chief music`: a creator's own track over a scene or under the whole film, placed or taken away."""

from __future__ import annotations

from pathlib import Path

import click

from app.cli.common import Ctx, branch_note, command, version_option


@command
@click.option("--scene", "scene_id", metavar="SCENE", help="The scene the track plays over (its id).")
@click.option("--film", "whole", is_flag=True, help="The track plays under the whole film, from its start.")
@click.option("--clear", is_flag=True, help="Take the track away (the scene's cue plays again).")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@version_option
def music(c: Ctx, project, scene_id, whole, clear, file, version):
    """Place your own track (WAV, FLAC, MP3, Ogg, M4A ...; checked, stored once as 48 kHz FLAC) over a scene
    instead of its cue, or under the whole film (then no cue plays), as a new version, e.g.

        chief music P --scene sc02 theme.mp3        chief music P --film score.flac        chief music P --film --clear

    A track shorter than its scene ends in silence; a longer one is cut at the scene's end (faded). No picture
    re-renders. A file that is not audio, too long (20 min), or a decompression bomb is refused in one line and
    nothing is saved."""
    if whole == (scene_id is not None):
        raise click.UsageError("say where: --scene SCENE or --film")
    if clear == (file is not None):
        raise click.UsageError("give a FILE, or --clear")
    pid = c.studio.resolve_project(project)
    c.header()
    v, made = c.studio.set_music_track(pid, scene_id, Path(file) if file else None, version)
    where = f"scene {scene_id}" if scene_id is not None else "the film"
    track = (
        v.storyboard.film.music_track
        if scene_id is None
        else next(sc.music_track for sc in v.storyboard.scenes if sc.scene_id == scene_id)
    )
    c.out(
        {"project": pid, "version": v.number, "scene": scene_id, "track": track or None, "changed": made},
        (f"v{v.number}: {v.message}{branch_note(c.studio, v)}" if made else f"v{v.number}: nothing changed")
        + (f" ({where}: uploaded track {track[:12]}…)" if track else ""),
    )


COMMANDS = [music]
