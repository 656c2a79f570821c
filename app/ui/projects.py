"""Projects screen: list, create (from an idea: a plan job the server tracks; or a storyboard file), open, fork,
trash and restore, import/export. A failed creation is one message; the list stays as it was."""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from app.ui.common import Ctx, follow, guard, md, need_project, progress_html, ver

COLUMNS = ["id", "title", "versions", "created"]


def project_rows(studio) -> tuple[list[list], list[tuple[str, str]]]:
    rows = studio.projects()
    table = [[p.id, p.title, p.versions, p.created_at.strftime("%Y-%m-%d %H:%M")] for p in rows]
    return table, [(f"{p.title} ({p.id})", p.id) for p in rows]


def _listing(studio, selected: str | None = None):
    table, choices = project_rows(studio)
    trashed = [(f"{p.title} ({p.id})", p.id) for p in studio.projects(include_trashed=True) if p.trashed]
    return (
        table,
        gr.Dropdown(choices=choices, value=selected if selected in dict((v, k) for k, v in choices) else None),
        gr.Dropdown(choices=trashed, value=None),
    )


def build(ctx: Ctx) -> None:
    studio, jobs = ctx.studio, ctx.jobs
    with gr.Row():
        with gr.Column(scale=2):
            table = gr.Dataframe(
                headers=COLUMNS, value=[], interactive=False, label="Projects", elem_id="projects_table", max_height=320
            )
            with gr.Row():
                pick = gr.Dropdown(
                    label="Project", choices=[], elem_id="project_pick", scale=3, allow_custom_value=True
                )
                open_btn = gr.Button("Open", elem_id="open_project_btn", scale=1)
            with gr.Row():
                fork_btn = gr.Button("Fork current version", elem_id="fork_project_btn")
                trash_btn = gr.Button("Move to trash", elem_id="trash_project_btn")
                export_btn = gr.Button("Export archive", elem_id="export_btn")
            export_file = gr.File(label="Archive", elem_id="export_file", interactive=False)
            with gr.Accordion("Trash", open=False):
                with gr.Row():
                    trashed = gr.Dropdown(label="Trashed projects", choices=[], elem_id="trash_pick", scale=3)
                    restore_btn = gr.Button("Restore", elem_id="restore_project_btn", scale=1)
        with gr.Column(scale=2):
            with gr.Tab("From an idea"):
                idea = gr.Textbox(
                    label="Idea (up to 20,000 characters: a line or a whole treatment)",
                    lines=3,
                    max_lines=12,
                    elem_id="idea",
                    placeholder="A lighthouse keeper befriends a lost whale…",
                )
                with gr.Row():
                    minutes = gr.Number(
                        label="Minutes", value=1.0, minimum=0.25, maximum=10, step=0.25, elem_id="minutes"
                    )
                    title = gr.Textbox(label="Title (optional)", elem_id="new_title")
                with gr.Row():
                    create_btn = gr.Button("Plan the film", variant="primary", elem_id="create_idea_btn", scale=3)
                    plan_stop = gr.Button("Stop", elem_id="plan_stop_btn", scale=1)
                plan_progress = gr.HTML(value="", elem_id="plan_progress", js_on_load=None)
            with gr.Tab("From a storyboard file"):
                board_file = gr.File(
                    label="Storyboard (YAML or JSON)", file_types=[".yaml", ".yml", ".json"], elem_id="storyboard_file"
                )
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
        text, minutes, name = idea_text.strip(), float(mins or 1.0), (title_text or "").strip() or None
        job, _ = jobs.start(
            "plan",
            "",
            lambda p, c: studio.create_project(text, minutes, name, cancel=c, progress=p),
            label=f"planning “{text[:40]}{'…' if len(text) > 40 else ''}”",
            exclusive=False,
        )
        yield from follow(jobs, job, lambda j: (progress_html(j), *[gr.skip()] * 6), planned)

    def planned(job):
        """A finished plan: open the new project; a failed one: its message, the list untouched."""
        if job.state != "done":
            return progress_html(job), *[gr.skip()] * 6  # the job's line says what happened: one message
        v = job.result
        b = v.storyboard
        return (
            "",
            v.project_id,
            v.number,
            f"Created “{md(b.title)}”: {len(b.shots())} shots, {b.duration():.0f}s.",
            *_listing(studio, v.project_id),
        )

    @guard
    def follow_plan():
        """A reloaded page follows the newest plan still running."""
        job = jobs.active("", "plan")
        if job is None:
            yield gr.skip(), *[gr.skip()] * 6
            return
        yield from follow(jobs, job, lambda j: (progress_html(j), *[gr.skip()] * 6), planned)

    @guard
    def stop_plan():
        job = jobs.active("", "plan")
        if job is not None:
            jobs.stop(job)
        return progress_html(job)

    @guard
    def create_from_file(path):
        from storage.files import load_storyboard

        if not path:
            raise gr.Error("choose a storyboard file first")
        v = studio.create_from_storyboard(load_storyboard(Path(path), studio.config.limits.max_shots))
        b = v.storyboard
        return (
            v.project_id,
            v.number,
            f"Created “{md(b.title)}” from {md(Path(path).name)}: {len(b.shots())} shots.",
            *_listing(studio, v.project_id),
        )

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
        title = studio.project(pid).title
        return "", None, f"Moved “{md(title)}” to the trash: restore it from Trash below.", *_listing(studio)

    @guard
    def restore(trashed_pid):
        if not trashed_pid:
            raise gr.Error("pick a trashed project first")
        p = studio.restore_project(trashed_pid)
        v = studio.version(p.id)
        return p.id, v.number, f"Restored “{md(p.title)}”.", *_listing(studio, p.id)

    @guard
    def export(pid, v):
        from storage.schema import slug

        pid = need_project(pid)
        private = studio.config.home / "tmp"  # this user's only (app.ui.private_temp_dir), not the shared /tmp
        out = (
            Path(tempfile.mkdtemp(prefix="export-", dir=private))
            / f"{slug(studio.version(pid).storyboard.title)}.chief.zip"
        )
        studio.export_project(pid, out)
        return str(out), f"Exported {pid} to {md(out.name)}."

    @guard
    def import_archive(path):
        if not path:
            raise gr.Error("choose an archive first")
        v = studio.import_project(Path(path))
        return (
            v.project_id,
            v.number,
            f"Imported “{md(v.storyboard.title)}” as {v.project_id}.",
            *_listing(studio, v.project_id),
        )

    listing = [table, pick, trashed]
    opened = [ctx.pid, ctx.version, message]
    ctx.tabs["projects"].select(refresh, ctx.pid, listing, api_name="list_projects")
    ctx.demo.load(refresh, ctx.pid, listing, api_visibility="private")
    ctx.demo.load(
        follow_plan, None, [plan_progress, *opened, *listing], api_visibility="private", show_progress="hidden"
    )
    create_btn.click(
        create_from_idea,
        [idea, minutes, title],
        [plan_progress, *opened, *listing],
        api_name="create_project",
        show_progress="hidden",
    )
    plan_stop.click(stop_plan, None, plan_progress, api_visibility="private", show_progress="hidden")
    restore_btn.click(restore, trashed, opened + listing, api_name="restore_project")
    create_file_btn.click(create_from_file, board_file, opened + listing, api_name="create_from_file")
    open_btn.click(open_project, pick, opened, api_name="open_project")
    fork_btn.click(fork_current, [ctx.pid, ctx.version], [ctx.version, message], api_name="fork_project")
    trash_btn.click(trash, ctx.pid, opened + listing, api_name="trash_project")
    export_btn.click(export, [ctx.pid, ctx.version], [export_file, message], api_name="export_project")
    import_btn.click(import_archive, import_file, opened + listing, api_name="import_project")
