"""The first hour on the command line: a busy port is one line, a relative --home renders, the error after a
failed assembly advises freeing space only when the disk is full."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from storage.files import dump_storyboard
from tests.conftest import tiny_board

REPO = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path) -> dict:
    return {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(REPO),
        "CHIEF_NARRATION": "0",
        "HF_HUB_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HOME": str(tmp_path),
    }


def test_busy_port_is_one_line_and_a_nonzero_exit(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = subprocess.run(
            [sys.executable, "-m", "app.cli", "--home", str(tmp_path / "h"), "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            env=_env(tmp_path),
            timeout=120,
        )
    assert res.returncode == 1
    lines = (res.stdout + res.stderr).strip().splitlines()
    assert lines == [f"error: port {port} is already in use on 127.0.0.1: pass --port N (or `make serve PORT=N`)"]


def test_relative_home_renders_the_film(tmp_path):
    work = tmp_path / "cwd"
    work.mkdir()
    (work / "story.yaml").write_text(dump_storyboard(tiny_board(3)))
    cmd = [sys.executable, "-m", "app.cli", "--home", "h", "--json"]
    run = dict(capture_output=True, text=True, env=_env(tmp_path), cwd=work, timeout=300)
    made = subprocess.run([*cmd, "new", "--storyboard", "story.yaml"], **run)
    assert made.returncode == 0, made.stderr
    pid = json.loads(made.stdout)["project"]
    rendered = subprocess.run([*cmd, "render", pid], **run)
    assert rendered.returncode == 0, rendered.stderr
    out = json.loads(rendered.stdout)
    assert out["rendered"] == 3
    film = Path(out["film"]) if "film" in out else None
    assert film is None or (film.is_absolute() and film.is_file() and film.is_relative_to(work / "h"))
    assert (work / "h" / "chief.db").is_file()
