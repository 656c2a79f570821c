"""The loop's commands: new → render → critique → note → refine → accept → render …, the film options and the
picture (frame size and rate), and the demo that runs two iterations on a sample story."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click
from pydantic import BaseModel

from app.cli.common import Ctx, branch_note, command, echo, secho, usage_line, version_option
from app.services.refining import UsageSummary
from app.studio import AcceptResult, Active
from storage.records import CritiqueRecord, ProposalRecord, RenderRecord, Version


class Created(BaseModel):
    project: str
    version: Version
    active: Active


class Rendered(RenderRecord):
    """A render record with where its files are on this machine."""

    project: str
    film: str
    files: dict[str, str]
    active: Active
    warnings: list[str] = []  # lines longer than their shots (flagged, never cut)


class Screened(BaseModel):
    project: str
    critiques: list[CritiqueRecord]
    diversity: dict | None
    usage: UsageSummary
    active: Active


class Proposed(ProposalRecord):
    project: str
    active: Active


class Accepted(AcceptResult):
    project: str


def rendered(c: Ctx, pid: str, render: RenderRecord, warnings: Sequence[str] = ()) -> Rendered:
    st = c.studio
    return Rendered(
        warnings=list(warnings),
        **render.model_dump(),
        project=pid,
        film=str(st.film_path(render)),
        files={k: str(p) for k, p in st.media_paths(render).items()},
        active=st.status(),
    )


def render_text(r: Rendered, total: int | None = None) -> str:
    earlier = [s.shot_id for s in r.shots if s.status == "earlier"]
    drafts = [s.shot_id for s in r.shots if s.tier == "draft"]
    left = (total or len(r.shots)) - len(r.shots)
    return (
        f"v{r.version}: rendered {r.rendered}, reused {r.reused} of {r.rendered + r.reused} shots in "
        f"{r.seconds:.1f}s\nfilm: {r.film}"
        + (f"\nsubtitles: {r.files['srt']}" if "srt" in r.files else "")
        + (f"\nfrom earlier renders (changed since): {', '.join(earlier)}" if earlier else "")
        + (f"\ndrafts: {', '.join(drafts)}" if drafts else "")
        + (f"\nnot in this film yet (never rendered): {left} shot(s)" if left > 0 else "")
        + f"\nmade by: {r.label}"
        + (f"\nsound: {r.audio.describe()}" if r.audio else "\nsound: none (no line, narration, music or sounds)")
    )


def scope_options(fn):
    """--scene / --shots: act on one scene or a range of shots instead of the whole film."""
    fn = click.option("--shots", "shots", help="A range of shots, e.g. s010-s020 (film order) or s003,s007.")(fn)
    return click.option("--scene", "scene", help="One scene: its id (sc03) or its number (3).")(fn)


def scope_of(c: Ctx, pid: str, version, scene, shots):
    return c.studio.scope(pid, version, scene, shots)


@command(project=False)
@click.argument("idea", required=False)
@click.option(
    "--minutes",
    type=click.FloatRange(0.25),
    default=1.0,
    show_default=True,
    help="Target length (1-10 intended; at most the max_film_minutes setting).",
)
@click.option("--title", help="Project title (default: from the idea or storyboard).")
@click.option(
    "--storyboard",
    "storyboard_file",
    type=click.Path(exists=True, dir_okay=False),
    help="Start from a hand-written storyboard (YAML or JSON; see docs/storyboard.md).",
)
@click.option("--panel", help="Comma-separated persona ids for the critics' panel (default: all builtin).")
def new(c: Ctx, idea, minutes, title, storyboard_file, panel):
    """Plan a new project from an IDEA (or --storyboard FILE); prints the project id."""
    from storage.files import load_storyboard

    panel_ids = [p.strip() for p in panel.split(",") if p.strip()] if panel else None
    if storyboard_file:
        board = load_storyboard(Path(storyboard_file), limits=c.studio.config.limits)  # validated, nothing written
        if title:
            board = board.model_copy(update={"title": title})
        c.header()
        v = c.studio.create_from_storyboard(board, panel_ids)
    elif idea:
        from app.server.progress import StageProgress

        c.header()
        with StageProgress("planning", enabled=not c.json) as prog:
            v = c.studio.create_project(idea, minutes, title, panel_ids, progress=prog.update)
    else:
        raise click.UsageError("give an IDEA or --storyboard FILE")
    b = v.storyboard
    for w in b.line_warnings():
        secho(f"warning: {w}", fg="yellow", err=True)
    c.out(
        Created(project=v.project_id, version=v, active=c.studio.status()),
        f"{v.project_id}\n  “{b.title}” · v{v.number} · {len(b.shots())} shots · {b.duration():.0f}s",
    )


@command
@version_option
@scope_options
@click.option(
    "--tier",
    type=click.Choice(["draft", "final"]),
    help="draft: the model family's fast recipe (speed LoRA, few steps); final: full quality. Default: the "
    "version's (`chief film P --tier`). A final keeps the draft's seed, keyframe and take.",
)
def render(c: Ctx, project, version, scene, shots, tier):
    """Render every shot (unchanged shots reuse their cached clips) and assemble the film.

    With --scene or --shots only those render; the film is then assembled from the latest clip of every shot.
    --tier draft renders fast previews (a shot finalised as it stands stays final); --tier final --shots s003
    finalises chosen shots. Drafts and finals are cached apart; --json gives each shot's tier."""
    from app.server.progress import RenderProgress

    pid = c.studio.resolve_project(project)
    scope = scope_of(c, pid, version, scene, shots)
    c.header()
    board = c.studio.version(pid, version).storyboard
    warnings = board.line_warnings() + board.description_warnings()
    for w in warnings:  # before the render: a line is flagged, never cut; a description too long, never said over one
        secho(f"warning: {w}", fg="yellow", err=True)
    with RenderProgress(enabled=not c.json) as prog:
        info = c.studio.render(pid, version, progress=prog.update, scope=scope, tier=tier)
    out = rendered(c, pid, info, warnings)
    for w in info.audio.descriptions_flagged if info.audio else []:  # measured on the voices: left out
        secho(f"warning: {w}", fg="yellow", err=True)
    c.out(out, render_text(out, len(c.studio.version(pid, version).storyboard.shots())))


