"""Accounts (issue 33): passwords as salted scrypt hashes, `chief users …`, projects owned by accounts with
"not found" for anyone else's (storage.owners, storage.repository), `--user` on the CLI, archives imported into the
importer's account, and an existing data folder upgraded to the local owner's (migration 0010)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.server.accounts import hash_password, verify_password
from storage.owners import LOCAL_OWNER, Actor, acting
from tests.security.hostile_archives import BOARD

PASSWORD = "correct horse battery"


def run(home: Path, *args: str, stdin: str | None = None, ok: bool = True):
    """`chief --home HOME ARGS` through click's runner (stdin from `stdin`)."""
    from app.cli import main

    res = CliRunner().invoke(
        main,
        ["--home", str(home), *args],
        input=stdin,
        env={"CHIEF_NARRATION": "0", "CHIEF_AGENTS": "offline", "CHIEF_USER": None},
        catch_exceptions=False,
    )
    if ok:
        assert res.exit_code == 0, res.output + res.stderr
    return res


def one_line(res) -> str:
    assert res.exit_code == 1, (res.exit_code, res.output)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


# ---------------------------------------------------------------------------------------------- hashing
def test_a_password_is_kept_as_a_salted_scrypt_hash_and_checked():
    a, b = hash_password(PASSWORD), hash_password(PASSWORD)
    assert PASSWORD not in a and a != b  # a fresh salt each time: equal passwords do not look equal
    scheme, n, r, p, salt, key = a.split("$")
    assert (scheme, int(n), int(r), int(p)) == ("scrypt", 1 << 14, 8, 1)  # the parameters travel with the hash
    assert verify_password(PASSWORD, a) and verify_password(PASSWORD, b)
    assert not verify_password(PASSWORD + " ", a)
    assert not verify_password("", a)
    assert not verify_password(PASSWORD, a.replace("scrypt$", "plain$"))
    assert not verify_password(PASSWORD, "garbage")


def test_sign_in_takes_the_right_password_only(studio):
    studio.accounts.add("alice", PASSWORD)
    assert studio.accounts.sign_in("alice", PASSWORD)
    assert not studio.accounts.sign_in("alice", "wrong password")
    assert not studio.accounts.sign_in("bob", PASSWORD)  # no such account
    assert not studio.accounts.sign_in(LOCAL_OWNER, PASSWORD)  # this machine's owner has no web password
    assert not studio.accounts.sign_in("alice", "x" * 100_000)  # not hashed at all: refused by its size


# ---------------------------------------------------------------------------------------------- the CLI
def test_users_add_list_passwd_remove(tmp_path):
    home = tmp_path / "home"
    res = run(home, "users", "add", "alice", "--password-stdin", stdin=PASSWORD + "\n")
    assert PASSWORD not in res.output + res.stderr
    run(home, "users", "add", "mr.t", "--teacher", "--password-stdin", stdin=PASSWORD + "2\n")
    listed = json.loads(run(home, "--json", "users", "list").output)
    assert [(u["name"], u["teacher"], u["projects"]) for u in listed] == [("alice", False, 0), ("mr.t", True, 0)]
    assert PASSWORD not in json.dumps(listed)

    stored = dict(sqlite3.connect(home / "chief.db").execute("SELECT name, password_hash FROM users").fetchall())
    assert all(PASSWORD not in h and h.startswith("scrypt$") for h in stored.values())
    log = "".join(p.read_text(errors="replace") for p in home.rglob("*.log"))
    assert PASSWORD not in log

    run(home, "users", "passwd", "alice", "--password-stdin", stdin="a new password\n")
    from app.config import load_config
    from app.studio import Studio

    st = Studio(load_config({"home": home, "narration": False, "agents": "offline"}, environ={}))
    assert st.accounts.sign_in("alice", "a new password") and not st.accounts.sign_in("alice", PASSWORD)

    assert "already an account" in one_line(
        run(home, "users", "add", "alice", "--password-stdin", stdin=PASSWORD + "\n", ok=False)
    )
    assert "at least 8" in one_line(run(home, "users", "add", "bob", "--password-stdin", stdin="short\n", ok=False))
    assert "not an account name" in one_line(
        run(home, "users", "add", "../x", "--password-stdin", stdin=PASSWORD + "\n", ok=False)
    )
    assert "this machine's own account" in one_line(
        run(home, "users", "add", LOCAL_OWNER, "--password-stdin", stdin=PASSWORD + "\n", ok=False)
    )
    # never on the command line: the flag is required and nothing else takes a password
    assert run(home, "users", "add", "bob", ok=False).exit_code == 2

    run(home, "users", "remove", "mr.t")
    assert [u["name"] for u in json.loads(run(home, "--json", "users", "list").output)] == ["alice"]
    assert "no account 'mr.t'" in one_line(run(home, "users", "remove", "mr.t", ok=False))


