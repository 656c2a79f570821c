"""The Render screen's handlers: one class whose methods the page's events call with the components' values (a test
calls them the same way, no browser). A render is a job the method follows; a reloaded page follows it again."""

from __future__ import annotations

import gradio as gr

from app.server.jobs import Task
from app.ui import scenes
from app.ui.common import ask_to_stop, esc, follow, need_project, notice, progress_html, ver
from app.ui.player import handoff_path
from app.ui.screens.render.values import RENDERING, outputs_for
from app.ui.widgets import default_tier
from storage.records import RenderRecord


def lost_html(lost) -> str:
    """A render the server lost (it stopped before the render ended), said on the page with what Render does now."""
    if lost is None:
        return ""
    job, kept, total = lost
    reuse = f"the {kept} of {total} shots it finished are reused" if kept else "nothing of it was finished"
    return (
        f"<div class='job lost' data-state='lost' data-job='{esc(job.id)}'><b>{esc(job.label)}</b> · lost: the "
        f"server stopped before it ended. Press Render to render again: {reuse}.</div>"
    )


class RenderHandlers:
    """What the Render screen's controls do, over the Studio and the server's jobs."""

    def __init__(self, studio, jobs):
        self.studio, self.jobs = studio, jobs

    def default_tier(self, pid, v):
        """The Draft/Final switch set to the version's default tier, and its note."""
        return default_tier(self.studio, pid, v)

    def kept_version(self, pid, v):
        """After a render: the version the switch made (`do_render`), which the page follows; else nothing."""
        if not pid:
            return gr.skip()
        current = self.studio.version(pid).number
        return current if current != ver(v) else gr.skip()

    def frames(self, pid, number):
        """A running job's progress; a version with no film yet says it is rendering (not "not rendered yet")."""
        unrendered = self.studio.render_info(pid, number) is None and self.studio.last_film(pid, number) is None

        def frame(job):
            return progress_html(job), gr.skip(), RENDERING if unrendered else gr.skip(), *[gr.skip()] * 3

        return frame

    def final(self, pid, v):
        def show(job):
            number = ver(v) or job.version
            if job.state == "done":
                # a shot rendered from the Storyboard is a render job too; its result is that shot's clip
                info = job.result if isinstance(job.result, RenderRecord) else self.studio.render_info(pid, number)
                return "", *outputs_for(self.studio, pid, number, info)
            return progress_html(job), *outputs_for(self.studio, pid, number, self.studio.render_info(pid, number))

        return show

    def load(self, pid, v):
        """The latest film of the version, or the running render's progress (then its film)."""
        if not pid:
            yield "", *outputs_for(self.studio, pid, None, None)
            return
        job = self.jobs.active(pid, "render")
        if job is None:
            number = self.studio.version(pid, ver(v)).number
            yield (
                lost_html(self.studio.lost_render(pid, number)),
                *outputs_for(self.studio, pid, number, self.studio.render_info(pid, number)),
            )
            return
        yield from follow(self.jobs, job, self.frames(pid, ver(v) or job.version), self.final(pid, v))

    def do_render(self, pid, v, scene_id=scenes.WHOLE, tier=None):
        """Render the version (or the picked scene) at the switch's tier (None: the version's default)."""
        if tier not in (None, "draft", "final"):
            raise ValueError(f"unknown tier {tier!r}: draft or final")
        version = self.studio.version(need_project(pid), ver(v))
        shown = tier or version.storyboard.film.tier
        if shown != version.storyboard.film.tier:
            # the switch flipped: the project's tier from now on, kept in its film options (a new version, as
            # `chief film P --tier` makes), so a reload and every later version show it (issue 57.7)
            version, _ = self.studio.set_film_options(version.project_id, {"tier": shown}, version.number)
        pid, number, job = scenes.start(
            self.jobs,
            self.studio,
            "render",
            pid,
            version.number,
            scene_id,
            lambda n, scope: Task("render", (pid, n), {"scope": scope, "tier": shown}),
            f"{shown} render",
        )
        yield from follow(self.jobs, job, self.frames(pid, number), self.final(pid, number))

    def stop(self, pid):
        job = self.jobs.active(pid or "", "render")
        if job is None:
            notice("nothing is rendering for this project")
            return gr.skip()
        return ask_to_stop(self.jobs, job)

    def show_clip(self, pid, v, shot_id):
        if not (pid and shot_id):
            return None
        info = self.studio.render_info(pid, ver(v))
        last = self.studio.last_film(pid, ver(v)) if info is None else None
        info = last.render if last is not None else info
        rec = info.shot(shot_id) if info else None
        if rec is None:
            raise gr.Error(f"no clip for shot {shot_id} in this version's render")
        return str(self.studio.clip_path(rec.sha256))

    def hand_off(self, pid, v):
        """The hand-off zip, written to the project's exports (served from there) and offered for download."""
        pid = need_project(pid)
        number = self.studio.version(pid, ver(v)).number
        return [str(self.studio.export_handoff(pid, number, handoff_path(self.studio, pid, number)))]