@command
@version_option
@scope_options
def critique(c: Ctx, project, version, scene, shots):
    """Every persona on the panel watches the film (or --scene / --shots of it) and critiques it."""
    from app.server.progress import StageProgress

    pid = c.studio.resolve_project(project)
    scope = scope_of(c, pid, version, scene, shots)
    c.header()
    with StageProgress("critics watching", enabled=not c.json) as prog:
        crits = c.studio.critique(pid, version, progress=prog.update, scope=scope)
    div = c.studio.diversity(pid, version)
    usage = c.studio.usage(pid, version)
    lines = [f"watched: {scope.label()} · {crits[0].mode}"] if crits else []
    for item in crits:
        cr = item.critique
        lines.append(
            f"● {item.persona_name} — {cr.overall:.1f}/10 — "
            f"{'keeps watching' if cr.keep_watching else 'stops watching'}: {cr.keep_watching_reason}"
        )
        if item.coverage is not None:
            lines.append(f"  {item.coverage.line()}")
            unseen = item.coverage.unseen
            lines += [f"  ⚠ not seen as meant: {u.shot_id}: {u.why}" for u in unseen[:5]]
            if len(unseen) > 5:
                lines.append(f"  ⚠ … and {len(unseen) - 5} more shot(s) not seen as meant (--json lists them all)")
        lines.append(f"  {cr.summary}")
        for i, issue in enumerate(cr.top_issues[:3], 1):
            lines.append(
                f"  {i}. [{issue.urgency}] {issue.summary} {('→ ' + issue.suggestion) if issue.suggestion else ''}"
            )
    if div is not None and div.collapsed:
        lines.append(
            f"⚠ the panel agrees too much (mean similarity {div.mean_pairwise_cosine:.2f}): "
            "add different personas for a wider view"
        )
    lines.append(usage_line(usage))
    div_json = (
        None
        if div is None
        else {
            "mean_pairwise_cosine": div.mean_pairwise_cosine,
            "collapsed": div.collapsed,
            "threshold": div.threshold,
            "pairs": {" vs ".join(k): v for k, v in div.pairs.items()},
        }
    )
    c.out(
        Screened(project=pid, critiques=crits, diversity=div_json, usage=usage, active=c.studio.status()),
        "\n".join(lines),
    )


@command
@click.argument("text")
@click.option("--shot", "shot_id", help="The shot this note is about (default: the whole film).")
@version_option
@scope_options
def note(c: Ctx, project, text, shot_id, version, scene, shots):
    """Add a creator's note to a version (about the film, a --shot, a --scene or --shots). Notes are
    instructions the refiner must follow; a note about a scene never rewrites shots elsewhere."""
    pid = c.studio.resolve_project(project)
    scope = scope_of(c, pid, version, scene, shots)
    n = c.studio.add_note(pid, text, shot_id, version, scope=scope)
    c.out({"project": pid, "note": n}, f"note {n.id} added on {n.about()}")


