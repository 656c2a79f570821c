"""Jobs are kept per browser session (app/server/jobs.py): another session cannot find, read or stop them."""

from __future__ import annotations

import threading

import pytest

from app.server.jobs import JobBusy, Jobs
from app.server.security import SESSION_COOKIE, session_of


def test_another_session_cannot_find_read_or_stop_a_job():
    asking = {"who": "a" * 32}
    jobs = Jobs(owner=lambda: asking["who"])
    release = threading.Event()

    def work(progress, cancel):
        while not release.wait(0.01):
            cancel.raise_if_cancelled()

    plan, _ = jobs.start("plan", "", work, label="planning “a secret idea”", exclusive=False)
    render, started = jobs.start("render", "p1", work, label="render v1")
    assert started and jobs.active("p1", "render") is render and jobs.get(render.id) is render

    asking["who"] = "b" * 32
    assert jobs.active("", "plan") is None and jobs.last("", "plan") is None  # the idea is A's
    assert jobs.active("p1", "render") is None and jobs.get(render.id) is None
    with pytest.raises(JobBusy, match="another page is running a render on this project"):
        jobs.start("render", "p1", work, label="render v1")  # one render of a project at a time, whoever asks

    asking["who"] = "a" * 32
    again, started = jobs.start("render", "p1", work, label="render v1")
    assert again is render and not started  # A asking again follows its own render
    assert jobs.stop(render) and jobs.stop(plan)
    release.set()


@pytest.mark.parametrize(
    "cookie, session",
    [
        (f"{SESSION_COOKIE}={'x' * 32}", "x" * 32),
        (f"other=1; {SESSION_COOKIE}={'Y_-' * 10}ab", "Y_-" * 10 + "ab"),
        (f"{SESSION_COOKIE}=short", ""),
        (f"{SESSION_COOKIE}={'x' * 31}!", ""),
        ('bad"cookie', ""),
        ("", ""),
    ],
)
def test_the_session_is_read_from_its_cookie_only_when_well_formed(cookie, session):
    assert session_of({"cookie": cookie}) == session
