"""Shared test setup: offline environment, a Studio on a temp home, tiny storyboards."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
for var in (
    "CHIEF_LLM_BASE_URL",
    "CHIEF_LLM_API_KEY",
    "OPENAI_API_KEY",
    "CHIEF_AGENTS",
    "CHIEF_VIDEO_BACKEND",
    "CHIEF_VIDEO_MODEL",
    "CHIEF_HOME",
    "CHIEF_IMAGE_MODEL",
    "CHIEF_VACE_MODEL",
    "CHIEF_EMBED_MODEL",
):
    os.environ.pop(var, None)  # tests never pick up a developer's real endpoint or data folder
# Voiced lines, music cues and effects are content-addressed: one folder for the whole test session, so a line the
# suite has voiced once is read back (Piper takes about a second a line) by every test that renders it again.
os.environ["CHIEF_SOUND_CACHE"] = tempfile.mkdtemp(prefix="chief-sound-")
atexit.register(shutil.rmtree, os.environ["CHIEF_SOUND_CACHE"], True)

import ipaddress  # noqa: E402
import socket  # noqa: E402

import pytest  # noqa: E402

from storage.schema import Character, Scene, Shot, Storyboard  # noqa: E402


def _is_loopback(host: object) -> bool:
    if host in ("localhost", None, ""):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


class RemoteCallForbidden(ConnectionRefusedError):
    """A test tried to reach a non-loopback host (a real model endpoint)."""


@pytest.fixture(autouse=True)
def forbid_remote_network(monkeypatch):
    """Forbid real model calls: name resolution and connections to anything but 127.0.0.1/::1 fail."""
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host, *args, **kwargs):
        if not _is_loopback(host):
            raise RemoteCallForbidden(f"tests may not reach {host!r}: only the local fake server")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            raise RemoteCallForbidden(f"tests may not connect to {address[0]!r}: only the local fake server")
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)


def tiny_board(n: int = 4, duration: float = 1.0, shot_overrides: dict[int, dict] | None = None) -> Storyboard:
    """A small storyboard that renders in well under a second per shot with the animatic."""
    prompts = [
        "A lighthouse on a rock at dawn",
        "The keeper climbs the stairs, warm lamplight",
        "Night storm, dark waves crash",
        "A whale surfaces in golden light",
        "Calm sea at noon, bright sun",
        "Close-up of the keeper smiling",
    ]
    shots = [
        Shot(
            shot_id=f"s{i + 1}",
            prompt=prompts[i % len(prompts)],
            duration=duration,
            seed=i + 1,
            narration="The keeper waits." if i == 0 else "",
            characters=["Keeper"] if i % 2 else [],
            **(shot_overrides or {}).get(i, {}),
        )
        for i in range(n)
    ]
    half = max(1, n // 2)
    return Storyboard(
        title="Tiny",
        logline="A keeper and a whale",
        style_guide="muted colours",
        characters=[Character(name="Keeper", description="old man in a yellow coat")],
        scenes=[
            Scene(scene_id="a", title="A", shots=shots[:half]),
            *([Scene(scene_id="b", title="B", shots=shots[half:])] if shots[half:] else []),
        ],
        fps=8,
        width=128,
        height=72,
    )


@pytest.fixture
def server():
    """A real local OpenAI-compatible server (tests/agents/openai_server.py), scripted per test."""
    from tests.agents.openai_server import FakeOpenAI

    with FakeOpenAI() as s:
        yield s


@pytest.fixture
def make_studio(tmp_path):
    from app.config import load_config
    from app.studio import Studio

    made = []

    def make(backend=None, agents=None, **settings):
        settings.setdefault("narration", False)
        settings.setdefault("sound_cache", os.environ["CHIEF_SOUND_CACHE"])
        cfg = load_config({"home": tmp_path / "home", **settings}, environ={})
        st = Studio(cfg, backend=backend, agents=agents)
        made.append(st)
        return st

    yield make
    for st in made:
        st.db.close()


@pytest.fixture
def studio(make_studio):
    return make_studio()


@pytest.fixture
def chief(tmp_path):
    """The CLI through click's CliRunner on a temp home: `chief("--json", "new", ...)` asserts exit 0 unless
    `ok=False`; `env` adds variables (narration is off); `chief.home` is the data folder."""
    from click.testing import CliRunner

    from app.cli import main

    home = tmp_path / "home"
    runner = CliRunner()

    def run(*args, ok=True, env=None):
        res = runner.invoke(
            main, ["--home", str(home), *args], env={"CHIEF_NARRATION": "0", **(env or {})}, catch_exceptions=False
        )
        if ok:
            assert res.exit_code == 0, res.output + res.stderr
        return res

    run.home = home
    return run
