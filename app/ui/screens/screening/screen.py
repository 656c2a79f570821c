"""The Screening room's layout and wiring: its components (elem_ids the browser tests select by), the notes list
(drawn again whenever the notes change: `gr.render`), then each event bound to a `ScreeningHandlers` method."""

from __future__ import annotations

import gradio as gr

from app.ui import scenes
from app.ui.common import Ctx, guard
from app.ui.player import cc_toggle
from app.ui.screens.screening.handlers import ScreeningHandlers
from app.ui.screens.screening.values import CARD_CSS, SEEK_JS, WHOLE_FILM, hearing
from app.ui.timeline import strip
from app.ui.widgets import QUIET


def build(ctx: Ctx) -> ScreeningHandlers:
    """Lay the screen out in the current Blocks and wire it; the handlers it wired."""
    h = ScreeningHandlers(ctx.studio, ctx.jobs)
    notes_state = gr.State([])
    with gr.Row():
        with gr.Column(scale=3):
            film = gr.Video(label="Film", elem_id="screening_film", interactive=False, elem_classes=["film-player"])
            cc_toggle("screening_film")
            film_strip = strip("screening_strip", hearing(h.studio))
            gr.Markdown("### Your notes (the refiner follows them)")
            note_text = gr.Textbox(label="Note", lines=2, elem_id="note_text", placeholder="Make the storm scarier…")
            with gr.Row():
                note_shot = gr.Dropdown(
                    label="About", choices=[WHOLE_FILM], value=WHOLE_FILM, elem_id="note_shot", allow_custom_value=True
                )
                add_note_btn = gr.Button("Add note", elem_id="add_note_btn")
            earlier, message = _notes_list(ctx, h, notes_state)
        with gr.Column(scale=3):
            with gr.Row():
                critique_scene = scenes.picker("critique_scene", "Watch")
                critique_btn = gr.Button("Run critics", variant="primary", elem_id="critique_btn", scale=3)
                stop_btn = gr.Button("Stop", elem_id="critique_stop_btn", scale=1)
            progress = gr.HTML(value="", elem_id="critique_progress", js_on_load=None)
            diversity = gr.Markdown(elem_id="diversity")
            cards = gr.HTML(value="", elem_id="critic_cards", js_on_load=SEEK_JS, css_template=CARD_CSS)
    outs = [progress, film, film_strip, cards, diversity, earlier, notes_state, note_shot, message]
    version = [ctx.pid, ctx.version]
    ctx.tabs["screening"].select(guard(h.load), version, outs, api_name="screening").then(
        guard(h.load_diversity), version, diversity, **QUIET
    ).then(guard(scenes.refresh(h.studio)), [*version, critique_scene], critique_scene, **QUIET)
    ev = critique_btn.click(
        guard(h.critique),
        [*version, critique_scene],
        [progress, cards, diversity],
        api_name="critique",
        show_progress="hidden",
    ).then(guard(h.load_diversity), version, diversity, **QUIET)
    ctx.refresh_status(ev)
    stop_btn.click(guard(h.stop), ctx.pid, progress, **QUIET)
    add_note_btn.click(
        guard(h.add_note), [*version, note_text, note_shot], [note_text, notes_state, message], api_name="add_note"
    )
    return h


def _notes_list(ctx: Ctx, h: ScreeningHandlers, notes_state: gr.State) -> tuple[gr.HTML, gr.Markdown]:
    """The version's notes, each editable and deletable, then earlier versions' notes; (earlier, the message)."""

    @gr.render(inputs=[notes_state])
    def show_notes(notes):
        if not notes:
            gr.Markdown("_No notes on this version yet._", elem_id="notes_list")
            return
        with gr.Column(elem_id="notes_list"):
            for i, n in enumerate(notes, 1):
                with gr.Row(equal_height=True):
                    text = gr.Textbox(
                        value=n["text"],
                        label=n["about"],
                        lines=1,
                        scale=6,
                        interactive=True,
                        elem_id=f"note_{i}_text",
                        key=f"nt{n['id']}",
                    )
                    save = gr.Button("Save", scale=1, min_width=60, elem_id=f"note_{i}_save", key=f"ns{n['id']}")
                    delete = gr.Button("Delete", scale=1, min_width=60, elem_id=f"note_{i}_delete", key=f"nd{n['id']}")
                save.click(
                    guard(lambda pid, v, t, nid=n["id"]: h.edit_note(pid, v, nid, t)),
                    [ctx.pid, ctx.version, text],
                    [notes_state, message],
                    api_visibility="private",
                )
                delete.click(
                    guard(lambda pid, v, nid=n["id"]: h.delete_note(pid, v, nid)),
                    [ctx.pid, ctx.version],
                    [notes_state, message],
                    api_visibility="private",
                )

    earlier = gr.HTML(elem_id="earlier_notes", js_on_load=None)
    message = gr.Markdown(elem_id="notes_message")
    return earlier, message
