"""Projects, the start screen: "What is your film about?" (an idea, a length, example ideas a click fills in; the
plan is a job the server tracks and lands on the Storyboard screen), the recent films as posters (a frame of the
latest render, else the first keyframe, else a titled card) and a finder by title; storyboard files, archives,
fork, export and the trash under "More". A failed creation is one message; the list stays as it was. Films are
named by their titles, never by their ids."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import gradio as gr

from app.ui import settings
from app.ui.common import (
    Ctx,
    ask_to_stop,
    esc,
    follow,
    guard,
    md,
    media_url,
    named,
    need_project,
    notice,
    progress_html,
    ver,
)

# A short name on the button, the idea it fills in.
EXAMPLES = (
    ("The keeper and the whale", "A lighthouse keeper befriends a lost whale during the last storm of autumn."),
    (
        "The clock tower",
        "A retired clockmaker and her clumsy brass robot apprentice must repair the frozen clock tower before an "
        "ice storm.",
    ),
    ("The rematch", "The tortoise and the hare race again, forty years later, through a city at night."),
    ("The umbrella", "A girl who collects lost umbrellas finds one that opens onto another city."),
)
LENGTHS = ((" 30 s", 0.5), ("1 min", 1), ("3 min", 3), ("5 min", 5), ("10 min", 10))
MAX_POSTERS = 24  # the most recent films as posters; every film can be found by name below them

# Event delegation: a poster sends 'open' with its project.
POSTERS_JS = """
element.addEventListener('click', (ev) => {
  const b = ev.target.closest('button.poster');
  if (!b) return;
  trigger('open', { pid: b.dataset.pid });
});
"""

POSTERS_CSS = """
.posters { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 12px; }
.posters button.poster { font: inherit; text-align: left; padding: 0; cursor: pointer; overflow: hidden;
  border: 1px solid var(--border-color-primary); border-radius: 8px; background: var(--background-fill-secondary);
  color: var(--body-text-color); }