@command
@version_option
@scope_options
def refine(c: Ctx, project, version, scene, shots):
    """The refiner proposes edits from the notes and critiques (printed, numbered), for --scene / --shots or for
    the scenes the notes and critiques are about."""
    from app.server.progress import StageProgress

    pid = c.studio.resolve_project(project)
    scope = scope_of(c, pid, version, scene, shots) if scene or shots else None
    c.header()
    with StageProgress("refiner", enabled=not c.json) as prog:
        info = c.studio.refine(pid, version, scope=scope, progress=prog.update)
    board = c.studio.version(pid, info.version).storyboard
    c.out(Proposed(**info.model_dump(), project=pid, active=c.studio.status()), format_proposal(info, board))


def in_words(e, board=None) -> str | None:
    """A sound edit in words ("Scene 3 “The storm”: music −6 dB"); None for a picture edit."""
    from storage.edits import describe
    from storage.schema import SOUND_OPS

    return describe(e, board) if e.op in SOUND_OPS or (e.op == "set" and e.field == "sounds") else None


def format_proposal(info: ProposalRecord, board=None) -> str:
    p = info.proposal
    lines = [f"proposal {info.id} on v{info.version} ({info.mode}), scope {info.scope.label()}: {p.summary}"]
    if p.answers:
        lines.append("your notes, request by request:")
    for a in p.answers:
        edits = f" (edit {', '.join(map(str, a.edits))})" if a.edits else ""
        said = a.answer if a.status == "changed" else f"{a.status}: {a.answer}" if a.answer != a.status else a.status
        lines.append(f"  - “{a.request}” → {said}{edits}")
    flagged = {f.edit: f.why for f in p.flags}
    for i, e in enumerate(p.edits, 1):
        words = in_words(e, board)
        tick = "[x]" if p.is_ticked(i) else "[ ]"
        lines.append(f"{i:>3}. {tick} {words or f'{e.op} {e.target}'}")
        if i in flagged:
            lines.append(f"       ! {flagged[i]}")
        old, new = getattr(e, "old", None), getattr(e, "new", None)  # not every kind of edit has them
        if not words and old is not None:
            lines.append(f"       - {old}")
        if not words and new:
            lines.append(f"       + {new}")
        lines.append(f"       why: {e.rationale}  [sources: {', '.join(e.sources) or '—'}]")
    for u in p.not_changed:
        lines.append(f"  not changed: {u.what} — {u.why}")
    if p.edits:
        lines.append(
            'accept the ticked [x] edits with: chief accept PROJECT; or pick: [--only 1,3] [--edit 2="new text"]'
        )
    else:
        lines.append("no edits to accept: add a note (chief note) or screen it again (chief critique), then refine")
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
            raise click.BadParameter(f'{v!r}: use N="new text"')
        out[int(num)] = text
    return out


@command
@click.option("--proposal", "proposal_id", help="Proposal id (default: the latest on the version).")
@click.option("--only", help="Accept only these edit numbers, e.g. 1,3 (default: the ticked ones, [x]).")
@click.option("--edit", "edits", multiple=True, help='N="new text": accept edit N with your own value.')
@version_option
def accept(c: Ctx, project, proposal_id, only, edits, version):
    """Accepted edits become a child version (a branch if the base version already moved on); each is listed, a
    sound edit in words ("Scene 2 “The storm”: music −6 dB"). A level's --edit is in dB: --edit 1=-4."""
    pid = c.studio.resolve_project(project)
    record = c.studio.proposal(pid, proposal_id, version)
    by_hand = _parse_edits(edits)
    res = c.studio.accept(pid, record.id, _parse_only(only), by_hand, version)
    v = res.version
    board = c.studio.version(pid, record.version).storyboard
    accepted = [(n, record.proposal.edits[n - 1]) for n in res.applied]
    c.out(
        Accepted(**res.model_dump(), project=pid),
        f"v{v.number} created from v{v.parent_number} with edit(s) {', '.join(map(str, res.applied))}"
        + branch_note(c.studio, v)
        + "".join(
            f"\n{n:>3}. {in_words(e, board) or f'{e.op} {e.target}'}" + (" (your value)" if n in by_hand else "")
            for n, e in accepted
        ),
    )


