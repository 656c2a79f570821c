"""The Story screen's handlers: `StoryHandlers` for the title, logline and style form, `ReferencesHandlers` for the
bible's cards and the consistency table under it. Their methods are what the page's events call with the
components' values (a test calls them the same way, no browser); a drawn reference is a job the method follows."""

from __future__ import annotations

import gradio as gr

from app.server.jobs import Task
from app.ui.board_media import uploaded_file
from app.ui.common import ask_to_stop, branch_note, follow, named, need_project, notice, progress_html, ver
from app.ui.screens.story.references import RefAction, consistency_html, edited_bible, refs_json, voice_words
from app.ui.screens.story.values import rows_to_characters
from app.ui.widgets import saved_message


class StoryHandlers:
    """What the Story form's controls do, over the Studio."""

    def __init__(self, studio):
        self.studio = studio
        self.references: ReferencesHandlers | None = None  # the bible's panel under the form, once built

    def load(self, pid, v):
        if not pid:
            return "", "", "", [], ""
        b = self.studio.version(pid, ver(v)).storyboard
        return (
            b.title,
            b.logline,
            b.style_guide,
            [[c.name, c.description] for c in b.characters],
            f"Editing v{ver(v) or ''}",
        )

    def save_story(self, pid, v, title_text, logline_text, style_text, char_rows):
        from storage.schema import Storyboard

        pid = need_project(pid)
        base = self.studio.version(pid, ver(v))
        data = base.storyboard.model_dump()
        data.update(
            title=title_text,
            logline=logline_text,
            style_guide=style_text,
            characters=rows_to_characters(char_rows, base.storyboard.characters),
        )
        nv, branched = self.studio.save_storyboard(pid, Storyboard.model_validate(data), base.number, "story edit")
        return nv.number, saved_message(nv, branched)

    def save_page(self, pid, v, title_text, logline_text, style_text):
        """The page's Save: the bible stays as the version has it (its cards save their own changes)."""
        base = self.studio.version(need_project(pid), ver(v)).storyboard
        rows = [[c.name, c.description] for c in base.characters]
        return self.save_story(pid, v, title_text, logline_text, style_text, rows)


class ReferencesHandlers:
    """What the bible's cards, Stop and Measure do, over the Studio and the server's jobs."""

    def __init__(self, studio, jobs):
        self.studio, self.jobs = studio, jobs

    def refs_value(self, pid: str, number: int, note: str = "") -> str:
        board = self.studio.version(pid, number).storyboard
        return refs_json(self.studio, board, note, pid, number, self.studio.reference_effects(pid, number))

    def table_html(self, pid: str, number: int) -> str:
        """Without a model the table costs nothing and says "not measured"; with one, measuring waits for a click."""
        if self.studio.config.embed_model:
            return "<p class='hint'>Press <b>Measure consistency</b> to compare the shots.</p>"
        return consistency_html(self.studio.consistency(pid, number))

    def made(self, pid: str, number: int, note: str):
        """A new version with other references: the page follows it."""
        note += branch_note(self.studio, pid, number)
        return "", "", number, self.refs_value(pid, number, note), self.table_html(pid, number), f"Editing v{number}"

    def followed(self, pid: str, number: int, job):
        from app.server.jobs import DONE

        def final(j):
            if j.state != DONE:
                return progress_html(j), j.id, *[gr.skip()] * 4
            return progress_html(j), *self.made(pid, j.result.number, f"v{j.result.number}: a reference was drawn.")[1:]

        yield from follow(self.jobs, job, lambda j: (progress_html(j), j.id, *[gr.skip()] * 4), final)

    def load_refs(self, pid, v):
        if not pid:
            yield "", "", gr.skip(), None, "", gr.skip()
            return
        version = self.studio.version(pid, ver(v))
        job = self.jobs.active(pid, "reference")
        yield (
            progress_html(job),
            job.id if job else "",
            gr.skip(),
            self.refs_value(pid, version.number),
            self.table_html(pid, version.number),
            gr.skip(),
        )
        if job is not None:
            yield from self.followed(pid, version.number, job)

    def act(self, pid, v, evt: gr.EventData):
        a = RefAction.of(getattr(evt, "_data", None))
        pid = need_project(pid)
        n = self.studio.version(pid, ver(v)).number
        kind = "location" if a.location else "character"
        if a.action == "generate":
            job, started = self.jobs.start(
                "reference",
                pid,
                Task("generate_reference", (pid, a.name, a.location, None, n)),
                label=f"a reference of the {kind}",
                version=n,
            )
            if not started:
                notice(f"{job.label} is being made: wait for it or press Stop")
            yield from self.followed(pid, n, job)
            return
        if a.action == "voice":
            nv, changed = self.studio.set_voice(pid, a.name, a.voice.changes(), n)
            words = voice_words(self.studio.voices(pid, nv.number)[a.name])
            if not changed:
                notice(f"{a.name} already sounds like that: no new version")
                yield gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()
                return
            yield self.made(pid, nv.number, f"v{nv.number}: {a.name}'s voice is {words}.")
            return
        if a.action in ("describe", "add", "remove"):
            base = self.studio.version(pid, n)
            board = edited_bible(base.storyboard, a)
            if board == base.storyboard:
                notice("nothing changed: no new version")
                yield gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()
                return
            what = {"add": f"{a.new_name.strip()} added", "remove": f"{a.name} removed"}.get(a.action, "")
            if not what:
                renamed = a.new_name.strip() != a.name
                what = f"{a.name} is {a.new_name.strip()} now" if renamed else f"{a.name}'s description changed"
            nv, _ = self.studio.save_storyboard(pid, board, n, f"character bible: {what}")
            yield self.made(pid, nv.number, f"v{nv.number}: {what}.")
            return
        if a.action == "upload":
            nv = self.studio.add_reference(pid, a.name, uploaded_file(a.path), a.location, n)
            yield self.made(pid, nv.number, f"{named(nv)}: the picture is a reference of {a.name} now.")
        else:
            nv = self.studio.clear_references(pid, a.name, a.location, n)
            yield self.made(pid, nv.number, f"{named(nv)}: {a.name} has no reference images.")

    def stop_job(self, pid, job_id):
        job = self.jobs.get(job_id or "")
        job = job if job is not None and job.project == pid else self.jobs.active(pid or "", "reference")
        return ask_to_stop(self.jobs, job)

    def measure_now(self, pid, v):
        pid = need_project(pid)
        return consistency_html(self.studio.consistency(pid, ver(v)))
