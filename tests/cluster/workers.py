"""Backends for the cluster tests, importable by Ray workers: the real animatic plus a script.

Every render appends "<shot_id> <pid>" to renders.log in a shared folder, so a test counts what the
workers did. `hold` names a shot whose first render announces itself (held.pid) and then waits until
release.flag exists (or the worker is killed, or the render is cancelled).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from generation.animatic import AnimaticBackend
from generation.base import Cancelled


class ScriptedAnimatic(AnimaticBackend):
    def __init__(self, folder: str, hold: str | None = None, restart_delay: float = 0.0) -> None:
        self.folder, self.hold = Path(folder), hold
        if restart_delay and (self.folder / "held.pid").exists():
            # a worker Ray restarts after the held shot's kill starts slowly (as on a loaded machine)
            time.sleep(restart_delay)

    def render(self, request, out, progress=None, cancel=None):
        with open(self.folder / "renders.log", "a") as f:
            f.write(f"{request.shot_id} {os.getpid()}\n")
        if request.shot_id == self.hold:
            try:
                fd = os.open(self.folder / "held.pid", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass  # held once already: this is the retry, render normally
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                deadline = time.monotonic() + 60
                while not (self.folder / "release.flag").exists() and time.monotonic() < deadline:
                    if progress is not None:
                        progress(1, 4)
                    if cancel is not None and cancel.cancelled:
                        raise Cancelled("render cancelled")
                    time.sleep(0.05)
        return super().render(request, out, progress, cancel)


def renders(folder: Path) -> list[tuple[str, int]]:
    log = Path(folder) / "renders.log"
    lines = log.read_text().split("\n") if log.exists() else []
    return [(s, int(p)) for s, p in (line.split() for line in lines if line)]


def wait_for(path: Path, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.05)
    raise TimeoutError(f"{path} did not appear within {timeout} s")
