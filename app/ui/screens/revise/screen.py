"""The Revise screen's layout and wiring: its components (elem_ids the browser tests select by), then each event
bound to a `ReviseHandlers` method, and the `accept` and `refine` API routes."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from app.ui import scenes
from app.ui.common import Ctx, guard
from app.ui.screens.revise.handlers import ReviseHandlers
from app.ui.screens.revise.values import CSS
from app.ui.widgets import QUIET

HERE = Path(__file__).parent


def build(ctx: Ctx) -> ReviseHandlers:
    """Lay the screen out in the current Blocks and wire it; the handlers it wired."""
    h = ReviseHandlers(ctx.studio, ctx.jobs)
    with gr.Row():
        refine_scene = scenes.picker("refine_scene", "Revise (whole film: the scenes your notes and the critics name)")
        refine_btn = gr.Button("Ask the refiner for a proposal", variant="primary", elem_id="refine_btn", scale=2)
    progress = gr.HTML(value="", elem_id="refine_progress", js_on_load=None)
    message = gr.Markdown(elem_id="revise_message")
    review = gr.HTML(
        value=None,
        html_template="<div class='review'></div>",
        elem_id="review",
        js_on_load=(HERE / "revise.js").read_text(),
        css_template=CSS,
    )
    shown = [review, message, progress]
    ctx.tabs["revise"].select(guard(h.load_proposal), [ctx.pid, ctx.version], shown, api_visibility="private").then(
        guard(scenes.refresh(h.studio)), [ctx.pid, ctx.version, refine_scene], refine_scene, **QUIET
    )
    ctx.refresh_status(refine_btn.click(guard(h.ask_refiner), [ctx.pid, ctx.version, refine_scene], shown, **QUIET))
    review.commit(guard(h.commit), [ctx.pid, review], [ctx.version, review, message], api_visibility="private")
    gr.api(guard(h.accept_api), api_name="accept")
    gr.api(guard(h.refine_api), api_name="refine")
    return h
