"""`chief`: the co-creation loop from the command line. Thin over app.studio.Studio.

Every command takes --json (machine-readable output on stdout, nothing else there); progress and
messages go to stderr. Errors are one line on stderr with a non-zero exit status.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from app.studio import StudioError, dumps

EXIT_ERROR = 1


class Ctx:
    def __init__(self, home: str | None, as_json: bool, overrides: dict) -> None:
        self.home, self.json, self.overrides = home, as_json, overrides
        self._studio = None

    @property
    def studio(self):
        if self._studio is None:
            from app.config import load_config
            from app.studio import Studio

            cfg = load_config({"home": self.home, **self.overrides})
            self._studio = Studio(cfg)
        return self._studio

    def out(self, data, human: str | None = None) -> None:
        """JSON on stdout with --json, else the human text."""
        if self.json:
            click.echo(dumps(data))
        elif human is not None:
            click.echo(human)

    def header(self) -> None:
        """Which backend, model and agent mode are active (stdout in human mode; in --json it is a field)."""
        if not self.json:
            st = self.studio.status()
            click.secho(f"chief · backend: {st['backend_label']} · model: {st['model']} · agents: {st['agents']}", dim=True)

    def active(self) -> dict:
        st = self.studio.status()
        return {"backend": st["backend"], "backend_label": st["backend_label"], "model": st["model"],
                "agents": st["agents"]}


def err(message: str) -> None:
    click.secho(f"error: {message}", fg="red", err=True)


def handles_errors(fn):
    """User-facing errors become one line on stderr and exit status 1; no tracebacks."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from pydantic import ValidationError

        from agents.base import AgentError
        from generation.base import Cancelled, RenderError
        from storage.schema import first_error
        try:
            return fn(*args, **kwargs)
        except (StudioError, AgentError, RenderError, ValueError, OSError) as e:
            if isinstance(e, ValidationError):
                e = ValueError(first_error(e))
            err(str(e).splitlines()[0] if str(e) else type(e).__name__)
            sys.exit(EXIT_ERROR)
        except Cancelled:
            err("cancelled; finished shots are kept")
            sys.exit(130)
        except KeyboardInterrupt:
            err("interrupted; finished work is kept")
            sys.exit(130)
    return wrapper


pass_ctx = click.make_pass_decorator(Ctx)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", envvar="CHIEF_HOME", type=click.Path(file_okay=False), help="Data folder (database + media). Default: $CHIEF_HOME, else ~/.local/share/chief.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON on stdout, nothing else there.")
@click.option("--backend", type=click.Choice(["animatic", "diffusers"]), help="Video backend (default $CHIEF_VIDEO_BACKEND or animatic).")
@click.option("--model", help="Diffusers model: a local folder or a cached hub id ($CHIEF_VIDEO_MODEL).")
@click.option("--agents", type=click.Choice(["llm", "offline"]), help="Agent mode (default: llm when an endpoint is configured, else offline).")
@click.version_option(package_name="chief")
@click.pass_context
def main(ctx, home, as_json, backend, model, agents):
    """CHIEF: make films with generative video while you stay the director.

    The loop: new → render → critique → note → refine → accept → render (only changed shots) …
    """
    ctx.obj = Ctx(home, as_json, {"backend": backend, "model": model, "agents": agents})


def json_option(fn):
    """Accept --json after the command name too (chief render P --json)."""
    def set_json(ctx, _param, value):
        if value:
            ctx.find_object(Ctx).json = True
        return value
    return click.option("--json", "as_json_local", is_flag=True, expose_value=False, callback=set_json,
                        help="Machine-readable JSON on stdout.")(fn)


def version_option(fn):
    return click.option("--version", "-v", "version", help="Version number (default: the current version).")(fn)


# ----------------------------------------------------------------------------------- projects

@main.command()
@click.argument("idea", required=False)
@click.option("--minutes", type=click.FloatRange(0.25, 10), default=1.0, show_default=True, help="Target length.")
@click.option("--title", help="Project title (default: from the idea or storyboard).")
@click.option("--storyboard", "storyboard_file", type=click.Path(exists=True, dir_okay=False),
              help="Start from a hand-written storyboard (YAML or JSON; see docs/storyboard.md).")
