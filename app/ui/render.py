"""Render screen: render a version (or one scene of it) as a job the server tracks (progress per shot and step,
Stop that works in every stage), the film with its timeline strip, each shot's clip and render time, and the
hand-off to an editor. A scene renders alone; the film is assembled from the latest clip of every shot.

A reloaded page or a second tab that opens this screen while a render runs follows that render."""

from __future__ import annotations

import gradio as gr

from app.ui import scenes
from app.ui.common import Ctx, ask_to_stop, follow, guard, md, need_project, notice, progress_html, ver
from app.ui.player import cc_toggle, film_video, handoff_path
from app.ui.timeline import drafts_note, strip, strip_html
from storage.records import RenderRecord

SHOT_COLUMNS = ["#", "shot", "clip", "tier", "length (s)", "render time (s)"]
TIERS = [("Draft (fast)", "draft"), ("Final (full quality)", "final")]
# A render belongs to the browser that started it (app/jobs.py): its tabs and a reload follow it and may stop it.
NOT_RENDERED = "Not rendered yet: press **Render**."
RENDERING = "**Rendering…** the film shows here when it is done."
STOP_NOTE = "Stop stops the render this browser started; its other tabs and a reloaded page follow it too."


def summary(info, number: int | None = None) -> str:  # a RenderRecord
    total = info.rendered + info.reused
    shared = (
        f" · this version changes no pixels, so it shares the film of **v{info.version}**"
        if number is not None and number != info.version
        else ""
    )
    how = "stream copy, no re-encode" if info.stream_copied else "re-encoded once"
    earlier = sum(r.status == "earlier" for r in info.shots)
    older = f" · **{earlier}** from earlier renders (changed since)" if earlier else ""
    sound = md(info.audio.describe()) if info.audio else "none (no line, narration, music or sounds)"
    drafts = drafts_note(info)
    tiers = (
        f"  \n**drafts**: {md(drafts)}: finalise them on the Storyboard (a card's **Finalize**) or render **Final**"
        if drafts
        else ""
    )
    return (
        f"**v{info.version}**: rendered **{info.rendered}**, reused **{info.reused}** of {total} shots "
        f"in {info.seconds:.1f}s ({how}){older} · made by {md(info.label)}{shared}{tiers}  \n**sound**: {sound}"
    )


def shot_rows(studio, info) -> list[list]:
    rows = []
    for i, r in enumerate(info.shots):
        clip = studio.clip_info(r.key)
        took = f"{clip.seconds:.1f}" if clip is not None and r.status == "rendered" else "—"
        rows.append([i + 1, r.shot_id, r.status, r.tier, round(r.num_frames / r.fps, 2), took])
    return rows


def outputs_for(studio, pid, number, info):
    """(film, summary, strip, shot rows, clip choices) for a RenderRecord (or None: nothing rendered yet). A version
    not rendered yet shows the film of its nearest rendered ancestor, labelled as such, until its own exists."""
    last = studio.last_film(pid, number) if info is None and pid else None
    if last is not None:
        info = last.render
    if info is None:
        return film_video(studio, pid, None), NOT_RENDERED, "", [], gr.Dropdown(choices=[], value=None)
    if last is not None:
        board = studio.version(pid, info.version).storyboard
        text = f"**{md(last.describe())}**: press **Render** to make v{number}'s.  \n" + summary(info)
    else:
        board = studio.version(pid, number).storyboard
        missing = len(board.shots()) - len(info.shots)
        text = summary(info, number) + (
            f" · **{missing}** shot(s) not in this film yet: render their scenes" if missing > 0 else ""
        )
    choices = [
        (f"{i + 1}. {r.shot_id} ({r.status}{', draft' * (r.tier == 'draft')})", r.shot_id)
        for i, r in enumerate(info.shots)
    ]
    return (
        film_video(studio, pid, info, info.version if last is not None else number),
        text,
        strip_html(studio, board, info, "#film video"),
        shot_rows(studio, info),
        gr.Dropdown(choices=choices, value=None),
    )


def tier_note(studio, default: str) -> str:
    """Under the Draft/Final switch: what each tier renders with on this backend, the project's default tier (the
    film options', `chief film P --tier`) and what a finalised shot keeps."""
    r = studio.tier_recipes()
    return (
        f"{md(r['draft'])} · {md(r['final'])}  \nThis project renders **{default}** unless switched "
        f"(its default: the Storyboard's film options). A finalised shot keeps {md(r['keeps'])}."
    )


def tier_switch(elem_id: str) -> gr.Radio:
    """The Draft/Final switch by a Render button (set to the version's default by `default_tier`)."""
    return gr.Radio(TIERS, value=None, label="Tier", elem_id=elem_id, scale=2)


def default_tier(studio):
    """A handler: the switch set to the version's default tier, and its note."""

    def update(pid, v):
        if not pid:
            return gr.skip(), ""
        tier = studio.version(pid, ver(v)).storyboard.film.tier
        return gr.Radio(value=tier), tier_note(studio, tier)

    return update


