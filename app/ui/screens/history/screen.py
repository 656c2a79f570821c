"""The History screen's layout and wiring: its components (elem_ids the browser tests select by), then each event
bound to a `HistoryHandlers` method."""

from __future__ import annotations

import gradio as gr

from app.ui.common import Ctx, guard
from app.ui.player import cc_toggle
from app.ui.screens.history.handlers import HistoryHandlers
from app.ui.screens.history.values import CSS, GRAPH_CSS, GRAPH_JS, OVERALL, PLOT_CSS
from storage.schema import DIMENSIONS


def build(ctx: Ctx) -> HistoryHandlers:
    """Lay the screen out in the current Blocks and wire it; the handlers it wired."""
    h = HistoryHandlers(ctx.studio)
    gr.Markdown("Click a version to compare it with its parent; the ringed one is current.")
    graph = gr.HTML(elem_id="version_graph", js_on_load=GRAPH_JS, css_template=GRAPH_CSS)
    with gr.Row(equal_height=True):
        target = gr.Number(label="Selected version", precision=0, minimum=1, elem_id="restore_version", scale=1)
        checkout_btn = gr.Button("Open it (make current)", elem_id="checkout_btn", scale=2)
        fork_btn = gr.Button("Fork a branch from it", elem_id="fork_btn", scale=2)
    message = gr.Markdown(elem_id="history_message")
    gr.Markdown("### Compare two versions")
    with gr.Row(equal_height=True):
        a = gr.Number(label="A", precision=0, minimum=1, elem_id="cmp_a")
        b = gr.Number(label="B", precision=0, minimum=1, elem_id="cmp_b")
        compare_btn = gr.Button("Compare", variant="primary", elem_id="compare_btn")
    with gr.Row():
        with gr.Column():
            film_a = gr.Video(label="A", elem_id="cmp_film_a", interactive=False, elem_classes=["film-player"])
            cc_toggle("cmp_film_a")
        with gr.Column():
            film_b = gr.Video(label="B", elem_id="cmp_film_b", interactive=False, elem_classes=["film-player"])
            cc_toggle("cmp_film_b")
    cmp_diff = gr.HTML(elem_id="cmp_diff", css_template=CSS, js_on_load=None)
    cmp_scores = gr.Dataframe(
        headers=["score", "A", "B", "change"],
        value=[],
        interactive=False,
        label="Panel score changes",
        elem_id="cmp_scores",
    )
    gr.Markdown("### Panel scores across versions")
    dim = gr.Dropdown(
        [(d.replace("_", " "), d) for d in (OVERALL, *DIMENSIONS)], value=OVERALL, label="Score", elem_id="plot_dim"
    )
    plot = gr.HTML(elem_id="score_plot", css_template=PLOT_CSS, js_on_load=None)
    compared = [film_a, film_b, cmp_diff, cmp_scores]
    ctx.tabs["history"].select(
        guard(h.load), [ctx.pid, ctx.version, dim], [graph, target, a, b, plot], api_name="history"
    )
    dim.change(guard(h.plot_or_nothing), [ctx.pid, dim], plot, api_visibility="private")
    compare_btn.click(guard(h.compare), [ctx.pid, a, b], compared, api_name="compare")
    graph.pick(guard(h.pick), ctx.pid, [target, a, b, *compared, message], api_visibility="private")
    checkout_btn.click(guard(h.checkout), [ctx.pid, target], [ctx.version, message, graph], api_name="checkout")
    fork_btn.click(guard(h.fork), [ctx.pid, target], [ctx.version, message, graph], api_name="fork")
    return h
