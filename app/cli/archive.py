"""`chief export` and `chief import`: move a whole project between machines as one .chief.zip."""

from __future__ import annotations

from pathlib import Path

import click

from app.cli.common import Ctx, handles_errors, json_option, pass_ctx


@click.command("export")
@click.argument("project")
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    type=click.Path(),
    help="Archive to write (FILE.chief.zip), or a folder to write it in (with --timeline: the folder).",
)
@click.option(
    "--versions",
    default="all",
    show_default=True,
    help="all, latest (the newest version), or version numbers like 1,3.",
)
@click.option("--no-media", is_flag=True, help="Leave films and clips out (a small archive; renders must be redone).")
@click.option(
    "--timeline",
    is_flag=True,
    help=(
        "Instead of an archive, write the film's cut for an editor: cut.otio, cut.edl (CMX 3600) and cut.fcpxml, "
        "with the version's critic notes and the creator's notes (this version's and earlier ones') as markers on "
        "their shots; the dialogue, music and effects stems as WAVs beside it (audio tracks of the OTIO and FCPXML, "
        "and an audio EDL each: cut.<stem>.edl); the captions timed on the cut as cut.srt and cut.vtt."
    ),
)
@click.option("--version", "-v", "version", help="With --timeline: the version (default: the current version).")
@json_option
@pass_ctx
@handles_errors
def export_cmd(c: Ctx, project, out, versions, no_media, timeline, version):
    """Write PROJECT (every version, or the chosen ones) to a portable archive, or its cut for an editor."""
    import zipfile

    pid = c.studio.resolve_project(project)
    if timeline:
        files = c.studio.export_timeline(pid, version, Path(out))
        c.out(
            {"project": pid, "files": {k: str(p) for k, p in files.items()}},
            "\n".join(f"{k}: {p}" for k, p in files.items()),
        )
        return
    path = c.studio.export_project(pid, Path(out), versions=versions, include_media=not no_media)
    with zipfile.ZipFile(path) as zf:
        members = len(zf.infolist())
    size = path.stat().st_size
    c.out(
        {
            "project": pid,
            "archive": str(path),
            "bytes": size,
            "members": members,
            "versions": versions,
            "media": not no_media,
        },
        f"wrote {path} ({size / 1e6:.1f} MB, {members} files)",
    )


@click.command("import")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.option("--as", "title", help="Title of the new project (default: the archived title).")
@json_option
@pass_ctx
@handles_errors
def import_cmd(c: Ctx, archive, title):
    """Create a new project from ARCHIVE (checked fully first: all or nothing)."""
    v = c.studio.import_project(Path(archive), title=title)
    p = c.studio.project(v.project_id)
    c.out(p, f"{p.id}\n  “{p.title}” · imported {p.versions} version(s) · current v{p.current_version}")


COMMANDS = [export_cmd, import_cmd]
