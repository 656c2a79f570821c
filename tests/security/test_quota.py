"""Quotas per account (issue 33 item 4): jobs at once, renders per hour and disk; each refuses in one line before
anything is written (no job record, no row, no file), and a file two accounts use counts for each."""

from __future__ import annotations

import threading

import pytest

from app.server.jobs import Jobs
from app.server.queue import Limits
from app.server.quotas import QuotaReached, Quotas
from storage.owners import Actor, acting
from tests.conftest import job_ended, tiny_board

WAIT = 60  # s: a bound on a hang, never a measured time


def held(release: threading.Event):
    def work(progress, cancel):
        while not release.wait(0.01):
            cancel.raise_if_cancelled()

    return work


def snapshot(studio) -> tuple[dict[str, int], list[str]]:
    """Every table's row count and every file under the data folder (but the database's own files)."""
    from sqlalchemy import text

    with studio.db.engine.connect() as c:
        tables = [r[0] for r in c.execute(text("SELECT name FROM sqlite_master WHERE type='table'"))]
        counts = {t: c.execute(text(f'SELECT count(*) FROM "{t}"')).scalar_one() for t in tables}
    home = studio.config.home
    files = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and ".db" not in p.name)
    return counts, files


def refused_in_one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text and text
    return text


def test_jobs_at_once_are_refused_before_anything_is_written(studio):
    release = threading.Event()
    jobs = Jobs(limits=Limits(running=1, per_user=1), quotas=Quotas(jobs=2), repo=studio.ctx.repo)
    with acting(Actor("alice")):
        started = [jobs.start("render", "p1", held(release), label="render 1")[0]]
        started.append(jobs.start("render", "p2", held(release), label="render 2")[0])  # queued: it counts too
        before = snapshot(studio)
        with pytest.raises(QuotaReached) as e:
            jobs.start("critique", "p3", held(release), label="critique 3")
    assert "alice already has 2 job(s) queued or running (the limit is 2)" in refused_in_one_line(e)
    assert snapshot(studio) == before
    with acting(Actor("bob")):  # another account's quota is its own
        started.append(jobs.start("render", "p4", held(release), label="bob's render")[0])
    release.set()
    assert all(job_ended(jobs, job, WAIT) for job in started)  # their records written before the folder goes


def test_renders_per_hour_are_counted_from_the_records(studio):
    release = threading.Event()
    release.set()
    jobs = Jobs(quotas=Quotas(renders_per_hour=2), repo=studio.ctx.repo)
    with acting(Actor("alice")):
        for i in range(2):
            job, _ = jobs.start("render" if i == 0 else "takes", f"p{i}", held(release), label=f"r{i}")
            assert job_ended(jobs, job, WAIT)
        critique, _ = jobs.start("critique", "p0", held(release), label="a critique is no render")
        assert job_ended(jobs, critique, WAIT)
        before = snapshot(studio)
        with pytest.raises(QuotaReached) as e:
            jobs.start("render", "p9", held(release), label="third render")
    assert "alice has started 2 render(s) in the last hour (the limit is 2 an hour)" in refused_in_one_line(e)
    assert snapshot(studio) == before
    # a server restarted within the hour still counts them: the count is the database's
    with acting(Actor("alice")), pytest.raises(QuotaReached):
        Jobs(quotas=Quotas(renders_per_hour=2), repo=studio.ctx.repo).start("render", "p9", held(release), label="x")


def test_disk_counts_a_shared_file_for_each_account_and_refuses_before_writing(make_studio, tmp_path):
    studio = make_studio()
    with acting(Actor("alice")):
        alice = studio.create_from_storyboard(tiny_board(2)).project_id
        studio.render(alice)
    with studio.ctx.repo.read() as u:
        alice_bytes = u.owner_media_bytes("alice")
    store = sum(p.stat().st_size for p in studio.media.root.rglob("*") if p.is_file())
    assert alice_bytes == store > 0  # alone on the server, every stored file is alice's

    with acting(Actor("bob")):  # the same shots: bob's film reuses alice's clips (one file on disk, used by both)
        bob = studio.create_from_storyboard(tiny_board(2).model_copy(update={"title": "Bob's"})).project_id
        studio.render(bob)
        assert studio.render_info(bob).reused == 2
    with studio.ctx.repo.read() as u:
        shared = u.owner_media_bytes("bob")
        assert u.owner_media_bytes("alice") == alice_bytes and 0 < shared  # bob's use does not lower alice's
        clips = {s.sha256 for s in studio.render_info(bob).shots}
        clip_bytes = sum(m.size for m in u.media(sorted(clips)).values())
    assert shared >= clip_bytes > 0  # the shared clips count for bob in full

    jobs = Jobs(quotas=Quotas(disk_mb=alice_bytes / (1 << 20)), repo=studio.ctx.repo)
    before = snapshot(studio)
    with acting(Actor("alice")), pytest.raises(QuotaReached) as e:
        jobs.start("render", alice, lambda p, c: studio.render(alice, None, p, c), label="render again")
    line = refused_in_one_line(e)
    assert line.startswith("alice's projects use ") and "MB disk quota" in line
    assert snapshot(studio) == before  # no job record, no row, no file
    release = threading.Event()
    release.set()
    with acting(Actor("alice")):  # a critique writes no media: not refused by the disk quota
        job, _ = jobs.start("critique", alice, held(release), label="critique")
        assert job_ended(jobs, job, WAIT)


def test_a_quota_reached_is_one_line_on_the_page(make_studio, serve):
    """Through the served app: the Render button's refusal is the quota's line, and nothing is written."""
    from tests.conftest import app_client

    studio = make_studio(quota_renders_per_hour=1)
    project = studio.create_from_storyboard(tiny_board(2)).project_id
    url = serve(studio)
    client = app_client(url)
    client.predict(project, 1, "", None, api_name="/render")
    before = snapshot(studio)
    with pytest.raises(Exception) as e:
        client.predict(project, 1, "", None, api_name="/render")
    assert "local has started 1 render(s) in the last hour (the limit is 1 an hour): try again later" in str(e.value)
    assert snapshot(studio) == before