@click.option("--panel", help="Comma-separated persona ids for the critics' panel (default: all builtin).")
@json_option
@pass_ctx
@handles_errors
def new(c: Ctx, idea, minutes, title, storyboard_file, panel):
    """Plan a new project from an IDEA (or --storyboard FILE); prints the project id."""
    from storage.files import load_storyboard

    panel_ids = [p.strip() for p in panel.split(",") if p.strip()] if panel else None
    if storyboard_file:
        board = load_storyboard(Path(storyboard_file))  # validates before anything is written
        if title:
            board = board.model_copy(update={"title": title})
        c.header()
        v = c.studio.create_from_storyboard(board, panel_ids)
    elif idea:
        c.header()
        v = c.studio.create_project(idea, minutes, title, panel_ids)
    else:
        raise click.UsageError("give an IDEA or --storyboard FILE")
    b = v.storyboard
    c.out({"project": v.project_id, "version": v.number, "title": b.title, "shots": len(b.shots()),
           "duration": b.duration(), "active": c.active()},
          f"{v.project_id}\n  “{b.title}” · v{v.number} · {len(b.shots())} shots · {b.duration():.0f}s")


@main.command()
@json_option
@click.option("--all", "show_all", is_flag=True, help="Include trashed projects.")
@pass_ctx
@handles_errors
def projects(c: Ctx, show_all):
    """List projects."""
    rows = c.studio.projects(include_trashed=show_all)
    lines = [f"{p['id']}  {p['title']}  ({p['versions']} versions){'  [trash]' if p['trashed'] else ''}" for p in rows]
    c.out(rows, "\n".join(lines) or "no projects yet: chief new \"an idea\"")


@main.command()
@json_option
@pass_ctx
@handles_errors
def status(c: Ctx):
    """Show the active backend, model, agents and data folder."""
    st = c.studio.status()
    c.out(st, "\n".join(f"{k:>14}: {v}" for k, v in st.items() if v))


# ---------------------------------------------------------------------------------- the loop

@main.command()
@click.argument("project")
@version_option
@json_option
@pass_ctx
@handles_errors
def render(c: Ctx, project, version):
    """Render every shot (unchanged shots reuse their cached clips) and assemble the film."""
    from app.progress import RenderProgress

    pid = c.studio.resolve_project(project)
    c.header()
    with RenderProgress(enabled=not c.json) as prog:
        info = c.studio.render(pid, version, progress=prog.update)
    c.out({"project": pid, **_render_dict(info), "active": c.active()},
          f"v{info.version}: rendered {info.rendered}, reused {info.reused} of {info.rendered + info.reused} shots "
          f"in {info.seconds:.1f}s\nfilm: {info.film}"
          + (f"\nsubtitles: {info.media['srt']}" if "srt" in info.media else "")
          + f"\nmade by: {info.label}")


def _render_dict(info) -> dict:
    return {"version": info.version, "film": str(info.film), "rendered": info.rendered, "reused": info.reused,
            "seconds": info.seconds, "backend": info.backend, "model": info.model, "label": info.label,
            "media": info.media, "shots": info.shots}


