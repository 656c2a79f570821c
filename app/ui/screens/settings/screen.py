"""The Settings screen's layout and wiring: its fields (elem_ids the browser tests select by), then each event bound
to a `SettingsHandlers` method."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import gradio as gr

from app.agent_settings import SCOPE_NOTE
from app.ui.common import Ctx, guard
from app.ui.screens.settings import discovered
from app.ui.screens.settings.handlers import SettingsHandlers
from app.ui.screens.settings.values import (
    AGENT_MODES,
    MODEL_DEFAULT,
    NEW_PERSONA,
    PERSONA_FORM,
    SEEDS,
    SIZES,
    TASTES,
    TIPS_JS,
    tips_html,
)
from app.ui.widgets import PRIVATE, llm_offer_md


@dataclass
class Parts:
    """The Settings screen's components."""

    status: gr.Markdown
    message: gr.Markdown
    size: gr.Dropdown
    fps: gr.Number
    picture_btn: gr.Button
    steps: gr.Number
    guidance: gr.Number
    seeds: gr.Radio
    render_btn: gr.Button
    models: gr.Markdown
    servers: gr.HTML
    look_btn: gr.Button
    llm: list  # the LLM's fields, in `SettingsHandlers.apply`'s order
    apply_btn: gr.Button
    panel: gr.CheckboxGroup
    panel_btn: gr.Button
    persona_pick: gr.Dropdown
    editing: gr.State
    form: list  # the persona form's fields: PERSONA_FORM's, then TASTES'
    persona_editor: gr.Column
    persona_form_btn: gr.Button
    persona_yaml: gr.Code
    persona_btn: gr.Button


def build(ctx: Ctx) -> SettingsHandlers:
    """Lay the screen out in the current Blocks and wire it; the handlers it wired."""
    h = SettingsHandlers(ctx.studio)
    status = gr.Markdown(elem_id="settings_status")
    gr.HTML(tips_html(), elem_id="settings_tips", js_on_load=TIPS_JS, padding=False)
    message = gr.Markdown(elem_id="settings_message")
    picture = _picture()
    rendering = _rendering()
    llm = _llm(h)
    people = _panel_and_personas(h)
    p = Parts(status, message, *picture, *rendering, *llm, *people)
    _wire(ctx, p, h)
    _builder(h, p.persona_yaml)
    return h


def _picture() -> tuple:
    with gr.Accordion("The picture (this project: saving makes a new version)", open=True):
        with gr.Row():
            size = gr.Dropdown(
                list(SIZES),
                value=MODEL_DEFAULT,
                label="Size and aspect",
                elem_id="picture_size",
                allow_custom_value=True,
            )
            fps = gr.Number(
                label="Frames per second (empty: the model's own)",
                precision=0,
                minimum=1,
                maximum=60,
                elem_id="picture_fps",
            )
            picture_btn = gr.Button("Save picture settings", elem_id="picture_save_btn")
    return size, fps, picture_btn


def _rendering() -> tuple:
    with gr.Accordion("How shots are made (for everyone on this server, until it restarts)", open=True):
        with gr.Row():
            steps = gr.Number(
                label="Quality steps (more: finer and slower; empty: the model's own)",
                precision=0,
                minimum=1,
                maximum=1000,
                elem_id="render_steps",
            )
            guidance = gr.Number(
                label="How closely the picture follows the words (empty: the model's own)",
                minimum=0,
                maximum=100,
                elem_id="render_guidance",
            )
            seeds = gr.Radio(
                [(t, k) for k, t in SEEDS.items()], value="random", label="New shots", elem_id="seed_policy"
            )
            render_btn = gr.Button("Apply", elem_id="render_settings_btn")
        models = gr.Markdown(elem_id="model_folders")
    return steps, guidance, seeds, render_btn, models