@command
@click.option("--title-card/--no-title-card", default=None, help="Open with a card showing the title.")
@click.option("--title-seconds", type=click.FloatRange(0.5, 10), help="How long the title card stays.")
@click.option("--crossfade", type=click.FloatRange(0, 2), help="Seconds of crossfade between shots (0: hard cuts).")
@click.option(
    "--burn-subtitles/--no-burn-subtitles",
    default=None,
    help="Draw narration and dialogue into the picture (else the film carries them as a soft subtitle stream).",
)
@click.option("--loudness", type=click.Choice(["web", "ebu"]), help="The mix's target: web -14 LUFS, ebu -23 LUFS.")
@click.option("--music-level", type=click.FloatRange(-60, 12), help="Music stem level in dB before the mix.")
@click.option("--effects-level", type=click.FloatRange(-60, 12), help="Effects stem level in dB before the mix.")
@click.option("--ducking/--no-ducking", default=None, help="Duck the music under speech.")
@click.option(
    "--channels",
    type=click.Choice(["stereo", "mono"]),
    help="The mix: stereo (dialogue centred, music and effects wide) or mono (one channel, for a mono delivery).",
)
@click.option(
    "--captions",
    type=click.Choice(["plain", "sdh"]),
    help="Subtitles: sdh (for viewers who cannot hear: unclear speakers named, [sounds] and [music]) or plain lines.",
)
@click.option(
    "--audio-description/--no-audio-description",
    default=None,
    help="Add a second audio track: the mix with each shot's description voiced between the lines.",
)
@click.option("--tier", type=click.Choice(["draft", "final"]), help="The tier `chief render` uses by default.")
@version_option
def film(
    c: Ctx,
    project,
    title_card,
    title_seconds,
    crossfade,
    burn_subtitles,
    loudness,
    music_level,
    effects_level,
    ducking,
    channels,
    captions,
    audio_description,
    tier,
    version,
):
    """How the shots are cut together (a new version; clips are reused, the film is assembled again).

    Without options, prints the version's film options."""
    pid = c.studio.resolve_project(project)
    v = c.studio.version(pid, version)
    changes = {
        k: val
        for k, val in (
            ("title_card", title_card),
            ("title_seconds", title_seconds),
            ("crossfade", crossfade),
            ("burn_subtitles", burn_subtitles),
            ("loudness", loudness),
            ("music_level", music_level),
            ("effects_level", effects_level),
            ("ducking", ducking),
            ("channels", channels),
            ("captions", captions),
            ("audio_description", audio_description),
            ("tier", tier),
        )
        if val is not None
    }
    made = False
    if changes:
        v, made = c.studio.set_film_options(pid, changes, v.number)
    opts = v.storyboard.film
    for w in v.storyboard.description_warnings() if made else []:
        secho(f"warning: {w}", fg="yellow", err=True)
    c.out(
        {"project": pid, "version": v.number, "film": opts, "changed": made},
        f"v{v.number}: "
        + ", ".join(f"{k.replace('_', ' ')} {val}" for k, val in opts.model_dump().items())
        + ("" if made or not changes else " (nothing changed: no new version)"),
    )


@command
@click.option("--size", help="WIDTHxHEIGHT of the frames, e.g. 832x480, or 'model' for the model's own size.")
@click.option("--fps", help="Frames per second (1-60), or 'model' for the model's own rate.")
@version_option
def picture(c: Ctx, project, size, fps, version):
    """The film's frame size and rate (a new version; every clip renders again at the new picture).

    Without options, prints the version's picture."""
    pid = c.studio.resolve_project(project)
    v = c.studio.version(pid, version)
    made = False
    if size is not None or fps is not None:
        w, h = (v.storyboard.width, v.storyboard.height) if size is None else _size(size)
        rate = v.storyboard.fps if fps is None else (None if fps == "model" else _int(fps, "--fps"))
        v, made = c.studio.set_picture(pid, w, h, rate, v.number)
    b = v.storyboard
    c.out(
        {"project": pid, "version": v.number, "width": b.width, "height": b.height, "fps": b.fps, "changed": made},
        f"v{v.number}: {f'{b.width}×{b.height}' if b.width else 'the model’s size'}, "
        f"{b.fps or 'the model’s'} fps" + ("" if made or (size is None and fps is None) else " (nothing changed)"),
    )


def _size(text: str) -> tuple[int | None, int | None]:
    if text == "model":
        return None, None
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise click.BadParameter("use WIDTHxHEIGHT, e.g. 832x480, or model", param_hint="--size") from None
    return w, h


