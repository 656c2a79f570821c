"""Broken databases: each gets one line that says what is wrong, where, and what to do; nothing is
silently re-initialised or migrated over."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.security.conftest import ROOT, one_line_error
from tests.security.conftest import chief as _chief


def chief(home: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    """Every command here runs as its own process: a process's exit closes (and checkpoints) the database that these
    tests then damage, lock or make read-only."""
    return _chief(home, *args, process=True, **kw)


@pytest.fixture
def home(tmp_path, data_folder):
    """A data folder with one project in it (a copy of one `chief new` made)."""
    return data_folder("whale", tmp_path / "home")


def test_a_database_from_a_newer_chief_is_refused_untouched(home):
    db = home / "chief.db"
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = '0999'")
    con.commit()
    con.close()
    before = db.read_bytes()
    line = one_line_error(chief(home, "projects"))
    assert f"{db} was written by a newer CHIEF (database revision 0999" in line, line
    assert "upgrade CHIEF" in line
    assert db.read_bytes() == before


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_database_is_one_line(home, damage):
    db = home / "chief.db"
    chief(home, "projects")  # checkpointed: the data is in chief.db itself
    for side in ("chief.db-wal", "chief.db-shm"):
        (home / side).unlink(missing_ok=True)
    if damage == "garbage":
        db.write_bytes(b"this is not a database at all\n" * 200)
    else:
        db.write_bytes(db.read_bytes()[:100])  # the header survives, the pages do not
    line = one_line_error(chief(home, "projects"))
    assert f"{db} is not a CHIEF database or is damaged" in line, line
    assert "restore it from a backup" in line


def test_an_empty_database_file_is_not_silently_started_again(home):
    db = home / "chief.db"
    for p in home.glob("chief.db*"):
        p.unlink()
    db.touch()
    line = one_line_error(chief(home, "projects"))
    assert f"{db} is empty (0 bytes)" in line and "delete it to start an empty database" in line, line
    assert db.stat().st_size == 0  # still the user's file, not a fresh database over it


def read_only_user() -> int | None:
    """Who runs a read-only-home check: this user, or as root user nobody (root writes anywhere). A checkout that
    nobody cannot read (one inside a private temp folder) cannot run it as nobody: the test is skipped, saying so."""
    if os.geteuid() != 0:
        return None
    user = 65534
    probe = subprocess.run(
        ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", sys.executable, "-c", "import app.cli"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"as root this check runs as user nobody, who cannot run this checkout: {probe.stderr[-200:]}")
    return user


def test_a_read_only_home_says_so(data_folder):
    """The data folder cannot be written. The folder is made outside pytest's private temp folder, which user nobody
    (see read_only_user) could not even enter."""
    user = read_only_user()
    base = Path(tempfile.mkdtemp(prefix="chief-ro-"))
    try:
        base.chmod(0o755)
        home = base / "home"
        data_folder("whale", home)
        for p in home.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        home.chmod(0o555)
        line = one_line_error(chief(home, "projects", user=user))
        assert f"the data folder {home} is read-only" in line and "CHIEF_HOME" in line, line
    finally:
        for p in (base, *base.rglob("*")):
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(base)


def test_a_data_folder_that_cannot_be_created_says_so(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    line = one_line_error(chief(blocker / "home", "projects"))
    assert f"cannot create the data folder {blocker / 'home'}" in line, line


def _damage(home: Path, kind: str) -> str:
    """Break the data folder's database as `kind` says; returns what the one line must say."""
    db = home / "chief.db"
    chief(home, "projects")  # checkpointed: the data is in chief.db itself
    for side in ("chief.db-wal", "chief.db-shm"):
        (home / side).unlink(missing_ok=True)
    if kind == "newer":
        con = sqlite3.connect(db)
        con.execute("UPDATE alembic_version SET version_num = '0999'")
        con.commit()
        con.close()
        return "was written by a newer CHIEF"
    if kind == "garbage":
        db.write_bytes(b"this is not a database at all\n" * 200)
        return "is not a CHIEF database or is damaged"
    if kind == "truncated":
        db.write_bytes(db.read_bytes()[:100])
        return "is not a CHIEF database or is damaged"
    db.write_bytes(b"")
    return "is empty (0 bytes)"


@pytest.mark.parametrize("kind", ["newer", "garbage", "truncated", "empty"])
def test_serve_says_a_broken_database_in_one_line(home, kind):
    """`chief serve` builds its Studio as every command does: one line, exit status 1, no server started."""
    expected = _damage(home, kind)
    line = one_line_error(chief(home, "serve", "--port", "1", timeout=60))
    assert str(home / "chief.db") in line and expected in line, line


def test_serve_says_a_read_only_home_in_one_line(data_folder):
    user = read_only_user()
    base = Path(tempfile.mkdtemp(prefix="chief-ro-"))
    try:
        base.chmod(0o755)
        home = base / "home"
        data_folder("whale", home)
        for p in home.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        home.chmod(0o555)
        line = one_line_error(chief(home, "serve", "--port", "1", user=user, timeout=60))
        assert f"the data folder {home} is read-only" in line, line
    finally:
        for p in (base, *base.rglob("*")):
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(base)
