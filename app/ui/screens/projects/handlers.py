"""The Projects screen's handlers: one class whose methods the page's events call with the components' values (a
test calls them the same way, no browser). A plan is a job the method follows; a film planned, opened or imported
lands on the Storyboard screen."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from app.server.jobs import Task
from app.ui.common import ask_to_stop, follow, md, need_project, notice, progress_html, ver
from app.ui.screens.projects.values import length, listing


class ProjectsHandlers:
    """What the start screen's controls do, over the Studio and the server's jobs."""

    def __init__(self, studio, jobs):
        self.studio, self.jobs = studio, jobs

    @staticmethod
    def storyboard():
        return gr.Tabs(selected="storyboard")  # where a planned, opened or imported film lands

    def refresh(self, pid):
        return listing(self.studio, pid)

    def create_from_idea(self, idea_text, mins, title_text):
        if not (idea_text or "").strip():
            raise gr.Error("write an idea first")
        text, minutes, name = idea_text.strip(), float(mins or 1.0), (title_text or "").strip() or None
        job, _ = self.jobs.start(
            "plan",
            "",
            Task("create_project", (text, minutes, name)),
            label=f"planning “{text[:40]}{'…' if len(text) > 40 else ''}”",
            exclusive=False,
        )
        yield from follow(self.jobs, job, lambda j: (progress_html(j), *[gr.skip()] * 7), self.planned)

    def planned(self, job):
        """A finished plan: open the new project on the Storyboard screen; a failed one: its message, the list
        untouched."""
        if job.state != "done":
            return progress_html(job), *[gr.skip()] * 7  # the job's line says what happened: one message
        v = job.result
        b = v.storyboard
        said = f"Planned “{b.title}”: {len(b.shots())} shots, {length(b.duration())}. Here is its storyboard."
        notice(said)
        return "", v.project_id, v.number, md(said), self.storyboard(), *listing(self.studio, v.project_id)

    def follow_plan(self):
        """A reloaded page follows the newest plan still running."""
        job = self.jobs.active("", "plan")
        if job is None:
            yield gr.skip(), *[gr.skip()] * 7
            return
        yield from follow(self.jobs, job, lambda j: (progress_html(j), *[gr.skip()] * 7), self.planned)

    def stop_plan(self):
        job = self.jobs.active("", "plan")
        return ask_to_stop(self.jobs, job)

    def create_from_file(self, path):
        from storage.files import load_storyboard

        if not path:
            raise gr.Error("choose a storyboard file first")
        v = self.studio.create_from_storyboard(load_storyboard(Path(path), limits=self.studio.config.limits))
        b = v.storyboard
        return (
            v.project_id,
            v.number,
            f"Created “{md(b.title)}” from {md(Path(path).name)}: {len(b.shots())} shots.",
            self.storyboard(),
            *listing(self.studio, v.project_id),
        )

    def opened(self, pid: str):
        v = self.studio.version(pid)
        return v.project_id, v.number, f"Opened “{md(v.storyboard.title)}” at v{v.number}.", self.storyboard()

    def open_project(self, choice):
        if not choice:
            raise gr.Error("pick a film first")
        return self.opened(choice)

    def open_poster(self, evt: gr.EventData):
        data = getattr(evt, "_data", None)
        pid = data.get("pid") if isinstance(data, dict) else None
        if not isinstance(pid, str) or not pid:
            raise gr.Error("that poster sent something unreadable: reload the page")
        return self.opened(pid)

    def fork_current(self, pid, v):
        nv = self.studio.fork(need_project(pid), ver(v))
        return nv.number, f"v{nv.number} forked from v{nv.parent_number}; it is now current."

    def trash(self, pid):
        self.studio.trash_project(need_project(pid))
        title = self.studio.project(pid).title
        return "", None, f"Moved “{md(title)}” to the trash: restore it from More › Trash.", *listing(self.studio)

    def restore(self, trashed_pid):
        if not trashed_pid:
            raise gr.Error("pick a film in the trash first")
        p = self.studio.restore_project(trashed_pid)
        v = self.studio.version(p.id)
        return p.id, v.number, f"Restored “{md(p.title)}”.", *listing(self.studio, p.id)

    def export(self, pid, v):
        from app.ui.player import EXPORTS
        from storage.schema import slug

        pid = need_project(pid)
        title = self.studio.version(pid).storyboard.title
        # the project's downloads (exports/<project>, made by the export), which its owner's disk quota counts
        out = self.studio.config.home / EXPORTS / pid / f"{slug(title)}.chief.zip"
        self.studio.export_project(pid, out)
        return str(out), f"Exported “{md(title)}” to {md(out.name)}."

    def import_archive(self, path):
        if not path:
            raise gr.Error("choose an archive first")
        v = self.studio.import_project(Path(path))
        return (
            v.project_id,
            v.number,
            f"Imported “{md(v.storyboard.title)}”.",
            self.storyboard(),
            *listing(self.studio, v.project_id),
        )
