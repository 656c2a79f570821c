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
from app.ui.common import Ctx, esc, guard, md, need_project, server_settings_allowed, stills_label, ver
from app.ui.security import same_origin

AGENT_MODES = [
    ("The AI model when it answers, else the built-in ones", "auto"),
    ("Always the AI model", "llm"),
    ("The built-in ones (no AI model)", "offline"),
]
LABELS = {
    "backend_label": "Making the pictures",
    "model": "Video model",
    "images_label": "Making the stills (keyframes, references)",
    "agents": "Critics, refiner and planner",
    "llm_endpoint": "Where the AI model runs",
    "critic_model": "Critic model",
    "refiner_model": "Refiner model",
    "planner_model": "Planner model",
    "embed_model": "Checking that characters look the same",
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
SEEDS = {"random": "each new shot gets a fresh variation", "fixed": "every new shot starts from the same variation"}
# The setting behind each field, named in its tooltip for whoever runs the server (the page's words stay a
# creator's): elem_id -> Config field.
SETTING_OF = {
    "picture_fps": None,
    "render_steps": "steps",
    "render_guidance": "guidance",
    "seed_policy": "seed_policy",
    "llm_base_url": "llm_base_url",
    "llm_api_key": "api_key",
    "agent_mode": "agents",
    "critic_model": "critic_model",
    "refiner_model": "refiner_model",
    "planner_model": "planner_model",
    "llm_timeout": "llm_timeout",
    "llm_retries": "llm_max_retries",
    "llm_concurrency": "llm_concurrency",
    "frames_per_shot": "frames_per_shot",
    "image_detail": "image_detail",
    "llm_max_images": "llm_max_images",
    "llm_max_output_tokens": "llm_max_output_tokens",
    "llm_context_tokens": "llm_context_tokens",
    "llm_critic_video": "llm_critic_video",
    "llm_critic_audio": "llm_critic_audio",
}
TIPS_JS = """
const tips = JSON.parse(element.querySelector('[data-tips]')?.dataset.tips || '{}');
const left = new Set(Object.keys(tips));
const apply = () => {
  for (const id of [...left]) {
    const el = document.getElementById(id);
    if (el) { el.title = tips[id]; left.delete(id); }
  }
  if (!left.size) seen.disconnect();
};
const seen = new MutationObserver(apply);  // until every field is in the page, then no more
seen.observe(document.body, { childList: true, subtree: true });
apply();
"""
PERSONA_FORM = {  # field -> (label, lines): the persona as a creator describes a viewer
    "name": ("Name", 1),
    "who": ("Who they are", 3),
    "viewing_history": ("What they watch (one per line)", 3),
    "loves": ("What they love (one per line)", 3),
    "hates": ("What they can't stand (one per line)", 3),
    "notices_first": ("What they notice first", 1),
    "voice": ("How they talk", 2),
}
TASTES = {  # Tastes field -> words
    "shot_seconds": "Shot length they like (seconds)",
    "motion": "Wants things to move",
    "brightness": "Likes bright pictures",
    "contrast": "Likes strong contrast",
    "captions": "Relies on words and captions",
    "flash_sensitivity": "Bothered by flashing light",
    "continuity": "Notices continuity breaks",
    "patience": "Gives a slow film time",
}
MAX_FIELD_CHARS = 2_000
MAX_LIST_ITEMS = 40
NEW_PERSONA = "__new__"


def tips_html() -> str:
    """The tooltips' text, carried in the page as JSON (applied by TIPS_JS)."""
    import json

    from app.config import env_names

    tips = {}
    for elem_id, name in SETTING_OF.items():
        if name:
            tips[elem_id] = (
                f"For whoever runs the server: the {' or '.join(env_names(name))} setting (chief.toml: {name})"
            )
    return f"<span id='setting_tips' data-tips='{esc(json.dumps(tips))}' hidden></span>"


def status_md(studio) -> str:
    """What is active, labelled for people (never a raw setting name, never the key)."""
    st = studio.status().model_dump()
    st["images_label"] = stills_label(studio, st["images_label"])
    rows = [(LABELS[k], st[k]) for k in LABELS if st.get(k)]
    key = "set for this server session (hidden)" if studio.config.api_key else "not set"
    return "\n".join([f"- **{md(k)}**: {md(v)}" for k, v in rows] + [f"- **Key for the AI model**: {key}"])


def llm_offer_md(config) -> str:
    """The first-run offer (the start screen and Settings) while no LLM is configured; empty once one is."""
    from app.factory import llm_offer

    offer = llm_offer(config)
    if offer is None:
        return ""
    return (
        f"**The critics, refiner and planner are the embedded heuristic agents.** {md(offer[0].upper() + offer[1:])}."
        " Whoever runs the server sets it: the CHIEF_LOCAL_LLM setting, or an address in Settings."
    )


def models_text(c) -> str:
    """The model folders the studio started with, each stated (none, honestly, when unset)."""
    rows = [
        ("How pictures are made", c.backend),
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
        (
            "Model that checks characters look the same from shot to shot",
            c.embed_model or "none (whether characters stay the same is not measured)",
        ),
    ]
    return (
        "\n".join(f"- **{k}**: {md(v)}" for k, v in rows)
        + "\n\nWhoever runs the server chooses these models when starting it (`chief serve --help`)."
    )


def size_label(board) -> str:
    for label, wh in SIZES.items():
        if wh == (board.width, board.height):
            return label
    return f"custom · {board.width}×{board.height}"


WHOSE = {"builtin": "", "custom": " · made for this film", "built": " · built from comments"}


def persona_choices(studio, v) -> list[tuple[str, str]]:
    """(the persona's name, its id): people are listed by name."""
    return [(p.name + WHOSE[p.source], pid) for pid, p in studio.personas_of(v).items()]


def persona_id(name: str, taken: set[str]) -> str:
    """An id for a new persona from its name ("Ana, a night-shift nurse" -> "ana_a_night_shift_nurse"), free in
    this project."""
    import re

    base = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:36] or "viewer"
    pid, n = base, 2
    while pid in taken:
        pid, n = f"{base}_{n}", n + 1
    return pid


