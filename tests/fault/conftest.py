"""Helpers for the fault-tolerance tests: small projects, a `chief` subprocess, and the invariants a crash
must never break (the database is sound, every version is whole, every stored clip is intact)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.config import load_config
from app.studio import Studio
from storage.schema import Scene, Shot, Storyboard

ROOT = Path(__file__).resolve().parents[2]
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
os.environ.update(OFFLINE_ENV)


def board(n: int = 3, seconds: float = 1.0, title: str = "fault") -> Storyboard:
    """n one-second shots at 128x72, 8 fps: each renders in a fraction of a second."""
    shots = [
        Shot(shot_id=f"s{i}", prompt=f"shot {i}: a lighthouse at dawn, wave {i}", duration=seconds, seed=i)
        for i in range(n)
    ]
    return Storyboard(
        title=title, logline="a test film", scenes=[Scene(scene_id="a", shots=shots)], width=128, height=72, fps=8
    )


def make_studio(home: Path, backend=None, agents=None, **over) -> Studio:
    cfg = load_config({"home": home, "narration": False, "agents": "offline", **over}, environ={})
    return Studio(cfg, backend=backend, agents=agents)


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "home"


def chief_env(home: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHIEF_", "OPENAI_"))}
    env.update(OFFLINE_ENV, CHIEF_HOME=str(home), CHIEF_NARRATION="0", PYTHONPATH=str(ROOT))
    env.setdefault("CHIEF_AGENTS", "offline")
    env.update(extra)
    return env


def chief_cmd(*args: str) -> list[str]:
    # what the `chief` console script runs (`python -m app.cli` would import app.cli twice)
    return [sys.executable, "-c", "from app.cli import main; main()", *args]


def chief(home: Path, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    """Run `chief ARGS` in a fresh process against `home`."""
    return subprocess.run(
        chief_cmd(*args), cwd=ROOT, env=chief_env(home, **env), capture_output=True, text=True, timeout=timeout
    )


def popen_chief(home: Path, *args: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        chief_cmd(*args),
        cwd=ROOT,
        env=chief_env(home, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def popen_python(home: Path, code: str, stdin: bool = False) -> subprocess.Popen:
    """A Python process (line-buffered stdout) running `code` against `home`; `stdin`: a pipe the test writes to."""
    return subprocess.Popen(
        [sys.executable, "-u", "-c", code],
        cwd=ROOT,
        env=chief_env(home),
        stdin=subprocess.PIPE if stdin else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(predicate, timeout: float = 60, what: str = "condition", proc: subprocess.Popen | None = None) -> None:
    """Poll until `predicate()` is true; fail with the process's output if it died first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"process exited ({proc.returncode}) before {what}:\n{out}\n{err}")
        time.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")


def query(home: Path, sql: str, *args) -> list[tuple]:
    """A read-only query through the sqlite3 module (another client, as a second process would be)."""
    db = home / "chief.db"
    if not db.exists():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return []
    finally:
        con.close()


def count(home: Path, table: str) -> int:
    rows = query(home, f"SELECT count(*) FROM {table}")
    return rows[0][0] if rows else 0


def snapshot(home: Path) -> dict[str, list[tuple]]:
    """Every row of every table: to prove a failed action changed nothing."""
    tables = [r[0] for r in query(home, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    return {t: sorted(query(home, f"SELECT * FROM {t}"), key=repr) for t in tables}


def media_files(home: Path) -> list[Path]:
    root = home / "media"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def partial_files(home: Path) -> list[Path]:
    """Temporary or partial files anywhere in the home folder (media store and scratch)."""
    return [p for p in home.rglob("*") if p.is_file() and (p.name.startswith(".incoming-") or ".part" in p.name)]


def assert_sound(home: Path, pid: str) -> list[tuple]:
    """The invariants after any failure: integrity ok; version numbers 1..n, unique, parents present, every
    storyboard valid; current version exists; every media row's file exists and hashes to its name.
    Returns the versions as (number, id, parent_id)."""
    assert query(home, "PRAGMA integrity_check") == [("ok",)]
    assert query(home, "PRAGMA foreign_key_check") == []
    rows = query(home, "SELECT number, id, parent_id, storyboard FROM versions WHERE project_id=? ORDER BY number", pid)
    numbers = [r[0] for r in rows]
    assert numbers == list(range(1, len(rows) + 1)), numbers
    ids = {r[1] for r in rows}
    for _, _, parent, sb in rows:
        assert parent is None or parent in ids
        Storyboard.model_validate_json(sb)
    ((current,),) = query(home, "SELECT current_version_id FROM projects WHERE id=?", pid)
    assert current in ids
    for sha, ext in query(home, "SELECT sha256, ext FROM media"):
        path = home / "media" / sha[:2] / f"{sha}.{ext}"
        assert path.is_file(), f"media row {sha}.{ext} has no file"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha, f"{path.name} is not what its name says"
    for p in media_files(home):  # a file under a content name is whole, whether or not a row points to it
        if not p.name.startswith("."):
            assert hashlib.sha256(p.read_bytes()).hexdigest() == p.name.split(".")[0], f"{p} is damaged"
    return [(r[0], r[1], r[2]) for r in rows]
