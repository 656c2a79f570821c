"""The Settings screen's handlers: one class whose methods the page's events call with the fields' values (a test
calls them the same way, no browser). Server settings (the LLM, rendering) are refused to a signed-in student."""

from __future__ import annotations

import gradio as gr

from app.agent_settings import AgentSettings
from app.config import redact_url
from app.server.security import same_origin
from app.ui.common import md, need_project, server_settings_allowed, ver
from app.ui.screens.settings import discovered
from app.ui.screens.settings.values import (
    MODEL_DEFAULT,
    NEW_PERSONA,
    SIZES,
    form_of,
    models_text,
    persona_choices,
    persona_from_form,
    persona_id,
    size_label,
    status_md,
)


class SettingsHandlers:
    """What the Settings screen's controls do, over the Studio."""

    def __init__(self, studio):
        self.studio = studio

    def servers_md(self) -> str:
        ports = discovered.probed_ports(self.studio.config)
        return discovered.servers_html(discovered.discover(ports=ports), ports, self.studio.config)

    def use_server(self, evt: gr.EventData):
        """A discovered model, one click: the endpoint and the three models filled in, no key (it belonged to
        the endpoint before), then applied by `apply` like the Apply button."""
        server, model = discovered.chosen(getattr(evt, "_data", None), discovered.probed_ports(self.studio.config))
        return server.base_url, "", model, model, model, "auto"

    def load(self, pid, v):
        c = self.studio.config
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
            self.servers_md(),
        )
        if not pid:
            return (
                status_md(self.studio),
                *fields,
                gr.CheckboxGroup(choices=[], value=[]),
                gr.Dropdown(choices=[]),
                gr.Column(visible=False),
                MODEL_DEFAULT,
                None,
            )
        version = self.studio.version(pid, ver(v))
        choices = persona_choices(self.studio, version)
        b = version.storyboard
        return (
            status_md(self.studio),
            *fields,
            gr.CheckboxGroup(choices=choices, value=version.panel),
            gr.Dropdown(choices=[("A new viewer", NEW_PERSONA), *choices], value=None),
            gr.Column(visible=False),
            size_label(b),
            b.fps,
        )

    def apply(self, url, key, c, r, p, m, t, rt, cc, fr, dt, im, out, ctxt, vid, aud, request: gr.Request):
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
        notice = self.studio.set_agent_settings(settings, from_own_page=same_origin(request))
        return "", status_md(self.studio), md(notice)

    def apply_render(self, s, g, policy):
        from app.config import with_overrides

        server_settings_allowed()

        self.studio.reconfigure(
            with_overrides(
                self.studio.config,
                steps=int(s) if s else None,
                guidance=float(g) if g not in (None, "") else None,
                seed_policy=policy,
            )
        )
        return (
            "Rendering settings applied for everyone on this server until it restarts: changed settings make new clips."
        )

    def save_picture(self, pid, v, label, rate):
        pid = need_project(pid)
        base = self.studio.version(pid, ver(v))
        if label not in SIZES:
            raise gr.Error("choose one of the sizes")
        w, h = SIZES[label]
        nv, made = self.studio.set_picture(pid, w, h, int(rate) if rate else None, base.number)
        if not made:
            return gr.skip(), f"v{base.number} already has this picture: no new version."
        return nv.number, f"v{nv.number}: {label}, {int(rate) if rate else 'the model’s'} fps. Render to see it."

    def save_panel(self, pid, v, ids):
        nv = self.studio.set_panel(need_project(pid), list(ids or []), ver(v))
        names = self.studio.personas_of(nv)
        return nv.number, f"v{nv.number}: the panel is now {md(', '.join(names[i].name for i in nv.panel))}."

    def pick_persona(self, pid, v, persona_id):
        """The chosen viewer in the form (and as YAML under Advanced); "a new viewer": an empty form; none chosen:
        no form."""
        from agents.personas import persona_to_yaml
        from storage.schema import Persona

        if not (pid and persona_id) or persona_id == NEW_PERSONA:
            blank = Persona(id="viewer", name="", who="")
            return "", NEW_PERSONA, *form_of(blank), gr.Column(visible=bool(pid and persona_id))
        version = self.studio.version(pid, ver(v))
        known = self.studio.personas_of(version)
        if persona_id not in known:
            raise ValueError(f"v{version.number} has no such viewer: choose one from the list")
        return persona_to_yaml(known[persona_id]), persona_id, *form_of(known[persona_id]), gr.Column(visible=True)

    def save_persona_form(self, pid, v, editing_id, *values):
        """The form's viewer saved to the project (a new version): a new one gets an id from its name; one picked
        from the list keeps its id, so it replaces that viewer in this film."""
        from agents.personas import persona_to_yaml
        from storage.schema import MAX_PERSONA_BYTES, Persona

        pid = need_project(pid)
        version = self.studio.version(pid, ver(v))
        known = self.studio.personas_of(version)
        base = known.get(editing_id) if editing_id != NEW_PERSONA else None
        data = persona_from_form(base, list(values))
        if base is None:
            data.update(id=persona_id(data["name"], set(known)), source="custom")
        persona = Persona.model_validate(data)
        if len(persona_to_yaml(persona).encode()) > MAX_PERSONA_BYTES:
            raise ValueError(f"this viewer is over {MAX_PERSONA_BYTES:,} bytes: say it in fewer words")
        nv = self.studio.save_persona(pid, persona, version.number)
        choices = [("A new viewer", NEW_PERSONA), *persona_choices(self.studio, nv)]
        return (
            nv.number,
            f"v{nv.number}: {md(persona.name)} saved and on the panel.",
            gr.Dropdown(choices=choices, value=persona.id),
            persona.id,
            *form_of(persona),  # as saved (list marks and blank lines gone)
        )

    def save_persona(self, pid, v, text):
        from agents.personas import MAX_PERSONA_BYTES
        from storage.parsing import parse_yaml
        from storage.schema import Persona

        pid = need_project(pid)
        data = parse_yaml(text or "", "persona YAML", max_bytes=MAX_PERSONA_BYTES)  # a ParseError: one line
        if not isinstance(data, dict):
            raise ValueError("persona YAML must be a mapping with id, name and who")
        data.setdefault("source", "custom")
        nv = self.studio.save_persona(pid, Persona.model_validate(data), ver(v))
        return nv.number, f"v{nv.number}: persona {md(data.get('name') or data.get('id'))} saved and on the panel."

    def build_from_comments(self, text, viewer):
        from agents.comments import comments_from_text_apart
        from agents.personas import persona_to_yaml

        comments = comments_from_text_apart(text or "")  # stripped in a worker process, not the server's
        return persona_to_yaml(self.studio.build_persona(comments, viewer or "Viewer").persona)