def test_user_flag_acts_as_that_account(tmp_path):
    home = tmp_path / "home"
    board = tmp_path / "board.yaml"
    board.write_text(BOARD)
    run(home, "users", "add", "alice", "--password-stdin", stdin=PASSWORD + "\n")
    run(home, "users", "add", "bob", "--password-stdin", stdin=PASSWORD + "\n")
    run(home, "users", "add", "teach", "--teacher", "--password-stdin", stdin=PASSWORD + "\n")
    alice = json.loads(run(home, "--json", "--user", "alice", "new", "--storyboard", str(board)).output)["project"]
    mine = json.loads(run(home, "--json", "new", "--storyboard", str(board), "--title", "Local film").output)["project"]

    def listed(*who: str) -> set[str]:
        return {p["id"] for p in json.loads(run(home, "--json", *who, "projects", "--all").output)}

    assert listed("--user", "alice") == {alice}
    assert listed() == {mine}  # the local owner by default
    assert listed("--user", "bob") == set()
    assert listed("--user", "teach") == {alice, mine}

    # bob cannot open, change or trash alice's project, and is told the same as for one that does not exist
    for args in (("show", alice), ("trash", alice), ("log", alice), ("note", alice, "a note")):
        theirs = one_line(run(home, "--user", "bob", *args, ok=False))
        nobody = one_line(run(home, "--user", "bob", *[a.replace(alice, "p_nothere0") for a in args], ok=False))
        assert theirs.replace(alice, "P") == nobody.replace("p_nothere0", "P"), (theirs, nobody)
    assert json.loads(run(home, "--json", "--user", "alice", "projects").output)[0]["id"] == alice  # not trashed
    # an account that is not there is one line
    assert "no account 'carol'" in one_line(run(home, "--user", "carol", "projects", ok=False))
    # an owner keeps their account
    assert "owns 1 project" in one_line(run(home, "users", "remove", "alice", ok=False))
    assert {u["name"]: u["projects"] for u in json.loads(run(home, "--json", "users", "list").output)} == {
        "alice": 1,
        "bob": 0,
        "teach": 0,
    }


def test_an_archive_imports_into_the_importers_account(tmp_path):
    home = tmp_path / "home"
    board = tmp_path / "board.yaml"
    board.write_text(BOARD)
    run(home, "users", "add", "bob", "--password-stdin", stdin=PASSWORD + "\n")
    mine = json.loads(run(home, "--json", "new", "--storyboard", str(board)).output)["project"]
    archive = tmp_path / "film.chief.zip"
    run(home, "export", mine, "--output", str(archive))
    imported = json.loads(run(home, "--json", "--user", "bob", "import", str(archive)).output)["id"]
    assert {p["id"] for p in json.loads(run(home, "--json", "--user", "bob", "projects").output)} == {imported}
    assert {p["id"] for p in json.loads(run(home, "--json", "projects").output)} == {mine}
    run(home, "--user", "bob", "show", imported)


