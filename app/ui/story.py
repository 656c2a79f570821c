"""Story screen: title, logline and style guide (saving makes a new version); below them the character bible as
cards — each character's name and description edited in place, what they are, their reference images, their voice
with its controls and a preview; a card to add a character; each location's references — and the consistency
table (`app/ui/references.py`). The API's `save_story` still takes the bible as a table (name, description)."""

from __future__ import annotations

import gradio as gr

from app.ui import references
from app.ui.common import Ctx, guard, need_project, ver


def rows_to_characters(rows, known=()) -> list[dict]:
    """Dataframe rows [name, description] -> character dicts (blank rows dropped); a character of `known` (the
    version's) keeps its reference images and voice by name, which the table does not show."""
    by_name = {c.name: c for c in known}
    out = []
    for row in _rows(rows):
        name, desc = (str(x).strip() if x is not None else "" for x in (list(row) + ["", ""])[:2])
        if name or desc:
            had = by_name.get(name)
            out.append(
                {
                    "name": name,
                    "description": desc,
                    "references": list(had.references) if had else [],
                    "voice": had.voice.model_dump() if had and had.voice else None,
                }
            )
    return out


def _rows(value) -> list[list]:
    if value is None:
        return []
    if hasattr(value, "values") and hasattr(value, "columns"):  # a pandas DataFrame
        return value.values.tolist()
    if isinstance(value, dict):  # the API's {"headers", "data"} form
        return value.get("data") or []
    return list(value)


def saved_message(v, branched: bool) -> str:
    msg = f"Saved as v{v.number} (child of v{v.parent_number})."
    if branched:
        msg += (
            f" **Branched:** v{v.parent_number} already had a newer version (another tab or user saved first), "
            "so your change is a new branch; nothing was lost."
        )
    return msg


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    title = gr.Textbox(label="Title", elem_id="story_title")
    logline = gr.Textbox(label="Logline", lines=2, elem_id="story_logline")
    style = gr.Textbox(label="Style guide", lines=3, elem_id="story_style")
    save = gr.Button("Save title, logline and style (new version)", variant="primary", elem_id="story_save_btn")
    with gr.Row(visible=False):  # the API's form of the bible (the page edits it on the cards)
        chars = gr.Dataframe(headers=["name", "description"], datatype=["str", "str"], value=[], interactive=True)
        save_api = gr.Button("save")
    message = gr.Markdown(elem_id="story_message")

    @guard
    def load(pid, v):
        if not pid:
            return "", "", "", [], ""
        b = studio.version(pid, ver(v)).storyboard
        return (
            b.title,
            b.logline,
            b.style_guide,
            [[c.name, c.description] for c in b.characters],
            f"Editing v{ver(v) or ''}",
        )

    @guard
    def save_story(pid, v, title_text, logline_text, style_text, char_rows):
        from storage.schema import Storyboard

        pid = need_project(pid)
        base = studio.version(pid, ver(v))
        data = base.storyboard.model_dump()
        data.update(
            title=title_text,
            logline=logline_text,
            style_guide=style_text,
            characters=rows_to_characters(char_rows, base.storyboard.characters),
        )
        nv, branched = studio.save_storyboard(pid, Storyboard.model_validate(data), base.number, "story edit")
        return nv.number, saved_message(nv, branched)

    ctx.tabs["story"].select(
        load, [ctx.pid, ctx.version], [title, logline, style, chars, message], api_name="load_story"
    )

    @guard
    def save_page(pid, v, title_text, logline_text, style_text):
        """The page's Save: the bible stays as the version has it (its cards save their own changes)."""
        base = studio.version(need_project(pid), ver(v)).storyboard
        rows = [[c.name, c.description] for c in base.characters]
        return save_story(pid, v, title_text, logline_text, style_text, rows)

    save_api.click(
        save_story, [ctx.pid, ctx.version, title, logline, style, chars], [ctx.version, message], api_name="save_story"
    )
    saved = save.click(
        save_page, [ctx.pid, ctx.version, title, logline, style], [ctx.version, message], api_visibility="private"
    )
    references.build(ctx, message, after=[saved])  # a new character gets its references card at once
