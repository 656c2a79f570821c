"""`chief`: the co-creation loop from the command line, thin over app.studio.Studio.

Every command takes --json (machine-readable output on stdout, nothing else there); progress and messages
go to stderr. Errors are one line on stderr with a non-zero exit status. The command groups live in their
own modules and are registered here, in one place:

    loop.py     new, render, critique, note, refine, accept, film, picture, demo
    history.py  projects, status, trash, restore, log, show, diff, fork, checkout
    archive.py  export, import          batch.py    batch          models.py   models
    doctor.py   doctor (this machine, and what a video model needs under each memory profile)
    persona.py  persona …               serve.py    serve
    images.py   ref …, keyframes, keyframe …, takes, pick, consistency
    edit.py     edit            voice.py    voice (a character's voice: show, choose, preview)
    music.py    music (a creator's own track over a scene or the film)
    users.py    users add, passwd, remove, list (accounts of a shared server: `chief serve --users`)
    queue.py    queue (the jobs of `chief serve`'s fair queue, from the database)
    lora.py     lora add, list, remove (a creator's LoRAs: a character's or a style)
"""

from __future__ import annotations

import click

from app.cli import (
    archive,
    batch,
    class_,
    doctor,
    edit,
    history,
    images,
    loop,
    lora,
    models,
    music,
    persona,
    queue,
    serve,
    share,
    users,
    voice,
)
from app.cli.common import Ctx


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    envvar="CHIEF_HOME",
    type=click.Path(file_okay=False),
    help="Data folder (database + media). Default: $CHIEF_HOME, else ~/.local/share/chief.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON on stdout, nothing else there.")
@click.option(
    "--backend",
    type=click.Choice(["animatic", "diffusers"]),
    help="Video backend (default $CHIEF_VIDEO_BACKEND or animatic).",
)
@click.option("--model", help="Diffusers model: a local folder or a cached hub id ($CHIEF_VIDEO_MODEL).")
@click.option(
    "--profile",
    type=click.Choice(["custom", "fastest", "fits 24 GB", "fits 12 GB", "fits 8 GB"]),
    help="Memory profile of the diffusers video model ($CHIEF_VIDEO_PROFILE; `chief doctor --model M` recommends one).",
)
@click.option(
    "--agents",
    type=click.Choice(["llm", "offline"]),
    help="Agent mode (default: llm when an endpoint is configured, else offline).",
)
@click.option(
    "--user",
    envvar="CHIEF_USER",
    metavar="NAME",
    help="Act as this account (or $CHIEF_USER): its projects only, and what it makes or imports is its own. "
    "Default: this machine's own account, 'local'.",
)
@click.version_option(package_name="chief")
@click.pass_context
def main(ctx, home, as_json, backend, model, profile, agents, user):
    """CHIEF: make films with generative video while you stay the director.

    The loop: new → render → critique → note → refine → accept → render (only changed shots) …
    """
    ctx.obj = Ctx(home, as_json, {"backend": backend, "model": model, "video_profile": profile, "agents": agents}, user)
    ctx.call_on_close(ctx.obj.acting())


for _module in (
    loop,
    history,
    edit,
    voice,
    music,
    lora,
    archive,
    batch,
    persona,
    serve,
    images,
    models,
    doctor,
    users,
    queue,
    share,
    class_,
):
    for _command in _module.COMMANDS:
        main.add_command(_command)
