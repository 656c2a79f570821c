"""A server a whole class leans on (issue 53): pages waiting on jobs hold no thread, a job is its account's, and the
state kept per session is bounded. Against a real `chief serve --users` in this process, spoken to as a browser
and gradio_client do (raw queue joins, SSE streams)."""

from __future__ import annotations

import gc
import json
import os
import threading
import urllib.request
import uuid

import pytest

from app.server.jobs import QUEUED, RUNNING, STOPPED
from storage.owners import Actor, acting
from tests.conftest import app_client, job_ended, tiny_board
from tests.security.test_web import raw

WAIT = 120
WAITING = 45  # more pages waiting on renders than Gradio has worker threads (40)


@pytest.fixture
def launched():
    """launched(studio, users=...) -> (base URL, demo): the app served in this process on a free port."""
    from app.ui import launch
    from tests.process import free_port

    demos = []

    def start(studio, users: bool = True):
        port = free_port()
        demos.append(launch(studio, port=port, users=users, prevent_thread_lock=True, quiet=True))
        return f"http://127.0.0.1:{port}", demos[-1]

    yield start
    for demo in demos:
        demo.close()


def dependency(
    base: str, api_name: str | None = None, elem_id: str | None = None, headers: dict | None = None
) -> tuple[int, int]:
    """(fn_index, number of inputs) of an event, by its API name or by the elem_id of the button that fires it."""
    request = urllib.request.Request(base + "/config", headers=headers or {})
    config = json.loads(urllib.request.urlopen(request, timeout=60).read())
    deps = config["dependencies"]
    if api_name is not None:
        i = next(i for i, d in enumerate(deps) if d.get("api_name") == api_name)
    else:
        comp = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == elem_id)
        i = next(i for i, d in enumerate(deps) if [comp, "click"] in [list(t) for t in d["targets"]])
    return i, len(deps[i]["inputs"])


def signed_in(base: str, name: str, password: str) -> dict:
    """The headers of a browser signed in as `name` (Gradio's access-token cookie)."""
    import httpx

    r = httpx.post(f"{base}/login", data={"username": name, "password": password}, timeout=60)
    assert r.status_code == 200, (name, r.status_code, r.text)
    return {"Cookie": "; ".join(f"{k}={v}" for k, v in r.cookies.items())}


def call(base: str, target: tuple[int, int], data: list, headers: dict | None = None, session: str = "") -> dict:
    """One event, joined and read to its end as a page does (its own session hash unless given)."""
    index, inputs = target
    session = session or uuid.uuid4().hex
    body = json.dumps(
        {"data": [*data, *[None] * (inputs - len(data))], "fn_index": index, "session_hash": session}
    ).encode()
    status, text = raw(
        base, "POST", "/gradio_api/queue/join", {"Content-Type": "application/json", **(headers or {})}, body
    )
    assert status == 200, (status, text)
    request = urllib.request.Request(f"{base}/gradio_api/queue/data?session_hash={session}", headers=headers or {})
    with urllib.request.urlopen(request, timeout=WAIT) as stream:
        for line in stream:
            if line.startswith(b"data:") and json.loads(line[5:]).get("msg") == "process_completed":
                return json.loads(line[5:])
    raise AssertionError("the event never completed")


