"""Settings: what is making the film (in words), the picture (size or aspect, frame rate: per project, a new
version), how shots are rendered (steps, guidance, seeds: for everyone on this server), the model folders, the
LLM endpoint and its limits (for everyone on this server), the critics' panel and custom personas.

The API key lives only in this process's memory: it is never echoed back to the page, written to the database
or logged. Who may change the endpoint and where the key may go is decided in app/agent_settings.py; this
screen only says whether the request came from the app's own page. These settings are the server's, and
the screen says so."""

from __future__ import annotations

import gradio as gr

from app.agent_settings import SCOPE_NOTE, AgentSettings
from app.config import redact_url
from app.ui import discovered
from app.ui.common import Ctx, guard, md, need_project, ver
from app.ui.security import same_origin

AGENT_MODES = ["auto", "llm", "offline"]
LABELS = {
    "backend_label": "Making the pictures",
    "model": "Video model",
    "images_label": "Making the stills (keyframes, references)",
    "agents": "Critics, refiner and planner",
    "llm_endpoint": "LLM endpoint",
    "critic_model": "Critic model",
    "refiner_model": "Refiner model",
    "planner_model": "Planner model",
    "embed_model": "Consistency (image embeddings)",
}
MODEL_DEFAULT = "the model's own size"
SIZES = {
    MODEL_DEFAULT: (None, None),
    "16:9 · 832×480": (832, 480),
    "16:9 · 1280×720": (1280, 720),
    "9:16 · 480×832 (phone)": (480, 832),
    "1:1 · 512×512": (512, 512),
    "4:3 · 640×480": (640, 480),
    "2.39:1 · 1216×512 (scope)": (1216, 512),
}
SEEDS = {"random": "new shots get a fresh random seed", "fixed": "new shots start from seed 0"}


def status_md(studio) -> str:
    """What is active, labelled for people (never a raw setting name, never the key)."""
    st = studio.status().model_dump()
    rows = [(LABELS[k], st[k]) for k in LABELS if st.get(k)]
    key = "set for this server session (hidden)" if studio.config.api_key else "not set"
    return "\n".join([f"- **{md(k)}**: {md(v)}" for k, v in rows] + [f"- **API key**: {key}"])


def models_text(c) -> str:
    """The model folders the studio started with, each stated (none, honestly, when unset)."""
    rows = [
        ("Backend", c.backend),
        ("Video model", c.model or "none (the animatic needs no weights)"),
        ("Image-to-video model (continuity)", c.i2v_model or "none"),
        ("VACE model (references and keyframes into the video)", c.vace_model or "none"),
        (
            "Image model (keyframes, references)",
            c.image_model
            or (
                "none (the animatic draws keyframes)"
                if c.backend == "animatic"
                else "none (keyframes and references can only be uploaded)"
            ),
        ),
        ("Embedding model (character consistency)", c.embed_model or "none (consistency is not measured)"),
    ]
    return (
        "\n".join(f"- **{k}**: {md(v)}" for k, v in rows)
        + "\n\nModel folders are chosen when the studio starts (`chief serve --help`, docs/settings.md)."
    )


def size_label(board) -> str:
    for label, wh in SIZES.items():
        if wh == (board.width, board.height):
            return label
    return f"custom · {board.width}×{board.height}"


