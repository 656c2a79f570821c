"""The teacher's report (app/services/classroom.py, `chief class report --csv`, the Class screen): the CSV is read back and
compared with the database itself (sqlite3, not the repository), and only a teacher reads it."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
from datetime import datetime

import gradio as gr
import pytest

from app.errors import StudioError
from app.server.jobs import Jobs
from app.server.queue import Limits
from app.services.classroom import COLUMNS, to_csv
from storage.owners import Actor, acting
from storage.schema import DIMENSIONS
from tests.conftest import job_ended, tiny_board
from tests.security.test_accounts import PASSWORD

TEACH = Actor("teach", teacher=True)


@pytest.fixture
def class_studio(studio):
    """alice with a rendered and critiqued project of two versions, bob with an unrendered one."""
    studio.accounts.add("alice", PASSWORD)
    studio.accounts.add("bob", PASSWORD)
    studio.accounts.add("teach", PASSWORD, teacher=True)
    with acting(Actor("alice")):
        a = studio.create_from_storyboard(tiny_board(2)).project_id
        studio.render(a)
        studio.critique(a)
        studio.save_storyboard(a, tiny_board(3), None)
        studio.render(a)
        _queued_behind_another(studio, a, version=2)
    with acting(Actor("bob")):
        b = studio.create_from_storyboard(tiny_board(1).model_copy(update={"title": 'Bob, "quoted"'})).project_id
    return studio, a, b


def _queued_behind_another(studio, pid: str, version: int) -> None:
    """Two jobs on one version through a queue of one place, recorded in the jobs table: the second waits until the
    first is let go (an event, not a clock)."""
    jobs = Jobs(limits=Limits(running=1), repo=studio.ctx.repo)
    go = threading.Event()
    first, _ = jobs.start("render", pid, lambda progress, cancel: go.wait(60), label="render", version=version)
    second, _ = jobs.start("keyframes", pid, lambda progress, cancel: None, label="keyframes", version=version)
    assert first.state == "running" and second.queued
    go.set()
    assert job_ended(jobs, first) and job_ended(jobs, second)


def _waited(db: sqlite3.Connection, pid: str, number: int) -> float | None:
    rows = db.execute(
        "SELECT queued_at, started_at FROM jobs WHERE project=? AND version=? AND started_at IS NOT NULL", (pid, number)
    ).fetchall()
    seconds = [(datetime.fromisoformat(s) - datetime.fromisoformat(q)).total_seconds() for q, s in rows]
    return round(sum(seconds), 3) if seconds else None


def _database(studio) -> dict[tuple[str, int], dict]:
    """(project, version) -> what the database holds, read with sqlite3 alone."""
    db = sqlite3.connect(studio.config.db_path)
    out = {}
    for pid, owner, title in db.execute("SELECT id, owner, title FROM projects WHERE trashed_at IS NULL"):
        for vid, number in db.execute("SELECT id, number FROM versions WHERE project_id=?", (pid,)):
            renders = db.execute("SELECT film_sha256, media FROM renders WHERE version_id=?", (vid,)).fetchall()
            shas = {s for film, media in renders for s in (film, *json.loads(media or "{}").values())}
            size = sum(db.execute("SELECT size FROM media WHERE sha256=?", (s,)).fetchone()[0] for s in shas)
            crit = [
                json.loads(d)
                for (d,) in db.execute(
                    "SELECT data FROM critiques WHERE version_id=? AND screening='film' AND batch=(SELECT batch FROM "
                    "critiques WHERE version_id=? AND screening='film' ORDER BY created_at DESC LIMIT 1)",
                    (vid, vid),
                )
            ]
            scores = {}
            for d in DIMENSIONS:
                vals = [c["scores"][d] for c in crit if c["scores"].get(d) is not None]
                if vals:
                    scores[d] = round(sum(vals) / len(vals), 3)
            out[pid, number] = {
                "account": owner,
                "title": title,
                "renders": len(renders),
                "disk": size,
                "critiques": len(crit),
                "scores": scores,
                "waited": _waited(db, pid, number),
            }
    return out


def test_the_csv_matches_the_database(class_studio):
    studio, a, b = class_studio
    with acting(TEACH):
        text = to_csv(studio.classroom.report())
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0].keys()) == COLUMNS
    db = _database(studio)
    assert {(r["project_id"], int(r["version"])) for r in rows} == set(db)
    for r in rows:
        want = db[r["project_id"], int(r["version"])]
        assert (r["account"], r["title"], int(r["renders"]), int(r["disk_bytes"]), int(r["critiques"])) == (
            want["account"],
            want["title"],
            want["renders"],
            want["disk"],
            want["critiques"],
        ), r
        assert {d: float(r[d]) for d in DIMENSIONS if r[d]} == want["scores"]
        assert r["queue_seconds"] == ("" if want["waited"] is None else str(want["waited"])), r
    assert db[a, 1]["renders"] == 1 and db[a, 1]["disk"] > 0 and db[a, 1]["scores"]  # the data is not all empty
    assert db[a, 2]["waited"] is not None and db[a, 2]["waited"] > 0 and db[a, 1]["waited"] is None  # the queue's wait
    assert db[b, 1]["account"] == "bob"


def test_only_a_teacher_reads_the_report(class_studio, tmp_path):
    studio, _, _ = class_studio
    with acting(Actor("alice")), pytest.raises(StudioError, match="only a teacher"):
        studio.classroom.report()
    from tests.security.test_accounts import run

    home = studio.config.home
    studio.db.close()
    out = run(home, "--user", "teach", "class", "report", "--csv").output
    assert out.splitlines()[0] == ",".join(COLUMNS) and len(out.splitlines()) == 4  # header + 3 versions
    res = run(home, "--user", "bob", "class", "report", ok=False)
    assert res.exit_code == 1 and "only a teacher" in res.stderr


def test_the_class_screen_is_a_teachers(class_studio):
    """The screen's handlers, called as the page would: a student is refused in one line, a teacher gets the table,
    the CSV and the hand-over; the tab is shown to teachers only."""
    from app.ui import create_app
    from app.ui.teacher import TABLE, TeacherScreen

    studio, a, b = class_studio
    demo = create_app(studio, users=True)
    screen = next(f.fn.__wrapped__.__self__ for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "report")
    assert isinstance(screen, TeacherScreen)
    with acting(Actor("alice")):
        assert screen.shown().visible is False
        with pytest.raises(StudioError, match="only a teacher"):
            screen.report()
        with pytest.raises(StudioError, match="only a teacher"):
            screen.hand_over(b, "alice")
    with acting(TEACH):
        assert screen.shown().visible is True
        rows, csv_path, _, accounts = screen.report()
        assert len(rows) == 3 and {r[TABLE.index("account")] for r in rows} == {"alice", "bob"}
        assert open(csv_path).read() == to_csv(studio.classroom.report())
        assert "is now alice's (was bob's)" in screen.hand_over(b, "alice")
    with acting(Actor("alice")):
        assert studio.sharing.access(b).writable  # bob's project is alice's now


def test_the_teacher_holds_the_queue_from_the_class_screen(class_studio):
    """The Class screen's queue: every account's jobs in the queue's order, pause and resume, cancel any one; a
    student is refused each in one line."""
    from app.ui import create_app
    from app.ui.teacher import QUEUE_TABLE, TeacherScreen

    studio, a, b = class_studio
    demo = create_app(studio, users=True)
    screen = next(f.fn.__wrapped__.__self__ for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "queue")
    assert isinstance(screen, TeacherScreen)
    jobs, go = screen.ctx.jobs, threading.Event()
    with acting(Actor("alice")):
        first, _ = jobs.start("render", a, lambda progress, cancel: go.wait(60), label="render v2", version=2)
        for handler in (screen.queue, screen.pause, screen.resume):
            with pytest.raises(StudioError, match="only a teacher"):
                handler()
        with pytest.raises(StudioError, match="only a teacher"):
            screen.cancel(first.id)
    with acting(Actor("bob")):
        second, _ = jobs.start("render", b, lambda progress, cancel: None, label="render v1", version=1)
    assert first.state == "running" and second.queued  # one place on one device
    with acting(TEACH):
        state, rows, choices = screen.queue()
        assert "1 waiting" in state and [r[QUEUE_TABLE.index("account")] for r in rows[:2]] == ["alice", "bob"]
        assert "Renders, takes and stills: 1 running of 1 place(s), 1 waiting, the longest for " in state
        assert "Plans and critiques: 0 running of 4 place(s), 0 waiting." in state  # each lane and its wait
        assert {v for _, v in choices.choices} == {first.id, second.id}
        state, _, _ = screen.pause()
        assert state.startswith("**Paused**") and jobs.paused
        go.set()
        assert job_ended(jobs, first) and second.queued  # paused: bob's job does not start
        screen.cancel(second.id)
        assert second.state == "stopped" and "Cancelled by the teacher" in second.message
        with pytest.raises(gr.Error, match="already ended"):
            screen.cancel(second.id)
        state, _, _ = screen.resume()
        assert state.startswith("Running.") and "0 waiting" in state