def _llm(h: SettingsHandlers) -> tuple:
    with gr.Accordion("The AI model behind the critics, refiner and planner (for everyone on this server)", open=False):
        gr.Markdown(SCOPE_NOTE, elem_id="llm_scope_note")
        gr.Markdown(llm_offer_md(h.studio.config), elem_id="llm_offer_settings")
        with gr.Row():
            servers = gr.HTML(
                elem_id="discovered_servers", js_on_load=discovered.SERVERS_JS, css_template=discovered.CSS
            )
            look_btn = gr.Button("Look again", elem_id="discover_btn", scale=0, min_width=110, size="sm")
        with gr.Row():
            base_url = gr.Textbox(
                label="Where it runs (an address like http://127.0.0.1:11434/v1)", elem_id="llm_base_url"
            )
            api_key = gr.Textbox(
                label="Its key, if it asks for one (never shown or stored)", type="password", elem_id="llm_api_key"
            )
            mode = gr.Dropdown(
                AGENT_MODES, value="auto", label="Who critiques, revises and plans", elem_id="agent_mode"
            )
        with gr.Row():
            critic = gr.Textbox(label="Model for the critics", elem_id="critic_model")
            refiner = gr.Textbox(label="Model for the refiner", elem_id="refiner_model")
            planner = gr.Textbox(label="Model for the planner", elem_id="planner_model")
        limits = _llm_limits()
        apply_btn = gr.Button("Apply", elem_id="apply_llm_btn")
    return servers, look_btn, [base_url, api_key, critic, refiner, planner, mode, *limits], apply_btn


def _llm_limits() -> list:
    """The LLM's limits: timeout, retries, concurrency, frames, detail, then what the endpoint allows (requests are
    sized to these: a long film is watched in parts) and what the critics take in."""
    with gr.Row():
        timeout = gr.Number(label="Seconds to wait for an answer", minimum=1, maximum=3600, elem_id="llm_timeout")
        retries = gr.Number(
            label="Tries again after a failure", precision=0, minimum=0, maximum=10, elem_id="llm_retries"
        )
        concurrency = gr.Number(label="Requests at once", precision=0, minimum=1, maximum=64, elem_id="llm_concurrency")
        frames = gr.Number(
            label="Pictures a critic sees per shot", precision=0, minimum=1, maximum=24, elem_id="frames_per_shot"
        )
        detail = gr.Dropdown(
            [("low (cheaper)", "low"), ("high", "high"), ("the model decides", "auto")],
            label="Picture detail sent",
            elem_id="image_detail",
        )
    with gr.Row():
        images = gr.Number(label="Pictures per request", precision=0, minimum=1, maximum=256, elem_id="llm_max_images")
        output = gr.Number(
            label="Longest answer (tokens)", precision=0, minimum=64, maximum=200_000, elem_id="llm_max_output_tokens"
        )
        context = gr.Number(
            label="How much it reads at once (tokens)",
            precision=0,
            minimum=256,
            maximum=10_000_000,
            elem_id="llm_context_tokens",
        )
        video = gr.Checkbox(
            label="Critics watch the clips as video (a model that takes video, e.g. Qwen2.5-VL)",
            elem_id="llm_critic_video",
        )
        audio = gr.Checkbox(
            label="Critics hear the film's sound itself (a model that takes audio, e.g. GPT-4o audio, Qwen2.5-Omni);"
            " without it they read what is said, played and measured",
            elem_id="llm_critic_audio",
        )
    return [timeout, retries, concurrency, frames, detail, images, output, context, video, audio]


