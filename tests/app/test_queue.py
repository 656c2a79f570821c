"""The fair queue (issue 33 item 3): real jobs through app/server/jobs.py, with work functions held by events (no sleeps,
no clocks): round-robin between accounts, the limits, Stop from another account, the teacher's pause and cancel,
the queued job's line, and the records `chief queue --json` lists."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager

import pytest

from app.errors import StudioError
from app.server.jobs import DONE, QUEUED, RUNNING, STOPPED, Jobs
from app.server.queue import DURATIONS_KEPT, Durations, FairQueue, Limits, line, ordinal
from storage.owners import Actor, acting
from tests.conftest import job_ended

WAIT = 60  # s: the most a test waits for a thread it released (a bound on a hang, never a measured time)


class Work:
    """Work functions that record when they start and end, and run until released one by one."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.started: list[str] = []  # labels, in the order they started
        self.running: dict[str, int] = {}  # account -> its jobs running now
        self.most: dict[str, int] = {}  # account -> the most of its jobs that ever ran at once
        self.most_all = 0
        self.release: dict[str, threading.Event] = {}

    def fn(self, user: str, label: str):
        gate = self.release.setdefault(label, threading.Event())

        def work(progress, cancel):
            with self.cond:
                self.started.append(label)
                self.running[user] = self.running.get(user, 0) + 1
                self.most[user] = max(self.most.get(user, 0), self.running[user])
                self.most_all = max(self.most_all, sum(self.running.values()))
                self.cond.notify_all()
            try:
                while not gate.wait(0.01):
                    cancel.raise_if_cancelled()
            finally:
                with self.cond:
                    self.running[user] -= 1
            return label

        return work

    def wait_started(self, n: int) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.started) >= n, timeout=WAIT), self.started


def start_as(jobs: Jobs, work: Work, user: str, kind: str, project: str, label: str, teacher: bool = False):
    with acting(Actor(user, teacher=teacher)):
        job, started = jobs.start(kind, project, work.fn(user, label), label=label)
    assert started
    return job


def session_jobs(**kwargs) -> Jobs:
    """Jobs whose asking session is the acting account's (a browser session per account)."""
    from storage.owners import current

    return Jobs(owner=lambda: (current() or Actor("")).name, **kwargs)


def ended(jobs: Jobs, job) -> None:
    """Wait until `job` ended and its thread (which starts what the queue admits next) is gone."""
    assert job_ended(jobs, job, WAIT)


def test_twenty_users_one_flooding_every_first_job_starts_before_the_floods_third():
    jobs, work = session_jobs(limits=Limits(running=3, per_user=2)), Work()
    flood = [start_as(jobs, work, "flood", "render", f"pf{i}", f"flood-{i}") for i in range(10)]
    others = [start_as(jobs, work, f"u{n:02d}", "render", f"p{n}", f"u{n:02d}-first") for n in range(19)]
    others_second = [start_as(jobs, work, f"u{n:02d}", "takes", f"p{n}", f"u{n:02d}-second") for n in range(3)]
    work.wait_started(3)
    assert work.started == ["flood-0", "flood-1", "u00-first"]  # two of the flood's (its limit), then a place left
    assert flood[2].state == QUEUED and flood[2].desc.startswith("queued: ")

    everyone = flood + others + others_second
    # release the oldest running job, one at a time, until all have run
    for _ in range(len(everyone)):
        running = [j for j in everyone if j.state == RUNNING]
        first = min(running, key=lambda j: work.started.index(j.label))
        work.release[first.label].set()
        ended(jobs, first)
        work.wait_started(sum(j.state != QUEUED for j in everyone))  # what the queue admitted has begun
    for j in everyone:
        ended(jobs, j)

    order = work.started
    third = order.index("flood-2")
    assert all(order.index(f"u{n:02d}-first") < third for n in range(19)), order
    assert max(work.most.values()) <= 2 and work.most["flood"] == 2  # the per-user limit holds, and is reached
    assert work.most_all <= 3  # the limit on all running jobs holds
    assert all(j.state == DONE for j in everyone)


