"""A real server as a subprocess for tests: started on a free loopback port, its output in a log file, ready
when a URL answers 200, stopped (terminate, then kill) afterwards."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """`with ServerProcess(...) as server:` waits until `ready_url` answers 200, and stops the process after."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        log: Path,
        env: dict,
        *,
        ready_url: str,
        timeout: float,
        cwd: Path | None = None,
    ) -> None:
        self.name, self.log_path, self.ready_url, self.timeout = name, log, ready_url, timeout
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def output(self, since: int = 0) -> str:
        """What the process wrote since byte `since` of its log (see `mark`)."""
        self.log.flush()
        return self.log_path.read_bytes()[since:].decode(errors="replace")

    def mark(self) -> int:
        self.log.flush()
        return self.log_path.stat().st_size

    def __enter__(self) -> ServerProcess:
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def wait_ready(self) -> None:
        url, timeout = self.ready_url, self.timeout
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.output()[-4000:]}")
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"{self.name} did not answer within {timeout}s:\n{self.output()[-4000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
