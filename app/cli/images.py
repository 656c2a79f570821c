"""Image-first commands: reference images, keyframes (and their screening), takes, picking one, and the
consistency table.

    ref add|gen|clear    keyframes    keyframe list|set|pick|clear    takes    pick    consistency
"""

from __future__ import annotations

from pathlib import Path

import click

from app.cli.common import Ctx, branch_note, command, echo, named, version_option
from app.services.keyframes import KeyframesResult
from app.services.takes import NO_PREFERENCE_SPREAD

# ---------------------------------------------------------------------------------------- references


@click.group("ref")
def ref():
    """Reference images of characters (and locations): shots and keyframes are conditioned on them."""


def _subject_options(fn):
    fn = click.option("--location", is_flag=True, help="NAME is a location, not a character.")(fn)
    return version_option(click.argument("name")(fn))


@command(name="add")
@_subject_options
@click.argument("image", type=click.Path(dir_okay=False))
def ref_add(c: Ctx, project, name, location, version, image):
    """Add IMAGE (PNG, JPEG or WebP) as a reference of NAME, into the working draft (says what it re-renders)."""
    pid = c.studio.resolve_project(project)
    affected = c.studio.clips_affected(pid, "reference", version, name=name, location=location)
    v = c.studio.add_reference(pid, name, Path(image), location, version)
    _reference_out(c, pid, v, name, location, affected)


@command(name="gen")
@_subject_options
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), help="Seed (default: derived from the name).")
def ref_gen(c: Ctx, project, name, location, version, seed):
    """Generate a reference of NAME from its description with the image model, into the working draft."""
    from app.server.progress import RenderProgress

    pid = c.studio.resolve_project(project)
    c.header()
    affected = c.studio.clips_affected(pid, "reference", version, name=name, location=location)
    with RenderProgress(enabled=not c.json) as prog:
        v = c.studio.generate_reference(pid, name, location, seed, version, progress=prog.update)
    _reference_out(c, pid, v, name, location, affected)


@command(name="clear")
@_subject_options
def ref_clear(c: Ctx, project, name, location, version):
    """Remove every reference image of NAME, in the working draft."""
    pid = c.studio.resolve_project(project)
    affected = c.studio.clips_affected(pid, "clear-references", version, name=name, location=location)
    _reference_out(c, pid, c.studio.clear_references(pid, name, location, version), name, location, affected)


def _reference_out(c: Ctx, pid: str, v, name: str, location: bool, affected) -> None:
    items = v.storyboard.locations if location else v.storyboard.characters
    refs = next(item.references for item in items if item.name == name)
    files = [str(c.studio.image_path(sha)) for sha in refs]
    c.out(
        {
            "project": pid,
            "version": v,
            "name": name,
            "references": refs,
            "files": files,
            "images": c.studio.images_label(),
            "branched": c.studio.branched(v),
            "clips_affected": affected,
        },
        f"{named(v)}: {name} has {len(refs)} reference image(s) · {affected.describe()}"
        + "".join(f"\n  {f}" for f in files)
        + branch_note(c.studio, v),
    )


for _command in (ref_add, ref_gen, ref_clear):
    ref.add_command(_command)


# ---------------------------------------------------------------------------------------- keyframes


@command
@click.option("--shots", help="Comma-separated shot ids (default: every shot without a keyframe).")
@click.option("--reroll", "reroll", metavar="SHOT", help="A new keyframe for SHOT with a new seed.")
@click.option("--screen", is_flag=True, help="The panel screens the keyframe storyboard (no video needed).")
@version_option
def keyframes(c: Ctx, project, shots, reroll, screen, version):
    """Render one keyframe per shot (approved in the working draft), re-roll one, or screen them with the panel.

    Says first how many clips the change re-renders. Small actions (keyframes, re-rolls, picks, references) fold
    into one draft version until it is rendered, critiqued or saved over (`chief log` labels it "draft")."""
    from app.server.progress import RenderProgress, StageProgress

    pid = c.studio.resolve_project(project)
    c.header()
    if screen:
        with StageProgress("critics screening the keyframes", enabled=not c.json) as prog:
            crits = c.studio.screen_keyframes(pid, version, progress=prog.update)
        lines = [f"keyframe screening of v{crits[0].version}:"] + [
            f"● {x.persona_name} — {x.critique.overall:.1f}/10: {x.critique.summary}" for x in crits
        ]
        c.out(
            {"project": pid, "screening": "keyframes", "critiques": crits, "active": c.studio.status()},
            "\n".join(lines),
        )
        return
    ids = [reroll] if reroll else [s.strip() for s in shots.split(",") if s.strip()] if shots else None
    affected = c.studio.clips_affected(pid, "reroll" if reroll else "keyframes", version, shots=ids)
    if not c.json:  # said before the drawing starts
        echo(affected.describe())
    with RenderProgress(enabled=not c.json) as prog:
        if reroll:
            res = c.studio.reroll_keyframe(pid, reroll, version, prog.update, None)
        else:
            res = c.studio.render_keyframes(pid, ids, version, prog.update, None)
    c.out(
        {
            "project": pid,
            **res.model_dump(),
            "files": {k.id: str(c.studio.image_path(k.sha256)) for k in res.keyframes},
            "active": c.studio.status(),
            "branched": c.studio.branched(res.version),
            "clips_affected": affected,
        },
        _keyframes_text(c, res) + branch_note(c.studio, res.version),
    )