def test_a_queued_jobs_line_says_its_place_and_an_estimate_only_from_measured_durations():
    jobs, work = session_jobs(limits=Limits(running=1, per_user=1)), Work()
    a = start_as(jobs, work, "alice", "render", "pa", "alice-render")
    b = start_as(jobs, work, "bob", "render", "pb", "bob-render")
    c = start_as(jobs, work, "carol", "keyframes", "pc", "carol-stills")
    work.wait_started(1)
    assert a.state == RUNNING and (b.state, c.state) == (QUEUED, QUEUED)
    assert b.desc == "queued: 1st in line" and c.desc == "queued: 2nd in line"  # nothing measured: the place only
    with acting(Actor("dave")):
        d, _ = jobs.start("refine", "pd", work.fn("dave", "dave-refine"), label="dave-refine")
    assert d.state == RUNNING  # a proposal is no GPU work: it does not wait
    work.release["dave-refine"].set()

    work.release["alice-render"].set()
    ended(jobs, a)
    # the line moves up, and alice's render is now a measured duration: an estimate, labelled as one
    assert b.state == RUNNING and c.desc.startswith("queued: 1st in line · starts in ")
    assert c.desc.endswith("(estimated from recent jobs)") and jobs.durations.typical("render")[1] == 1
    work.release["bob-render"].set()
    work.release["carol-stills"].set()


def test_the_estimate_comes_from_measured_durations_and_is_labelled():
    class J:
        def __init__(self, user, kind, seq, elapsed=0.0):
            self.user, self.kind, self.seq_queued, self.elapsed = user, kind, seq, elapsed

    measured = {"render": [200.0, 180.0, 220.0]}
    durations = Durations(lambda kind, n: measured.get(kind, [])[:n])
    from app.server.queue import wait_estimate

    running = [J("a", "render", 1, elapsed=50.0)]
    assert wait_estimate([], running, 1, durations) == pytest.approx(150.0)  # the median's rest
    assert wait_estimate([J("b", "render", 2)], running, 1, durations) == pytest.approx(350.0)
    assert wait_estimate([J("b", "plan", 2)], running, 1, durations) is None  # no plan measured: no number
    assert line(2, 350.0, False) == "queued: 2nd in line · starts in about 6 min (estimated from recent jobs)"
    assert line(2, None, False) == "queued: 2nd in line"
    for _ in range(DURATIONS_KEPT):
        durations.add("render", 10.0)
    assert durations.typical("render") == (10.0, DURATIONS_KEPT)  # the newest kept, the oldest let go
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip


def test_the_order_a_queue_shows_is_the_order_it_starts():
    class J:
        def __init__(self, user, seq):
            self.user, self.kind, self.seq_queued, self.elapsed = user, "render", seq, 0.0

    q = FairQueue(Limits(running=1, per_user=1))
    jobs = [J(u, i) for i, u in enumerate(["a", "a", "a", "b", "c", "b", "d"])]
    for j in jobs:
        q.add(j)
    promised = q.order()
    started = []
    while True:
        admitted = q.admit()
        if not admitted:
            break
        started += admitted
        for j in admitted:
            q.finished(j)
    assert [j.seq_queued for j in started] == [j.seq_queued for j in promised] == [0, 3, 4, 6, 1, 5, 2]


def test_stop_from_another_account_does_nothing_and_says_nothing():
    jobs, work = session_jobs(limits=Limits(running=1, per_user=1)), Work()
    a = start_as(jobs, work, "alice", "render", "pa", "alice-render")
    q = start_as(jobs, work, "alice", "takes", "pa", "alice-takes")
    work.wait_started(1)
    with acting(Actor("bob")):
        assert jobs.get(a.id) is None and jobs.get(q.id) is None and jobs.active("pa", "render") is None
        assert jobs.stop(a) is False and jobs.stop(q) is False
        with pytest.raises(StudioError, match="only a teacher"):
            jobs.cancel(q.id)
        with pytest.raises(StudioError, match="only a teacher"):
            jobs.pause()
    assert (a.state, q.state) == (RUNNING, QUEUED) and not a.cancel.cancelled and a.desc != "stopping…"
    with acting(Actor("alice")):  # one's own: a queued job leaves the queue at once, a running one stops
        assert jobs.stop(q) and q.state == STOPPED and q.message == "Stopped before it started: nothing was done."
        assert jobs.stop(a)
    ended(jobs, a)
    assert a.state == STOPPED and a.message.startswith("Stopped.")


