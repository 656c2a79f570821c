"""The disk fills up while a clip or the film is being written: one clear error, no partial file in the
media store, and the database holds nothing of the failed step (finished clips stay, as designed)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

import generation.animatic
import generation.assembly
import storage.media
from app.studio import RenderFailed, StudioError
from generation.video_io import write_video
from tests.fault.conftest import (
    assert_sound,
    board,
    chief,
    count,
    make_studio,
    media_files,
    partial_files,
    query,
    snapshot,
)

ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def edited(n: int = 3, shot: int = 1):
    """The test storyboard with one shot's prompt changed (so only that shot needs a new clip)."""
    b = board(n)
    shots = [
        s.model_copy(update={"prompt": s.prompt + ", now raining"}) if i == shot else s for i, s in enumerate(b.shots())
    ]
    return b.model_copy(update={"scenes": [b.scenes[0].model_copy(update={"shots": shots})]})


@pytest.fixture
def project(home):
    """v1 rendered; v2 changes shot s1 (one clip to render)."""
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(3)).project_id
    studio.render(pid)
    studio.save_storyboard(pid, edited(), None)
    return studio, pid


def test_clip_writer_fails_mid_write(home, project, monkeypatch):
    """ffmpeg's output fails after two frames: the real writer removes its .part file."""
    studio, pid = project

    def full_after_two(frames, path, fps):
        def gen():
            for k, f in enumerate(frames):
                if k == 2:
                    raise ENOSPC
                yield f

        return write_video(gen(), path, fps)

    monkeypatch.setattr(generation.animatic, "write_video", full_after_two)
    before, files = snapshot(home), media_files(home)
    with pytest.raises(RenderFailed, match=r"shot 2/3 \(s1\) failed: OSError: .*No space left on device"):
        studio.render(pid)
    assert snapshot(home) == before and media_files(home) == files and partial_files(home) == []

    monkeypatch.undo()
    info = studio.render(pid)
    assert (info.rendered, info.reused) == (1, 2)
    assert_sound(home, pid)


def test_media_store_fails_mid_copy(home, project, monkeypatch):
    """The store's copy into place fails half way: the temporary file is removed, nothing is recorded."""
    studio, pid = project

    def half_then_full(src, dst):
        Path(dst).write_bytes(Path(src).read_bytes()[:100])
        raise ENOSPC

    monkeypatch.setattr(storage.media.shutil, "move", half_then_full)
    before, files = snapshot(home), media_files(home)
    with pytest.raises(RenderFailed) as exc:
        studio.render(pid)
    assert "shot 2/3 (s1) failed: could not store the clip" in str(exc.value)
    assert "No space left on device" in str(exc.value)
    assert snapshot(home) == before and media_files(home) == files and partial_files(home) == []


def test_film_write_fails(home, monkeypatch):
    """ffmpeg runs out of space writing the film: the clips are kept, no film, no render row."""
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(3)).project_id

    def full(args, cwd=None, **_):
        Path(args[-1]).write_bytes(b"\0" * 1000)  # ffmpeg got part of the way
        raise RuntimeError("ffmpeg failed (1): av_interleaved_write_frame(): No space left on device")

    monkeypatch.setattr(generation.assembly, "run_ffmpeg", full)
    with pytest.raises(StudioError, match="could not assemble the film: .*No space left on device.*free some space"):
        studio.render(pid)
    assert count(home, "renders") == 0 and count(home, "clips") == 3
    assert len([p for p in media_files(home) if p.suffix == ".mp4"]) == 3  # the clips, no film
    assert partial_files(home) == [] and not any((home / "scratch").iterdir())
    monkeypatch.undo()
    info = studio.render(pid)
    assert (info.rendered, info.reused) == (0, 3)
    assert_sound(home, pid)


def test_film_write_fails_for_another_cause_does_not_blame_the_disk(home, monkeypatch):
    """ffmpeg fails for another reason (a missing file): the error names it and does not ask to free space."""
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(2)).project_id

    def missing(args, cwd=None, **_):
        raise RuntimeError("ffmpeg failed (1): h/media/ab/x.mp4: No such file or directory")

    monkeypatch.setattr(generation.assembly, "run_ffmpeg", missing)
    with pytest.raises(StudioError) as exc:
        studio.render(pid)
    assert "No such file or directory" in str(exc.value) and "free some space" not in str(exc.value)
    assert str(exc.value).endswith("Every clip is kept; run render again.")


@pytest.fixture
def small_fs(tmp_path):
    """A 3 MiB tmpfs (needs root and mount rights; skipped otherwise)."""
    mnt = Path(tempfile.mkdtemp(dir=tmp_path))
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(
            f"cannot mount a small tmpfs here ({res.stderr.strip() or 'mount failed'}); "
            "the patched-writer tests cover disk full"
        )
    yield mnt
    if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(fs: Path, leave_kb: int) -> Path:
    filler = fs / "filler"
    filler.unlink(missing_ok=True)
    st = os.statvfs(fs)
    with open(filler, "wb") as f:
        f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave_kb * 1024))
    return filler


def test_real_full_filesystem(small_fs):
    """A real full disk at several fill levels (database, clip, last frame or film fails first): always one
    line, exit 1, no partial file, a sound database, no render of v2; after freeing space the render works."""
    home = small_fs / "home"
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(3)).project_id
    studio.render(pid)
    studio.save_storyboard(
        pid,
        edited(6, 4).model_copy(
            update={
                "scenes": [
                    edited(6, 4)
                    .scenes[0]
                    .model_copy(
                        update={
                            "shots": [s.model_copy(update={"prompt": s.prompt + " rain"}) for s in board(6).shots()]
                        }
                    )
                ]
            }
        ),
        None,
    )
    studio.db.close()
    failures, unclear = 0, []
    for leave_kb in (8, 40, 80, 120, 160):
        filler = fill(small_fs, leave_kb)
        res = chief(home, "render", pid, "--json")
        filler.unlink()
        if res.returncode == 0:
            continue
        failures += 1
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 1 and lines[-1].startswith("error: ") and "Traceback" not in res.stderr, res.stderr
        if len(lines) != 1 or not any(w in lines[0] for w in ("No space left", "disk is full", "disk I/O error")):
            unclear.append(f"{leave_kb} KiB free: {' | '.join(lines)}")
        assert partial_files(home) == []
        assert_sound(home, pid)
        assert query(
            home, "SELECT count(*) FROM renders r JOIN versions v ON r.version_id = v.id WHERE v.number = 2"
        ) == [(0,)]
    assert failures >= 3  # the fill levels really did fill the disk
    landed = count(home, "clips") - 3
    res = chief(home, "render", pid, "--json")
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert info["reused"] == landed and info["rendered"] == 6 - landed
    assert_sound(home, pid)
    assert not unclear, "a full disk was reported unclearly: " + "; ".join(unclear)
