"""The one way CHIEF runs ffmpeg: the binary imageio-ffmpeg ships, run by `run`.

`run` kills ffmpeg as soon as `cancel` (a CancelToken) is set (raising Cancelled), after `timeout` seconds
(FfmpegTimeout), or once it has written more than `max_output` bytes to its standard output (FfmpegTooMuch: a
decompression bomb stops there); its standard error goes to a file, never a pipe, so a chatty ffmpeg never blocks.
A file CHIEF did not write is opened with `generation.ffmpeg_input.input_args` (the container from its bytes, an
allow-listed demuxer, local files only), which the callers put in `args`. Standard library only (and imageio-ffmpeg
for the binary's path), so the agents' sound cutting uses it without loading the video stack.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

POLL = 0.2  # seconds between looks at the cancel flag and the clock while ffmpeg runs


class FfmpegError(RuntimeError):
    """ffmpeg exited with an error (the message ends with its last lines)."""


class FfmpegTimeout(FfmpegError):
    """ffmpeg ran past its time limit and was stopped."""


class FfmpegTooMuch(FfmpegError):
    """ffmpeg wrote more than its output limit and was stopped."""


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: bytes  # empty unless `capture`
    stderr: str

    def tail(self, lines: int = 3) -> str:
        return " | ".join(self.stderr.strip().splitlines()[-lines:])


def ffmpeg_exe() -> str:
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def run(
    args: list[str],
    *,
    cwd: Path | None = None,
    cancel=None,
    timeout: float | None = None,
    capture: bool = False,
    max_output: int | None = None,
    check: bool = True,
) -> Ran:
    """Run ffmpeg with `args` (after `-hide_banner -nostdin`). `capture`: keep its standard output (else discarded);
    `check`: raise FfmpegError when it exits non-zero (else the caller reads `code`). Raises Cancelled,
    FfmpegTimeout or FfmpegTooMuch when stopped for those reasons (the process is killed and reaped first)."""
    from storage.run import Cancelled

    cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", *args]
    chunks: list[bytes] = []
    size = [0]
    too_much = threading.Event()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
            stderr=log,
            cwd=cwd,
        )
        reader = None
        if capture:
            assert proc.stdout is not None
            out = proc.stdout

            def read() -> None:
                for chunk in iter(lambda: out.read(1 << 16), b""):
                    size[0] += len(chunk)
                    if max_output is not None and size[0] > max_output:
                        too_much.set()
                        proc.kill()
                        break
                    chunks.append(chunk)
                out.close()

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        stopped: BaseException | None = None
        while True:
            try:
                code = proc.wait(timeout=POLL)
                break
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel.cancelled:
                    stopped = Cancelled("stopped")
                elif deadline is not None and time.monotonic() > deadline:
                    stopped = FfmpegTimeout(f"ffmpeg ran over {timeout:g} s and was stopped")
                if stopped is not None:
                    proc.kill()
                    proc.wait()
                    break
        if reader is not None:
            reader.join()
        if stopped is not None:
            raise stopped
        if too_much.is_set():
            raise FfmpegTooMuch(f"ffmpeg wrote more than {max_output} bytes and was stopped")
        log.seek(0)
        ran = Ran(code, b"".join(chunks), log.read().decode(errors="replace"))
    if check and code != 0:
        raise FfmpegError(f"ffmpeg failed ({code}): {ran.tail()}")
    return ran


def run_ffmpeg(args: list[str], cwd: Path | None = None, cancel=None, timeout: float | None = None) -> str:
    """Run ffmpeg, return its standard error (what `-i`, ebur128 and `-f null` report); raise with its last lines on
    failure. With `cancel`, stopped as soon as it is cancelled (Cancelled is raised)."""
    return run(args, cwd=cwd, cancel=cancel, timeout=timeout).stderr