def test_the_teacher_pauses_the_queue_and_cancels_anyones_job():
    jobs, work = session_jobs(limits=Limits(running=1, per_user=1)), Work()
    a = start_as(jobs, work, "alice", "render", "pa", "alice-render")
    b = start_as(jobs, work, "bob", "render", "pb", "bob-render")
    c = start_as(jobs, work, "carol", "keyframes", "", "carol-stills")
    work.wait_started(1)
    teacher = Actor("teach", teacher=True)
    with acting(teacher):
        jobs.pause()
        assert [j.label for j in jobs.all()][:3] == ["alice-render", "bob-render", "carol-stills"]
    assert b.desc.endswith("the queue is paused by the teacher")
    work.release["alice-render"].set()
    ended(jobs, a)
    assert b.state == QUEUED and jobs.paused  # what ran went on; nothing more started
    with acting(teacher):
        assert jobs.cancel(c.id)  # a queued job of another account: out of the queue
        jobs.resume()
    assert c.state == STOPPED and c.message == "Cancelled by the teacher before it started."
    work.wait_started(2)
    assert work.started == ["alice-render", "bob-render"]
    with acting(teacher):
        assert jobs.cancel(b.id)  # a running one: stopped at its next check
    ended(jobs, b)
    assert b.state == STOPPED and b.message.startswith("Cancelled by the teacher. Finished shots are kept")
    assert "carol-stills" not in work.started


def test_one_job_of_a_kind_per_project_counts_queued_jobs_too():
    from app.server.jobs import JobBusy

    jobs, work = session_jobs(limits=Limits(running=1, per_user=1)), Work()
    start_as(jobs, work, "alice", "render", "pa", "alice-render")
    queued = start_as(jobs, work, "bob", "render", "pb", "bob-render")
    with acting(Actor("bob")):
        again, started = jobs.start("render", "pb", work.fn("bob", "x"), label="x")
        assert again is queued and not started
    with acting(Actor("carol")), pytest.raises(JobBusy):
        jobs.start("render", "pb", work.fn("carol", "y"), label="y")
    for e in work.release.values():
        e.set()


def test_jobs_are_recorded_and_chief_queue_lists_them(make_studio, chief):
    studio = make_studio()
    studio.accounts.add("alice", "alice-password")
    jobs, work = Jobs(owner=lambda: "s", limits=Limits(running=1, per_user=1), repo=studio.ctx.repo), Work()
    a = start_as(jobs, work, "alice", "render", "", "alice-render")
    b = start_as(jobs, work, "bob", "takes", "", "bob-takes")
    work.wait_started(1)

    listed = json.loads(chief("--json", "queue").stdout)
    by_id = {r["id"]: r for r in listed}
    assert by_id[a.id]["owner"] == "alice" and by_id[a.id]["kind"] == "render" and by_id[a.id]["state"] == "running"
    assert by_id[b.id]["state"] == "queued" and by_id[b.id]["started_at"] is None
    assert by_id[a.id]["started_at"] is not None and by_id[a.id]["ended_at"] is None
    mine = json.loads(chief("--json", "--user", "alice", "queue").stdout)
    assert [r["id"] for r in mine] == [a.id]  # an account sees its own jobs only
    assert [r["id"] for r in json.loads(chief("--json", "queue", "--live").stdout)] == [b.id, a.id]

    work.release["alice-render"].set()
    ended(jobs, a)
    work.release["bob-takes"].set()
    ended(jobs, b)
    rows = {r["id"]: r for r in json.loads(chief("--json", "queue").stdout)}
    assert rows[a.id]["state"] == rows[b.id]["state"] == "done"
    assert rows[b.id]["queued_at"] <= rows[a.id]["ended_at"] <= rows[b.id]["started_at"] <= rows[b.id]["ended_at"]
    assert chief("queue", "--live").stdout.strip() == "no jobs recorded"
    human = chief("queue").stdout
    assert f"{a.id}  alice  render  done  queued " in human
    # the queue's estimates are measured from these records: a new Jobs over the same database reads them
    assert Jobs(repo=studio.ctx.repo).durations.typical("render")[1] == 1