def _keyframes_text(c: Ctx, res: KeyframesResult) -> str:
    lines = [
        f"{named(res.version)}: {len(res.keyframes)} keyframe(s), rendered {res.rendered}, reused {res.reused} "
        f"· {res.label}"
    ]
    lines += [f"  {k.shot_id:<8} {k.id}  seed {k.seed}  {c.studio.image_path(k.sha256)}" for k in res.keyframes]
    return "\n".join(lines)


@click.group("keyframe")
def keyframe():
    """A shot's keyframe: list the candidates, replace by an upload, pick an earlier one, or clear it."""


@command(name="list")
@version_option
def keyframe_list(c: Ctx, project, version):
    """Every shot's approved keyframe and its candidates (newest first)."""
    pid = c.studio.resolve_project(project)
    cards = c.studio.shot_keyframes(pid, version)
    lines = []
    for card in cards:
        path = c.studio.image_path(card.approved) if card.approved else "(no keyframe)"
        lines.append(f"{card.shot_id:<8} {path}")
        lines += [
            f"    {'✓' if k.sha256 == card.approved else ' '} {k.id}  {k.source}"
            f"{f' seed {k.seed}' if k.seed is not None else ''}  v{k.version}"
            for k in card.candidates
        ]
    c.out({"project": pid, "shots": cards}, "\n".join(lines))


@command(name="set")
@click.argument("shot")
@click.argument("image", type=click.Path(dir_okay=False))
@version_option
def keyframe_set(c: Ctx, project, shot, image, version):
    """Replace SHOT's keyframe by IMAGE (PNG, JPEG or WebP), in the working draft."""
    pid = c.studio.resolve_project(project)
    v = c.studio.set_keyframe(pid, shot, Path(image), version)
    _approved_out(c, pid, v, shot)


@command(name="pick")
@click.argument("shot")
@click.argument("candidate")
@version_option
def keyframe_pick(c: Ctx, project, shot, candidate, version):
    """Approve an earlier CANDIDATE (a keyframe id from `keyframe list`) for SHOT, in the working draft."""
    pid = c.studio.resolve_project(project)
    _approved_out(c, pid, c.studio.pick_keyframe(pid, shot, candidate, version), shot)


@command(name="clear")
@click.argument("shot")
@version_option
def keyframe_clear(c: Ctx, project, shot, version):
    """SHOT renders without a keyframe again (in the working draft)."""
    pid = c.studio.resolve_project(project)
    _approved_out(c, pid, c.studio.clear_keyframe(pid, shot, version), shot)


def _approved_out(c: Ctx, pid: str, v, shot: str) -> None:
    sha = v.storyboard.shot(shot).keyframe
    c.out(
        {
            "project": pid,
            "version": v,
            "shot_id": shot,
            "keyframe": sha,
            "file": str(c.studio.image_path(sha)) if sha else None,
            "branched": c.studio.branched(v),
        },
        f"{named(v)}: {shot} keyframe {c.studio.image_path(sha) if sha else '(none)'}" + branch_note(c.studio, v),
    )


for _command in (keyframe_list, keyframe_set, keyframe_pick, keyframe_clear):
    keyframe.add_command(_command)


# ---------------------------------------------------------------------------------------- takes


