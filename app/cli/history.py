"""Projects and their history: list, status, log, show, diff, fork, checkout, trash and restore."""

from __future__ import annotations

import click

from app.cli.common import Ctx, command, echo, usage_line, version_option


def words(score: str) -> str:
    """A score's name as a creator reads it ("story_clarity" -> "story clarity"); --json keeps the names."""
    return score.replace("_", " ")


@command(project=False)
@click.option("--all", "show_all", is_flag=True, help="Include trashed projects.")
def projects(c: Ctx, show_all):
    """List projects (the trash too with --all)."""
    rows = c.studio.projects(include_trashed=show_all)
    lines = [f"{p.id}  {p.title}  ({p.versions} versions){'  [trash]' if p.trashed else ''}" for p in rows]
    c.out(rows, "\n".join(lines) or 'no projects yet: chief new "an idea"')


@command(project=False)
def status(c: Ctx):
    """Show the active backend, model, agents and data folder."""
    st = c.studio.status()
    c.out(st, "\n".join(f"{k:>14}: {v}" for k, v in st.model_dump().items() if v))


@command
def trash(c: Ctx, project):
    """Move a project to the trash (it stays restorable: `chief restore`)."""
    p = c.studio.trash_project(c.studio.resolve_project(project))
    c.out(p, f"moved “{p.title}” ({p.id}) to the trash; `chief restore {p.id}` brings it back")


@command
def restore(c: Ctx, project):
    """Take a project out of the trash."""
    p = c.studio.restore_project(c.studio.resolve_project(project))
    c.out(p, f"restored “{p.title}” ({p.id})")


@command
def log(c: Ctx, project):
    """The version tree, oldest first (* = current; "draft": the working draft small actions fold into)."""
    pid = c.studio.resolve_project(project)
    rows = c.studio.versions(pid)
    words = c.studio.change_words(pid, [r.number for r in rows if r.kind == "edit"])  # what each edit changed
    lines = []
    for r in rows:
        parent = f"← v{r.parent}" if r.parent else "root"
        scores = c.studio.panel_scores(pid, r.number) if r.critiques else {}
        score = f" · panel {scores['overall']:.1f}" if scores else ""
        what = f" ({words[r.number]})" if words.get(r.number) else ""
        lines.append(
            f"{'*' if r.current else ' '} v{r.number:<3} {parent:<7} {'draft' if r.draft else r.kind:<9} {r.message}"
            f"{what}  [{r.renders} render(s), {r.notes} note(s){score}]"
        )
    c.out({"project": pid, "versions": rows}, "\n".join(lines))


@command
@version_option
@click.option(
    "--yaml",
    "as_yaml",
    is_flag=True,
    help="Print the storyboard as a YAML file `chief new --storyboard` reads back (to edit by hand).",
)
def show(c: Ctx, project, version, as_yaml):
    """A version's storyboard, film, notes and scores."""
    from app.cli.loop import rendered

    pid = c.studio.resolve_project(project)
    v = c.studio.version(pid, version)
    b = v.storyboard
    if as_yaml:
        from storage.files import dump_storyboard

        echo(dump_storyboard(b), nl=False)
        return
    render = c.studio.render_info(pid, v.number)
    notes = c.studio.notes(pid, v.number)
    scores = c.studio.panel_scores(pid, v.number)
    usage = c.studio.usage(pid, v.number)
    film = rendered(c, pid, render) if render else None
    last = c.studio.last_film(pid, v.number) if render is None else None
    kind = "draft" if v.draft else v.kind
    lines = [f"“{b.title}” v{v.number} ({kind}: {v.message})", f"logline: {b.logline}", f"style: {b.style_guide}"]
    lines += [f"  {ch.name}: {ch.description}" for ch in b.characters]
    for scene in b.scenes:
        lines.append(f"[{scene.scene_id}] {scene.title}")
        for s in scene.shots:
            flags = "".join(f for f, on in (("L", s.locked), ("C", s.continuity)) if on)
            lines.append(f"  {s.shot_id} {s.duration:>5.1f}s {s.camera:<9} {flags:<2} {s.prompt}")
            if s.narration:
                lines.append(f"  {'':>26}“{s.narration}”")
    lines.append(f"panel: {', '.join(v.panel)}")
    if film:
        lines.append(f"film: {film.film} ({film.label})")
    elif last is not None:  # the film there is until this version's own exists
        lines.append(f"film: {c.studio.film_path(last.render)} ({last.describe()})")
    lines += [f"note {n.id}{' on ' + n.shot_id if n.shot_id else ''}: {n.text}" for n in notes]
    if scores:
        lines.append("scores: " + ", ".join(f"{words(k)} {val:.1f}" for k, val in scores.items()))
    lines.append(usage_line(usage))
    c.out(
        {
            "project": pid,
            "version": v,
            "notes": notes,
            "scores": scores,
            "usage": usage,
            "render": film,
            "last_film": last,
        },
        "\n".join(lines),
    )


@command
@click.argument("v1")
@click.argument("v2")
def diff(c: Ctx, project, v1, v2):
    """Shot-by-shot differences between two versions, and their panel scores."""
    pid = c.studio.resolve_project(project)
    d = c.studio.diff(pid, v1, v2)
    lines = [f"v{d.from_version} → v{d.to_version}"]
    lines += [f"  story {f}: {a!r} → {b!r}" for f, (a, b) in d.story.items()]
    lines += [f"  character {name}: {a!r} → {b!r}" for name, (a, b) in d.characters.items()]
    for ch in d.shots:
        if ch.status == "same":
            continue
        lines.append(f"  {ch.status:<8} {ch.shot_id}")
        for f, (a, b) in ch.fields.items():
            lines.append(f"           {f}: {a!r}\n           {'':>{len(f)}}→ {b!r}")
    for k, (a, b) in d.scores.items():
        lines.append(f"  score {words(k)}: {a if a is not None else '—'} → {b if b is not None else '—'}")
    if len(lines) == 1:
        lines.append("  no differences")
    c.out({"project": pid, **d.model_dump()}, "\n".join(lines))


@command
@click.option("--from", "from_version", required=True, help="The version to branch from.")
def fork(c: Ctx, project, from_version):
    """Start a new branch from an earlier version (it becomes current)."""
    pid = c.studio.resolve_project(project)
    v = c.studio.fork(pid, from_version)
    c.out({"project": pid, "version": v}, f"v{v.number} forked from v{v.parent_number}")


@command
@click.argument("version")
def checkout(c: Ctx, project, version):
    """Make an existing version the current one (commands act on it by default)."""
    pid = c.studio.resolve_project(project)
    v = c.studio.checkout(pid, version)
    c.out({"project": pid, "version": v}, f"current version: v{v.number}")


COMMANDS = [projects, status, trash, restore, log, show, diff, fork, checkout]