class HeldRecords:
    """A repository whose writes of a job's ended record wait for `release` (`writing` says one waits)."""

    def __init__(self, repo) -> None:
        self.repo, self.writing, self.release = repo, threading.Event(), threading.Event()

    def read(self):
        return self.repo.read()

    @contextmanager
    def write(self):
        with self.repo.write() as u:
            yield self._Unit(u, self)

    class _Unit:
        def __init__(self, unit, held) -> None:
            self.unit, self.held = unit, held

        def __getattr__(self, name):
            return getattr(self.unit, name)

        def put_job(self, record) -> None:
            if record.state not in (QUEUED, RUNNING):
                self.held.writing.set()
                assert self.held.release.wait(WAIT)
            self.unit.put_job(record)


def test_a_job_ends_for_whoever_waits_only_once_its_record_says_so(make_studio):
    """A finished job, and a queued one stopped: each is ended for its waiters (the page, `chief queue` after it)
    only once its record is written as ended."""
    studio = make_studio()
    held = HeldRecords(studio.ctx.repo)
    jobs, work = Jobs(owner=lambda: "s", limits=Limits(running=1, per_user=1), repo=held), Work()
    a = start_as(jobs, work, "alice", "render", "pa", "a")
    b = start_as(jobs, work, "bob", "render", "pb", "b")
    work.wait_started(1)

    def states() -> dict[str, str]:
        with studio.ctx.repo.read() as u:
            return {r.id: r.state for r in u.jobs()}

    work.release["a"].set()
    assert held.writing.wait(WAIT)  # a's ended record is being written, and held
    assert not jobs.wait_ended(a, 0.2) and a.running and states()[a.id] == RUNNING
    held.release.set()
    assert job_ended(jobs, a, WAIT) and a.state == DONE and states()[a.id] == DONE
    work.wait_started(2)

    held.writing.clear(), held.release.clear()
    c = start_as(jobs, work, "carol", "render", "pc", "c")  # queued behind b
    stopping = threading.Thread(target=jobs.stop, args=(c,), daemon=True)  # the session's own Stop
    stopping.start()
    assert held.writing.wait(WAIT)
    assert not jobs.wait_ended(c, 0.2) and c.queued and states()[c.id] == QUEUED
    held.release.set()
    stopping.join(WAIT)
    assert job_ended(jobs, c, WAIT) and c.state == STOPPED and states()[c.id] == STOPPED
    work.release["b"].set()
    ended(jobs, b)


def test_a_server_that_died_leaves_its_jobs_lost_not_queued_forever(make_studio):
    import socket

    from storage.records import JobRecord
    from storage.schema import utcnow

    studio = make_studio()
    dead = f"{socket.gethostname()}:999999999"  # no such process
    with studio.ctx.repo.write() as u:
        u.put_job(JobRecord(id="job_x", owner="a", kind="render", state="running", server=dead, queued_at=utcnow()))
        u.put_job(
            JobRecord(id="job_y", owner="a", kind="render", state="queued", server="elsewhere:1", queued_at=utcnow())
        )
    Jobs(repo=studio.ctx.repo)
    with studio.ctx.repo.read() as u:
        states = {r.id: r.state for r in u.jobs()}
    assert states == {"job_x": "lost", "job_y": "queued"}  # another machine's server is not ours to judge


# ------------------------------------------------------------------------------------ through the served app
from generation.animatic import AnimaticBackend  # noqa: E402
from tests.security.test_accounts_web import serve_users  # noqa: E402, F401 - the fixture: `chief serve --users`


