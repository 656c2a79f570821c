"""The services behind the creator's workspace: per-clip media cached by clip hash, Stop in every stage, jobs,
notes kept editable, commit once, long ideas, quiet libraries, the editor hand-off from the CLI."""

from __future__ import annotations

import threading

import pytest
from click.testing import CliRunner

from generation.base import Cancelled, CancelToken
from storage.files import load_storyboard
from storage.run import AssembleProgress, ShotProgress
from tests.ui.conftest import TINY_BOARD


@pytest.fixture
def studio(tmp_path):
    from app.config import load_config
    from app.studio import Studio

    return Studio(load_config({"home": tmp_path / "home", "narration": False, "agents": "offline"}, environ={}))


@pytest.fixture
def project(studio, tmp_path):
    p = tmp_path / "b.yaml"
    p.write_text(TINY_BOARD)
    return studio.create_from_storyboard(load_storyboard(p)).project_id


def cached_media(studio) -> set[tuple[str, str]]:
    from storage.db import ClipMediaRow

    with studio.db.reader() as s:
        return {(r.clip_sha256, r.kind) for r in s.query(ClipMediaRow)}


def test_clip_pictures_are_cut_once_per_clip(studio, project):
    info = studio.render(project)
    clips = {r.sha256 for r in info.shots}
    first = cached_media(studio)
    assert first == {(sha, kind) for sha in clips for kind in ("thumb", "frames:3")}
    board = studio.version(project).storyboard
    board.scenes[0].shots[1].prompt = "A whale tail in silver water"
    v2, _ = studio.save_storyboard(project, board, None)
    info2 = studio.render(project, v2.number)
    new = {r.sha256 for r in info2.shots if r.status == "rendered"}
    assert len(new) == 1 and cached_media(studio) - first == {(sha, k) for sha in new for k in ("thumb", "frames:3")}
    studio.critique(project, v2.number)  # critics watch cached frames: nothing new is cut
    assert cached_media(studio) - first == {(sha, k) for sha in new for k in ("thumb", "frames:3")}
    thumb = studio.thumbnail(info2.shots[1].sha256)
    assert thumb.suffix == ".jpg" and thumb.is_file()


def test_a_new_clips_last_frame_is_its_last_decoded_frame_kept_lossless(studio, project):
    """The continuity frame is cut in the same decode as the clip's pictures: it is the clip's last frame, exactly."""
    import numpy as np
    from PIL import Image

    from generation import frames
    from storage.db import ClipRow

    info = studio.render(project)
    with studio.db.reader() as s:
        last = {r.sha256: r.last_frame_sha256 for r in s.query(ClipRow)}
    for shot in info.shots:
        clip = studio.media.path(shot.sha256, "mp4")
        n = frames.frame_count(clip)
        want = np.asarray(frames.decode(clip, [n - 1])[0])
        got = np.asarray(Image.open(studio.media.path(last[shot.sha256], "png")).convert("RGB"))
        assert got.shape == want.shape and np.array_equal(got, want)
        if n > 1:  # and not another frame of it
            assert not np.array_equal(got, np.asarray(frames.decode(clip, [0])[0]))


def test_stop_during_assembly_keeps_clips_and_records_no_film(studio, project):
    token = CancelToken()

    def on(e):
        if isinstance(e, AssembleProgress):
            token.cancel()

    with pytest.raises(Cancelled):
        studio.render(project, progress=on, cancel=token)
    assert studio.render_info(project) is None
    assert len(studio.cached_shots(studio.version(project).storyboard)) == 3  # finished clips are kept
    assert studio.render(project).reused == 3


