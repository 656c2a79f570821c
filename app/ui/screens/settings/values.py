"""The Settings screen's values: the words for what is active, the picture sizes, the tooltips naming each field's
setting, and the persona form (a viewer as a creator describes one, read back into a Persona)."""

from __future__ import annotations

from app.ui.common import esc, md, stills_label

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