@main.command()
@click.argument("project")
@version_option
@json_option
@pass_ctx
@handles_errors
def critique(c: Ctx, project, version):
    """Every persona on the panel watches the film and critiques it."""
    from app.progress import StageProgress

    pid = c.studio.resolve_project(project)
    c.header()
    with StageProgress("critics watching", enabled=not c.json) as prog:
        crits = c.studio.critique(pid, version, progress=prog.update)
    div = c.studio.diversity(pid, version)
    usage = c.studio.usage(pid, version)
    lines = []
    for item in crits:
        cr = item["critique"]
        lines.append(f"● {item['persona_name']} — {cr.overall:.1f}/10 — "
                     f"{'keeps watching' if cr.keep_watching else 'stops watching'}: {cr.keep_watching_reason}")
        lines.append(f"  {cr.summary}")
        for i, issue in enumerate(cr.top_issues[:3], 1):
            lines.append(f"  {i}. [{issue.urgency}] {issue.summary} {('→ ' + issue.suggestion) if issue.suggestion else ''}")
    if div is not None and div.collapsed:
        lines.append(f"⚠ the panel agrees too much (mean similarity {div.mean_pairwise_cosine:.2f}): "
                     "add different personas for a wider view")
    lines.append(_usage_line(usage))
    div_json = None if div is None else {"mean_pairwise_cosine": div.mean_pairwise_cosine, "collapsed": div.collapsed,
                                         "threshold": div.threshold,
                                         "pairs": {" vs ".join(k): v for k, v in div.pairs.items()}}
    c.out({"project": pid, "critiques": crits, "diversity": div_json, "usage": usage, "active": c.active()},
          "\n".join(lines))


def _usage_line(usage: dict) -> str:
    t = usage["total"]
    return f"agent cost for this version: {t['calls']} call(s), {t['prompt_tokens'] + t['completion_tokens']} tokens, {t['seconds']:.1f}s"


@main.command()
@click.argument("project")
@click.argument("text")
@click.option("--shot", "shot_id", help="The shot this note is about (default: the whole film).")
@version_option
@json_option
@pass_ctx
@handles_errors
def note(c: Ctx, project, text, shot_id, version):
    """Add a creator's note to a version. Notes are instructions the refiner must follow."""
    pid = c.studio.resolve_project(project)
    n = c.studio.add_note(pid, text, shot_id, version)
    c.out({"project": pid, "note": n}, f"note {n.id} added" + (f" on {shot_id}" if shot_id else ""))


@main.command()
@click.argument("project")
@version_option
@json_option
@pass_ctx
@handles_errors
def refine(c: Ctx, project, version):
    """The refiner proposes edits from the notes and critiques (printed, numbered)."""
    pid = c.studio.resolve_project(project)
    c.header()
    info = c.studio.refine(pid, version)
    c.out({"project": pid, **info, "active": c.active()}, format_proposal(info))


def format_proposal(info: dict) -> str:
    p = info["proposal"]
    lines = [f"proposal {info['id']} on v{info['version']} ({info['mode']}): {p.summary}"]
    for i, e in enumerate(p.edits, 1):
        target = e.shot_id or e.character or e.field
        lines.append(f"{i:>3}. {e.op} {target}{' ' + e.field if e.op == 'set' else ''}")
        if e.old is not None:
            lines.append(f"       - {e.old}")
        lines.append(f"       + {e.new}")
        lines.append(f"       why: {e.rationale}  [sources: {', '.join(e.sources) or '—'}]")
    for u in p.not_changed:
        lines.append(f"  not changed: {u.what} — {u.why}")
    lines.append("accept with: chief accept PROJECT [--only 1,3] [--edit 2=\"new text\"]")
    return "\n".join(lines)


def _parse_only(value: str | None) -> list[int] | None:
    if not value:
        return None
    try:
        return [int(x) for x in value.replace(" ", "").split(",") if x]
    except ValueError:
        raise click.BadParameter("use edit numbers like 1,3") from None


def _parse_edits(values: tuple[str, ...]) -> dict[int, str]:
    out = {}
    for v in values:
        num, sep, text = v.partition("=")
        if not sep or not num.strip().isdigit():
            raise click.BadParameter(f"{v!r}: use N=\"new text\"")
        out[int(num)] = text
    return out