def test_forty_five_waiting_renders_freeze_nothing_and_a_job_is_its_accounts(make_studio, launched):
    """45 students' renders wait behind a paused queue, each page following its own: a 46th student's projects list
    answers, the teacher's Resume answers and starts them. Then one student's render, asked from one session, is
    seen and stopped from another session of the same account (another device)."""
    studio = make_studio()
    names = [f"student{n:02d}" for n in range(WAITING)]
    pids = {}
    for n, name in enumerate([*names, "late", "ann"]):
        studio.accounts.add(name, f"{name}-password")
        with acting(Actor(name)):
            board = tiny_board(1, duration=0.5 + n / 100).model_copy(update={"title": f"{name}'s film"})
            pids[name] = studio.create_from_storyboard(board).project_id
    studio.accounts.add("teach", "teach-password", teacher=True)
    base, demo = launched(studio)
    jobs = demo.chief_ctx.jobs
    with acting(Actor("teach", teacher=True)):
        jobs.pause()
    teacher = signed_in(base, "teach", "teach-password")
    render = dependency(base, api_name="render", headers=teacher)

    waiting = []
    for name in names:  # each page asks for its render and follows it (the SSE stream stays open)
        headers = signed_in(base, name, f"{name}-password")
        t = threading.Thread(target=call, args=(base, render, [pids[name], 1, "", "draft"], headers), daemon=True)
        t.start()
        waiting.append(t)
    with acting(Actor("teach", teacher=True)):
        assert until(lambda: sum(j.state == QUEUED for j in jobs.all()) == WAITING), [j.state for j in jobs.all()]

    late = app_client(base, auth=("late", "late-password"))  # a light action while 45 pages wait
    listed = late.predict(pids["late"], api_name="/list_projects")
    assert "late's film" in json.dumps(listed) and "student00" not in json.dumps(listed)

    answer = call(base, dependency(base, elem_id="queue_resume", headers=teacher), [], teacher)
    assert answer["success"], answer
    with acting(Actor("teach", teacher=True)):
        assert until(lambda: any(j.state == RUNNING for j in jobs.all()))  # the queue goes on
        for j in jobs.all():
            if j.state == QUEUED:
                jobs.cancel(j.id)
    for t in waiting:
        t.join(WAIT)
    assert not any(t.is_alive() for t in waiting)  # every page saw its render end (done or cancelled)
    with studio.ctx.repo.read() as u:
        states = [r.state for r in u.jobs() if r.kind == "render"]
    assert len(states) == WAITING and states.count("stopped") >= WAITING - 2 and "done" in states
    ran = demo.chief_workers.ran  # the renders ran in a worker process, not in the web server's
    assert ran and all(method == "render" and pid != os.getpid() for method, pid in ran)

    # one account, two sessions: a render asked from the first is seen and stopped from the second
    with acting(Actor("teach", teacher=True)):
        jobs.pause()
    first, second = (app_client(base, auth=("ann", "ann-password")) for _ in range(2))
    asked = first.submit(pids["ann"], 1, "", "draft", api_name="/render")
    with acting(Actor("teach", teacher=True)):
        assert until(lambda: any(j.user == "ann" and j.running for j in jobs.all()))
        job = next(j for j in jobs.all() if j.user == "ann" and j.running)
    second.predict(pids["ann"], api_name="/stop_render")
    assert job_ended(jobs, job, WAIT) and job.state == STOPPED
    asked.result(timeout=WAIT)
    with acting(Actor("teach", teacher=True)):
        jobs.resume()
    assert job.state not in (QUEUED, RUNNING)


def until(done, wait: float = WAIT) -> bool:
    """Poll `done()` every 0.1 s for up to `wait` seconds."""
    import time

    end = time.monotonic() + wait
    while not done():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / (1 << 20)


def test_the_servers_memory_stays_flat_over_hundreds_of_new_sessions(make_studio, launched):
    """Every API call with a new session hash makes a session Gradio keeps state for (~0.6 MB each here): with the
    cap (`web_sessions`), 150 new sessions after a warm-up leave the process's resident memory where it was (an
    unbounded server grew by 80-90 MB over the same calls: CHIEF_TEST_SESSIONS=100000 shows it)."""
    import os

    studio = make_studio(web_sessions=int(os.environ.get("CHIEF_TEST_SESSIONS", "10")))
    base, demo = launched(studio, users=False)
    listing = dependency(base, api_name="list_projects")
    for _ in range(30):  # warm-up: the cap reached, Gradio's caches and the allocator's arenas filled
        assert call(base, listing, [""])["success"]
    gc.collect()
    before = rss_mb()
    for _ in range(150):
        assert call(base, listing, [""])["success"]
    gc.collect()
    after = rss_mb()
    assert len(demo.state_holder.session_data) <= studio.config.web_sessions
    assert after - before < 30, (before, after)


def test_a_closed_pages_state_is_dropped_after_its_grace(make_studio, launched):
    """A page whose heartbeat ended (its tab closed) loses its kept state once idle for the grace; an open one and
    one still inside the grace keep theirs (app.ui.session_state.sweep)."""
    import datetime

    from app.ui.session_state import sweep

    base, demo = launched(make_studio(), users=False)
    listing = dependency(base, api_name="list_projects")
    sessions = [uuid.uuid4().hex for _ in range(3)]
    for s in sessions:
        call(base, listing, [""], session=s)
    holder = demo.state_holder
    closed_long_ago, closed_now, open_page = sessions
    holder.session_data[closed_long_ago].is_closed = True
    holder.time_last_used[closed_long_ago] = datetime.datetime.now() - datetime.timedelta(seconds=120)
    holder.session_data[closed_now].is_closed = True
    assert sweep(holder, grace=60) == 1
    assert closed_long_ago not in holder.session_data
    assert closed_now in holder.session_data and open_page in holder.session_data
