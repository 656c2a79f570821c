"""The History screen's handlers: one class whose methods the page's events call with the components' values (a
test calls them the same way, no browser)."""

from __future__ import annotations

import gradio as gr

from app.ui.common import need_project
from app.ui.player import film_video
from app.ui.screens.history.values import OVERALL, diff_html, graph_svg, plot_svg, score_series


class HistoryHandlers:
    """What the History screen's controls do, over the Studio."""

    def __init__(self, studio):
        self.studio = studio
        self.known: dict[str, str] = {}  # version id -> what it changed (a saved version never changes)

    def plot_or_nothing(self, pid, dimension):
        """The score plot for another dimension ("" while no project is open)."""
        return self.plot_for(pid, dimension) if pid else ""

    def tree(self, pid) -> str:
        """The version graph, edits labelled with what they changed."""
        rows = self.studio.versions(pid)
        todo = [r for r in rows if r.kind == "edit" and not r.draft and r.id not in self.known]
        if todo:
            words = self.studio.change_words(pid, [r.number for r in todo])
            self.known.update({r.id: words[r.number] for r in todo})
        return graph_svg(rows, {r.number: self.known[r.id] for r in rows if r.id in self.known})

    def plot_for(self, pid, dimension):
        return plot_svg(
            *score_series(self.studio, pid, self.studio.versions(pid), dimension or OVERALL), dimension or OVERALL
        )

    def load(self, pid, v, dimension):
        if not pid:
            return "", None, None, None, ""
        rows = self.studio.versions(pid)
        current = next(r for r in rows if r.current)
        parent = current.parent or current.number
        return self.tree(pid), current.number, parent, current.number, self.plot_for(pid, dimension)

    def compare(self, pid, va, vb):
        pid = need_project(pid)
        if va in (None, "") or vb in (None, ""):
            raise gr.Error("choose two versions to compare")
        d = self.studio.diff(pid, int(va), int(vb))
        films = [film_video(self.studio, pid, self.studio.render_info(pid, n), n) for n in (int(va), int(vb))]
        scores = [
            [k.replace("_", " "), x, y, (round(y - x, 2) if x is not None and y is not None else None)]
            for k, (x, y) in d.scores.items()  # score names in words ("story clarity")
        ]
        return films[0], films[1], diff_html(d), scores

    def pick(self, pid, evt: gr.EventData):
        pid = need_project(pid)
        n = int(evt.version)
        parent = self.studio.version(pid, n).parent_number or n
        return (
            n,
            parent,
            n,
            *self.compare(pid, parent, n),
            f"v{n} selected: compared with v{parent}. Open it or fork a branch from it.",
        )

    def checkout(self, pid, n):
        pid = need_project(pid)
        if n in (None, ""):
            raise gr.Error("choose a version")
        v = self.studio.checkout(pid, int(n))
        return v.number, f"v{v.number} is now current.", self.tree(pid)

    def fork(self, pid, n):
        pid = need_project(pid)
        if n in (None, ""):
            raise gr.Error("choose a version")
        v = self.studio.fork(pid, int(n))
        return (
            v.number,
            f"v{v.number} forked from v{v.parent_number}; it is now current.",
            self.tree(pid),
        )
