"""Settings: what is active, the LLM endpoint for this server, the critics' panel and custom personas.

The API key lives only in this process's memory: it is never echoed back to the page, written to the
database or logged. Who may change the endpoint and where the key may go is decided in
app/agent_settings.py; this screen only says whether the request came from the app's own page.
"""

from __future__ import annotations

import gradio as gr

from app.agent_settings import SCOPE_NOTE, AgentSettings
from app.config import redact_url
from app.ui.common import Ctx, guard, md, need_project, ver
from app.ui.security import same_origin

AGENT_MODES = ["auto", "llm", "offline"]


def status_md(studio) -> str:
    st = studio.status()
    rows = [(k, v) for k, v in st.model_dump().items() if v and k != "home"]
    key = "set for this server session (hidden)" if studio.config.api_key else "not set"
    return "\n".join([f"- **{md(k)}**: {md(v)}" for k, v in rows] + [f"- **API key**: {key}"])


def persona_choices(studio, v) -> list[tuple[str, str]]:
    return [(f"{p.name} ({pid})" + ("" if p.source == "builtin" else f" [{p.source}]"), pid)
            for pid, p in studio.personas_of(v).items()]


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    status = gr.Markdown(elem_id="settings_status")
    with gr.Accordion("LLM agents (for everyone on this server)", open=False):
        gr.Markdown(SCOPE_NOTE, elem_id="llm_scope_note")
        with gr.Row():
            base_url = gr.Textbox(label="Endpoint (OpenAI-compatible base URL)", elem_id="llm_base_url")
            api_key = gr.Textbox(label="API key (never shown or stored)", type="password", elem_id="llm_api_key")
            mode = gr.Dropdown(AGENT_MODES, value="auto", label="Agents", elem_id="agent_mode")
        with gr.Row():
            critic = gr.Textbox(label="Critic model", elem_id="critic_model")
            refiner = gr.Textbox(label="Refiner model", elem_id="refiner_model")
            planner = gr.Textbox(label="Planner model", elem_id="planner_model")
        apply_btn = gr.Button("Apply", elem_id="apply_llm_btn")
    gr.Markdown("### Critics' panel")
    panel = gr.CheckboxGroup(choices=list(studio.builtin_personas()), label="Personas watching this version", elem_id="panel_pick")
    panel_btn = gr.Button("Save panel (new version)", elem_id="panel_save_btn")
    gr.Markdown("### Custom persona")
    with gr.Row():
        persona_pick = gr.Dropdown(choices=[], label="Start from", elem_id="persona_pick",
                                   allow_custom_value=True)
    persona_yaml = gr.Code(language="yaml", label="Persona (YAML)", interactive=True, elem_id="persona_yaml")
    persona_btn = gr.Button("Save persona to this project (new version)", elem_id="persona_save_btn")
    builder = _builder(ctx, persona_yaml)
    message = gr.Markdown(elem_id="settings_message")

    @guard
    def load(pid, v):
        c = studio.config
        fields = (redact_url(c.llm_base_url), "", c.critic_model, c.refiner_model, c.planner_model, c.agents or "auto")
        if not pid:
            return status_md(studio), *fields, gr.CheckboxGroup(choices=[], value=[]), gr.Dropdown(choices=[])
        version = studio.version(pid, ver(v))
        choices = persona_choices(studio, version)
        return (status_md(studio), *fields, gr.CheckboxGroup(choices=choices, value=version.panel),
                gr.Dropdown(choices=choices, value=None))

    @guard
    def apply(url, key, c, r, p, m, request: gr.Request):
        settings = AgentSettings(base_url=url or "", api_key=key or "", critic_model=c or "", refiner_model=r or "",
                                 planner_model=p or "", mode=m or "auto")
        notice = studio.set_agent_settings(settings, from_own_page=same_origin(request))
        return "", status_md(studio), md(notice)

    @guard
    def save_panel(pid, v, ids):
        nv = studio.set_panel(need_project(pid), list(ids or []), ver(v))
        return nv.number, f"v{nv.number}: panel is now {', '.join(nv.panel)}."

    @guard
    def pick_persona(pid, v, persona_id):
        from agents.personas import persona_to_yaml

        if not (pid and persona_id):
            return ""
        return persona_to_yaml(studio.personas_of(studio.version(pid, ver(v)))[persona_id])

    @guard
    def save_persona(pid, v, text):
        import yaml

        from storage.schema import Persona

        pid = need_project(pid)
        try:
            data = yaml.safe_load(text or "")
        except yaml.YAMLError as e:
            raise ValueError(f"persona YAML: {str(e).splitlines()[0]}") from None
        if not isinstance(data, dict):
            raise ValueError("persona YAML must be a mapping with id, name and who")
        data.setdefault("source", "custom")
        nv = studio.save_persona(pid, Persona.model_validate(data), ver(v))
        return nv.number, f"v{nv.number}: persona {data.get('id')} saved and on the panel."

    ctx.tabs["settings"].select(load, [ctx.pid, ctx.version],
                                [status, base_url, api_key, critic, refiner, planner, mode, panel, persona_pick],
                                api_name="settings")
    ev = apply_btn.click(apply, [base_url, api_key, critic, refiner, planner, mode], [api_key, status, message],
                         api_visibility="private")
    ctx.refresh_status(ev)
    panel_btn.click(save_panel, [ctx.pid, ctx.version, panel], [ctx.version, message], api_name="set_panel")
    persona_pick.change(pick_persona, [ctx.pid, ctx.version, persona_pick], persona_yaml, api_visibility="private")
    persona_btn.click(save_persona, [ctx.pid, ctx.version, persona_yaml], [ctx.version, message],
                      api_name="save_persona")
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
        comments = gr.Textbox(label="Comments (one per line; names, handles, links are stripped)", lines=6,
                              elem_id="builder_comments")
        name = gr.Textbox(label="Viewer name", value="Viewer", elem_id="builder_name")
        build_btn = gr.Button("Build persona (into the editor above)", elem_id="builder_btn")

    @guard
    def build_from_comments(text, viewer):
        from agents.personas import persona_to_yaml
        from agents.comments import comments_from_text
        from agents.persona_builder import build_persona

        from app.factory import llm_client

        client = llm_client(studio.config)
        return persona_to_yaml(build_persona(comments_from_text(text or ""), viewer or "Viewer", client=client))

    def wire():
        build_btn.click(build_from_comments, [comments, name], persona_yaml, api_name="build_persona")
    return wire