def persona_choices(studio, v) -> list[tuple[str, str]]:
    return [
        (p.name + ("" if p.source == "builtin" else f" ({p.source})"), pid) for pid, p in studio.personas_of(v).items()
    ]


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    status = gr.Markdown(elem_id="settings_status")
    message = gr.Markdown(elem_id="settings_message")
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
    with gr.Accordion("Rendering (for everyone on this server, until it restarts)", open=True):
        with gr.Row():
            steps = gr.Number(
                label="Denoising steps (empty: the model's default)",
                precision=0,
                minimum=1,
                maximum=1000,
                elem_id="render_steps",
            )
            guidance = gr.Number(
                label="Guidance (empty: the model's default)", minimum=0, maximum=100, elem_id="render_guidance"
            )
            seeds = gr.Radio([(t, k) for k, t in SEEDS.items()], value="random", label="Seeds", elem_id="seed_policy")
            render_btn = gr.Button("Apply", elem_id="render_settings_btn")
        models = gr.Markdown(elem_id="model_folders")
    with gr.Accordion("LLM agents (for everyone on this server)", open=False):
        gr.Markdown(SCOPE_NOTE, elem_id="llm_scope_note")
        with gr.Row():
            servers = gr.HTML(
                elem_id="discovered_servers", js_on_load=discovered.SERVERS_JS, css_template=discovered.CSS
            )
            look_btn = gr.Button("Look again", elem_id="discover_btn", scale=0, min_width=110, size="sm")
        with gr.Row():
            base_url = gr.Textbox(label="Endpoint (OpenAI-compatible base URL)", elem_id="llm_base_url")
            api_key = gr.Textbox(label="API key (never shown or stored)", type="password", elem_id="llm_api_key")
            mode = gr.Dropdown(AGENT_MODES, value="auto", label="Agents", elem_id="agent_mode")
        with gr.Row():
            critic = gr.Textbox(label="Critic model", elem_id="critic_model")
            refiner = gr.Textbox(label="Refiner model", elem_id="refiner_model")
            planner = gr.Textbox(label="Planner model", elem_id="planner_model")
        with gr.Row():
            timeout = gr.Number(label="Seconds per request", minimum=1, maximum=3600, elem_id="llm_timeout")
            retries = gr.Number(label="Retries", precision=0, minimum=0, maximum=10, elem_id="llm_retries")
            concurrency = gr.Number(
                label="Requests at once", precision=0, minimum=1, maximum=64, elem_id="llm_concurrency"
            )
            frames = gr.Number(
                label="Frames a critic sees per shot", precision=0, minimum=1, maximum=24, elem_id="frames_per_shot"
            )
            detail = gr.Dropdown(["low", "high", "auto"], label="Image detail", elem_id="image_detail")
        with gr.Row():  # what the endpoint allows: requests are sized to these (a long film is watched in parts)
            images = gr.Number(
                label="Images per request", precision=0, minimum=1, maximum=256, elem_id="llm_max_images"
            )
            output = gr.Number(
                label="Output tokens per answer",
                precision=0,
                minimum=64,
                maximum=200_000,
                elem_id="llm_max_output_tokens",
            )
            context = gr.Number(
                label="Context tokens", precision=0, minimum=256, maximum=10_000_000, elem_id="llm_context_tokens"
            )
            video = gr.Checkbox(
                label="Critics watch clips (video input, e.g. vLLM with Qwen2.5-VL)", elem_id="llm_critic_video"
            )
        apply_btn = gr.Button("Apply", elem_id="apply_llm_btn")
    gr.Markdown("### Critics' panel")
    panel = gr.CheckboxGroup(
        choices=list(studio.builtin_personas()), label="Personas watching this version", elem_id="panel_pick"
    )
    panel_btn = gr.Button("Save panel (new version)", elem_id="panel_save_btn")
    gr.Markdown("### Custom persona")
    persona_pick = gr.Dropdown(choices=[], label="Start from", elem_id="persona_pick", allow_custom_value=True)
    persona_yaml = gr.Code(language="yaml", label="Persona (YAML)", interactive=True, elem_id="persona_yaml")
    persona_btn = gr.Button("Save persona to this project (new version)", elem_id="persona_save_btn")
    builder = _builder(ctx, persona_yaml)

    def servers_md() -> str:
        ports = discovered.probed_ports(studio.config)
        return discovered.servers_html(discovered.discover(ports=ports), ports, studio.config)

    @guard
    def use_server(evt: gr.EventData):
        """A discovered model, one click: the endpoint and the three models filled in, no key (it belonged to
        the endpoint before), then applied by `apply` like the Apply button."""
        server, model = discovered.chosen(getattr(evt, "_data", None), discovered.probed_ports(studio.config))
        return server.base_url, "", model, model, model, "auto"

    @guard
    def load(pid, v):
        c = studio.config
        fields = (
            redact_url(c.llm_base_url),
            "",
            c.critic_model,
            c.refiner_model,
            c.planner_model,
            c.agents or "auto",
            c.llm_timeout,
            c.llm_max_retries,
            c.llm_concurrency,
            c.frames_per_shot,
            c.image_detail,
            c.llm_max_images,
            c.llm_max_output_tokens,
            c.llm_context_tokens,
            c.llm_critic_video,
            c.steps,
            c.guidance,
            c.seed_policy,
            models_text(c),
            servers_md(),
        )
        if not pid:
            return (
                status_md(studio),
                *fields,
                gr.CheckboxGroup(choices=[], value=[]),
                gr.Dropdown(choices=[]),
                MODEL_DEFAULT,
                None,
            )
        version = studio.version(pid, ver(v))
        choices = persona_choices(studio, version)
        b = version.storyboard
        return (
            status_md(studio),
            *fields,
            gr.CheckboxGroup(choices=choices, value=version.panel),
            gr.Dropdown(choices=choices, value=None),
            size_label(b),
            b.fps,
        )

    @guard
    def apply(url, key, c, r, p, m, t, rt, cc, fr, dt, im, out, ctxt, vid, request: gr.Request):
        other = {
            "llm_timeout": t,
            "llm_max_retries": rt,
            "llm_concurrency": cc,
            "frames_per_shot": fr,
            "image_detail": dt,
            "llm_max_images": im,
            "llm_max_output_tokens": out,
            "llm_context_tokens": ctxt,
            "llm_critic_video": bool(vid),
        }
        settings = AgentSettings(
            base_url=url or "",
            api_key=key or "",
            critic_model=c or "",
            refiner_model=r or "",
            planner_model=p or "",
            mode=m or "auto",
            other=other,
        )
        notice = studio.set_agent_settings(settings, from_own_page=same_origin(request))
        return "", status_md(studio), md(notice)

    @guard
    def apply_render(s, g, policy):
        from app.config import with_overrides

        studio.reconfigure(
            with_overrides(
                studio.config,
                steps=int(s) if s else None,
                guidance=float(g) if g not in (None, "") else None,
                seed_policy=policy,
            )
        )
        return (
            "Rendering settings applied for everyone on this server until it restarts: changed settings make new clips."
        )

    @guard
    def save_picture(pid, v, label, rate):
        pid = need_project(pid)
        base = studio.version(pid, ver(v))
        if label not in SIZES:
            raise gr.Error("choose one of the sizes")
        w, h = SIZES[label]
        nv, made = studio.set_picture(pid, w, h, int(rate) if rate else None, base.number)
        if not made:
            return gr.skip(), f"v{base.number} already has this picture: no new version."
        return nv.number, f"v{nv.number}: {label}, {int(rate) if rate else 'the model’s'} fps. Render to see it."

    @guard
    def save_panel(pid, v, ids):
        nv = studio.set_panel(need_project(pid), list(ids or []), ver(v))
        names = studio.personas_of(nv)
        return nv.number, f"v{nv.number}: the panel is now {md(', '.join(names[i].name for i in nv.panel))}."

    @guard
    def pick_persona(pid, v, persona_id):
        from agents.personas import persona_to_yaml

        if not (pid and persona_id):
            return ""
        version = studio.version(pid, ver(v))
        known = studio.personas_of(version)
        if persona_id not in known:
            raise ValueError(f"v{version.number} has no persona {persona_id!r}: choose one from the list")
        return persona_to_yaml(known[persona_id])

    @guard
    def save_persona(pid, v, text):
        from agents.personas import MAX_PERSONA_BYTES
        from storage.parsing import parse_yaml
        from storage.schema import Persona

        pid = need_project(pid)
        data = parse_yaml(text or "", "persona YAML", max_bytes=MAX_PERSONA_BYTES)  # a ParseError: one line
        if not isinstance(data, dict):
            raise ValueError("persona YAML must be a mapping with id, name and who")
        data.setdefault("source", "custom")
        nv = studio.save_persona(pid, Persona.model_validate(data), ver(v))
        return nv.number, f"v{nv.number}: persona {md(data.get('name') or data.get('id'))} saved and on the panel."

    llm = [
        base_url,
        api_key,
        critic,
        refiner,
        planner,
        mode,
        timeout,
        retries,
        concurrency,
        frames,
        detail,
        images,
        output,
        context,
        video,
    ]
    ctx.tabs["settings"].select(
        load,
        [ctx.pid, ctx.version],
        [status, *llm, steps, guidance, seeds, models, servers, panel, persona_pick, size, fps],
        api_name="settings",
    )
    ev = apply_btn.click(apply, llm, [api_key, status, message], api_visibility="private")
    ctx.refresh_status(ev)
    ev = servers.use(use_server, None, [base_url, api_key, critic, refiner, planner, mode], api_visibility="private")
    ctx.refresh_status(
        ev.success(apply, llm, [api_key, status, message], api_visibility="private").success(
            lambda: servers_md(), None, servers, api_visibility="private"
        )
    )
    look_btn.click(guard(servers_md), None, servers, api_visibility="private")
    render_btn.click(apply_render, [steps, guidance, seeds], message, api_visibility="private")
    picture_btn.click(save_picture, [ctx.pid, ctx.version, size, fps], [ctx.version, message], api_name="set_picture")
    panel_btn.click(save_panel, [ctx.pid, ctx.version, panel], [ctx.version, message], api_name="set_panel")
    persona_pick.change(pick_persona, [ctx.pid, ctx.version, persona_pick], persona_yaml, api_visibility="private")
    persona_btn.click(
        save_persona, [ctx.pid, ctx.version, persona_yaml], [ctx.version, message], api_name="save_persona"
    )
    if builder is not None:
        builder()


def _builder(ctx: Ctx, persona_yaml):
    """A persona builder from pasted audience comments, when agents/persona_builder.py is installed.
    Returns a function that wires its events (called once the YAML editor exists), or None."""
    import importlib.util

    if importlib.util.find_spec("agents.persona_builder") is None:
        return None
    studio = ctx.studio
    with gr.Accordion("Build a persona from one viewer's comments", open=False):
        comments = gr.Textbox(
            label="Comments (one per line; names, handles, links are stripped)", lines=6, elem_id="builder_comments"
        )
        name = gr.Textbox(label="Viewer name", value="Viewer", elem_id="builder_name")
        build_btn = gr.Button("Build persona (into the editor above)", elem_id="builder_btn")

    @guard
    def build_from_comments(text, viewer):
        from agents.comments import comments_from_text_apart
        from agents.personas import persona_to_yaml

        comments = comments_from_text_apart(text or "")  # stripped in a worker process, not the server's
        return persona_to_yaml(studio.build_persona(comments, viewer or "Viewer").persona)

    def wire():
        build_btn.click(build_from_comments, [comments, name], persona_yaml, api_name="build_persona")

    return wire
