"""The Class screen (`chief serve --users`, teachers only): the class report (app/classroom.py) as a table and a
CSV to download, and handing a project to another account (app/sharing.py). Students never see the tab, and its
handlers refuse them in one line whatever they send."""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from app.classroom import COLUMNS, to_csv
from app.ui.common import Ctx, guard
from storage.owners import current

TABLE = [c for c in COLUMNS if c not in ("project_id", "created_at")]


class TeacherScreen:
    """Built inside its tab by `build`; each handler is a method a test calls with values."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx, self.studio = ctx, ctx.studio
        gr.Markdown("Every student's projects, versions over time, renders, disk use and the panel's scores.")
        with gr.Row():
            self.refresh = gr.Button("Refresh", elem_id="class_refresh", scale=0)
            self.download = gr.File(label="CSV", elem_id="class_csv", interactive=False)
        self.table = gr.Dataframe(headers=TABLE, elem_id="class_table", interactive=False, wrap=True)
        with gr.Row():
            self.project = gr.Dropdown(label="Project", choices=[], elem_id="hand_project")
            self.to = gr.Dropdown(label="Hand to", choices=[], elem_id="hand_to")
            self.hand = gr.Button("Hand over", elem_id="hand_over", scale=0)
        self.said = gr.Markdown(elem_id="hand_said")
        outs = [self.table, self.download, self.project, self.to]
        self.refresh.click(guard(self.report), None, outs, api_visibility="private")
        ctx.tabs["teacher"].select(guard(self.report), None, outs, api_visibility="private")
        self.hand.click(guard(self.hand_over), [self.project, self.to], [self.said], api_visibility="private").then(
            guard(self.report), None, outs, api_visibility="private"
        )
        ctx.demo.load(self.shown, None, ctx.tabs["teacher"], api_visibility="private", show_progress="hidden")

    @staticmethod
    def shown():
        actor = current()
        return gr.Tab(visible=actor is not None and actor.teacher)

    def report(self):
        """The table, the CSV and the hand-over choices (the report refuses anyone but a teacher)."""
        lines = self.studio.classroom.report()
        rows = [_row(ln) for ln in lines]
        folder = Path(tempfile.mkdtemp(dir=Path(self.studio.config.home) / "tmp" / "gradio"))
        csv_path = folder / "class-report.csv"
        csv_path.write_text(to_csv(lines))
        projects = sorted({(f"{ln.title} — {ln.account} ({ln.project_id})", ln.project_id) for ln in lines})
        accounts = [a.name for a in self.studio.accounts.list()]
        return rows, str(csv_path), gr.Dropdown(choices=projects), gr.Dropdown(choices=accounts)

    def hand_over(self, pid, to):
        if not pid or not to:
            raise gr.Error("choose a project and the account to hand it to")
        access, before = self.studio.sharing.hand_over(pid, to)
        files = getattr(self.ctx.demo, "chief_files", None)
        if files is not None:
            files.forget(before)  # its next answers say what it may still fetch
        return f"{pid} is now {access.owner}'s (was {before}'s)."


def _row(line) -> list:
    values = {**line.model_dump(exclude={"scores"}), **line.scores, "mean_score": line.mean_score}
    if values["queue_seconds"] is None:
        values["queue_seconds"] = "not recorded"
    return ["" if values.get(c) is None else values[c] for c in TABLE]


def build(ctx: Ctx) -> None:
    TeacherScreen(ctx)
