"""Projects screen: list, create (from an idea or a storyboard file), open, fork, trash, import/export."""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from app.ui.common import Ctx, guard, md, need_project, ver

COLUMNS = ["id", "title", "versions", "created"]


def project_rows(studio) -> tuple[list[list], list[tuple[str, str]]]:
    rows = studio.projects()
    table = [[p.id, p.title, p.versions, p.created_at.strftime("%Y-%m-%d %H:%M")] for p in rows]
    return table, [(f"{p.title} ({p.id})", p.id) for p in rows]


def _listing(studio, selected: str | None = None):
    table, choices = project_rows(studio)
    return table, gr.Dropdown(choices=choices, value=selected if selected in dict((v, k) for k, v in choices) else None)


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    with gr.Row():
        with gr.Column(scale=2):
            table = gr.Dataframe(headers=COLUMNS, value=[], interactive=False, label="Projects",
                                 elem_id="projects_table", max_height=320)
            with gr.Row():
                pick = gr.Dropdown(label="Project", choices=[], elem_id="project_pick", scale=3,
                                   allow_custom_value=True)
                open_btn = gr.Button("Open", elem_id="open_project_btn", scale=1)
            with gr.Row():
                fork_btn = gr.Button("Fork current version", elem_id="fork_project_btn")
                trash_btn = gr.Button("Move to trash", elem_id="trash_project_btn", variant="stop")
                export_btn = gr.Button("Export archive", elem_id="export_btn")
            export_file = gr.File(label="Archive", elem_id="export_file", interactive=False)
        with gr.Column(scale=2):
            with gr.Tab("From an idea"):
                idea = gr.Textbox(label="Idea", lines=3, elem_id="idea",
                                  placeholder="A lighthouse keeper befriends a lost whale…")
                with gr.Row():
                    minutes = gr.Number(label="Minutes", value=1.0, minimum=0.25, maximum=10, step=0.25,
                                        elem_id="minutes")
                    title = gr.Textbox(label="Title (optional)", elem_id="new_title")
                create_btn = gr.Button("Plan the film", variant="primary", elem_id="create_idea_btn")
            with gr.Tab("From a storyboard file"):
                board_file = gr.File(label="Storyboard (YAML or JSON)", file_types=[".yaml", ".yml", ".json"],
                                     elem_id="storyboard_file")
                create_file_btn = gr.Button("Create from file", elem_id="create_file_btn")
            with gr.Tab("Import archive"):
                import_file = gr.File(label="Archive (.chief.zip)", file_types=[".zip"], elem_id="import_file")
                import_btn = gr.Button("Import", elem_id="import_btn")
    message = gr.Markdown(elem_id="projects_message")

    @guard
    def refresh(pid):
        return _listing(studio, pid)

    @guard
    def create_from_idea(idea_text, mins, title_text):
        if not (idea_text or "").strip():
            raise gr.Error("write an idea first")
        v = studio.create_project(idea_text.strip(), float(mins or 1.0), (title_text or "").strip() or None)
        b = v.storyboard
        return (v.project_id, v.number, f"Created “{md(b.title)}”: {len(b.shots())} shots, {b.duration():.0f}s.",
                *_listing(studio, v.project_id))

    @guard
    def create_from_file(path):
        from storage.files import load_storyboard

        if not path:
            raise gr.Error("choose a storyboard file first")
        v = studio.create_from_storyboard(load_storyboard(Path(path)))
        b = v.storyboard
        return (v.project_id, v.number, f"Created “{md(b.title)}” from {md(Path(path).name)}: {len(b.shots())} shots.",
                *_listing(studio, v.project_id))

    @guard
    def open_project(choice):
        if not choice:
            raise gr.Error("pick a project first")
        v = studio.version(choice)
        return v.project_id, v.number, f"Opened “{md(v.storyboard.title)}” at v{v.number}."

    @guard
    def fork_current(pid, v):
        nv = studio.fork(need_project(pid), ver(v))
        return nv.number, f"v{nv.number} forked from v{nv.parent_number}; it is now current."

    @guard
    def trash(pid):
        studio.trash_project(need_project(pid))
        return "", None, f"Moved {pid} to the trash (`chief` can restore it).", *_listing(studio)

    @guard
    def export(pid, v):
        from storage.schema import slug

        pid = need_project(pid)
        out = Path(tempfile.mkdtemp(prefix="chief-export-")) / f"{slug(studio.version(pid).storyboard.title)}.chief.zip"
        studio.export_project(pid, out)
        return str(out), f"Exported {pid} to {md(out.name)}."

    @guard
    def import_archive(path):
        if not path:
            raise gr.Error("choose an archive first")
        v = studio.import_project(Path(path))
        return v.project_id, v.number, f"Imported “{md(v.storyboard.title)}” as {v.project_id}.", *_listing(studio, v.project_id)

    listing = [table, pick]
    opened = [ctx.pid, ctx.version, message]
    ctx.tabs["projects"].select(refresh, ctx.pid, listing, api_name="list_projects")
    ctx.demo.load(refresh, ctx.pid, listing, api_visibility="private")
    create_btn.click(create_from_idea, [idea, minutes, title], opened + listing, api_name="create_project")
    create_file_btn.click(create_from_file, board_file, opened + listing, api_name="create_from_file")
    open_btn.click(open_project, pick, opened, api_name="open_project")
    fork_btn.click(fork_current, [ctx.pid, ctx.version], [ctx.version, message], api_name="fork_project")
    trash_btn.click(trash, ctx.pid, opened + listing, api_name="trash_project")
    export_btn.click(export, [ctx.pid, ctx.version], [export_file, message], api_name="export_project")
    import_btn.click(import_archive, import_file, opened + listing, api_name="import_project")
