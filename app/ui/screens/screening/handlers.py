"""The Screening room's handlers: one class whose methods the page's events call with the components' values (a test
calls them the same way, no browser). The critics run as a job the method follows."""

from __future__ import annotations

import gradio as gr

from app.server.jobs import Task
from app.ui import scenes
from app.ui.common import ask_to_stop, follow, need_project, progress_html, ver
from app.ui.player import film_video
from app.ui.screens.screening.values import SCENE, WHOLE_FILM, cards_html, earlier_html
from app.ui.timeline import drafts_note, shot_starts, strip_html


class ScreeningHandlers:
    """What the Screening room's controls do, over the Studio and the server's jobs."""

    def __init__(self, studio, jobs):
        self.studio, self.jobs = studio, jobs
        self.diversity_cache: dict[tuple, str] = {}  # the panel's diversity per set of critiques (embeddings are slow)

    def diversity_text(self, pid, number, crits) -> str:
        if len(crits) < 2:
            return ""
        key = (pid, number, tuple(c.id for c in crits))
        if key not in self.diversity_cache:
            rep = self.studio.diversity(pid, number)
            if rep is None:
                text = ""
            elif rep.collapsed:
                text = (
                    f"⚠ **The panel agrees too much** (similarity {rep.mean_pairwise_cosine:.2f} ≥ "
                    f"{rep.threshold:.2f}): add different personas in Settings for a wider view."
                )
            else:
                text = f"Panel diversity: similarity {rep.mean_pairwise_cosine:.2f} (below {rep.threshold:.2f}: distinct voices)."
            self.diversity_cache[key] = text
        return self.diversity_cache[key]

    def note_rows(self, pid, v) -> list[dict]:
        return [
            {
                "id": n.id,
                "text": n.text,
                "about": f"about {n.about()}" if n.shot_id or not n.scope.whole else "whole film",
            }
            for n in self.studio.notes(pid, ver(v))
        ]

    def cards_view(self, pid, v) -> str:
        version = self.studio.version(pid, ver(v))
        return cards_html(
            self.studio.critiques(pid, version.number),
            shot_starts(version.storyboard, self.studio.render_info(pid, version.number)),
        )

    def load(self, pid, v):
        if not pid:
            yield (
                "",
                film_video(self.studio, "", None),
                "",
                "",
                "",
                "",
                [],
                gr.Dropdown(choices=[WHOLE_FILM], value=WHOLE_FILM),
                "",
            )
            return
        version = self.studio.version(pid, ver(v))
        info = self.studio.render_info(pid, version.number)
        board = version.storyboard
        choices = (
            [WHOLE_FILM]
            + [(f"scene {sc.scene_id} · {sc.title}", SCENE + sc.scene_id) for sc in board.scenes]
            + [s.shot_id for s in board.shots()]
        )
        starts = shot_starts(board, info)  # the film's times, as the strip's: a title card shifts every shot
        html = cards_html(self.studio.critiques(pid, version.number), starts)
        job = self.jobs.active(pid, "critique")
        # not rendered yet: the last rendered ancestor's film stays on screen, labelled, until this version's exists
        last = self.studio.last_film(pid, version.number) if info is None else None
        shown, shown_board = (
            (last.render, self.studio.version(pid, last.render.version).storyboard) if last else (info, board)
        )
        yield (
            progress_html(job),
            film_video(
                self.studio,
                pid,
                shown,
                last.render.version if last else version.number,
                label=(f"Film — {last.describe()}: render to watch v{version.number}" if last else "Film")
                + (f" — {drafts_note(shown)}" if shown is not None and drafts_note(shown) else ""),
            ),
            strip_html(self.studio, shown_board, shown, "#screening_film video", controls=True, project=pid),
            html,
            gr.skip(),
            earlier_html(self.studio.earlier_notes(pid, version.number)),
            self.note_rows(pid, v),
            gr.Dropdown(choices=choices, value=WHOLE_FILM),
            "",
        )
        if job is not None:
            yield from follow(
                self.jobs,
                job,
                lambda j: (progress_html(j) if j.running else gr.skip(), *[gr.skip()] * 8),
                lambda j: (progress_html(j), gr.skip(), gr.skip(), self.cards_view(pid, v), *[gr.skip()] * 5),
            )

    def critique(self, pid, v, scene_id=scenes.WHOLE):
        from agents.diversity import warm

        warm()  # the panel's diversity needs the sentence model: it loads while the critics watch
        pid, _, job = scenes.start(
            self.jobs,
            self.studio,
            "critique",
            pid,
            v,
            scene_id,
            lambda n, scope: Task("critique", (pid, n), {"scope": scope}),
            "critics watching",
        )
        # "done" shows with the cards, never before them; the diversity line follows (load_diversity, chained)
        yield from follow(
            self.jobs,
            job,
            lambda j: (progress_html(j) if j.running else gr.skip(), gr.skip(), gr.skip()),
            lambda j: (progress_html(j), self.cards_view(pid, v), gr.skip()),
        )

    def stop(self, pid):
        job = self.jobs.active(pid or "", "critique")
        return ask_to_stop(self.jobs, job)

    def add_note(self, pid, v, text, shot):
        pid = need_project(pid)
        if not (text or "").strip():
            raise gr.Error("write the note first")
        if shot and shot.startswith(SCENE):
            self.studio.add_note(
                pid, text, None, ver(v), scope=self.studio.scope(pid, ver(v), scene=shot[len(SCENE) :])
            )
        else:
            self.studio.add_note(pid, text, None if shot in (None, "", WHOLE_FILM) else shot, ver(v))
        return "", self.note_rows(pid, v), "Note added."

    def edit_note(self, pid, v, note_id, text):
        pid = need_project(pid)
        if not (text or "").strip():
            raise gr.Error("a note cannot be empty: delete it instead")
        self.studio.edit_note(pid, note_id, text, ver(v))
        return self.note_rows(pid, v), "Note saved."

    def delete_note(self, pid, v, note_id):
        pid = need_project(pid)
        self.studio.delete_note(pid, note_id, ver(v))
        return self.note_rows(pid, v), "Note deleted."

    def load_diversity(self, pid, v):
        """Panel diversity loads sentence embeddings: it follows the screen instead of holding it up."""
        if not pid:
            return ""
        number = self.studio.version(pid, ver(v)).number
        return self.diversity_text(pid, number, self.studio.critiques(pid, number))