class HeldAnimatic(AnimaticBackend):
    """The animatic backend whose renders wait until `go` is set (`entered` is set when the first one begins)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.go = threading.Event(), threading.Event()

    def render(self, request, out, progress=None, cancel=None):
        self.entered.set()
        assert self.go.wait(WAIT)
        return super().render(request, out, progress, cancel)


def first_progress(job) -> str:
    """The first progress line a followed render sends to the page (the Render tab's `render_progress`)."""
    for outputs in job:
        if outputs and outputs[0]:
            return outputs[0]
    raise AssertionError(f"no progress line: {job.outputs()}")


def test_a_queued_render_shows_its_place_on_the_page(make_studio, serve_users):  # noqa: F811
    from tests.conftest import app_client, tiny_board

    backend = HeldAnimatic()
    studio = make_studio(backend=backend)
    pids, clients = {}, {}
    url = None
    for n, name in enumerate(("alice", "bob", "carol")):
        studio.accounts.add(name, f"{name}-password")
        with acting(Actor(name)):  # three films with shots of their own (no clip is shared)
            board = tiny_board(2, duration=1.0 + n / 2).model_copy(update={"title": f"{name}'s film"})
            pids[name] = studio.create_from_storyboard(board).project_id
    url = serve_users(studio)
    for name in pids:
        clients[name] = app_client(url, auth=(name, f"{name}-password"))

    alice = clients["alice"].submit(pids["alice"], 1, "", None, api_name="/render")
    assert backend.entered.wait(WAIT)  # alice's render holds the one place
    bob = clients["bob"].submit(pids["bob"], 1, "", None, api_name="/render")
    bob_line = first_progress(bob)
    carol = clients["carol"].submit(pids["carol"], 1, "", None, api_name="/render")
    carol_line = first_progress(carol)
    # nothing of this kind has been measured yet: the place alone, no number made up
    assert "data-state='queued'" in bob_line and "queued: 1st in line ·" in bob_line and "starts in" not in bob_line
    assert "queued: 2nd in line ·" in carol_line and "alice" not in carol_line and "bob" not in carol_line
    backend.go.set()
    for job in (alice, bob, carol):
        job.result(timeout=WAIT)
    with studio.ctx.repo.read() as u:
        rows = sorted(u.jobs(), key=lambda r: r.started_at)
    assert [(r.owner, r.kind, r.state) for r in rows] == [(n, "render", "done") for n in ("alice", "bob", "carol")]
    assert all(r.queued_at <= r.started_at <= r.ended_at for r in rows)


def test_plans_and_critiques_wait_in_a_lane_of_their_own_fair_between_accounts():
    """The CPU lane (plans, critiques) has places of its own: a class's renders filling the GPU lane never hold back
    a plan, and within the lane one account's flood does not hold back another's first (app.server.queue.LANES)."""
    jobs, work = session_jobs(limits=Limits(running=1, per_user=1), cpu=Limits(running=2, per_user=1)), Work()
    renders = [start_as(jobs, work, f"r{n}", "render", f"pr{n}", f"r{n}-render") for n in range(4)]
    flood = [start_as(jobs, work, "flood", "critique", f"pf{n}", f"flood-{n}") for n in range(3)]
    plan = start_as(jobs, work, "dora", "plan", "", "dora-plan")
    work.wait_started(3)
    assert sorted(work.started) == ["dora-plan", "flood-0", "r0-render"]  # one render; the lane's two places
    assert [j.state for j in renders[1:]] == [QUEUED] * 3 and flood[1].desc == "queued: 1st in line"
    assert renders[1].desc == "queued: 1st in line"  # each lane counts its own line
    lanes = jobs.lanes()
    assert lanes["gpu"][1:] == (1, 3) and lanes["cpu"][1:] == (2, 2) and lanes["cpu"][0].running == 2
    work.release["flood-0"].set()
    ended(jobs, flood[0])
    work.wait_started(4)
    assert work.started[-1] == "flood-1" and renders[1].state == QUEUED  # a CPU place goes to the CPU lane
    for e in work.release.values():
        e.set()
    for j in [*renders, *flood, plan]:
        ended(jobs, j)


def test_a_render_quota_holds_against_renders_asked_at_once(make_studio):
    """Five renders asked at the same moment on five projects against a quota of two an hour: two run, three are
    refused (the count is taken and the new job written under one lock)."""
    from app.server.quotas import QuotaReached, Quotas

    studio = make_studio()
    jobs, work = (
        Jobs(owner=lambda: "s", limits=Limits(running=5), quotas=Quotas(renders_per_hour=2), repo=studio.ctx.repo),
        Work(),
    )
    go, outcomes = threading.Barrier(5), []

    def ask(n: int) -> None:
        go.wait()
        try:
            start_as(jobs, work, "erin", "render", f"p{n}", f"erin-{n}")
            outcomes.append("ran")
        except QuotaReached as e:
            outcomes.append(str(e))

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ran") == 2, outcomes
    assert all("render(s) in the last hour" in o for o in outcomes if o != "ran")
    for e in work.release.values():
        e.set()
