"""Long work the web server tracks: renders (a film or one shot), critiques, plans, proposals, keyframes, takes and
references.

A job runs in its own thread, not in a page's request, so a reloaded page or a second tab finds the running
job (`Jobs.active`) and follows its progress (`Jobs.wait`), and can stop it (`Jobs.stop`). A job belongs to the
browser session that started it (`owner`: the web app passes `app.ui.common.page_session`, the page's session
cookie): lookups (`active`, `last`, `get`) see only the asking session's jobs, so another session can neither
read a job's label (a plan's idea) and progress nor stop it. A project has at most one job of a kind at a time:
asking again from the same session returns the running one; from another session it is refused (`JobBusy`).
Stopping is an outcome like finishing ("stopped"), not an error.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.errors import one_line
from app.progress import streamed
from storage.run import (
    AssembleProgress,
    Cancelled,
    CancelToken,
    DoneProgress,
    PanelProgress,
    PlanProgress,
    ProgressEvent,
    ProgressSink,
    RefineProgress,
    ShotProgress,
    WatchProgress,
)
from storage.schema import new_id

RUNNING, DONE, FAILED, STOPPED = "running", "done", "failed", "stopped"
KEEP = 50  # finished jobs remembered (their outcome is shown to a tab that reloads after the end)


@dataclass
class Job:
    id: str
    kind: str  # "render" | "critique" | "plan" | "refine" | "keyframes" | "takes" | "reference"
    project: str  # "" for a plan (the project does not exist yet)
    owner: str  # the browser session that started it ("" for callers without one)
    label: str  # what the job is doing, for people: "render v3", "re-render shot s2"
    version: int | None = None
    state: str = RUNNING
    fraction: float = 0.0  # 0..1 (a plan: its scenes written; a proposal: 0 until done)
    desc: str = "starting"
    message: str = ""  # the outcome in one line (failed, stopped)
    result: Any = None
    cancel: CancelToken = field(default_factory=CancelToken)
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    seq: int = 0  # bumped on every change, so followers wait for something new

    @property
    def running(self) -> bool:
        return self.state == RUNNING

    @property
    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started


class JobBusy(ValueError):
    """Another session runs a job of this kind on the project."""


class Jobs:
    def __init__(self, owner: Callable[[], str] = lambda: "", check: Callable[[str], Any] = lambda pid: None) -> None:
        """`owner()` names the session asking (called in the asking request's thread); `check(project)` raises when
        the asker may not open that project (the web app: the Studio's lookup, storage.owners), before anything
        about the project's jobs is said."""
        self._jobs: dict[str, Job] = {}
        self._cond = threading.Condition()
        self._owner, self._check = owner, check

    def start(
        self,
        kind: str,
        project: str,
        fn: Callable[[ProgressSink, CancelToken], Any],
        *,
        label: str,
        version: int | None = None,
        exclusive: bool = True,
    ) -> tuple[Job, bool]:
        """Run `fn(progress, cancel)` in a thread. With `exclusive`, a job of this kind already running on
        the project is returned instead (started=False), or refused (`JobBusy`) when another session started it.
        Returns (job, started)."""
        owner = self._owner()
        if project:
            self._check(project)
        with self._cond:
            if exclusive:
                running = next(
                    (j for j in self._jobs.values() if j.running and (j.project, j.kind) == (project, kind)), None
                )
                if running is not None and running.owner == owner:
                    return running, False
                if running is not None:
                    raise JobBusy(f"another page is running a {kind} on this project: wait until it ends")
            job = Job(id=new_id("job"), kind=kind, project=project, owner=owner, label=label, version=version)
            self._jobs[job.id] = job
            self._forget_old()
        # the job runs in the asking request's context: as the account that asked (storage.owners)
        run = contextvars.copy_context().run
        threading.Thread(target=run, args=(self._run, job, fn), name=f"chief-{job.id}", daemon=True).start()
        return job, True

    def _run(self, job: Job, fn) -> None:
        try:
            result = fn(lambda e: self._progress(job, e), job.cancel)
        except Cancelled:
            self._finish(job, STOPPED, _stopped_text(job.kind))
        except Exception as e:  # noqa: BLE001 - any failure is the job's outcome, shown in one line
            self._finish(job, FAILED, one_line(e))
        else:
            self._finish(job, DONE, "", result)

    def _progress(self, job: Job, event: ProgressEvent) -> None:
        fraction, desc = describe(event)
        with self._cond:
            if job.running:
                job.fraction = max(job.fraction, fraction) if fraction is not None else job.fraction
                job.desc = desc
                job.seq += 1
                self._cond.notify_all()

    def _finish(self, job: Job, state: str, message: str, result: Any = None) -> None:
        with self._cond:
            job.state, job.message, job.result, job.ended = state, message, result, time.monotonic()
            job.fraction = 1.0 if state == DONE else job.fraction
            job.seq += 1
            self._cond.notify_all()

    def _forget_old(self) -> None:
        done = [j for j in self._jobs.values() if not j.running]
        for j in done[: max(0, len(done) - KEEP)]:
            del self._jobs[j.id]

    def get(self, job_id: str) -> Job | None:
        """The asking session's job `job_id`, if any."""
        job = self._jobs.get(job_id)
        return job if job is not None and job.owner == self._owner() else None

    def active(self, project: str, kind: str) -> Job | None:
        """The asking session's running job of `kind` on `project`, if any."""
        owner = self._owner()
        with self._cond:
            return next(
                (
                    j
                    for j in reversed(self._jobs.values())
                    if j.running and (j.project, j.kind, j.owner) == (project, kind, owner)
                ),
                None,
            )

    def last(self, project: str, kind: str) -> Job | None:
        """The asking session's newest job of `kind` on `project`, running or finished."""
        owner = self._owner()
        with self._cond:
            return next(
                (j for j in reversed(self._jobs.values()) if (j.project, j.kind, j.owner) == (project, kind, owner)),
                None,
            )

    def stop(self, job: Job) -> bool:
        """Ask a running job to stop (it stops at its next check: a step, a shot, a critic, or ffmpeg)."""
        if not job.running:
            return False
        job.cancel.cancel()
        with self._cond:
            job.desc = "stopping…"
            job.seq += 1
            self._cond.notify_all()
        return True

    def wait_ended(self, job: Job, timeout: float) -> bool:
        """Block until the job ended or `timeout` passed; True when it ended."""
        with self._cond:
            return self._cond.wait_for(lambda: not job.running, timeout=timeout)

    def wait(self, job: Job, seen: int, timeout: float = 1.0) -> int:
        """Block until the job changed since `seen` (its seq) or `timeout` passed; returns the current seq."""
        with self._cond:
            self._cond.wait_for(lambda: job.seq != seen, timeout=timeout)
            return job.seq


def describe(e: ProgressEvent) -> tuple[float | None, str]:
    """A service progress event as (fraction done or None, what is happening in words)."""
    match e:
        case ShotProgress():  # a shot of a render, a still (keyframe or reference) or a take: one of n, by steps
            n, i, steps = max(e.shots, 1), e.shot_index, e.steps or 1
            frac = (i + min(e.step / steps, 1.0)) / n
            what = f"step {e.step}/{steps}" if e.status == "rendering" else e.status
            item = {
                "render": f"shot {i + 1}/{e.shots} ({e.shot_id})",
                "keyframe": f"still {i + 1}/{e.shots} ({e.shot_id})",
                "take": f"take {i + 1}/{e.shots} of {e.shot_id}",
            }[e.stage]
            return min(frac, 0.99), f"{item} · {what}"
        case AssembleProgress():
            return 0.99, "assembling the film"
        case PanelProgress():
            part = f", part {e.chunk}/{e.chunks}" if e.chunks > 1 else ""
            return (
                max(e.done / max(e.total, 1), e.fraction),
                f"{e.done}/{e.total} critics finished ({e.persona}{part}){streamed(e)}",
            )
        case WatchProgress():  # one critic, outside a panel
            part = f" part {e.chunk}/{e.chunks}" if e.chunks > 1 else ""
            return None, f"{e.persona} is watching{part}{streamed(e)}"
        case PlanProgress():
            what = " ".join(x for x in (e.scene, e.status) if x)
            return (
                e.done / e.total if e.total else None,
                f"planning: {e.done}/{e.total} written · {what}{streamed(e)}",
            )
        case RefineProgress():
            return None, f"the refiner is writing{streamed(e)}"
        case DoneProgress():
            return 1.0, "done"
    raise TypeError(f"not a progress event: {e!r}")


def _stopped_text(kind: str) -> str:
    return {
        "render": "Stopped. Finished shots are kept: render again to go on from there.",
        "critique": "Stopped. Nothing of this screening was saved.",
        "plan": "Stopped. No project was made.",
        "refine": "Stopped. No proposal was made.",
        "keyframes": "Stopped. Finished stills are kept as candidates; nothing was approved.",
        "takes": "Stopped. Finished takes are kept.",
        "reference": "Stopped. No reference was added.",
    }.get(kind, "Stopped.")