@main.command()
@click.argument("project")
@click.option("--proposal", "proposal_id", help="Proposal id (default: the latest on the version).")
@click.option("--only", help="Accept only these edit numbers, e.g. 1,3.")
@click.option("--edit", "edits", multiple=True, help="N=\"new text\": accept edit N with your own value.")
@version_option
@json_option
@pass_ctx
@handles_errors
def accept(c: Ctx, project, proposal_id, only, edits, version):
    """Accepted edits become a child version (a branch if the base version already moved on)."""
    pid = c.studio.resolve_project(project)
    res = c.studio.accept(pid, proposal_id, _parse_only(only), _parse_edits(edits), version)
    v = res.version
    c.out({"project": pid, "version": v.number, "parent": v.parent_number, "branched": res.branched,
           "applied": res.applied},
          f"v{v.number} created from v{v.parent_number} with edit(s) {', '.join(map(str, res.applied))}"
          + ("\nnote: v%s already had a newer version, so this is a new branch (nothing was lost)" % v.parent_number
             if res.branched else ""))


# ---------------------------------------------------------------------------- history

@main.command()
@click.argument("project")
@json_option
@pass_ctx
@handles_errors
def log(c: Ctx, project):
    """The version tree, oldest first (* = current)."""
    pid = c.studio.resolve_project(project)
    rows = c.studio.versions(pid)
    lines = []
    for r in rows:
        parent = f"← v{r['parent']}" if r["parent"] else "root"
        scores = c.studio.panel_scores(pid, r["number"]) if r["critiques"] else {}
        score = f" · panel {scores['overall']:.1f}" if scores else ""
        lines.append(f"{'*' if r['current'] else ' '} v{r['number']:<3} {parent:<7} {r['kind']:<7} {r['message']}"
                     f"  [{r['renders']} render(s), {r['notes']} note(s){score}]")
    c.out({"project": pid, "versions": rows}, "\n".join(lines))


@main.command()
@click.argument("project")
@version_option
@json_option
@pass_ctx
@handles_errors
def show(c: Ctx, project, version):
    """A version's storyboard, film, notes and scores."""
    pid = c.studio.resolve_project(project)
    v = c.studio.version(pid, version)
    b = v.storyboard
    render_info = c.studio.render_info(pid, v.number)
    notes = c.studio.notes(pid, v.number)
    scores = c.studio.panel_scores(pid, v.number)
    usage = c.studio.usage(pid, v.number)
    data = {"project": pid, "version": v.number, "parent": v.parent_number, "kind": v.kind, "message": v.message,
            "storyboard": b, "panel": v.panel, "notes": notes, "scores": scores, "usage": usage,
            "render": _render_dict(render_info) if render_info else None}
    lines = [f"“{b.title}” v{v.number} ({v.kind}: {v.message})", f"logline: {b.logline}", f"style: {b.style_guide}"]
    for ch in b.characters:
        lines.append(f"  {ch.name}: {ch.description}")
    for scene in b.scenes:
        lines.append(f"[{scene.scene_id}] {scene.title}")
        for s in scene.shots:
            flags = "".join(f for f, on in (("L", s.locked), ("C", s.continuity)) if on)
            lines.append(f"  {s.shot_id} {s.duration:>5.1f}s {s.camera:<9} {flags:<2} {s.prompt}")
            if s.narration:
                lines.append(f"  {'':>26}“{s.narration}”")
    lines.append(f"panel: {', '.join(v.panel)}")
    if render_info:
        lines.append(f"film: {render_info.film} ({render_info.label})")
    for n in notes:
        lines.append(f"note {n.id}{' on ' + n.shot_id if n.shot_id else ''}: {n.text}")
    if scores:
        lines.append("scores: " + ", ".join(f"{k} {val:.1f}" for k, val in scores.items()))
    lines.append(_usage_line(usage))
    c.out(data, "\n".join(lines))