def form_of(persona) -> tuple:
    """The form's values for a persona: its words, its lists one per line, its tastes."""
    words = ["\n".join(v) if isinstance(v := getattr(persona, k), list) else v for k in PERSONA_FORM]
    return (*words, *(getattr(persona.tastes, k) for k in TASTES))


def persona_from_form(base, values: list) -> dict:
    """The persona's fields from the form, over `base` (weights, calibration and evidence kept); bounded."""
    fields = dict(zip(PERSONA_FORM, values[: len(PERSONA_FORM)], strict=True))
    tastes = dict(zip(TASTES, values[len(PERSONA_FORM) :], strict=True))
    data = base.model_dump() if base is not None else {}
    for k, v in fields.items():
        text = (v or "").strip()
        if len(text) > MAX_FIELD_CHARS:
            raise ValueError(f"{PERSONA_FORM[k][0]}: at most {MAX_FIELD_CHARS:,} characters")
        if k in ("viewing_history", "loves", "hates"):
            items = [line.strip(" -•\t") for line in text.splitlines() if line.strip(" -•\t")]
            if len(items) > MAX_LIST_ITEMS:
                raise ValueError(f"{PERSONA_FORM[k][0]}: at most {MAX_LIST_ITEMS} lines")
            data[k] = items
        else:
            data[k] = " ".join(text.split()) if k == "name" else text
    if not data.get("name"):
        raise ValueError("give the persona a name")
    if not data.get("who"):
        raise ValueError("say who the persona is")
    data["tastes"] = {**data.get("tastes", {}), **{k: v for k, v in tastes.items() if v is not None}}
    return data


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    status = gr.Markdown(elem_id="settings_status")
    gr.HTML(tips_html(), elem_id="settings_tips", js_on_load=TIPS_JS, padding=False)
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
    with gr.Accordion("The AI model behind the critics, refiner and planner (for everyone on this server)", open=False):
        gr.Markdown(SCOPE_NOTE, elem_id="llm_scope_note")
        gr.Markdown(llm_offer_md(studio.config), elem_id="llm_offer_settings")
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
        with gr.Row():
            timeout = gr.Number(label="Seconds to wait for an answer", minimum=1, maximum=3600, elem_id="llm_timeout")
            retries = gr.Number(
                label="Tries again after a failure", precision=0, minimum=0, maximum=10, elem_id="llm_retries"
            )
            concurrency = gr.Number(
                label="Requests at once", precision=0, minimum=1, maximum=64, elem_id="llm_concurrency"
            )
            frames = gr.Number(
                label="Pictures a critic sees per shot", precision=0, minimum=1, maximum=24, elem_id="frames_per_shot"
            )
            detail = gr.Dropdown(
                [("low (cheaper)", "low"), ("high", "high"), ("the model decides", "auto")],
                label="Picture detail sent",
                elem_id="image_detail",
            )
        with gr.Row():  # what the endpoint allows: requests are sized to these (a long film is watched in parts)
            images = gr.Number(
                label="Pictures per request", precision=0, minimum=1, maximum=256, elem_id="llm_max_images"
            )
            output = gr.Number(
                label="Longest answer (tokens)",
                precision=0,
                minimum=64,
                maximum=200_000,
                elem_id="llm_max_output_tokens",
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
        apply_btn = gr.Button("Apply", elem_id="apply_llm_btn")
    gr.Markdown("### Critics' panel")
    panel = gr.CheckboxGroup(
        choices=[(p.name, k) for k, p in studio.builtin_personas().items()],
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
            c.llm_critic_audio,
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
                gr.Column(visible=False),
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
            gr.Dropdown(choices=[("A new viewer", NEW_PERSONA), *choices], value=None),
            gr.Column(visible=False),
            size_label(b),
            b.fps,
        )

    @guard
    def apply(url, key, c, r, p, m, t, rt, cc, fr, dt, im, out, ctxt, vid, aud, request: gr.Request):
        server_settings_allowed()
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
            "llm_critic_audio": bool(aud),
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

        server_settings_allowed()

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
        """The chosen viewer in the form (and as YAML under Advanced); "a new viewer": an empty form; none chosen:
        no form."""
        from agents.personas import persona_to_yaml
        from storage.schema import Persona

        if not (pid and persona_id) or persona_id == NEW_PERSONA:
            blank = Persona(id="viewer", name="", who="")
            return "", NEW_PERSONA, *form_of(blank), gr.Column(visible=bool(pid and persona_id))
        version = studio.version(pid, ver(v))
        known = studio.personas_of(version)
        if persona_id not in known:
            raise ValueError(f"v{version.number} has no such viewer: choose one from the list")
        return persona_to_yaml(known[persona_id]), persona_id, *form_of(known[persona_id]), gr.Column(visible=True)

    @guard
    def save_persona_form(pid, v, editing_id, *values):
        """The form's viewer saved to the project (a new version): a new one gets an id from its name; one picked
        from the list keeps its id, so it replaces that viewer in this film."""
        from agents.personas import persona_to_yaml
        from storage.schema import MAX_PERSONA_BYTES, Persona

        pid = need_project(pid)
        version = studio.version(pid, ver(v))
        known = studio.personas_of(version)
        base = known.get(editing_id) if editing_id != NEW_PERSONA else None
        data = persona_from_form(base, list(values))
        if base is None:
            data.update(id=persona_id(data["name"], set(known)), source="custom")
        persona = Persona.model_validate(data)
        if len(persona_to_yaml(persona).encode()) > MAX_PERSONA_BYTES:
            raise ValueError(f"this viewer is over {MAX_PERSONA_BYTES:,} bytes: say it in fewer words")
        nv = studio.save_persona(pid, persona, version.number)
        choices = [("A new viewer", NEW_PERSONA), *persona_choices(studio, nv)]
        return (
            nv.number,
            f"v{nv.number}: {md(persona.name)} saved and on the panel.",
            gr.Dropdown(choices=choices, value=persona.id),
            persona.id,
            *form_of(persona),  # as saved (list marks and blank lines gone)
        )

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
        audio,
    ]
    ctx.tabs["settings"].select(
        load,
        [ctx.pid, ctx.version],
        [status, *llm, steps, guidance, seeds, models, servers, panel, persona_pick, persona_editor, size, fps],
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
    persona_pick.input(  # a viewer the creator picks; the page setting the list (load, save) fetches nothing
        pick_persona,
        [ctx.pid, ctx.version, persona_pick],
        [persona_yaml, editing, *form, persona_editor],
        api_visibility="private",
    )
    persona_form_btn.click(
        save_persona_form,
        [ctx.pid, ctx.version, editing, *form],
        [ctx.version, message, persona_pick, editing, *form],
        api_name="save_persona_form",
    )
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