def _panel_and_personas(h: SettingsHandlers) -> tuple:
    gr.Markdown("### Critics' panel")
    panel = gr.CheckboxGroup(
        choices=[(p.name, k) for k, p in h.studio.builtin_personas().items()],
        label="Who watches this version",
        elem_id="panel_pick",
    )
    panel_btn = gr.Button("Save panel (new version)", elem_id="panel_save_btn")
    gr.Markdown("### A viewer of your own")
    persona_pick = gr.Dropdown(
        choices=[], label="Start from a viewer (or a new one)", elem_id="persona_pick", allow_custom_value=True
    )
    editing = gr.State(NEW_PERSONA)  # the persona the form edits: saving keeps its id (it replaces it here)
    form = []
    # shown once a viewer is picked, with that viewer in it: nothing typed before the pick's answer is overwritten
    with gr.Column(visible=False, elem_id="persona_editor") as persona_editor:
        with gr.Group(elem_id="persona_form"):
            for key, (label, lines) in PERSONA_FORM.items():
                form.append(gr.Textbox(label=label, lines=lines, max_lines=8, elem_id=f"persona_{key}"))
            with gr.Accordion("Their tastes (0: not at all, 1: very much)", open=False):
                with gr.Row():
                    for key, label in TASTES.items():
                        if key == "shot_seconds":
                            form.append(gr.Slider(1, 20, value=5, step=0.5, label=label, elem_id=f"taste_{key}"))
                        else:
                            form.append(gr.Slider(0, 1, value=0.5, step=0.1, label=label, elem_id=f"taste_{key}"))
        persona_form_btn = gr.Button("Save this viewer to the film (new version)", elem_id="persona_form_save_btn")
    with gr.Accordion("Advanced: the viewer as YAML", open=False, elem_id="persona_advanced"):
        persona_yaml = gr.Code(language="yaml", label="Persona (YAML)", interactive=True, elem_id="persona_yaml")
        persona_btn = gr.Button("Save persona to this project (new version)", elem_id="persona_save_btn")
    return panel, panel_btn, persona_pick, editing, form, persona_editor, persona_form_btn, persona_yaml, persona_btn


def _wire(ctx: Ctx, p: Parts, h: SettingsHandlers) -> None:
    ctx.tabs["settings"].select(
        guard(h.load),
        [ctx.pid, ctx.version],
        [p.status, *p.llm, p.steps, p.guidance, p.seeds, p.models, p.servers, p.panel, p.persona_pick]
        + [p.persona_editor, p.size, p.fps],
        api_name="settings",
    )
    applied = [p.llm[1], p.status, p.message]  # the key field emptied, what is active, the notice
    ctx.refresh_status(p.apply_btn.click(guard(h.apply), p.llm, applied, **PRIVATE))
    ev = p.servers.use(guard(h.use_server), None, p.llm[:6], **PRIVATE)
    ctx.refresh_status(
        ev.success(guard(h.apply), p.llm, applied, **PRIVATE).success(guard(h.servers_md), None, p.servers, **PRIVATE)
    )
    p.look_btn.click(guard(h.servers_md), None, p.servers, **PRIVATE)
    p.render_btn.click(guard(h.apply_render), [p.steps, p.guidance, p.seeds], p.message, **PRIVATE)
    version = [ctx.pid, ctx.version]
    p.picture_btn.click(
        guard(h.save_picture), [*version, p.size, p.fps], [ctx.version, p.message], api_name="set_picture"
    )
    p.panel_btn.click(guard(h.save_panel), [*version, p.panel], [ctx.version, p.message], api_name="set_panel")
    p.persona_pick.input(  # a viewer the creator picks; the page setting the list (load, save) fetches nothing
        guard(h.pick_persona),
        [*version, p.persona_pick],
        [p.persona_yaml, p.editing, *p.form, p.persona_editor],
        **PRIVATE,
    )
    p.persona_form_btn.click(
        guard(h.save_persona_form),
        [*version, p.editing, *p.form],
        [ctx.version, p.message, p.persona_pick, p.editing, *p.form],
        api_name="save_persona_form",
    )
    p.persona_btn.click(
        guard(h.save_persona), [*version, p.persona_yaml], [ctx.version, p.message], api_name="save_persona"
    )


def _builder(h: SettingsHandlers, persona_yaml) -> None:
    """A persona builder from pasted audience comments (into the YAML editor), when agents/persona_builder.py is
    installed."""
    if importlib.util.find_spec("agents.persona_builder") is None:
        return
    with gr.Accordion("Build a persona from one viewer's comments", open=False):
        comments = gr.Textbox(
            label="Comments (one per line; names, handles, links are stripped)", lines=6, elem_id="builder_comments"
        )
        name = gr.Textbox(label="Viewer name", value="Viewer", elem_id="builder_name")
        build_btn = gr.Button("Build persona (into the editor above)", elem_id="builder_btn")
    build_btn.click(guard(h.build_from_comments), [comments, name], persona_yaml, api_name="build_persona")