@main.command()
@click.argument("project")
@click.argument("v1")
@click.argument("v2")
@json_option
@pass_ctx
@handles_errors
def diff(c: Ctx, project, v1, v2):
    """Shot-by-shot differences between two versions, and their panel scores."""
    pid = c.studio.resolve_project(project)
    d = c.studio.diff(pid, v1, v2)
    lines = [f"v{d['from']} → v{d['to']}"]
    for f, (a, b) in d["story"].items():
        lines.append(f"  story {f}: {a!r} → {b!r}")
    for name, (a, b) in d["characters"].items():
        lines.append(f"  character {name}: {a!r} → {b!r}")
    for ch in d["shots"]:
        if ch.status == "same":
            continue
        lines.append(f"  {ch.status:<8} {ch.shot_id}")
        for f, (a, b) in ch.fields.items():
            lines.append(f"           {f}: {a!r}\n           {'':>{len(f)}}→ {b!r}")
    for k, (a, b) in d["scores"].items():
        lines.append(f"  score {k}: {a if a is not None else '—'} → {b if b is not None else '—'}")
    if len(lines) == 1:
        lines.append("  no differences")
    c.out({"project": pid, **d}, "\n".join(lines))


@main.command()
@click.argument("project")
@click.option("--from", "from_version", required=True, help="The version to branch from.")
@json_option
@pass_ctx
@handles_errors
def fork(c: Ctx, project, from_version):
    """Start a new branch from an earlier version (it becomes current)."""
    pid = c.studio.resolve_project(project)
    v = c.studio.fork(pid, from_version)
    c.out({"project": pid, "version": v.number, "parent": v.parent_number}, f"v{v.number} forked from v{v.parent_number}")


@main.command()
@click.argument("project")
@click.argument("version")
@json_option
@pass_ctx
@handles_errors
def checkout(c: Ctx, project, version):
    """Make an existing version the current one (commands act on it by default)."""
    pid = c.studio.resolve_project(project)
    v = c.studio.checkout(pid, version)
    c.out({"project": pid, "version": v.number}, f"current version: v{v.number}")


# ------------------------------------------------------------------------------- demo

@main.command()
@click.option("--minutes", type=click.FloatRange(0.25, 10), default=1.0, show_default=True)
@json_option
@pass_ctx
@handles_errors
def demo(c: Ctx, minutes):
    """Run two full iterations of the loop on a sample story and print where the films are."""
    from app.progress import RenderProgress, StageProgress

    st = c.studio
    c.header()
    v1 = st.create_project("A lighthouse keeper befriends a lost whale during the autumn storms", minutes)
    pid = v1.project_id
    films = []
    for it in (1, 2):
        with RenderProgress(enabled=not c.json) as prog:
            info = st.render(pid, progress=prog.update)
        films.append(info)
        if not c.json:
            click.echo(f"iteration {it}: v{info.version} rendered {info.rendered}, reused {info.reused} → {info.film}", err=True)
        if it == 2:
            break
        with StageProgress("critics watching", enabled=not c.json) as prog:
            st.critique(pid, progress=prog.update)
        storm = next(s for s in st.version(pid).storyboard.shots() if "storm" in s.prompt.lower())
        st.add_note(pid, "Make the storm scarier", shot_id=storm.shot_id)
        st.add_note(pid, "Keep the whale gentle and curious, never threatening")
        st.refine(pid)
        st.accept(pid)
    with StageProgress("critics watching", enabled=not c.json) as prog:
        st.critique(pid, progress=prog.update)
    d = st.diff(pid, 1, films[-1].version)
    c.out({"project": pid, "films": [_render_dict(f) for f in films], "scores": d["scores"], "active": c.active()},
          f"project {pid}\n" + "\n".join(f"v{f.version}: {f.film}  (rendered {f.rendered}, reused {f.reused})" for f in films)
          + "\npanel overall: " + " → ".join(str(x) for x in d["scores"].get("overall", ())) +
          f"\nnext: chief --home {st.config.home} show {pid}   ·   chief --home {st.config.home} diff {pid} 1 {films[-1].version}")


def _register_command_modules() -> None:
    """Command groups that live in their own modules (imported here, after the helpers they reuse)."""
    from app.cli_archive import export_cmd, import_cmd
    from app.cli_batch import batch
    from app.cli_persona import persona
    from app.cli_serve import serve

    for command in (serve, export_cmd, import_cmd, batch, persona):
        main.add_command(command)


if __name__ == "__main__":  # python -m app.cli: run the registered instance from the imported module
    from app.cli import main as _main

    _main()
else:
    _register_command_modules()
