"""Sessions and accounts (issue 53.3, 54.1, 54.2, 54.9, 54.10; app/server/sessions.py, app/server/accounts.py,
app/server/security.py FileAccess): sessions are kept in the database and survive a restart; a password change, a
removal or the name added again ends them; names that look alike are one name and reserved words are refused; a
file is served by what the account may read, never because an answer's text named it; the ▶ buttons' route acts as
the signed-in account."""

from __future__ import annotations

import sqlite3
from urllib.parse import quote

import httpx
import pytest

from app.server.sessions import COOKIE
from storage.owners import Actor, acting
from tests.conftest import tiny_board
from tests.process import free_port
from tests.security.test_accounts import PASSWORD


@pytest.fixture
def serving():
    """serving(studio, **launch) -> base URL of the app launched with those options; stopped after the test."""
    from app.ui import launch

    demos = []

    def start(studio, **options) -> str:
        port = free_port()
        demos.append(launch(studio, port=port, prevent_thread_lock=True, quiet=True, **options))
        return f"http://127.0.0.1:{port}"

    start.demos = demos
    yield start
    for demo in demos:
        demo.close()


def session(base: str, name: str, password: str) -> str:
    r = httpx.post(base + "/login", data={"username": name, "password": password}, timeout=60)
    assert r.status_code == 200, r.text
    return r.cookies[COOKIE]


def works(base: str, token: str, path: str = "/config") -> int:
    """The status of a script's request (not a page load, which an ended session redirects to the sign-in form)."""
    return httpx.get(base + path, cookies={COOKIE: token}, headers={"Sec-Fetch-Dest": "empty"}, timeout=60).status_code


def rows(studio, table: str) -> list:
    with sqlite3.connect(studio.config.db_path) as db:
        return db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()  # noqa: S608 - a table name of ours


def test_a_restart_keeps_sessions(make_studio, serving):
    """Signed in, the server stops and starts again (on another port): the same browser is still signed in, with
    --users and with --auth alike; only a hash of the token is in the database."""
    studio = make_studio()
    studio.accounts.add("mira", PASSWORD + "m")
    base = serving(studio, users=True)
    token = session(base, "mira", PASSWORD + "m")
    assert works(base, token) == 200
    serving.demos.pop().close()
    again = serving(studio, users=True)
    assert works(again, token) == 200 and works(again, "forged" + token[6:]) == 401
    assert token not in str(rows(studio, "sessions"))
    serving.demos.pop().close()
    one = serving(studio, auth="solo:a-long-password")
    solo = session(one, "solo", "a-long-password")
    serving.demos.pop().close()
    assert works(serving(studio, auth="solo:a-long-password"), solo) == 200
    serving.demos.pop().close()
    assert works(serving(studio, auth="solo:another-password"), solo) == 401  # a new --auth password ends it


def test_passwd_remove_and_add_again_end_sessions(make_studio, serving):
    """`chief users passwd` (another process's database connection) ends the account's sessions at their next
    request; `remove` ends them; the name added again for someone else does not bring them back. Other accounts'
    sessions go on."""
    studio = make_studio()
    for name in ("nia", "oto", "pia"):
        studio.accounts.add(name, PASSWORD + name)
    base = serving(studio, users=True)
    nia, oto, pia = (session(base, n, PASSWORD + n) for n in ("nia", "oto", "pia"))
    home = studio.config.home

    def cli(*args, stdin: str | None = None):
        from click.testing import CliRunner

        from app.cli import main

        res = CliRunner().invoke(main, ["--home", str(home), *args], input=stdin, catch_exceptions=False)
        assert res.exit_code == 0, res.output + res.stderr
        return res

    cli("users", "passwd", "NIA", "--password-stdin", stdin="a-new-password-1\n")  # the name as typed: nia's
    assert works(base, nia) == 401 and works(base, pia) == 200
    assert works(base, session(base, "nia", "a-new-password-1")) == 200
    cli("users", "remove", "oto")
    assert works(base, oto) == 401
    creates = httpx.post(
        base + "/gradio_api/call/create_project",
        json={"data": ["An orphan's film", 0.5, ""]},
        cookies={COOKIE: oto},
        timeout=60,
    )
    assert creates.status_code == 401  # a removed account's session makes nothing
    cli("users", "add", "oto", "--password-stdin", stdin="someone-else-now\n")
    assert works(base, oto) == 401  # the old session is not the new account's
    assert [r[1] for r in rows(studio, "projects")] == [] and works(base, pia) == 200
    assert {r[1] for r in rows(studio, "sessions")} == {"nia", "pia"}  # ended ones are gone from the database
    # the session is bound to the credentials themselves: a hash changed behind CHIEF's back (a restored backup, an
    # older CHIEF's passwd that deletes no session) ends it too
    from app.server.accounts import hash_password

    with sqlite3.connect(studio.config.db_path) as db:
        db.execute("UPDATE users SET password_hash = ? WHERE name = 'pia'", (hash_password("restored-password"),))
    assert works(base, pia) == 401


@pytest.mark.parametrize(
    ("taken", "asked"),
    [
        ("alice", "aIice"),
        ("alice", "ALICE"),
        ("alice", "a1ice"),
        ("moon", "m00n"),
        ("warren", "vvarren"),
        ("corn", "com"),
    ],
)
def test_names_that_look_alike_are_one_name(tmp_path, empty_database, taken, asked):
    home = empty_database(tmp_path / "home")
    from click.testing import CliRunner

    from app.cli import main

    def add(name: str):
        return CliRunner().invoke(main, ["--home", str(home), "users", "add", name, "--password-stdin"],
                                  input=PASSWORD + "\n")  # fmt: skip

    assert add(taken).exit_code == 0
    before = (home / "chief.db").read_bytes()
    res = add(asked)
    assert res.exit_code == 1 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "looks the same" in res.stderr or "already an account" in res.stderr
    with sqlite3.connect(home / "chief.db") as db:
        assert [r[0] for r in db.execute("SELECT name FROM users")] == [taken]  # nothing written
    assert before  # the database was there before and after


