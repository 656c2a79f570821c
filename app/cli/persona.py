"""`chief persona`: build critics from real viewers' comments, check how well they predict them, list and show.

Through the LLM when the agents are in llm mode, offline (keyword and sentiment statistics) otherwise; every
command says which one it used. With --project a persona is a project asset (a new version, on the panel).
"""

from __future__ import annotations

from pathlib import Path

import click

from app.cli.common import Ctx, echo, handles_errors, json_option, pass_ctx, secho
from app.errors import StudioError


def _say(c: Ctx, text: str) -> None:
    """A message for people: stderr, so stdout stays YAML or JSON."""
    if not c.json:
        secho(text, err=True, dim=True)


def _resolve(c: Ctx, ref: str, project: str | None):
    """(persona, pid or None): a YAML file, a project's persona, or a builtin one."""
    from agents.personas import builtin_personas, load_persona_file

    if ref.endswith((".yaml", ".yml")) or Path(ref).is_file():
        return load_persona_file(ref), (c.studio.resolve_project(project) if project else None)
    if project:
        pid = c.studio.resolve_project(project)
        known = c.studio.personas_of(c.studio.version(pid))
        if ref not in known:
            raise StudioError(f"no persona {ref!r} in project {pid}; known: {sorted(known)}")
        return known[ref], pid
    known = builtin_personas()
    if ref not in known:
        raise StudioError(f"no builtin persona {ref!r} (use --project P for a project's persona, or a YAML file)")
    return known[ref], None


def _figures_line(fig: dict[str, float]) -> str:
    return f"spearman {fig['spearman']:+.2f} · mean abs error {fig['mae']:.2f} (0..10) · n {int(fig['n'])}"


@click.group()
def persona():
    """Critics from real audiences: build a persona from a viewer's comments, calibrate it, list and show."""


@persona.command()
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="One viewer's comments: text (one per line), CSV or JSONL with text, title, rating.",
)
@click.option("--name", required=True, help="The persona's display name (its id is made from it unless --id).")
@click.option("--id", "persona_id", help="Persona id (lowercase letters, digits, _ and -).")
@click.option("--project", help="Save it as this project's persona (a new version, on the panel).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the YAML here instead of stdout.")
@click.option(
    "--calibrate",
    "holdout",
    type=click.FloatRange(0, 1, min_open=True),
    default=None,
    help="Hold out this fraction of the rated comments, build from the rest and calibrate on them.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Which items are held out.")
@json_option
@pass_ctx
@handles_errors
def build(c: Ctx, source, name, persona_id, project, output, holdout, seed):
    """Build a persona from a viewer's comments; each trait cites the comments it came from."""
    from agents.comments import load_comments
    from agents.personas import persona_to_yaml

    comments = load_comments(source)
    _say(c, f"persona builder: {c.studio.persona_agent()}")
    built = c.studio.build_persona(comments, name, persona_id, holdout, seed)
    p, label, figures = built.persona, built.builder, built.calibration
    if figures:
        _say(c, f"calibration on {int(figures['n'])} held-out item(s): {_figures_line(figures)}")
    text = persona_to_yaml(p)
    saved = None
    if project:
        pid = c.studio.resolve_project(project)
        v = c.studio.save_persona(pid, p)
        saved = {"project": pid, "version": v.number}
        _say(c, f"saved persona {p.id} to project {pid} as v{v.number} (on the panel)")
    if output:
        Path(output).write_text(text, encoding="utf-8")
        _say(c, f"wrote {output}")
    if c.json:
        c.out({"persona": p, "builder": label, "comments": len(comments), "calibration": figures, **(saved or {})})
    elif not output and not project:
        echo(text, nl=False)


@persona.command(name="calibrate")
@click.argument("name")
@click.option(
    "--against",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The viewer's rated items: CSV or JSONL with title, rating and description (else text).",
)
@click.option("--project", help="Use (and update) this project's persona.")
@click.option(
    "--holdout",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.3,
    show_default=True,
    help="Fraction of the rated items the persona rates.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Which items are held out.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the calibrated persona's YAML here.")
@json_option
@pass_ctx
@handles_errors
def calibrate_cmd(c: Ctx, name, against, project, holdout, seed, output):
    """How well persona NAME (an id, or a YAML file) predicts its viewer's ratings: Spearman and MAE."""
    from agents.comments import load_comments
    from agents.personas import persona_to_yaml

    items = load_comments(against)
    p, pid = _resolve(c, name, project)
    _say(c, f"persona rater: {c.studio.persona_agent()}")
    cal = c.studio.calibrate_persona(p, items, holdout, seed)
    p, label, figures = cal.persona, cal.rater, cal.persona.calibration
    assert figures is not None  # calibrate_persona returns the persona with its figures
    bare = sum(not it.described for it in cal.items)
    if bare:
        _say(
            c,
            f"note: {bare} of {len(cal.items)} held-out item(s) have no description, so the persona rated the "
            "viewer's own comment on them: an optimistic figure (add a 'description' column for a fair one)",
        )
    saved = None
    if pid:
        v = c.studio.save_persona(pid, p, on_panel=False)
        saved = {"project": pid, "version": v.number}
        _say(c, f"stored the figures on {p.id} in project {pid} (v{v.number})")
    if output:
        Path(output).write_text(persona_to_yaml(p), encoding="utf-8")
        _say(c, f"wrote {output}")
    rows = [it.model_dump(include={"index", "title", "rating", "predicted"}) for it in cal.items]
    lines = [f"{'item':<32} {'viewer':>6} {'persona':>7}"]
    for r in rows:
        title = r["title"] or f"#{r['index']}"
        lines.append(f"{title[:32]:<32} {r['rating']:>6.1f} {r['predicted']:>7.1f}")
    lines.append(f"{p.id} · rater {label.split(' (')[0]}: {_figures_line(figures)}")
    c.out({"persona": p.id, "rater": label, "calibration": figures, "items": rows, **(saved or {})}, "\n".join(lines))


@persona.command(name="list")
@click.option("--project", help="A project's personas (builtin and its own), with the panel marked.")
@json_option
@pass_ctx
@handles_errors
def list_cmd(c: Ctx, project):
    """List personas: builtin ones, or a project's (* = on the panel)."""
    from agents.personas import builtin_personas

    if project:
        pid = c.studio.resolve_project(project)
        v = c.studio.version(pid)
        known, panel = c.studio.personas_of(v), set(v.panel)
    else:
        known, panel = builtin_personas(), set()
    rows = [
        {"id": p.id, "name": p.name, "source": p.source, "on_panel": p.id in panel, "calibration": p.calibration}
        for p in known.values()
    ]
    lines = []
    for r in rows:
        cal = f"  [{_figures_line(r['calibration'])}]" if r["calibration"] else ""
        lines.append(f"{'*' if r['on_panel'] else ' '} {r['id']:<28} {r['source']:<8} {r['name']}{cal}")
    c.out(rows, "\n".join(lines))


@persona.command()
@click.argument("ref", metavar="ID")
@click.option("--project", help="Look in this project's personas.")
@json_option
@pass_ctx
@handles_errors
def show(c: Ctx, ref, project):
    """A persona as YAML (with the comments each trait came from, and its calibration)."""
    from agents.personas import persona_to_yaml

    p, _ = _resolve(c, ref, project)
    if c.json:
        c.out(p)
    else:
        echo(persona_to_yaml(p), nl=False)


COMMANDS = [persona]