.posters button.poster:hover { border-color: var(--color-accent); }
.posters .frame { aspect-ratio: 16 / 9; width: 100%; object-fit: cover; display: block; background: #222; }
.posters .card { aspect-ratio: 16 / 9; display: flex; align-items: center; justify-content: center; padding: 8px;
  text-align: center; font-weight: 600; color: #f5f0e6; background: linear-gradient(135deg, #2f3b52, #6b4f3a); }
.posters .title { display: block; font-weight: 600; padding: 6px 8px 0; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; }
.posters .meta { display: block; font-size: 0.85em; color: var(--body-text-color-subdued); padding: 0 8px 6px; }
.posters .open { outline: 2px solid var(--color-accent); }
.no-posters { color: var(--body-text-color-subdued); }
"""


def ago(when: datetime, now: datetime | None = None) -> str:
    """How long ago, in words a person reads at a glance: "just now", "5 min ago", "2 h ago", "3 days ago"."""
    now = now or datetime.now(UTC)
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    s = max(0.0, (now - when).total_seconds())
    if s < 60:
        return "just now"
    if s < 3600:
        return f"{int(s // 60)} min ago"
    if s < 86400:
        return f"{int(s // 3600)} h ago"
    days = int(s // 86400)
    return "yesterday" if days == 1 else f"{days} days ago"


def length(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(round(seconds % 60)):02d}" if seconds >= 60 else f"{seconds:.0f} s"


def poster(studio, project) -> dict:
    """One film on the start screen: its title, length, current version, when it was last rendered (or changed),
    and a picture: a frame of its latest render, else its first keyframe, else none (a titled card). A film that
    is another version's than the current one says whose ("v3 (draft) · v2's film, rendered 5 min ago")."""
    v = studio.version(project.id)
    nodes = studio.versions(project.id)
    rendered = [n for n in nodes if n.renders]
    image, meta, info = "", named(v), None
    if rendered:
        info = studio.render_info(project.id, max(rendered, key=lambda n: n.created_at).number)
        if info is not None and info.shots:
            image = media_url(studio.thumbnail(info.shots[len(info.shots) // 3].sha256))
            whose = "" if info.version == v.number else f"v{info.version}'s film, "
            meta += f" · {whose}rendered {ago(info.created_at)}"
    if not image:
        frames = [s.keyframe for s in v.storyboard.shots() if s.keyframe]
        image = media_url(studio.image_path(frames[0])) if frames else ""
        meta += f" · not rendered yet · changed {ago(max(n.created_at for n in nodes))}"
    last = max([n.created_at for n in nodes] + ([info.created_at] if info else []))
    return {
        "pid": project.id,
        "title": project.title,
        "length": length(v.storyboard.duration()),
        "meta": meta,
        "image": image,
        "last": last if last.tzinfo else last.replace(tzinfo=UTC),
    }


def posters_html(studio, current: str | None = None) -> str:
    """The most recent films as a grid of posters (escaped: titles come from people, files and LLMs)."""
    films = sorted((poster(studio, p) for p in studio.projects()), key=lambda f: f["last"], reverse=True)
    if not films:
        return "<p class='no-posters' id='no_posters'>No films yet: your first one starts above.</p>"
    cards = []
    for f in films[:MAX_POSTERS]:
        picture = (
            f"<img class='frame' src='{esc(f['image'])}' alt=''>"
            if f["image"]
            else f"<span class='card'>{esc(f['title'])}</span>"
        )
        cards.append(
            f"<button type='button' class='poster{' open' if f['pid'] == current else ''}' data-pid='{esc(f['pid'])}' "
            f"title='Open “{esc(f['title'])}”'>{picture}<span class='title'>{esc(f['title'])}</span>"
            f"<span class='meta'>{esc(f['length'])} · {esc(f['meta'])}</span></button>"
        )
    more = (
        f"<p class='no-posters'>{len(films) - MAX_POSTERS} older films: find them by name below.</p>"
        if len(films) > MAX_POSTERS
        else ""
    )
    return f"<div class='posters' id='poster_grid'>{''.join(cards)}</div>{more}"


def project_choices(studio) -> list[tuple[str, str]]:
    """(what a person reads, the project) for the film finder: its title, version and when it was made."""
    return [(f"{p.title} · v{p.current_version} · {p.created_at:%b %d}", p.id) for p in studio.projects()]


def _listing(studio, selected: str | None = None):
    choices = project_choices(studio)
    trashed = [
        (f"{p.title} · moved to the trash {ago(p.trashed_at)}", p.id)
        for p in studio.projects(include_trashed=True)
        if p.trashed and p.trashed_at is not None
    ]
    return (
        posters_html(studio, selected),
        gr.Dropdown(choices=choices, value=selected if selected in {v for _, v in choices} else None),
        gr.Dropdown(choices=trashed, value=None),
    )


def build(ctx: Ctx) -> None:
    studio, jobs = ctx.studio, ctx.jobs
    most = studio.config.limits.max_film_minutes
    with gr.Column(elem_id="start"):
        gr.Markdown("## What is your film about?", elem_id="start_heading")
        gr.Markdown(settings.llm_offer_md(studio.config), elem_id="llm_offer")  # first run: no LLM yet
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
                    None, None, idea, js=f"() => {json.dumps(text)}", api_visibility="private"
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
    gr.Markdown("## Your films")
    posters = gr.HTML(elem_id="posters", js_on_load=POSTERS_JS, css_template=POSTERS_CSS)
    with gr.Row(equal_height=True):
        pick = gr.Dropdown(
            label="Find a film by its title", choices=[], elem_id="project_pick", scale=3, allow_custom_value=True
        )
        open_btn = gr.Button("Open", elem_id="open_project_btn", scale=1)
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
    message = gr.Markdown(elem_id="projects_message")

    def storyboard():
        return gr.Tabs(selected="storyboard")  # where a planned, opened or imported film lands

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
        yield from follow(jobs, job, lambda j: (progress_html(j), *[gr.skip()] * 7), planned)

    def planned(job):
        """A finished plan: open the new project on the Storyboard screen; a failed one: its message, the list
        untouched."""
        if job.state != "done":
            return progress_html(job), *[gr.skip()] * 7  # the job's line says what happened: one message
        v = job.result
        b = v.storyboard
        said = f"Planned “{b.title}”: {len(b.shots())} shots, {length(b.duration())}. Here is its storyboard."
        notice(said)
        return "", v.project_id, v.number, md(said), storyboard(), *_listing(studio, v.project_id)

    @guard
    def follow_plan():
        """A reloaded page follows the newest plan still running."""
        job = jobs.active("", "plan")
        if job is None:
            yield gr.skip(), *[gr.skip()] * 7
            return
        yield from follow(jobs, job, lambda j: (progress_html(j), *[gr.skip()] * 7), planned)

    @guard
    def stop_plan():
        job = jobs.active("", "plan")
        return ask_to_stop(jobs, job)

    @guard
    def create_from_file(path):
        from storage.files import load_storyboard

        if not path:
            raise gr.Error("choose a storyboard file first")
        v = studio.create_from_storyboard(load_storyboard(Path(path), limits=studio.config.limits))
        b = v.storyboard
        return (
            v.project_id,
            v.number,
            f"Created “{md(b.title)}” from {md(Path(path).name)}: {len(b.shots())} shots.",
            storyboard(),
            *_listing(studio, v.project_id),
        )

    def opened(pid: str):
        v = studio.version(pid)
        return v.project_id, v.number, f"Opened “{md(v.storyboard.title)}” at v{v.number}.", storyboard()

    @guard
    def open_project(choice):
        if not choice:
            raise gr.Error("pick a film first")
        return opened(choice)

    @guard
    def open_poster(evt: gr.EventData):
        data = getattr(evt, "_data", None)
        pid = data.get("pid") if isinstance(data, dict) else None
        if not isinstance(pid, str) or not pid:
            raise gr.Error("that poster sent something unreadable: reload the page")
        return opened(pid)

    @guard
    def fork_current(pid, v):
        nv = studio.fork(need_project(pid), ver(v))
        return nv.number, f"v{nv.number} forked from v{nv.parent_number}; it is now current."

    @guard
    def trash(pid):
        studio.trash_project(need_project(pid))
        title = studio.project(pid).title
        return "", None, f"Moved “{md(title)}” to the trash: restore it from More › Trash.", *_listing(studio)

    @guard
    def restore(trashed_pid):
        if not trashed_pid:
            raise gr.Error("pick a film in the trash first")
        p = studio.restore_project(trashed_pid)
        v = studio.version(p.id)
        return p.id, v.number, f"Restored “{md(p.title)}”.", *_listing(studio, p.id)

    @guard
    def export(pid, v):
        from storage.schema import slug

        pid = need_project(pid)
        private = studio.config.home / "tmp"  # this user's only (app.ui.private_temp_dir), not the shared /tmp
        title = studio.version(pid).storyboard.title
        out = Path(tempfile.mkdtemp(prefix="export-", dir=private)) / f"{slug(title)}.chief.zip"
        studio.export_project(pid, out)
        return str(out), f"Exported “{md(title)}” to {md(out.name)}."

    @guard
    def import_archive(path):
        if not path:
            raise gr.Error("choose an archive first")
        v = studio.import_project(Path(path))
        return (
            v.project_id,
            v.number,
            f"Imported “{md(v.storyboard.title)}”.",
            storyboard(),
            *_listing(studio, v.project_id),
        )

    listing = [posters, pick, trashed]
    opening = [ctx.pid, ctx.version, message]
    landing = [*opening, ctx.screens]
    ctx.tabs["projects"].select(refresh, ctx.pid, listing, api_name="list_projects")
    ctx.demo.load(refresh, ctx.pid, listing, api_visibility="private")
    ctx.demo.load(
        follow_plan, None, [plan_progress, *landing, *listing], api_visibility="private", show_progress="hidden"
    )
    create_btn.click(
        create_from_idea,
        [idea, minutes, title],
        [plan_progress, *landing, *listing],
        api_name="create_project",
        show_progress="hidden",
    )
    plan_stop.click(stop_plan, None, plan_progress, api_visibility="private", show_progress="hidden")
    restore_btn.click(restore, trashed, opening + listing, api_name="restore_project")
    create_file_btn.click(create_from_file, board_file, landing + listing, api_name="create_from_file")
    open_btn.click(open_project, pick, landing, api_name="open_project")
    posters.open(open_poster, None, landing, api_visibility="private")
    fork_btn.click(fork_current, [ctx.pid, ctx.version], [ctx.version, message], api_name="fork_project")
    trash_btn.click(trash, ctx.pid, opening + listing, api_name="trash_project")
    export_btn.click(export, [ctx.pid, ctx.version], [export_file, message], api_name="export_project")
    import_btn.click(import_archive, import_file, landing + listing, api_name="import_project")
