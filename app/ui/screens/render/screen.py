"""The Render screen's layout and wiring: its components (elem_ids the browser tests select by), then each event
bound to a `RenderHandlers` method."""

from __future__ import annotations

import gradio as gr

from app.ui import scenes
from app.ui.common import Ctx, guard
from app.ui.player import cc_toggle
from app.ui.screens.render.handlers import RenderHandlers
from app.ui.screens.render.values import SHOT_COLUMNS, STOP_NOTE
from app.ui.timeline import strip
from app.ui.widgets import QUIET, tier_switch


def build(ctx: Ctx) -> RenderHandlers:
    """Lay the screen out in the current Blocks and wire it; the handlers it wired."""
    h = RenderHandlers(ctx.studio, ctx.jobs)
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
    version = [ctx.pid, ctx.version]
    tab = ctx.tabs["render"]
    tab.select(guard(h.load), version, outs, api_name="render_info").then(
        guard(scenes.refresh(h.studio)), [*version, scene], scene, **QUIET
    )
    tab.select(guard(h.default_tier), version, [tier, tier_hint], **QUIET)
    ev = render_btn.click(guard(h.do_render), [*version, scene, tier], outs, api_name="render", show_progress="hidden")
    ctx.refresh_status(ev)
    ev.then(guard(h.kept_version), version, ctx.version, **QUIET)  # a flipped switch made a version: follow it
    stop_btn.click(guard(h.stop), ctx.pid, progress, api_name="stop_render", show_progress="hidden")
    clip_pick.change(guard(h.show_clip), [*version, clip_pick], clip, api_name="clip")
    handoff_btn.click(guard(h.hand_off), version, handoff, api_name="export_timeline")
    return h
