"""The one ffmpeg runner: stopped on cancel, past its time limit, past its output limit, and its errors in one line.
Each case runs an ffmpeg that would never end on its own (an endless lavfi source), so only the runner stops it."""

import pytest

from generation.base import Cancelled, CancelToken
from generation.ffmpeg import FfmpegError, FfmpegTimeout, FfmpegTooMuch, run

ENDLESS = ["-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono"]


def test_a_cancelled_run_is_stopped():
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        run([*ENDLESS, "-f", "null", "-"], cancel=token)


def test_a_run_past_its_time_limit_is_stopped():
    with pytest.raises(FfmpegTimeout, match="ran over 0 s"):
        run([*ENDLESS, "-f", "null", "-"], timeout=0)


def test_a_run_past_its_output_limit_is_stopped():
    with pytest.raises(FfmpegTooMuch, match="more than 4096 bytes"):
        run([*ENDLESS, "-f", "s16le", "-"], capture=True, max_output=4096)


def test_output_is_kept_and_a_failure_is_one_line(tmp_path):
    ran = run([*ENDLESS, "-t", "0.5", "-f", "s16le", "-"], capture=True, max_output=1 << 20)
    assert ran.code == 0 and len(ran.stdout) == 8000  # 0.5 s of 16-bit samples at 8 kHz
    with pytest.raises(FfmpegError, match=r"ffmpeg failed \(\d+\): .*nope"):
        run(["-i", str(tmp_path / "nope.wav"), "-f", "null", "-"])
    assert run(["-i", str(tmp_path / "nope.wav")], check=False).code != 0


def test_the_clip_writer_shares_the_process_group_so_python_need_not_fork_the_process(tmp_path):
    """imageio-ffmpeg puts its ffmpeg in a process group of its own unless told not to (generation.video_io): Python
    then forks the whole process for every clip written instead of vfork-ing. The writer seen mid-clip is in ours."""
    import os

    import numpy as np

    from generation.video_io import write_video

    groups: list[int] = []

    def frames():
        for i in range(4):
            if i == 2:  # the writer is running: this process's ffmpeg children, by /proc
                for pid in filter(str.isdigit, os.listdir("/proc")):
                    try:
                        stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                        name = open(f"/proc/{pid}/comm").read()
                    except OSError:
                        continue
                    if int(stat[1]) == os.getpid() and name.startswith("ffmpeg"):
                        groups.append(int(stat[2]))
            yield np.zeros((16, 16, 3), np.uint8)

    assert write_video(frames(), tmp_path / "clip.mp4", 8) == 4
    assert groups == [os.getpgrp()]


def test_a_files_facts_are_read_once_until_it_is_replaced(tmp_path, monkeypatch):
    """`inspect` runs ffmpeg once for a file; a file renamed into its place (how CHIEF writes media) is read anew."""
    import numpy as np

    from generation import video_io

    clip = tmp_path / "clip.mp4"
    video_io.write_video([np.zeros((16, 16, 3), np.uint8)] * 4, clip, 8)
    runs: list[list[str]] = []
    real = video_io.run
    monkeypatch.setattr(video_io, "run", lambda args, **kw: runs.append(args) or real(args, **kw))
    first = video_io.inspect(clip)
    first["width"] = 999  # a caller's changes stay its own
    again = video_io.inspect(tmp_path / "." / "clip.mp4")
    assert len(runs) == 1 and (again["width"], again["frames"], again["fps"]) == (16, 4, 8.0)
    video_io.write_video([np.zeros((32, 48, 3), np.uint8)] * 6, clip, 12)  # a new file under the same name
    assert (video_io.inspect(clip)["width"], video_io.inspect(clip)["frames"]) == (48, 6) and len(runs) == 2
    clip.unlink()
    with pytest.raises(FileNotFoundError):
        video_io.inspect(clip)
