"""The Storyboard's layout and wiring: its components (elem_ids the browser tests select by), then each event bound
to a `StoryboardHandlers` method."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from app.ui.common import Ctx, guard
from app.ui.screens.storyboard.board import ALL_SCENES, CONFIRM_DRAW, TRACK_TYPES, playing
from app.ui.screens.storyboard.handlers import StoryboardHandlers
from app.ui.widgets import QUIET, TIERS, kit_head, tier_switch

HERE = Path(__file__).parent
# the scene picker shows the chosen scene's cards only (in the page: nothing to ask the server)
SHOW_SCENE = """(scene) => {
      document.querySelectorAll('#board .scene').forEach((s) => {
        s.hidden = scene !== '(all scenes)' && s.dataset.scene !== scene; });
      return []; }"""


@dataclass
class Parts:
    """The Storyboard's components."""

    scene_pick: gr.Dropdown
    save: gr.Button
    keyframes_btn: gr.Button
    screen_btn: gr.Button
    stop: gr.Button
    board_tier: gr.Radio
    board_tier_note: gr.Markdown
    stills: gr.Markdown
    message: gr.Markdown
    progress: gr.HTML
    job_box: gr.Textbox
    editor: gr.HTML
    clip: gr.Video
    options: list  # the film options' controls, in `film_options`' order
    film_track_label: gr.Markdown
    film_track_btn: gr.UploadButton
    film_track_clear: gr.Button


def build(ctx: Ctx) -> StoryboardHandlers:
    """Lay the screen out in the current Blocks and wire it; the handlers it wired."""
    h = StoryboardHandlers(ctx.studio, ctx.jobs)
    _wire(ctx, _layout(h), h)
    return h


def _layout(h: StoryboardHandlers) -> Parts:
    with gr.Row(equal_height=True):
        scene_pick = gr.Dropdown([ALL_SCENES], value=ALL_SCENES, label="Scene", elem_id="scene_filter", scale=2)
        save = gr.Button("Save storyboard (new version)", variant="primary", elem_id="shots_save_btn", scale=2)
        keyframes_btn = gr.Button("✦ Draw keyframes", elem_id="keyframes_btn", scale=2)
        screen_btn = gr.Button("Screen the keyframes", elem_id="screen_keyframes_btn", scale=2)
        stop = gr.Button("Stop", elem_id="shot_stop_btn", scale=1)
        board_tier = tier_switch("board_tier")  # the tier ⟳ Render shot renders at (Finalize: always final)
    board_tier_note = gr.Markdown(elem_id="board_tier_note", elem_classes="hint")
    stills = gr.Markdown(elem_id="stills_label", elem_classes="hint")
    message = gr.Markdown(elem_id="shots_message")
    progress = gr.HTML(value="", elem_id="shot_progress", js_on_load=None)
    job_box = gr.Textbox(visible=False, elem_id="board_job")  # the job the progress line follows (for Stop)
    with gr.Row():
        with gr.Column(scale=4):
            editor = gr.HTML(
                value=None,
                html_template="<div class='sb'></div>",
                elem_id="board",
                js_on_load=(HERE / "storyboard.js").read_text(),
                head=kit_head(),
                css_template=(HERE / "storyboard.css").read_text(),
                server_functions=[playing(h.studio)],
            )
        with gr.Column(scale=1, min_width=260):
            clip = gr.Video(label="Shot", elem_id="board_clip", interactive=False, autoplay=True)
            with gr.Accordion("Film options", open=True):
                film = _film_options()
    return Parts(
        scene_pick, save, keyframes_btn, screen_btn, stop, board_tier, board_tier_note, stills, message, progress,
        job_box, editor, clip, **film,
    )  # fmt: skip