def build(ctx: Ctx) -> None:
    studio, jobs = ctx.studio, ctx.jobs
    with gr.Row():
        scene = scenes.picker("render_scene", "Render")
        tier = tier_switch("render_tier")
        render_btn = gr.Button("Render", variant="primary", elem_id="render_btn", scale=2)
        stop_btn = gr.Button("Stop", elem_id="stop_btn", scale=1)
        handoff_btn = gr.Button(
            "Hand off to an editor (a zip: OTIO · EDL · FCPXML + clips)", elem_id="handoff_btn", scale=2
        )
    tier_hint = gr.Markdown(elem_id="render_tier_note", elem_classes="hint")
    gr.Markdown(STOP_NOTE, elem_id="stop_note")
    progress = gr.HTML(value="", elem_id="render_progress", js_on_load=None)
    summary_md = gr.Markdown(elem_id="render_summary")
    with gr.Row():
        with gr.Column(scale=3):
            film = gr.Video(label="Film", elem_id="film", interactive=False, elem_classes=["film-player"])
            cc_toggle("film")
            film_strip = strip("render_strip")
        with gr.Column(scale=2):
            shots = gr.Dataframe(
                headers=SHOT_COLUMNS, value=[], interactive=False, label="Shots", elem_id="render_shots", max_height=360
            )
            clip_pick = gr.Dropdown(
                label="Play one shot's clip", choices=[], elem_id="clip_pick", allow_custom_value=True
            )
            clip = gr.Video(label="Clip", elem_id="shot_clip", interactive=False)
            handoff = gr.File(
                label="Timeline for an editor (unzip, then open cut.otio, cut.edl or cut.fcpxml)",
                elem_id="handoff_files",
                file_count="multiple",
                interactive=False,
            )
    outs = [progress, film, summary_md, film_strip, shots, clip_pick]

    def frames(pid, number):
        """A running job's progress; a version with no film yet says it is rendering (not "not rendered yet")."""
        unrendered = studio.render_info(pid, number) is None and studio.last_film(pid, number) is None

        def frame(job):
            return progress_html(job), gr.skip(), RENDERING if unrendered else gr.skip(), *[gr.skip()] * 3

        return frame

    def final(pid, v):
        def show(job):
            number = ver(v) or job.version
            if job.state == "done":
                # a shot rendered from the Storyboard is a render job too; its result is that shot's clip
                info = job.result if isinstance(job.result, RenderRecord) else studio.render_info(pid, number)
                return "", *outputs_for(studio, pid, number, info)
            return progress_html(job), *outputs_for(studio, pid, number, studio.render_info(pid, number))

        return show

    @guard
    def load(pid, v):
        """The latest film of the version, or the running render's progress (then its film)."""
        if not pid:
            yield "", *outputs_for(studio, pid, None, None)
            return
        job = jobs.active(pid, "render")
        if job is None:
            number = studio.version(pid, ver(v)).number
            yield "", *outputs_for(studio, pid, number, studio.render_info(pid, number))
            return
        yield from follow(jobs, job, frames(pid, ver(v) or job.version), final(pid, v))

    @guard
    def do_render(pid, v, scene_id=scenes.WHOLE, tier=None):
        """Render the version (or the picked scene) at the switch's tier (None: the version's default)."""
        if tier not in (None, "draft", "final"):
            raise ValueError(f"unknown tier {tier!r}: draft or final")
        shown = tier or (studio.version(need_project(pid), ver(v)).storyboard.film.tier)
        pid, number, job = scenes.start(
            jobs,
            studio,
            "render",
            pid,
            v,
            scene_id,
            lambda n, scope, p, c: studio.render(pid, n, p, c, scope, tier=shown),
            f"{shown} render",
        )
        yield from follow(jobs, job, frames(pid, number), final(pid, number))

    @guard
    def stop(pid):
        job = jobs.active(pid or "", "render")
        if job is None:
            notice("nothing is rendering for this project")
            return gr.skip()
        return ask_to_stop(jobs, job)

    @guard
    def show_clip(pid, v, shot_id):
        if not (pid and shot_id):
            return None
        info = studio.render_info(pid, ver(v))
        last = studio.last_film(pid, ver(v)) if info is None else None
        info = last.render if last is not None else info
        rec = info.shot(shot_id) if info else None
        if rec is None:
            raise gr.Error(f"no clip for shot {shot_id} in this version's render")
        return str(studio.clip_path(rec.sha256))

    @guard
    def hand_off(pid, v):
        """The hand-off zip, written to the project's exports (served from there) and offered for download."""
        pid = need_project(pid)
        number = studio.version(pid, ver(v)).number
        return [str(studio.export_handoff(pid, number, handoff_path(studio, pid, number)))]

    ctx.tabs["render"].select(load, [ctx.pid, ctx.version], outs, api_name="render_info").then(
        guard(scenes.refresh(studio)),
        [ctx.pid, ctx.version, scene],
        scene,
        api_visibility="private",
        show_progress="hidden",
    )
    ctx.tabs["render"].select(
        guard(default_tier(studio)),
        [ctx.pid, ctx.version],
        [tier, tier_hint],
        api_visibility="private",
        show_progress="hidden",
    )
    ev = render_btn.click(
        do_render, [ctx.pid, ctx.version, scene, tier], outs, api_name="render", show_progress="hidden"
    )
    ctx.refresh_status(ev)
    stop_btn.click(stop, ctx.pid, progress, api_name="stop_render", show_progress="hidden")
    clip_pick.change(show_clip, [ctx.pid, ctx.version, clip_pick], clip, api_name="clip")
    handoff_btn.click(hand_off, [ctx.pid, ctx.version], handoff, api_name="export_timeline")
