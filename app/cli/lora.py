"""`chief lora`: a creator's LoRAs (a character's look, a style) added to a project, listed, removed."""

from __future__ import annotations

from pathlib import Path

import click

from app.cli.common import Ctx, branch_note, handles_errors, json_option, pass_ctx, version_option


@click.group()
def lora():
    """A creator's LoRAs: a character's (on the shots they are in) or a style (on every shot)."""


@lora.command("add")
@click.argument("project")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--scale", type=float, default=1.0, show_default=True, help="The LoRA's weight (-4 to 4).")
@click.option("--name", help="Its name in the project (default: from the file name).")
@click.option("--character", help="It acts on this character's shots only.")
@click.option("--style", is_flag=True, help="It acts on every shot (the default without --character).")
@version_option
@json_option
@pass_ctx
@handles_errors
def add(c: Ctx, project, file, scale, name, character, style, version):
    """Add a LoRA (.safetensors) as a new version. It is checked against the video model first (every layer it
    names must be the model's, with the same shapes); one that does not fit is refused and nothing is saved."""
    if style and character:
        raise click.UsageError("--character or --style, not both")
    pid = c.studio.resolve_project(project)
    c.header()
    v, checked = c.studio.lora_add(pid, Path(file), scale=scale, name=name, character=character, base=version)
    added = v.storyboard.loras[-1]
    c.out(
        {"project": pid, "version": v.number, "lora": added, "checked": checked},
        f"v{v.number}: {v.message}{branch_note(c.studio, v)}\n  {checked}",
    )


@lora.command("list")
@click.argument("project")
@version_option
@json_option
@pass_ctx
@handles_errors
def list_(c: Ctx, project, version):
    """The version's LoRAs: name, whose shots, weight, file."""
    pid = c.studio.resolve_project(project)
    v = c.studio.version(pid, version)
    loras = c.studio.loras(pid, v.number)
    lines = [
        f"{lo.name} · {lo.character + chr(39) + 's shots' if lo.character else 'every shot'} · weight {lo.scale:g} "
        f"· {lo.sha256[:12]}…"
        for lo in loras
    ]
    c.out({"project": pid, "version": v.number, "loras": loras}, "\n".join(lines) or f"v{v.number}: no LoRA")


@lora.command("remove")
@click.argument("project")
@click.argument("name")
@version_option
@json_option
@pass_ctx
@handles_errors
def remove(c: Ctx, project, name, version):
    """Take a LoRA off (a new version; its shots render again without it)."""
    pid = c.studio.resolve_project(project)
    c.header()
    v = c.studio.lora_remove(pid, name, version)
    c.out({"project": pid, "version": v.number}, f"v{v.number}: {v.message}{branch_note(c.studio, v)}")


COMMANDS = [lora]
