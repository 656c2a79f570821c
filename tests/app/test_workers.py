"""Worker processes (app/workers.py): a class server's long work runs outside the web process, as data (a Task), with
its progress back over a pipe, Stop reaching it, and a worker that dies failing its job in one line."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from app.errors import StudioError
from app.server.jobs import Task
from app.workers import WorkerPool
from storage.owners import Actor, acting
from storage.run import Cancelled, CancelToken, ShotProgress
from tests.conftest import tiny_board


@pytest.fixture
def pool(make_studio):
    studio = make_studio()
    workers = WorkerPool(studio.config, {"gpu": 1, "cpu": 1})
    yield studio, workers
    workers.close()


def test_a_task_runs_in_a_worker_process_as_the_account_that_asked(pool):
    studio, workers = pool
    studio.accounts.add("maya", "maya-password")
    with acting(Actor("maya")):
        pid = studio.create_from_storyboard(tiny_board(2)).project_id
    events = []
    with acting(Actor("maya")):  # the worker acts as maya: her project opens there
        record = workers.run(Task("render", (pid, 1)), "gpu", events.append, CancelToken())
    ((method, where),) = workers.ran
    assert method == "render" and where != os.getpid() and where in workers.pids()
    assert record.rendered == 2 and studio.render_info(pid, 1).id == record.id  # written where we read
    assert any(isinstance(e, ShotProgress) for e in events)  # progress came back over the pipe
    with acting(Actor("someone")), pytest.raises(StudioError, match="no project"):
        workers.run(Task("render", (pid, 1)), "gpu", events.append, CancelToken())  # not theirs, there too
    assert workers.pids() == [where]  # the same warm worker, kept after a refusal


def test_stop_reaches_the_worker_and_a_dead_worker_fails_its_job_in_one_line(pool):
    studio, workers = pool
    pid = studio.create_from_storyboard(tiny_board(60)).project_id
    cancel, started = CancelToken(), threading.Event()

    def progress(event):
        if isinstance(event, ShotProgress) and event.shot_index >= 2:  # two shots finished
            started.set()

    threading.Thread(target=lambda: started.wait(120) and cancel.cancel(), daemon=True).start()
    with pytest.raises(Cancelled):
        workers.run(Task("render", (pid, 1)), "gpu", progress, cancel)
    assert studio.render_info(pid, 1) is None  # stopped before the film was cut

    killed = threading.Event()

    def kill_on_progress(event):
        if isinstance(event, ShotProgress) and event.shot_index >= 4 and not killed.is_set():
            killed.set()
            os.kill(workers.pids()[0], signal.SIGKILL)

    with pytest.raises(StudioError, match="the worker process stopped"):
        workers.run(Task("render", (pid, 1)), "gpu", kill_on_progress, CancelToken())
    assert workers.pids() == []  # the dead worker is gone; the next job starts a new one
    again = workers.run(Task("render", (pid, 1)), "gpu", lambda e: None, CancelToken())
    assert again.reused >= 4 and again.rendered + again.reused == 60  # what the stopped and killed renders finished
