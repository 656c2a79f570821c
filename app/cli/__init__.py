"""`chief`: the co-creation loop from the command line, thin over app.studio.Studio.

Every command takes --json (machine-readable output on stdout, nothing else there); progress and messages
go to stderr. Errors are one line on stderr with a non-zero exit status. The command groups live in their
own modules and are listed here, in one place (`COMMANDS`: each is imported when its command runs):

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

import importlib

import click

from app.cli.common import Ctx

# Each command, and the module (app/cli/<module>.py) whose COMMANDS holds it: a command's module is imported when the
# command runs (or `chief --help` lists them all), so `chief models pull` does not import the loop's, the images'
# and the Studio's modules first (its imports 1.05 -> 0.2 s of CPU; every `chief` process before paid for all).
COMMANDS: dict[str, str] = {
    **dict.fromkeys(("new", "render", "critique", "note", "refine", "accept", "film", "picture", "demo"), "loop"),
    **dict.fromkeys(("projects", "status", "trash", "restore", "log", "show", "diff", "fork", "checkout"), "history"),
    **dict.fromkeys(("ref", "keyframes", "keyframe", "takes", "pick", "consistency"), "images"),
    **{"export": "archive", "import": "archive", "batch": "batch", "persona": "persona", "serve": "serve"},
    **{"edit": "edit", "voice": "voice", "music": "music", "lora": "lora", "models": "models", "doctor": "doctor"},
    **{"users": "users", "queue": "queue", "share": "share", "class": "class_"},
}


class LazyGroup(click.Group):
    """A group whose commands are imported from their modules (`COMMANDS`) when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        commands = importlib.import_module(f"app.cli.{module}").COMMANDS
        return next(c for c in commands if c.name == cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
