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