@pytest.mark.parametrize("word", ["class", "CLASS", "cIass", "Local", "l0cal"])
def test_reserved_words_are_refused_as_names(tmp_path, empty_database, word):
    from click.testing import CliRunner

    from app.cli import main

    home = empty_database(tmp_path / "home")
    res = CliRunner().invoke(main, ["--home", str(home), "users", "add", word, "--password-stdin"], input=PASSWORD)
    assert res.exit_code == 1 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "choose another name" in res.stderr
    with sqlite3.connect(home / "chief.db") as db:
        assert db.execute("SELECT count(*) FROM users").fetchone() == (0,)


def test_a_name_typed_in_another_case_signs_in_to_its_account(make_studio, serving):
    studio = make_studio()
    studio.accounts.add("quinn", PASSWORD)
    base = serving(studio, users=True)
    token = session(base, "QUINN", PASSWORD)
    assert httpx.get(base + "/gradio_api/user", cookies={COOKIE: token}, timeout=60).json() == "quinn"


@pytest.fixture
def two_with_files(make_studio, serving, tmp_path):
    """(studio, base, rita's project, her keyframe's media path, her export's path, rita's and sam's sessions)."""
    from PIL import Image

    studio = make_studio()
    studio.accounts.add("rita", PASSWORD + "r")
    studio.accounts.add("sam", PASSWORD + "s")
    picture = tmp_path / "key.png"
    Image.new("RGB", (64, 36), (200, 30, 60)).save(picture)
    with acting(Actor("rita")):
        pid = studio.create_from_storyboard(tiny_board(2)).project_id
        studio.set_keyframe(pid, "s1", picture)
    media = next(studio.config.media_root.rglob("*.png"))  # the keyframe, named by her project
    export = studio.config.home / "exports" / pid / "Rita's film.mp4"
    export.parent.mkdir(parents=True)
    export.write_bytes(b"rita's film bytes")
    base = serving(studio, users=True)
    return studio, base, pid, media, export, session(base, "rita", PASSWORD + "r"), session(base, "sam", PASSWORD + "s")


def test_a_file_is_served_by_ownership_not_by_an_echo(two_with_files):
    """sam sends rita's file paths where a project id goes; the errors echo them back; the file routes still answer
    him 404, and rita 200."""
    studio, base, pid, media, export, rita, sam = two_with_files
    for target in (media, export):
        for echo in (str(target), f"gradio_api/file={target}", f"/file={target}"):
            r = httpx.post(
                base + "/gradio_api/call/export_project", json={"data": [echo, None]}, cookies={COOKIE: sam}, timeout=60
            )
            event = r.json()["event_id"]
            said = httpx.get(base + f"/gradio_api/call/export_project/{event}", cookies={COOKIE: sam}, timeout=60)
            assert str(target.name) in said.text or "no project" in said.text
        spelled = (  # the path as it is, percent-encoded, and through a detour
            str(target),
            quote(str(target), safe=""),
            f"{target.parent}/./../{target.parent.name}/{quote(target.name)}",
        )
        for route in ("/gradio_api/file=", "/gradio_api/file/"):
            for path in spelled:
                theirs = httpx.get(base + route + path, cookies={COOKIE: sam}, timeout=60)
                assert (theirs.status_code, theirs.content) == (404, b"not found\n"), (route, path)
                mine = httpx.get(base + route + path, cookies={COOKIE: rita}, timeout=60)
                assert mine.status_code == 200 and mine.content == target.read_bytes(), (route, path)
    with acting(Actor("rita")):
        studio.sharing.share(pid, "sam")
    assert httpx.get(base + f"/gradio_api/file={export}", cookies={COOKIE: sam}, timeout=60).status_code == 200


def test_the_preview_buttons_act_as_the_signed_in_account(two_with_files):
    """The ▶ of a voice card and of a line (component server functions, whose request carries no Gradio username)
    answer rita with a sample of her project (which she may then fetch) and sam with "no project"."""
    studio, base, pid, _, _, rita, sam = two_with_files
    config = httpx.get(base + "/config", cookies={COOKIE: rita}, timeout=60).json()
    holders = {
        c["id"]: c["props"].get("server_fns") or []
        for c in config["components"]
        if c.get("props", {}).get("server_fns")
    }
    calls = {
        "preview_voice": {"project": pid, "version": 1, "name": "Keeper", "voice": {}},
        "play_line": {"project": pid, "version": 1, "character": "Keeper", "line": "Hello there.", "delivery": ""},
    }
    found = 0
    for cid, fns in holders.items():
        for fn, data in calls.items():
            if fn not in fns:
                continue
            found += 1
            body = {"data": [data], "component_id": cid, "fn_name": fn, "session_hash": "s" + fn}
            hers = httpx.post(base + "/gradio_api/component_server", json=body, cookies={COOKIE: rita}, timeout=120)
            his = httpx.post(base + "/gradio_api/component_server", json=body, cookies={COOKIE: sam}, timeout=120)
            assert "url" in hers.json(), (fn, hers.text)
            assert his.json() == {"error": f"no project {pid!r}"}, (fn, his.text)
            url = hers.json()["url"]
            assert httpx.get(f"{base}/{url}", cookies={COOKIE: rita}, timeout=60).status_code == 200
            assert httpx.get(f"{base}/{url}", cookies={COOKIE: sam}, timeout=60).status_code == 404
    assert found == 2