# ---------------------------------------------------------------------------------------------- the repository
def test_every_lookup_of_another_accounts_project_is_not_found(studio):
    from app.errors import StudioError
    from storage.repository import NotFound
    from tests.conftest import tiny_board

    with acting(Actor("alice")):
        v = studio.create_from_storyboard(tiny_board(2))
        note = studio.add_note(v.project_id, "more light", None)
    pid = v.project_id
    with acting(Actor("bob")):
        assert studio.projects(include_trashed=True) == []
        for call in (
            lambda: studio.project(pid),
            lambda: studio.version(pid, 1),
            lambda: studio.versions(pid),
            lambda: studio.notes(pid),
            lambda: studio.shot_keyframes(pid),
            lambda: studio.board_takes(pid),
            lambda: studio.proposal(pid),
            lambda: studio.export_project(pid, studio.config.home / "x.chief.zip"),
            lambda: studio.trash_project(pid),
            lambda: studio.resolve_project(pid[:4]),
        ):
            with pytest.raises((NotFound, StudioError)) as e:
                call()
            assert "alice" not in str(e.value)
        assert studio.find_tagged("anything") is None
    with acting(Actor("teach", teacher=True)):
        assert [p.id for p in studio.projects()] == [pid]
        assert [n.id for n in studio.notes(pid)] == [note.id]
    with acting(Actor("alice")):
        assert not studio.project(pid).trashed


# ---------------------------------------------------------------------------------------------- the upgrade
def test_an_existing_folder_becomes_the_local_owners(tmp_path):
    """A data folder at migration 0009 with projects (made by the product's code, then taken back to 0009 by the
    migrations' own downgrade, which drops the owner column and the users table): after the upgrade every project is
    the local owner's, the CLI lists and exports them as before, and no account sees them."""
    from alembic import command
    from sqlalchemy import create_engine, inspect

    from storage.db import alembic_config

    home = tmp_path / "home"
    board = tmp_path / "board.yaml"
    board.write_text(BOARD)
    made = {
        json.loads(run(home, "--json", "new", "--storyboard", str(board), "--title", t).output)["project"] for t in "AB"
    }
    cfg = alembic_config()
    engine = create_engine(f"sqlite:///{home / 'chief.db'}")
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0009")
    with engine.connect() as conn:
        assert "owner" not in {c["name"] for c in inspect(conn).get_columns("projects")}
        assert "users" not in inspect(conn).get_table_names()
    engine.dispose()

    assert {p["id"] for p in json.loads(run(home, "--json", "projects").output)} == made  # upgraded on open
    owners = dict(sqlite3.connect(home / "chief.db").execute("SELECT id, owner FROM projects").fetchall())
    assert owners == dict.fromkeys(made, LOCAL_OWNER)
    run(home, "users", "add", "bob", "--password-stdin", stdin=PASSWORD + "\n")
    assert json.loads(run(home, "--json", "--user", "bob", "projects").output) == []
    pid = sorted(made)[0]
    run(home, "export", pid, "--output", str(tmp_path / "a.chief.zip"))
    assert (tmp_path / "a.chief.zip").stat().st_size > 0


def test_a_batch_run_as_an_account_makes_its_projects(tmp_path):
    """`chief --user bob batch`: the stories run in worker threads, and each project is bob's."""
    from tests.batch.test_batch import PANEL, SMALL, write_stories

    home = tmp_path / "home"
    run(home, "users", "add", "bob", "--password-stdin", stdin=PASSWORD + "\n")
    stories = write_stories(
        tmp_path / "stories.yaml",
        [{"idea": "A lighthouse keeper befriends a lost whale", **SMALL}, {"idea": "A robot paints on Mars", **SMALL}],
    )
    args = ("batch", str(stories), "-o", str(tmp_path / "out"), "--panel", PANEL, "--iterations", "1", "--jobs", "2")
    run(home, "--user", "bob", *args)
    owners = sqlite3.connect(home / "chief.db").execute("SELECT owner FROM projects").fetchall()
    assert owners == [("bob",), ("bob",)]
