"""Long work the web server tracks: renders (a film or one shot), critiques, plans, proposals, keyframes, takes and
references.

A job is asked for as a `Task` (a Studio method and its arguments, as data) and runs on a thread of its own here,
its Task handed to the runner: a worker process of its lane on a class server (app/workers.py), else the Studio in
this process (`in_process`). A page does not run it: a reloaded page or a second tab finds the live job (`Jobs.active`)
and follows it (`Jobs.until` on the event loop, holding no thread; `Jobs.wait` for a caller with a thread of its own),
and can stop it (`Jobs.stop`). A job belongs to whoever asked (`owner`: the web app passes `app.ui.common.page_session`
— the signed-in account, so any of its sessions sees and stops it; without a sign-in, the browser session): lookups
(`active`, `last`, `get`) see only the asker's jobs, so another can neither read a job's label (a plan's idea) and
progress nor stop it (its Stop does nothing). A project has at most one job of a kind at a time, queued or running:
asking again returns that one; another asker is refused (`JobBusy`). Stopping is an outcome like finishing
("stopped"), not an error.

Queued kinds wait in the fair queue's two lanes (app/server/queue.py: renders, takes and stills in the GPU lane;
plans and critiques in the CPU lane), admitted round-robin between accounts (`user`: storage.owners' acting account)
under each lane's places and one per account. A waiting job is "queued"; its line says its place in its lane and,
from measured durations only, an estimate. A teacher may pause the queue and cancel any job (`pause`, `resume`,
`cancel`, `all`, `lanes`). Quotas (app/server/quotas.py) are checked before a job is written anywhere, and the counts
are taken and the job written under one lock. With a repository, every job is written to the `jobs` table as it is
queued, starts and ends (`chief queue`; the teacher's report reads the time waited).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.errors import StudioError, one_line
from app.server.progress import streamed
from app.server.queue import LANES, QUEUED_KINDS, Durations, FairQueue, Limits, lane_of, line, wait_estimate
from app.server.quotas import Quotas
from storage import owners
from storage.records import JobRecord
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
from storage.schema import new_id, utcnow

QUEUED, RUNNING, DONE, FAILED, STOPPED = "queued", "running", "done", "failed", "stopped"
KEEP = 50  # finished jobs remembered (their outcome is shown to a tab that reloads after the end)
SERVER = f"{socket.gethostname()}:{os.getpid()}"  # names this process in the jobs' records


@dataclass(eq=False)
class Job:
    id: str
    kind: str  # "render" | "critique" | "plan" | "refine" | "keyframes" | "takes" | "reference"
    project: str  # "" for a plan (the project does not exist yet)
    owner: str  # the browser session that started it ("" for callers without one)
    label: str  # what the job is doing, for people: "render v3", "re-render shot s2"
    user: str = owners.LOCAL_OWNER  # the account that asked: the queue is fair between accounts
    version: int | None = None
    state: str = RUNNING
    fraction: float = 0.0  # 0..1 (a plan: its scenes written; a proposal: 0 until done)
    desc: str = "starting"
    message: str = ""  # the outcome in one line (failed, stopped)
    result: Any = None
    cancel: CancelToken = field(default_factory=CancelToken)
    started: float = field(default_factory=time.monotonic)  # queued, then started (monotonic)
    ended: float | None = None
    seq: int = 0  # bumped on every change, so followers wait for something new
    seq_queued: int = 0  # the order jobs were asked for (the queue's tie-break)
    stop_text: str = ""  # the outcome's words when someone else stopped it (the teacher)
    queued_at: datetime = field(default_factory=utcnow)
    started_at: datetime | None = None
    ended_at: datetime | None = None
    _run: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        """Not ended yet: queued or running (what a page follows)."""
        return self.state in (QUEUED, RUNNING)

    @property
    def queued(self) -> bool:
        return self.state == QUEUED

    @property
    def elapsed(self) -> float:
        """Seconds waited so far while queued, then seconds run."""
        return (self.ended or time.monotonic()) - self.started

    def record(self) -> JobRecord:
        return JobRecord(
            id=self.id,
            owner=self.user,
            kind=self.kind,
            project=self.project,
            version=self.version,
            label=self.label,
            state=self.state,  # pyright: ignore[reportArgumentType] - one of the JobState literals
            message=self.message,
            server=SERVER,
            queued_at=self.queued_at,
            started_at=self.started_at,
            ended_at=self.ended_at,
        )


@dataclass(frozen=True)
class Task:
    """A job's work as data: the Studio method to call and its arguments (progress and cancel are added). Picklable,
    so a worker process (app/workers.py) runs it exactly as the web process would (`bound`)."""

    method: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def bound(self, studio) -> Callable[[ProgressSink, CancelToken], Any]:
        return lambda progress, cancel: getattr(studio, self.method)(
            *self.args, **self.kwargs, progress=progress, cancel=cancel
        )


# runner(task, lane, progress, cancel) -> the task's result: where a Task runs (in this process, or a worker's)
Runner = Callable[[Task, str, ProgressSink, CancelToken], Any]


def in_process(studio) -> Runner:
    """Tasks run on the job's own thread in this process, against `studio` (one person's server, Ray, tests)."""
    return lambda task, lane, progress, cancel: task.bound(studio)(progress, cancel)


class JobBusy(ValueError):
    """Another session runs a job of this kind on the project."""


class Jobs:
    def __init__(
        self,
        owner: Callable[[], str] = lambda: "",
        check: Callable[[str], Any] = lambda pid: None,
        *,
        limits: Limits = Limits(),
        cpu: Limits = Limits(),
        quotas: Quotas = Quotas(),
        repo=None,
        actor: Callable[[], owners.Actor | None] = owners.current,
        runner: Runner | None = None,
    ) -> None:
        """`owner()` names the session asking (called in the asking request's thread); `check(project)` raises when
        the asker may not open that project (the web app: the Studio's lookup, storage.owners), before anything
        about the project's jobs is said. `limits`: the GPU lane's places (renders, takes, stills); `cpu`: the CPU lane's
        (plans, critiques; app.server.queue.LANES); `quotas`: per account; `repo`: where jobs
        are written (storage.repository.Repository; None: kept in memory only); `actor()`: the account asking; `runner`: where a job given as a
        `Task` runs (app/workers.py's worker processes; None: a Task needs a runner)."""
        self._jobs: dict[str, Job] = {}
        self._cond = threading.Condition()
        self._owner, self._check, self._actor = owner, check, actor
        self._lanes = {"gpu": FairQueue(limits), "cpu": FairQueue(cpu)}
        self._quotas, self._repo, self._runner = quotas, repo, runner
        self._writing = threading.Lock()  # one job record written at a time, each as the job is then
        self._admitting = threading.Lock()  # one job asked for at a time: checked against the quotas, then written
        self._asked = 0
        self._wakers: set[tuple[asyncio.AbstractEventLoop, Callable[[], None]]] = set()  # pages waiting on the loop
        self.durations = Durations(self._measured)
        if repo is not None:
            _lose_dead_servers(repo)

    @classmethod
    def for_studio(
        cls,
        studio,
        owner: Callable[[], str],
        check: Callable[[str], Any],
        shared: bool = False,
        runner: Runner | None = None,
    ) -> Jobs:
        """The web server's jobs over `studio`, their records in the studio's database and its quotas. `shared`
        (`chief serve --users`: a class on one server): the queue's limits from the configuration (`queue_running`
        0: as many as the backend renders at once — 1 on one device, one per render worker on Ray). One person's
        server admits every job at once, as before the queue: a critique or a plan does not wait behind one's own
        render (the clip locks order the renders' GPU work). `runner`: where Tasks run (app/workers.py's worker
        processes); None: in this process, on the job's thread."""
        c = studio.config
        running = c.queue_running or max(1, int(getattr(studio.backend, "max_parallel", 1)))
        return cls(
            owner,
            check,
            limits=Limits(running=running, per_user=c.queue_per_user) if shared else Limits(),
            cpu=Limits(running=c.queue_cpu_running, per_user=c.queue_per_user) if shared else Limits(),
            quotas=Quotas.of(c),
            repo=studio.ctx.repo,
            runner=runner or in_process(studio),
        )

    @property
    def limits(self) -> Limits:
        """The GPU lane's places."""
        return self._lanes["gpu"].limits

    @property
    def paused(self) -> bool:
        return self._lanes["gpu"].paused

    def lanes(self) -> dict[str, tuple[Limits, int, int]]:
        """Each lane: (its places, how many of its jobs run, how many wait)."""
        with self._cond:
            return {name: (q.limits, q.running, len(q.order())) for name, q in self._lanes.items()}

    def start(
        self,
        kind: str,
        project: str,
        fn: Callable[[ProgressSink, CancelToken], Any] | Task,
        *,
        label: str,
        version: int | None = None,
        exclusive: bool = True,
    ) -> tuple[Job, bool]:
        """Queue `fn(progress, cancel)` (a kind the queue holds) or run it at once, in a thread. With `exclusive`, a
        live job of this kind on the project is returned instead (started=False), or refused (`JobBusy`) when
        another session asked for it. A quota reached is refused (app.server.quotas.QuotaReached) before anything is
        written. Returns (job, started)."""
        owner = self._owner()
        actor = self._actor()
        user = actor.name if actor is not None else owners.LOCAL_OWNER
        if project:
            self._check(project)
        if isinstance(fn, Task):  # run by the runner: a worker process of the job's lane, or this process
            if self._runner is None:
                raise TypeError("a Task needs Jobs(runner=...)")
            fn = functools.partial(self._runner, fn, lane_of(kind) if kind in QUEUED_KINDS else "cpu")
        # a quota's counts are taken and the new job written under one lock: five renders asked at once against
        # a quota of one see each other (the check reads the written jobs)
        with self._admitting:
            with self._cond:
                if exclusive:
                    live = next(
                        (j for j in self._jobs.values() if j.running and (j.project, j.kind) == (project, kind)), None
                    )
                    if live is not None and live.owner == owner:
                        return live, False
                    if live is not None:
                        raise JobBusy(f"another page is running a {kind} on this project: wait until it ends")
                if not self._quotas.off:
                    mine = sum(j.running and j.user == user for j in self._jobs.values())
                    self._quotas.check(self._repo, user, kind, mine)
                self._asked += 1
                job = Job(
                    id=new_id("job"),
                    kind=kind,
                    project=project,
                    owner=owner,
                    label=label,
                    user=user,
                    version=version,
                    state=QUEUED if kind in QUEUED_KINDS else RUNNING,
                    seq_queued=self._asked,
                )
                # the job runs in the asking request's context: as the account that asked (storage.owners)
                context = contextvars.copy_context()
                job._run = lambda: context.run(self._work, job, fn)
                self._jobs[job.id] = job  # held here (one of a kind per project) but not in the queue until written
                self._forget_old()
            try:
                self._write(job)
            except BaseException:
                with self._cond:  # not written, not started: as if never asked
                    self._jobs.pop(job.id, None)
                raise
        if job.queued:
            with self._cond:
                self._lanes[lane_of(job.kind)].add(job)
            self._dispatch()
        else:
            self._launch(job)
        return job, True

    def _launch(self, job: Job) -> None:
        run, job._run = job._run, None
        assert run is not None
        threading.Thread(target=run, name=f"chief-{job.id}", daemon=True).start()

    def _dispatch(self) -> None:
        """Start what the queue admits now, then tell every queued job its place."""
        with self._cond:
            admitted = [job for q in self._lanes.values() for job in q.admit()]
            for job in admitted:
                job.state, job.desc, job.started, job.started_at = RUNNING, "starting", time.monotonic(), utcnow()
                job.seq += 1
            self._describe_queue()
            self._notify()
        for job in admitted:  # launched first: a record that cannot be written must not stall the queue
            self._launch(job)
        for job in admitted:
            self._write(job)

    def _describe_queue(self) -> None:
        """Each queued job's line: its place in its lane, and an estimate from measured durations (under the
        lock)."""
        for name, queue in self._lanes.items():
            running = [j for j in self._jobs.values() if j.state == RUNNING and j.kind in LANES[name]]
            order = queue.order()
            places = queue.limits.running or len(running) + len(order)
            for i, job in enumerate(order):
                wait = wait_estimate(order[:i], running, places, self.durations)
                text = line(i + 1, wait, queue.paused)
                if text != job.desc:
                    job.desc = text
                    job.seq += 1

    def _work(self, job: Job, fn) -> None:
        try:
            result = fn(lambda e: self._progress(job, e), job.cancel)
        except Cancelled:
            self._finish(job, STOPPED, job.stop_text or _stopped_text(job.kind))
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
                self._notify()

    def _finish(self, job: Job, state: str, message: str, result: Any = None) -> None:
        try:
            with self._writing:
                self._end(job, state, message, result)
        finally:
            self._dispatch()  # the place it held goes to the next job, whatever the database said

    def _end(self, job: Job, state: str, message: str, result: Any = None) -> None:
        """End `job` (the caller holds `_writing`, so no other record of it is written in between): its record is
        written as ended first, then it ends here and its waiters are told, so one that waits for it to end reads
        that record. A record that cannot be written still ends the job."""
        ended_at = utcnow()
        try:
            if self._repo is not None:
                with self._cond:
                    record = job.record().model_copy(update={"state": state, "message": message, "ended_at": ended_at})
                with self._repo.write() as u:
                    u.put_job(record)
        finally:
            with self._cond:
                admitted = job.state == RUNNING and job.kind in QUEUED_KINDS
                was_queued = job.queued
                job.state, job.message, job.result = state, message, result
                job.ended, job.ended_at = time.monotonic(), ended_at
                job.fraction = 1.0 if state == DONE else job.fraction
                job.seq += 1
                if admitted:
                    self._lanes[lane_of(job.kind)].finished(job)
                    if state == DONE:
                        self.durations.add(job.kind, job.ended - job.started)
                if was_queued:
                    self._describe_queue()  # the places behind it move up
                self._notify()

    def _write(self, job: Job) -> None:
        """Write the job's record as the job is now (records are written one at a time, each snapshot taken
        inside, so the last written is the newest)."""
        if self._repo is None:
            return
        with self._writing:
            with self._cond:
                record = job.record()
            with self._repo.write() as u:
                u.put_job(record)

    def _measured(self, kind: str, n: int) -> list[float]:
        if self._repo is None:
            return []
        with self._repo.read() as u:
            return u.job_seconds(kind, n)

    def _forget_old(self) -> None:
        done = [j for j in self._jobs.values() if not j.running]
        for j in done[: max(0, len(done) - KEEP)]:
            del self._jobs[j.id]

    def get(self, job_id: str) -> Job | None:
        """The asking session's job `job_id`, if any."""
        job = self._jobs.get(job_id)
        return job if job is not None and job.owner == self._owner() else None

    def active(self, project: str, kind: str) -> Job | None:
        """The asking session's live (queued or running) job of `kind` on `project`, if any."""
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
        """The asking session's newest job of `kind` on `project`, live or finished."""
        owner = self._owner()
        with self._cond:
            return next(
                (j for j in reversed(self._jobs.values()) if (j.project, j.kind, j.owner) == (project, kind, owner)),
                None,
            )

    def stop(self, job: Job) -> bool:
        """Ask the asking session's live job to stop: a queued one leaves the queue at once, a running one stops at
        its next check (a step, a shot, a critic, or ffmpeg). Another session's (or account's) job is left as it is
        and nothing is said of it (False); a teacher's Stop works on any job."""
        actor = self._actor()
        if job.owner != self._owner() and not (actor is not None and actor.teacher):
            return False
        return self._stop(job, _stopped_text(job.kind), "Stopped before it started: nothing was done.")

    def _stop(self, job: Job, text: str, before: str) -> bool:
        """Stop `job`: queued, it leaves the queue at once with the outcome `before`; running, it is asked to stop
        and ends with `text`."""
        with self._cond:
            if not job.running:
                return False
            if not job.queued:  # asked at once: a Stop never waits on a record being written
                self._ask_to_stop(job, text)
                return True
        with self._writing:  # then the queued job's record is written before anyone is told it ended
            with self._cond:
                if not job.running:
                    return False
                if not (job.queued and self._lanes[lane_of(job.kind)].remove(job)):  # admitted meanwhile
                    self._ask_to_stop(job, text)
                    return True
                job._run = None
            self._end(job, STOPPED, before)
        return True

    def _ask_to_stop(self, job: Job, text: str) -> None:
        """A running job is asked to stop (under the lock): it ends with `text` at its next check."""
        job.cancel.cancel()
        job.stop_text = job.stop_text or text
        job.desc = "stopping…"
        job.seq += 1
        self._notify()

    # ------------------------------------------------------------------ the teacher's hands on the queue
    def _teacher(self, what: str) -> None:
        actor = self._actor()
        if actor is None or not actor.teacher:
            raise StudioError(f"only a teacher may {what}")

    def pause(self) -> None:
        """Start nothing more from the queue (what runs goes on); a teacher only."""
        self._teacher("pause the queue")
        with self._cond:
            for q in self._lanes.values():
                q.paused = True
            self._describe_queue()
            self._notify()

    def resume(self) -> None:
        self._teacher("resume the queue")
        with self._cond:
            for q in self._lanes.values():
                q.paused = False
        self._dispatch()

    def cancel(self, job_id: str) -> bool:
        """Stop any account's live job `job_id` (queued: out of the queue at once); a teacher only. False when no
        such job is live."""
        self._teacher("cancel another person's job")
        job = self._jobs.get(job_id)
        if job is None:
            return False
        after = _stopped_text(job.kind).removeprefix("Stopped.")
        return self._stop(job, f"Cancelled by the teacher.{after}", "Cancelled by the teacher before it started.")

    def all(self) -> list[Job]:
        """Every job this server remembers, live ones in the queue's order first; a teacher only."""
        self._teacher("see everyone's jobs")
        with self._cond:
            order = [j for q in self._lanes.values() for j in q.order()]
            running = [j for j in self._jobs.values() if j.state == RUNNING]
            ended = [j for j in reversed(self._jobs.values()) if not j.running]
            return running + order + ended

    def wait_ended(self, job: Job, timeout: float) -> bool:
        """Block until the job ended or `timeout` passed; True when it ended."""
        with self._cond:
            return self._cond.wait_for(lambda: not job.running, timeout=timeout)

    def wait(self, job: Job, seen: int, timeout: float = 1.0) -> int:
        """Block until the job changed since `seen` (its seq) or `timeout` passed; returns the current seq."""
        with self._cond:
            self._cond.wait_for(lambda: job.seq != seen, timeout=timeout)
            return job.seq

    def _notify(self) -> None:
        """Wake whoever waits for a change (under the lock): threads on the condition, pages on their event loops."""
        self._cond.notify_all()
        for loop, wake in self._wakers:
            try:
                loop.call_soon_threadsafe(wake)
            except RuntimeError:  # that loop has closed: its waiter is gone
                pass

    async def until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait on the running event loop, holding no thread, until `done()` (read under the lock) or `timeout`
        seconds passed; True when `done()`. What a page that follows a job waits with (app.ui.common.follow):
        a thousand waiting pages cost no worker thread."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            woken = loop.create_future()

            def wake(woken=woken) -> None:
                if not woken.done():
                    woken.set_result(None)

            with self._cond:
                if done():
                    return True
                self._wakers.add((loop, wake))
            try:
                left = deadline - loop.time()
                if left <= 0:
                    return False
                await asyncio.wait_for(woken, left)
            except TimeoutError:
                with self._cond:
                    return done()
            finally:
                with self._cond:
                    self._wakers.discard((loop, wake))


def _lose_dead_servers(repo) -> None:
    """Jobs a server on this machine left queued or running when it stopped (killed, crashed) are "lost", so
    `chief queue` does not list them as waiting forever. Servers on other machines are left alone."""
    host = socket.gethostname()
    with repo.read() as u:
        servers = u.job_servers()
    dead = [s for s in servers if s.rpartition(":")[0] == host and not _alive(s.rpartition(":")[2])]
    if dead:
        with repo.write() as u:
            u.lose_jobs(dead, utcnow())


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


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
