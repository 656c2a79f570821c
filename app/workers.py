"""Worker processes: where a class server's long work runs, so the web process only serves.

`chief serve --users` (a class on one server) runs every job's `Task` (app.server.jobs.Task: a Studio method and its
arguments, as data) in a worker process of the job's lane, fed by the fair queue: the GPU lane's workers (renders,
takes, stills: as many as the lane has places, one per device by default) and the CPU lane's (plans and critiques:
`queue_cpu_running`). Each worker builds its own Studio from the server's configuration once, keeps it warm between
jobs (a diffusion pipeline stays loaded), and runs one job at a time as the account that asked (storage.owners). Its
progress events come back over a pipe to the job in the web process; Stop is a message that cancels the worker's
token at its next check; a worker that dies (killed, out of memory) fails the job in one line and is started again
for the next. The database and the media store are shared: what a worker writes, the web process reads.

With Ray (`CHIEF_RAY_ADDRESS`), or a Studio built with a backend or agents handed in (a test, a notebook: a process
could not rebuild them), jobs run on threads of the web process as before; the backend then sends renders to the
cluster's workers.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

from app.errors import StudioError, one_line
from app.server.jobs import Task
from storage import owners
from storage.run import Cancelled, CancelToken, ProgressSink

POLL_S = 0.1  # how often a job waiting on its worker looks at its Stop and at the worker being alive


@dataclass
class _Worker:
    proc: Any  # multiprocessing.Process (spawned)
    conn: Any  # the web process's end of the pipe


class WorkerPool:
    """Worker processes per lane, started on first use; `run(task, lane, progress, cancel)` is a Jobs runner."""

    def __init__(self, config, places: dict[str, int]) -> None:
        self._config, self._places = config, places
        self._idle: dict[str, deque[_Worker]] = {lane: deque() for lane in places}
        self._count = dict.fromkeys(places, 0)
        self._cond = threading.Condition()
        self._all: list[_Worker] = []
        self.ran: deque[tuple[str, int]] = deque(maxlen=100)  # (method, worker pid) of recent jobs
        self._ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no threads or locks forked

    def run(self, task: Task, lane: str, progress: ProgressSink, cancel: CancelToken) -> Any:
        worker = self._take(lane)
        healthy = False
        try:
            worker.conn.send(("run", task, owners.current()))
            self.ran.append((task.method, worker.proc.pid))
            result = self._follow(worker, progress, cancel)
            healthy = True
            return result
        except (Cancelled, StudioError) as e:
            healthy = worker.proc.is_alive() and not isinstance(e, _Lost)
            raise
        finally:
            self._give(lane, worker, healthy)

    def _follow(self, worker: _Worker, progress: ProgressSink, cancel: CancelToken) -> Any:
        asked = False
        while True:
            if cancel.cancelled and not asked:
                worker.conn.send(("cancel",))
                asked = True
            if not worker.conn.poll(POLL_S):
                if not worker.proc.is_alive():
                    raise _Lost(
                        f"the worker process stopped (exit code {worker.proc.exitcode}) before this job ended: "
                        "try again (what it finished is kept)"
                    )
                continue
            try:
                kind, *rest = worker.conn.recv()
            except EOFError:
                raise _Lost("the worker process stopped before this job ended: try again") from None
            if kind == "progress":
                progress(rest[0])
            elif kind == "done":
                return rest[0]
            elif kind == "stopped":
                raise Cancelled("stopped")
            else:  # "failed": the worker's one line
                raise StudioError(rest[0])

    def _take(self, lane: str) -> _Worker:
        with self._cond:
            while True:
                if self._idle[lane]:
                    return self._idle[lane].popleft()
                if self._count[lane] < self._places[lane]:
                    self._count[lane] += 1
                    break
                self._cond.wait()
        try:
            return self._spawn(lane)
        except BaseException:
            with self._cond:
                self._count[lane] -= 1
                self._cond.notify()
            raise

    def _spawn(self, lane: str) -> _Worker:
        here, there = self._ctx.Pipe()
        proc = self._ctx.Process(target=_serve, args=(self._config, there), name=f"chief-{lane}-worker", daemon=True)
        proc.start()
        there.close()
        worker = _Worker(proc, here)
        with self._cond:
            self._all.append(worker)
        return worker

    def _give(self, lane: str, worker: _Worker, healthy: bool) -> None:
        with self._cond:
            if healthy:
                self._idle[lane].append(worker)
            else:
                self._count[lane] -= 1
                self._all.remove(worker)
                _end(worker)
            self._cond.notify()

    def close(self) -> None:
        """Stop every worker (the server stops)."""
        with self._cond:
            workers, self._all = self._all, []
            for lane in self._idle:
                self._idle[lane].clear()
                self._count[lane] = 0
        for w in workers:
            _end(w)

    def pids(self) -> list[int]:
        with self._cond:
            return [w.proc.pid for w in self._all if w.proc.pid is not None]


class _Lost(StudioError):
    """The worker process died under a job."""


def _end(worker: _Worker) -> None:
    try:
        worker.conn.send(("quit",))
    except (OSError, ValueError):
        pass
    worker.proc.join(2)
    if worker.proc.is_alive():
        worker.proc.kill()
        worker.proc.join(2)
    worker.conn.close()


def _serve(config, conn) -> None:
    """A worker process: one Studio from the configuration, then one job at a time until told to quit."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops its workers
    from app.studio import Studio

    studio = Studio(config)
    sending = threading.Lock()

    def send(message) -> None:
        with sending:
            conn.send(message)

    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message[0] == "cancel":  # a Stop that crossed the job's end: nothing runs to stop
            continue
        if message[0] != "run":
            return
        _, task, actor = message
        cancel, done = CancelToken(), threading.Event()

        def listen() -> None:  # Stop arrives while the job runs
            while not done.is_set():
                if conn.poll(POLL_S):
                    try:
                        if conn.recv()[0] == "cancel":
                            cancel.cancel()
                    except EOFError:
                        cancel.cancel()
                        return

        listener = threading.Thread(target=listen, name="chief-worker-stop", daemon=True)
        listener.start()
        try:
            with owners.acting(actor):
                result = task.bound(studio)(lambda event: send(("progress", event)), cancel)
            outcome = ("done", result)
        except Cancelled:
            outcome = ("stopped",)
        except Exception as e:  # noqa: BLE001 - the job's outcome, said in one line in the web process
            outcome = ("failed", one_line(e))
        finally:
            done.set()
            listener.join()
        try:
            send(outcome)
        except Exception as e:  # noqa: BLE001 - a result that cannot cross the pipe is a failure, said
            send(("failed", f"the result could not be sent back ({one_line(e)})"))
