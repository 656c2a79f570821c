"""Fixtures for the hardening tests: hostile data files, the CLI as a subprocess, the web app on a free port,
and a local "other site" server that records what it is asked for. Studios come from the root conftest's
`make_studio` (`make_studio(home=..., **settings)`), Chromium pages from its `page` and `browser`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import _built_once, invoke_cli
from tests.process import free_port
from tests.security.hostile_archives import BOARD

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"


def chief(
    home: Path,
    *args: str,
    env: dict | None = None,
    user: int | None = None,
    timeout: float = 120,
    process: bool = False,
) -> subprocess.CompletedProcess:
    """`chief --home HOME ARGS`: run by click's CliRunner in this process (what a command prints and its exit code;
    an exception the CLI did not turn into its one-line error fails the test), or, with `process` or `user`, as a
    subprocess (as user id `user`: setpriv, for read-only homes; `process` for `serve` and for what only another
    process shows, e.g. a database another process holds)."""
    if user is None and not process:
        res = invoke_cli(home, args, {"CHIEF_NARRATION": "false", "CHIEF_AGENTS": "offline", **(env or {})})
        return subprocess.CompletedProcess(["chief", *args], res.exit_code, res.stdout, res.stderr)
    full = {**os.environ, "CHIEF_NARRATION": "false", "CHIEF_AGENTS": "offline", "PYTHONPATH": str(ROOT), **(env or {})}
    cmd = [sys.executable, "-m", "app.cli", "--home", str(home), *args]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    return subprocess.run(cmd, cwd=ROOT, env=full, capture_output=True, text=True, timeout=timeout)


def one_line_error(res: subprocess.CompletedProcess) -> str:
    """The error line of a failed command, after checking it is one line and no traceback."""
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip() and not ln.startswith("chief ·")]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


def _whale_folder(folder: Path) -> Path:
    """A data folder with one project planned by `chief new`."""
    res = chief(folder, "new", "A lighthouse keeper befriends a whale", "--minutes", "0.25", process=True)
    assert res.returncode == 0, res.stderr
    return folder


DATA_FOLDERS = {"whale": _whale_folder}


@pytest.fixture(scope="session")
def data_folder(tmp_path_factory):
    """data_folder(name, to) -> `to`, a copy of the data folder `DATA_FOLDERS[name]` makes, made once per test run
    (a test that damages or locks its copy leaves the template as it was)."""
    get = _built_once(tmp_path_factory, "data-folders", DATA_FOLDERS)

    def copy(name: str, to: Path) -> Path:
        shutil.copytree(get(name), to)
        return to

    return copy


@pytest.fixture
def board_file(tmp_path) -> Path:
    p = tmp_path / "tiny.yaml"
    p.write_text(BOARD)
    return p


@pytest.fixture
def serve(tmp_path):
    """serve(studio, auth=None) -> base URL of the app launched in this process on a free port."""
    from app.ui import launch

    demos = []

    def start(studio, auth: str | None = None) -> str:
        port = free_port()
        demos.append(launch(studio, port=port, auth=auth, prevent_thread_lock=True, quiet=True))
        return f"http://127.0.0.1:{port}"

    yield start
    for demo in demos:
        demo.close()


class OtherSite:
    """A local HTTP server on another port: serves `page` at / and records every path it is asked for."""

    def __init__(self, page: str = "") -> None:
        self.page, self.paths = page, []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                site.paths.append(self.path)
                body = site.page.encode() if self.path == "/" else b"\x89PNG"
                self.send_response(200)
                self.send_header("Content-Type", "text/html" if self.path == "/" else "image/png")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://localhost:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def other_site():
    site = OtherSite()
    yield site
    site.close()
