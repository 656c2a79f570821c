"""The Story screen's layout and wiring: the form (title, logline, style; the API's table of the bible), then the
bible's cards and the consistency table, each event bound to a `StoryHandlers` or `ReferencesHandlers` method."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from app.ui.common import Ctx, guard
from app.ui.screens.story.handlers import ReferencesHandlers, StoryHandlers
from app.ui.screens.story.references import CSS, previewing
from app.ui.widgets import QUIET, kit_head

HERE = Path(__file__).parent


def build(ctx: Ctx) -> StoryHandlers:
    """Lay the screen out in the current Blocks and wire it; the form's handlers (the panel's are on `.references`)."""
    h = StoryHandlers(ctx.studio)
    title = gr.Textbox(label="Title", elem_id="story_title")
    logline = gr.Textbox(label="Logline", lines=2, elem_id="story_logline")
    style = gr.Textbox(label="Style guide", lines=3, elem_id="story_style")
    save = gr.Button("Save title, logline and style (new version)", variant="primary", elem_id="story_save_btn")
    with gr.Row(visible=False):  # the API's form of the bible (the page edits it on the cards)
        chars = gr.Dataframe(headers=["name", "description"], datatype=["str", "str"], value=[], interactive=True)
        save_api = gr.Button("save")
    message = gr.Markdown(elem_id="story_message")
    version = [ctx.pid, ctx.version]
    ctx.tabs["story"].select(guard(h.load), version, [title, logline, style, chars, message], api_name="load_story")
    save_api.click(
        guard(h.save_story), [*version, title, logline, style, chars], [ctx.version, message], api_name="save_story"
    )
    saved = save.click(
        guard(h.save_page), [*version, title, logline, style], [ctx.version, message], api_visibility="private"
    )
    h.references = _references(ctx, message, after=[saved])  # a new character gets its references card at once
    return h


def _references(ctx: Ctx, story_message, after=()) -> ReferencesHandlers:
    """The panel under the form; `story_message` says which version the form now edits. The panel loads when the
    screen opens and after each event of `after` (the story saved)."""
    h = ReferencesHandlers(ctx.studio, ctx.jobs)
    gr.Markdown(
        "### The characters and places\nEach character: their name and how they look (edit them here), what they "
        "are, their reference pictures and their voice (▶ plays a line in it). Shots and keyframes with a character "
        "(or at a location) are drawn from its first reference; critics see them beside the frames. Each change "
        "saved on a card makes a new version."
    )
    refs = gr.HTML(
        value=None,
        html_template="<div class='refs'></div>",
        elem_id="references",
        js_on_load=(HERE / "references.js").read_text(),
        head=kit_head(),
        css_template=(HERE / "references.css").read_text(),
        server_functions=[previewing(h.studio)],
    )
    with gr.Row():
        progress = gr.HTML(value="", elem_id="ref_progress", js_on_load=None)
        stop = gr.Button("Stop", elem_id="ref_stop_btn", scale=0, min_width=90, size="sm")
    job_box = gr.Textbox(visible=False, elem_id="ref_job")
    gr.Markdown("### Consistency\nHow alike each character looks from shot to shot, and to their references.")
    measure = gr.Button("Measure consistency", elem_id="consistency_btn")
    table = gr.HTML(value="", elem_id="consistency_table", css_template=CSS, js_on_load=None)
    outs = [progress, job_box, ctx.version, refs, table, story_message]
    version = [ctx.pid, ctx.version]
    ctx.tabs["story"].select(guard(h.load_refs), version, outs, api_name="load_references", show_progress="hidden")
    for event in after:
        event.success(guard(h.load_refs), version, outs, **QUIET)
    refs.reference(guard(h.act), version, outs, **QUIET)
    stop.click(guard(h.stop_job), [ctx.pid, job_box], progress, **QUIET)
    measure.click(guard(h.measure_now), version, table, api_name="consistency")
    return h
