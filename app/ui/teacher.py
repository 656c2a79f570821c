"""The Class screen (`chief serve --users`, teachers only): the class report (app/services/classroom.py) as a table and a
CSV to download, handing a project to another account (app/services/sharing.py), and the fair queue (app/server/jobs.py): every
account's jobs, pause/resume, cancel any one. Students never see the tab, and its handlers refuse them in one line
whatever they send."""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from app.services.classroom import COLUMNS, to_csv
from app.ui.common import Ctx, guard
from storage.owners import current

TABLE = [c for c in COLUMNS if c not in ("project_id", "created_at")]
# What the table's header says (the CSV keeps the column names): words, with the units
HEADERS = [
    {"disk_bytes": "disk (bytes)", "queue_seconds": "time in queue (s)"}.get(c, c.replace("_", " ")) for c in TABLE
]
QUEUE_TABLE = ["account", "kind", "state", "what", "waited / ran (s)", "job"]


class TeacherScreen:
    """Built inside its tab by `build`; each handler is a method a test calls with values."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx, self.studio = ctx, ctx.studio
        gr.Markdown("Every student's projects, versions over time, renders, disk use and the panel's scores.")
        with gr.Row():
            self.refresh = gr.Button("Refresh", elem_id="class_refresh", scale=0)
            self.download = gr.File(label="CSV", elem_id="class_csv", interactive=False)
        self.table = gr.Dataframe(headers=HEADERS, elem_id="class_table", interactive=False, wrap=True)
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
        gr.Markdown("### The queue")
        with gr.Row():
            self.queue_refresh = gr.Button("Refresh the queue", elem_id="queue_refresh", scale=0)
            self.pause_btn = gr.Button("Pause the queue", elem_id="queue_pause", scale=0)
            self.resume_btn = gr.Button("Resume", elem_id="queue_resume", scale=0)
        self.queue_state = gr.Markdown(elem_id="queue_state")
        self.queue_table = gr.Dataframe(headers=QUEUE_TABLE, elem_id="queue_table", interactive=False, wrap=True)
        with gr.Row():
            self.job = gr.Dropdown(label="Job", choices=[], elem_id="queue_job")
            self.cancel_btn = gr.Button("Cancel the job", elem_id="queue_cancel", variant="stop", scale=0)
        queue_outs = [self.queue_state, self.queue_table, self.job]
        self.queue_refresh.click(guard(self.queue), None, queue_outs, api_visibility="private")
        ctx.tabs["teacher"].select(guard(self.queue), None, queue_outs, api_visibility="private")
        self.pause_btn.click(guard(self.pause), None, queue_outs, api_visibility="private")
        self.resume_btn.click(guard(self.resume), None, queue_outs, api_visibility="private")
        self.cancel_btn.click(guard(self.cancel), [self.job], queue_outs, api_visibility="private")
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

    def queue(self):
        """Every account's jobs (live ones in the queue's order first), whether the queue is paused, the live jobs
        to choose from (Jobs.all refuses anyone but a teacher)."""
        jobs = self.ctx.jobs.all()
        rows = [[j.user, j.kind, j.state, j.label, round(j.elapsed, 1), j.id] for j in jobs]
        live = [(f"{j.user}: {j.label} ({j.state})", j.id) for j in jobs if j.running]
        waiting = sum(j.queued for j in jobs)
        state = "**Paused**: nothing more starts; what runs goes on." if self.ctx.jobs.paused else "Running."
        lanes = " ".join(_lane_line(name, lane, jobs) for name, lane in self.ctx.jobs.lanes().items())
        return f"{state} {waiting} waiting. {lanes}", rows, gr.Dropdown(choices=live, value=None)

    def pause(self):
        self.ctx.jobs.pause()
        return self.queue()

    def resume(self):
        self.ctx.jobs.resume()
        return self.queue()

    def cancel(self, job_id):
        if not job_id:
            raise gr.Error("choose a job to cancel")
        if not self.ctx.jobs.cancel(job_id):
            raise gr.Error("that job has already ended")
        return self.queue()


LANE_WORDS = {"gpu": "Renders, takes and stills", "cpu": "Plans and critiques"}


def _lane_line(name: str, lane, jobs) -> str:
    """One lane of the queue in words: what runs of its places, what waits, and the longest wait so far."""
    from app.server.queue import lane_of

    limits, running, waiting = lane
    places = f"of {limits.running} place(s)" if limits.running else "(no limit)"
    waits = [j.elapsed for j in jobs if j.queued and lane_of(j.kind) == name]
    longest = f", the longest for {round(max(waits))} s" if waits else ""
    return f"· {LANE_WORDS[name]}: {running} running {places}, {waiting} waiting{longest}."


def _row(line) -> list:
    values = {**line.model_dump(exclude={"scores"}), **line.scores, "mean_score": line.mean_score}
    if values["queue_seconds"] is None:
        values["queue_seconds"] = "not recorded"
    return ["" if values.get(c) is None else values[c] for c in TABLE]


def build(ctx: Ctx) -> None:
    TeacherScreen(ctx)