def test_a_cancelled_ffmpeg_is_killed(tmp_path):
    from generation.video_io import run_ffmpeg

    token = CancelToken()
    threading.Timer(0.5, token.cancel).start()
    with pytest.raises(Cancelled):  # without the kill this reads a real-time source for ten minutes
        run_ffmpeg(
            ["-re", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=8:duration=600", "-f", "null", "-"], cancel=token
        )


def test_jobs_run_once_per_project_and_stop_is_an_outcome():
    from app.server.jobs import DONE, FAILED, STOPPED, Jobs

    jobs = Jobs()
    gate = threading.Event()

    def long(progress, cancel):
        progress(ShotProgress(shots=2, shot_index=0, shot_id="s1", step=1, steps=4, status="rendering"))
        gate.wait(30)
        cancel.raise_if_cancelled()
        return "film"

    job, started = jobs.start("render", "p1", long, label="render v1")
    again, started2 = jobs.start("render", "p1", long, label="render v1")
    assert started and not started2 and again is job
    seen = jobs.wait(job, 0, timeout=30)
    assert jobs.active("p1", "render") is job and "shot 1/2 (s1) · step 1/4" in job.desc and seen > 0
    assert jobs.stop(job)
    gate.set()
    while job.running:
        jobs.wait(job, job.seq, timeout=30)
    assert job.state == STOPPED and job.message.startswith("Stopped.") and jobs.active("p1", "render") is None
    ok, _ = jobs.start("render", "p1", lambda p, c: "film", label="again")
    bad, _ = jobs.start("critique", "p1", lambda p, c: (_ for _ in ()).throw(ValueError("no film\nmore")), label="x")
    for j in (ok, bad):
        while j.running:
            jobs.wait(j, j.seq, timeout=30)
    assert (ok.state, ok.result, bad.state, bad.message) == (DONE, "film", FAILED, "no film")


def test_notes_are_edited_and_deleted_on_their_version_only(studio, project):
    from storage.repository import NotFound

    n = studio.add_note(project, "Make the storm scarier", "s3")
    assert studio.edit_note(project, n.id, "  Make the storm terrifying ").text == "Make the storm terrifying"
    board = studio.version(project).storyboard
    board.scenes[0].shots[2].prompt = "Night storm, towering black waves"
    v2, _ = studio.save_storyboard(project, board, None)
    with pytest.raises(NotFound):
        studio.delete_note(project, n.id, v2.number)  # an earlier version's note stays as it was
    earlier = studio.earlier_notes(project, v2.number)
    assert [(e.note.text, e.version, e.addressed, e.how) for e in earlier] == [
        ("Make the storm terrifying", 1, False, "shot s3 changed since")
    ]  # changed, not claimed as addressed
    from app.ui.screens.screening import earlier_html

    shown = earlier_html(earlier)
    assert "shot s3 changed since" in shown and "✓" not in shown and "addressed" not in shown
    studio.delete_note(project, n.id, 1)
    assert studio.notes(project, 1) == [] and studio.earlier_notes(project, v2.number) == []


def test_an_earlier_note_is_addressed_only_by_an_accepted_edit_that_cites_it(studio, project):
    from app.ui.screens.screening import earlier_html

    studio.add_note(project, "Make the storm scarier", "s3")
    studio.refine(project)
    v2 = studio.accept(project).version
    earlier = studio.earlier_notes(project, v2.number)
    assert [(e.addressed, e.how) for e in earlier] == [(True, "edit accepted in v2")]
    assert "✓ addressed: edit accepted in v2" in earlier_html(earlier)


def test_a_proposal_is_committed_once(studio, project):
    from app.errors import StudioError

    studio.add_note(project, "Make the storm scarier", "s3")
    studio.refine(project)
    first = studio.accept(project, once=True)
    with pytest.raises(StudioError, match=f"already committed as v{first.version.number}"):
        studio.accept(project, ref=1, once=True)
    assert len(studio.versions(project)) == 2


def test_long_ideas_are_planned_and_too_long_ones_refused_in_words(studio):
    from app.errors import StudioError

    idea = "A lighthouse keeper befriends a lost whale. " + "The storm grows and the sea rises. " * 150
    v = studio.create_project(idea, 0.25)
    assert len(idea) > 5000 and v.storyboard.shots()
    with pytest.raises(StudioError, match="at most 20,000"):
        studio.create_project("x" * 20_001, 0.25)


def test_quiet_libraries_switch_off_their_progress_bars():
    from transformers.utils import logging as tlog

    from app.server.progress import quiet_libraries

    tlog.enable_progress_bar()
    quiet_libraries()
    assert not tlog.is_progress_bar_enabled()


def test_quiet_libraries_imports_none_of_them_and_still_quiets_them(tmp_path):
    """Every CLI command quiets the libraries; importing them for it cost torch (~300 MB) on every command."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = (
        "import sys; from app.server.progress import quiet_libraries; quiet_libraries(); "
        "print(sorted(m for m in ('torch', 'diffusers', 'transformers') if m in sys.modules)); "
        "from transformers.utils import logging; print(logging.is_progress_bar_enabled())"
    )
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "False"], out.stdout + out.stderr


def test_chief_export_timeline(studio, project, tmp_path):
    import opentimelineio as otio

    from app.cli import main

    studio.render(project)
    studio.add_note(project, "Open on the lamp", "s1")
    out = tmp_path / "cut"
    r = CliRunner().invoke(main, ["--home", str(studio.config.home), "export", project, "--timeline", "-o", str(out)])
    assert r.exit_code == 0, r.output
    edl = otio.adapters.read_from_file(str(out / "cut.edl"))
    assert [m.name for m in next(iter(edl.find_clips())).markers] == ["NOTE: OPEN ON THE LAMP"]
    assert sorted(p.name for p in out.iterdir()) == ["cut.edl", "cut.fcpxml", "cut.otio"]