@command
@click.argument("shot")
@click.option(
    "-n",
    "count",
    type=click.IntRange(0, 8),
    default=0,
    show_default=True,
    help="Render this many more takes (new seeds); 0 lists the takes.",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Render one more take and pick it (into the draft); refused when its clip comes out as an earlier take's.",
)
@click.option("--vote", is_flag=True, help="The panel watches the takes and votes for one.")
@version_option
def takes(c: Ctx, project, shot, count, replace, vote, version):
    """SHOT's takes side by side: render more, replace the shot's clip with a new one, or ask the panel."""
    from app.server.progress import RenderProgress, StageProgress

    pid = c.studio.resolve_project(project)
    c.header()
    if count:
        with RenderProgress(enabled=not c.json) as prog:
            c.studio.render_takes(pid, shot, count, version, prog.update, None)
    if replace:
        with RenderProgress(enabled=not c.json) as prog:
            version = c.studio.replace_take(pid, shot, version, prog.update, None).version.number
    if vote:
        with StageProgress("critics voting", enabled=not c.json) as prog:
            c.studio.vote_takes(pid, shot, version, progress=prog.update)
    state = c.studio.shot_takes(pid, shot, version)
    tally: dict[str | None, int] = {t.id: 0 for t in state.takes}
    for v in state.votes.votes if state.votes else ():
        tally[v.take_id] = tally.get(v.take_id, 0) + 1
    lines = [f"shot {shot}: {len(state.takes)} take(s)  (✓ the version's take, * picking it re-renders nothing)"]
    for t in state.takes:
        mark = ("✓" if t.id == state.picked else " ") + ("*" if t.id in state.current else " ")
        lines.append(
            f"  #{t.number:<3}{mark} {t.id}  seed {t.seed}  votes {tally.get(t.id, 0)}  {c.studio.clip_path(t.sha256)}"
        )
    if state.votes:
        lines.append(f"  no preference: {tally.get(None, 0)} (scores across the takes within {NO_PREFERENCE_SPREAD})")
    c.out(
        {
            "project": pid,
            **state.model_dump(),
            "files": {t.id: str(c.studio.clip_path(t.sha256)) for t in state.takes},
            "active": c.studio.status(),
        },
        "\n".join(lines),
    )


@command
@click.argument("shot")
@click.argument("take")
@version_option
def pick(c: Ctx, project, shot, take, version):
    """Make TAKE (its number or id) SHOT's take, in the working draft, whose render reuses the take's clip."""
    pid = c.studio.resolve_project(project)
    res = c.studio.pick_take(pid, shot, take, version)
    c.out(
        {"project": pid, **res.model_dump(), "branched": c.studio.branched(res.version)},
        f"{named(res.version)}: {shot} uses take {res.take.number} (seed {res.take.seed}); "
        + ("its clip must be rendered again" if res.rerenders else "its clip is cached: nothing re-renders")
        + (f"; continuity shots after it re-render: {', '.join(res.downstream)}" if res.downstream else "")
        + branch_note(c.studio, res.version),
    )


# ---------------------------------------------------------------------------------------- consistency


@command
@click.option(
    "--source",
    type=click.Choice(["auto", "clips", "keyframes"]),
    default="auto",
    show_default=True,
    help="Measure the latest render's clips, the keyframes, or clips when rendered.",
)
@version_option
def consistency(c: Ctx, project, source, version):
    """How alike each character looks across shots and to their references (worst shots first)."""
    pid = c.studio.resolve_project(project)
    r = c.studio.consistency(pid, version, source)

    def num(x):
        return f"{x:.3f}" if x is not None else "—"

    head = (
        f"consistency of v{r.version} · measured with {r.model}\n{r.method}"
        if r.measured
        else f"consistency of v{r.version} · {r.note}"
    )
    lines = [head]
    for ch in r.characters:
        lines.append(
            f"{ch.name} ({ch.references} reference(s))"
            + (
                f": to reference {num(ch.mean_to_reference)} · across shots {num(ch.mean_to_others)}"
                if r.measured
                else ""
            )
        )
        lines += [
            f"  {a.shot_id:<8} {a.source:<9}"
            + (f" to reference {num(a.to_reference)}  to others {num(a.to_others)}" if r.measured else "")
            for a in ch.appearances
        ]
    c.out({"project": pid, **r.model_dump()}, "\n".join(lines))


COMMANDS = [ref, keyframes, keyframe, takes, pick, consistency]
