"""Signed-in sessions end after `--idle-minutes` without a request, and on sign-out (app/server/sessions.py
Sessions): the clock is injected, so the test moves time instead of waiting."""

from __future__ import annotations

import httpx

from tests.security.test_accounts import PASSWORD
from tests.security.test_accounts_web import two_students  # noqa: F401 - a fixture


def test_an_idle_session_is_sent_to_the_login_page(two_students):  # noqa: F811
    from app.ui import launch
    from tests.process import free_port

    studio, _, _ = two_students
    now = [1000.0]
    port = free_port()
    demo = launch(
        studio, port=port, users=True, prevent_thread_lock=True, quiet=True, idle_minutes=30, clock=lambda: now[0]
    )
    url = f"http://127.0.0.1:{port}"
    try:
        alice = httpx.Client(base_url=url, follow_redirects=False)
        bob = httpx.Client(base_url=url, follow_redirects=False)
        for c, name, pw in ((alice, "alice", PASSWORD), (bob, "bob", PASSWORD + "b")):
            assert c.post("/login", data={"username": name, "password": pw}).status_code == 200
            assert c.get("/config").status_code == 200
        now[0] += 29 * 60  # alice works on; bob does nothing
        assert alice.get("/config").status_code == 200
        now[0] += 29 * 60  # 58 min since bob's last request, 29 since alice's
        assert alice.get("/config").status_code == 200
        gone = bob.get("/config", headers={"sec-fetch-dest": "document"})
        assert (gone.status_code, gone.headers["location"]) == (302, "/")  # to the login page
        assert bob.get("/config").status_code == 401  # the session is over, not just redirected once
        assert 'action="/login"' in bob.get("/").text  # the root shows the sign-in form
        assert bob.post("/login", data={"username": "bob", "password": PASSWORD + "b"}).status_code == 200
        assert bob.get("/config").status_code == 200  # signing in again starts a new session
        # sign-out ends every session of the account at once
        assert alice.post("/logout", headers={"Origin": url}).status_code == 303
        assert alice.get("/config").status_code == 401
    finally:
        demo.close()


def test_serve_takes_idle_minutes():
    from click.testing import CliRunner

    from app.cli import main

    res = CliRunner().invoke(main, ["serve", "--help"])
    assert "--idle-minutes" in res.output
    bad = CliRunner().invoke(main, ["serve", "--idle-minutes", "0"])
    assert bad.exit_code == 2 and "idle-minutes" in bad.output
