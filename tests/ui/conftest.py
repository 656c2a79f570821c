"""Fixtures for the web app: a Studio on a temp home, the app launched in-process, `chief serve` as a subprocess."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.process import ServerProcess, free_port

for _k, _v in {"GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}.items():
    os.environ.setdefault(_k, _v)

ROOT = Path(__file__).resolve().parents[2]

TINY_BOARD = """\
title: Tiny Lighthouse
logline: A keeper and a whale.
style_guide: muted teal and amber
width: 96
height: 64
fps: 8
scenes:
  - scene_id: a
    title: Dawn
    shots:
      - {shot_id: s1, prompt: A lighthouse at dawn, duration: 1, seed: 1}
      - {shot_id: s2, prompt: A whale tail in grey water, duration: 1, seed: 2}
      - {shot_id: s3, prompt: Night storm waves hit the lighthouse, duration: 1, seed: 3, camera: handheld}
"""


@pytest.fixture
def studio(tmp_path, empty_database):
    from app.config import load_config
    from app.studio import Studio

    home = empty_database(tmp_path / "home")
    return Studio(load_config({"home": home, "narration": False, "agents": "offline"}, environ={}))


@pytest.fixture
def board_file(tmp_path) -> Path:
    p = tmp_path / "tiny.yaml"
    p.write_text(TINY_BOARD)
    return p


@pytest.fixture
def app_url(studio):
    """The app launched in this process on a free port (stopped after the test)."""
    from app.ui import launch

    port = free_port()
    demo = launch(studio, port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


@pytest.fixture
def client(app_url):
    from tests.conftest import app_client

    return app_client(app_url)


class Server(ServerProcess):
    """`chief --home HOME serve --port PORT` as a real subprocess."""

    def __init__(self, home: Path, log: Path, extra_env: dict | None = None, port: int | None = None) -> None:
        self.home, self.port = home, port or free_port()  # a port given again: the same origin for the browser
        env = {**os.environ, "CHIEF_NARRATION": "false", "CHIEF_AGENTS": "offline", **(extra_env or {})}
        env.pop("CHIEF_AUTH", None)
        self.url = f"http://127.0.0.1:{self.port}/"
        super().__init__(
            "chief serve",
            [sys.executable, "-m", "app.cli", "--home", str(home), "serve", "--port", str(self.port)],
            log,
            env,
            ready_url=self.url + "config",
            timeout=90,
            cwd=ROOT,
        )


@pytest.fixture
def served(tmp_path):
    with Server(tmp_path / "home", tmp_path / "serve.log") as server:
        yield server


@pytest.fixture
def errors(page):
    """The page's script errors, asserted empty (and no traceback shown) when the test ends."""
    seen: list[str] = []
    page.on("pageerror", lambda e: seen.append(str(e)))
    yield seen
    assert not seen, seen
    assert page.is_closed() or "Traceback" not in page.content()  # a test may close its page (leaving asks first)