def _int(text: str, hint: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise click.BadParameter("a whole number, or model", param_hint=hint) from None


DEMO_IDEA = "A lighthouse keeper befriends a lost whale during the autumn storms"


def heuristics(st) -> list[str]:
    """What in the active setup is a heuristic or a stand-in, in words (nothing when models do the work)."""
    out = []
    if st.agents.planner.mode == "offline":
        out.append(
            "planner: heuristic — a beat sheet and a shot grammar filled with the idea's words, no language model"
        )
    if st.agents.critic.mode == "offline":
        out.append(
            "critics: heuristic — rules over the storyboard and the measured frames (every frame, low "
            "resolution), weighed by each persona's tastes, loves and hates; not a viewer's judgment"
        )
    if st.agents.refiner.mode == "offline":
        out.append("refiner: heuristic — rules that turn your notes and the panel's concrete changes into edits")
    if st.backend.name == "animatic":
        out.append("video: animatic previz (drawn panels), not a model render")
    return out


@command(project=False)
@click.option("--minutes", type=click.FloatRange(0.25, 10), default=1.0, show_default=True)
def demo(c: Ctx, minutes):
    """Run two full iterations of the loop on a sample story, saying what each step did and what is heuristic."""
    from app.server.discovery import discover
    from app.server.progress import RenderProgress, StageProgress

    st = c.studio
    c.header()
    say = (lambda text: None) if c.json else (lambda text: echo(text, err=True))
    v1 = st.create_project(DEMO_IDEA, minutes)
    pid, board = v1.project_id, v1.storyboard
    say(
        f"plan ({st.agents.planner.mode}): “{board.title}”, {len(board.scenes)} scenes, {len(board.shots())} shots, "
        f"{board.duration():.0f}s; beats: " + " → ".join(dict.fromkeys(sc.purpose for sc in board.scenes if sc.purpose))
    )
    films = []
    for it in (1, 2):
        with RenderProgress(enabled=not c.json) as prog:
            info = st.render(pid, progress=prog.update)
        films.append(rendered(c, pid, info))
        say(f"iteration {it}: v{info.version} rendered {info.rendered}, reused {info.reused} → {films[-1].film}")
        with StageProgress("critics watching", enabled=not c.json) as prog:
            crits = st.critique(pid, progress=prog.update)
        for item in crits:
            top = item.critique.top_issues[0].summary if item.critique.top_issues else "nothing in the way"
            say(f"  ● {item.persona_name}: {item.critique.overall:.1f}/10 — {top}")
        div = st.diversity(pid)
        if div is not None:
            say(f"  {div.describe()}")
        if it == 2:
            break
        shots = st.version(pid).storyboard
        crisis = next(
            (sc.shots[0] for sc in shots.scenes if sc.purpose == "crisis"), shots.shots()[len(shots.shots()) // 2]
        )
        st.add_note(pid, "Make the storm scarier", shot_id=crisis.shot_id)
        st.add_note(pid, "Keep the whale gentle and curious, never threatening")
        prop = st.refine(pid)
        say(
            f"notes: “Make the storm scarier” on {crisis.shot_id}; “Keep the whale gentle and curious, never "
            f"threatening”\nproposal ({prop.mode}): {prop.proposal.summary}"
        )
        for e in prop.proposal.edits[:4]:
            say(f"  {in_words(e) or f'{e.op} {e.target}: ' + str(getattr(e, 'new', ''))[:110]}")
        st.accept(pid)
    d = st.diff(pid, 1, films[-1].version)
    servers = discover(timeout=0.3)
    found = (
        "local model servers: " + ", ".join(f"{s.name} ({len(s.models)} models)" for s in servers)
        if servers
        else "no local model server found on 127.0.0.1"
    )
    notes = heuristics(st)
    home = st.config.home
    c.out(
        {
            "project": pid,
            "films": films,
            "scores": d.scores,
            "active": st.status(),
            "heuristic": notes,
            "servers": servers,
        },
        f"project {pid}\n"
        + "\n".join(f"v{f.version}: {f.film}  (rendered {f.rendered}, reused {f.reused})" for f in films)
        + "\npanel overall: "
        + " → ".join(str(x) for x in d.scores.get("overall", ()))
        + "\nwhat is heuristic here:\n"
        + "\n".join(f"  - {n}" for n in notes)
        + f"\n{found}; `chief models` lists them with the one setting that uses each"
        + f"\nnext: chief --home {home} show {pid}   ·   chief --home {home} diff {pid} 1 {films[-1].version}",
    )


COMMANDS = [new, render, critique, note, refine, accept, film, picture, demo]
