"""The Projects screen's layout and wiring: its components (elem_ids the browser tests select by), then each event
bound to a `ProjectsHandlers` method."""

from __future__ import annotations

import json

import gradio as gr

from app.ui.common import Ctx, guard
from app.ui.screens.projects.handlers import ProjectsHandlers
from app.ui.screens.projects.values import EXAMPLES, LENGTHS, POSTERS_CSS, POSTERS_JS
from app.ui.widgets import PRIVATE, QUIET, llm_offer_md


def build(ctx: Ctx) -> ProjectsHandlers:
    """Lay the screen out in the current Blocks and wire it; the handlers it wired."""
    h = ProjectsHandlers(ctx.studio, ctx.jobs)
    idea, minutes, title, create_btn, plan_stop, plan_progress = _start(h)
    gr.Markdown("## Your films")
    posters = gr.HTML(elem_id="posters", js_on_load=POSTERS_JS, css_template=POSTERS_CSS)
    with gr.Row(equal_height=True):
        pick = gr.Dropdown(
            label="Find a film by its title", choices=[], elem_id="project_pick", scale=3, allow_custom_value=True
        )
        open_btn = gr.Button("Open", elem_id="open_project_btn", scale=1)
    more = _more()
    message = gr.Markdown(elem_id="projects_message")

    listing = [posters, pick, more["trashed"]]
    opening = [ctx.pid, ctx.version, message]
    landing = [*opening, ctx.screens]
    planning = [plan_progress, *landing, *listing]
    ctx.tabs["projects"].select(guard(h.refresh), ctx.pid, listing, api_name="list_projects")
    ctx.demo.load(guard(h.refresh), ctx.pid, listing, **PRIVATE)
    ctx.demo.load(guard(h.follow_plan), None, planning, **QUIET)
    create_btn.click(
        guard(h.create_from_idea), [idea, minutes, title], planning, api_name="create_project", show_progress="hidden"
    )
    plan_stop.click(guard(h.stop_plan), None, plan_progress, **QUIET)
    more["restore_btn"].click(guard(h.restore), more["trashed"], opening + listing, api_name="restore_project")
    more["create_file_btn"].click(
        guard(h.create_from_file), more["board_file"], landing + listing, api_name="create_from_file"
    )
    open_btn.click(guard(h.open_project), pick, landing, api_name="open_project")
    posters.open(guard(h.open_poster), None, landing, **PRIVATE)
    more["fork_btn"].click(
        guard(h.fork_current), [ctx.pid, ctx.version], [ctx.version, message], api_name="fork_project"
    )
    more["trash_btn"].click(guard(h.trash), ctx.pid, opening + listing, api_name="trash_project")
    more["export_btn"].click(
        guard(h.export), [ctx.pid, ctx.version], [more["export_file"], message], api_name="export_project"
    )
    more["import_btn"].click(guard(h.import_archive), more["import_file"], landing + listing, api_name="import_project")
    return h


def _start(h: ProjectsHandlers) -> tuple:
    """ "What is your film about?": the idea, example ideas a click fills in, the length, a title, Plan and Stop."""
    most = h.studio.config.limits.max_film_minutes
    with gr.Column(elem_id="start"):
        gr.Markdown("## What is your film about?", elem_id="start_heading")
        gr.Markdown(llm_offer_md(h.studio.config), elem_id="llm_offer")  # first run: no LLM yet
        idea = gr.Textbox(
            label="Your idea: a line or a whole treatment (up to 20,000 characters)",
            lines=3,
            max_lines=12,
            elem_id="idea",
            placeholder="A lighthouse keeper befriends a lost whale…",
        )
        with gr.Row(elem_id="example_ideas"):
            gr.Markdown("Or start from an example:", elem_classes="examples-label")
            for name, text in EXAMPLES:
                gr.Button(name, size="sm", variant="secondary", elem_classes="example-idea").click(
                    None, None, idea, js=f"() => {json.dumps(text)}", **PRIVATE
                )
        with gr.Row(equal_height=True):
            minutes = gr.Radio(
                [(label.strip(), m) for label, m in LENGTHS if m <= most],
                value=1,
                label="How long",
                elem_id="minutes",
                scale=3,
            )
            title = gr.Textbox(label="Title (optional: the planner names it otherwise)", elem_id="new_title", scale=2)
            create_btn = gr.Button("Plan my film", variant="primary", elem_id="create_idea_btn", scale=1)
            plan_stop = gr.Button("Stop", elem_id="plan_stop_btn", scale=0, min_width=80)
        plan_progress = gr.HTML(value="", elem_id="plan_progress", js_on_load=None)
    return idea, minutes, title, create_btn, plan_stop, plan_progress


def _more() -> dict:
    """Under "More": a storyboard file, an archive to import, fork, export and trash the open film, the trash."""
    with gr.Accordion(
        "More: start from a storyboard file or an archive, fork, export, trash", open=False, elem_id="projects_more"
    ):
        with gr.Tab("From a storyboard file"):
            board_file = gr.File(
                label="Storyboard (YAML or JSON)", file_types=[".yaml", ".yml", ".json"], elem_id="storyboard_file"
            )
            create_file_btn = gr.Button("Create from file", elem_id="create_file_btn")
        with gr.Tab("Import archive"):
            import_file = gr.File(label="Archive (.chief.zip)", file_types=[".zip"], elem_id="import_file")
            import_btn = gr.Button("Import", elem_id="import_btn")
        with gr.Tab("The open film"):
            with gr.Row():
                fork_btn = gr.Button("Fork current version", elem_id="fork_project_btn")
                trash_btn = gr.Button("Move to trash", elem_id="trash_project_btn")
                export_btn = gr.Button("Export archive", elem_id="export_btn")
            export_file = gr.File(label="Archive", elem_id="export_file", interactive=False)
        with gr.Tab("Trash"):
            with gr.Row():
                trashed = gr.Dropdown(label="Films in the trash", choices=[], elem_id="trash_pick", scale=3)
                restore_btn = gr.Button("Restore", elem_id="restore_project_btn", scale=1)
    return {
        "board_file": board_file,
        "create_file_btn": create_file_btn,
        "import_file": import_file,
        "import_btn": import_btn,
        "fork_btn": fork_btn,
        "trash_btn": trash_btn,
        "export_btn": export_btn,
        "export_file": export_file,
        "trashed": trashed,
        "restore_btn": restore_btn,
    }