def _film_options() -> dict:
    """The film options' controls (and the whole film's track), as `Parts` fields."""
    title_card = gr.Checkbox(label="Open with a title card", elem_id="opt_title_card")
    title_seconds = gr.Slider(0.5, 10, value=2, step=0.5, label="Title card seconds", elem_id="opt_title_seconds")
    crossfade = gr.Slider(
        0, 2, value=0, step=0.25, label="Crossfade between shots (s; 0 = hard cuts)", elem_id="opt_crossfade"
    )
    burn = gr.Checkbox(label="Burn subtitles into the picture", elem_id="opt_burn")
    gr.Markdown(
        "A title card, crossfades or burned-in subtitles re-encode the film once; clips are reused.",
        elem_classes="hint",
    )
    loudness = gr.Radio(
        [("web (-14 LUFS)", "web"), ("EBU R128 (-23 LUFS)", "ebu")],
        value="web",
        label="Loudness",
        elem_id="opt_loudness",
    )
    music_level = gr.Slider(-60, 12, value=-8, step=1, label="Music level (dB)", elem_id="opt_music")
    effects_level = gr.Slider(-60, 12, value=-14, step=1, label="Effects level (dB)", elem_id="opt_effects")
    ducking = gr.Checkbox(value=True, label="Duck the music under speech", elem_id="opt_ducking")
    gr.Markdown(
        "Sound: voices, the temp score and temp effects are mixed again; clips are reused.",
        elem_classes="hint",
    )
    film_track_label = gr.Markdown(elem_id="film_track_label")  # the twin of `chief music P --film FILE`
    with gr.Row(equal_height=True):
        film_track_btn = gr.UploadButton(
            "♫ Track for the whole film",
            file_types=["audio", *TRACK_TYPES],
            elem_id="film_track_btn",
            size="sm",
            scale=1,
        )
        film_track_clear = gr.Button("✕", elem_id="film_track_clear", size="sm", scale=0, min_width=40, visible=False)
    captions = gr.Radio(
        [("SDH: speakers, [sounds] and [music]", "sdh"), ("plain: the lines", "plain")],
        value="sdh",
        label="Captions",
        elem_id="opt_captions",
    )
    described = gr.Checkbox(
        label="Audio description: a second audio track with each shot's description voiced between lines",
        elem_id="opt_described",
    )
    channels = gr.Radio(  # the twin of `chief film P --channels`
        [("stereo: dialogue centred, music and effects wide", "stereo"), ("mono: one channel", "mono")],
        value=None,
        label="Mix",
        elem_id="opt_channels",
    )
    default_tier = gr.Radio(  # the twin of `chief film P --tier`
        TIERS, value=None, label="Render tier by default (Render and ⟳ Render shot)", elem_id="opt_tier"
    )
    options = [title_card, title_seconds, crossfade, burn, loudness, music_level, effects_level, ducking]
    return {
        "options": [*options, captions, described, default_tier, channels],
        "film_track_label": film_track_label,
        "film_track_btn": film_track_btn,
        "film_track_clear": film_track_clear,
    }


def _wire(ctx: Ctx, p: Parts, h: StoryboardHandlers) -> None:
    board = [ctx.pid, ctx.version, p.editor]
    board_outs = [p.progress, p.job_box, ctx.version, p.editor, p.message, p.clip]
    film_track_outs = [p.film_track_label, p.film_track_clear]
    tier_outs = [p.board_tier, p.board_tier_note]
    tab = ctx.tabs["storyboard"]
    tab.select(guard(h.default_tier), [ctx.pid, ctx.version], tier_outs, **QUIET)
    default_tier = p.options[-2]  # the film options' own tier (see `_film_options`): shown as the switch is
    p.board_tier.input(
        guard(h.keep_tier), [*board, p.board_tier], [ctx.version, p.editor, default_tier, p.board_tier_note], **QUIET
    )
    tab.select(
        guard(h.load),
        [ctx.pid, ctx.version],
        [p.editor, p.scene_pick, p.message, *p.options, p.stills, p.progress, p.job_box, ctx.version, p.clip]
        + film_track_outs,
        api_name="load_storyboard",
        show_progress="hidden",
    )
    p.save.click(
        guard(h.save_board), [*board, *p.options], [ctx.version, p.editor, p.message], api_name="save_storyboard"
    ).then(guard(h.default_tier), [ctx.pid, ctx.version], tier_outs, **QUIET)  # a new default tier moves the switch
    p.film_track_btn.upload(guard(h.film_track), [*board, p.film_track_btn], board_outs + film_track_outs, **QUIET)
    p.film_track_clear.click(guard(h.film_track), board, board_outs + film_track_outs, **QUIET)
    p.editor.play(guard(h.play), board, p.clip, api_visibility="private")
    p.editor.scene_track(guard(h.scene_track), board, board_outs, **QUIET)
    p.editor.render_shot(guard(h.render_shot), [*board, p.board_tier], board_outs, **QUIET)
    p.editor.card(guard(h.card_action), board, board_outs, **QUIET)
    # the status bar's render line counts the film's drafts
    ctx.refresh_status(p.editor.finalize(guard(h.finalize), board, board_outs, **QUIET))
    p.keyframes_btn.click(
        guard(h.draw_keyframes),
        [*board, p.scene_pick],
        board_outs,
        api_name="draw_keyframes",
        show_progress="hidden",
        js=CONFIRM_DRAW,
    )
    p.screen_btn.click(
        guard(h.screen_keyframes),
        [ctx.pid, ctx.version],
        board_outs,
        api_name="screen_keyframes",
        show_progress="hidden",
    )
    p.stop.click(guard(h.stop_job), [ctx.pid, p.job_box], p.progress, **QUIET)
    p.scene_pick.change(None, p.scene_pick, None, js=SHOW_SCENE)
