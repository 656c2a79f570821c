"""Signing in (issue 53.3, 54.3, 54.5, 54.8; app/server/sessions.py, app/server/security.py): failures are counted,
not attempts, per account and per network, neither standing in for the other; the sign-in page says why it refused
and when to retry; sign-out is a POST from the app's own page; without a session nothing but the sign-in form is
served, and every route's body is bounded.

One app with `--users` is served for the module (`served`); each test signs in with its own accounts, so the
limits one test reaches never touch another's."""

from __future__ import annotations

import sqlite3
import threading

import httpx
import pytest

from app.server.security import EVENT_BODY, LOGIN_FAILURES
from app.server.sessions import COOKIE, NETWORK_FAILURES, WINDOW, Refused, SignInLimiter, Turn, network
from tests.security.test_accounts import PASSWORD
from tests.security.test_web import raw

NAMES = ("ann", "ben", "cat", "dan", "eve", "fay", "gus")


@pytest.fixture(scope="module")
def served(tmp_path_factory, empty_database):
    """(studio, base URL) of an app served with --users, accounts NAMES (password PASSWORD + name)."""
    from app.config import load_config
    from app.studio import Studio
    from app.ui import launch
    from tests.process import free_port

    home = empty_database(tmp_path_factory.mktemp("signin") / "home")
    studio = Studio(load_config({"home": home, "narration": False}, environ={}))
    for name in NAMES:
        studio.accounts.add(name, PASSWORD + name)
    port = free_port()
    demo = launch(studio, port=port, users=True, prevent_thread_lock=True, quiet=True)
    try:
        yield studio, f"http://127.0.0.1:{port}"
    finally:
        demo.close()
        studio.db.close()


def sign_in(base: str, name: str, password: str, **client) -> httpx.Response:
    with httpx.Client(base_url=base, timeout=60, **client) as c:
        return c.post("/login", data={"username": name, "password": password})


def signed_in(base: str, name: str) -> httpx.Client:
    c = httpx.Client(base_url=base, timeout=60, follow_redirects=False)
    assert c.post("/login", data={"username": name, "password": PASSWORD + name}).status_code == 200
    return c


# ------------------------------------------------------------------------------------------- the limiter alone


def test_a_burst_of_right_passwords_all_get_in_and_a_burst_of_guesses_gets_no_more_checks():
    """The limiter as the Guard drives it: checks under way count as possible failures, so those past the limit wait
    (None) instead of being refused; right passwords free their places, wrong ones use them up."""
    now = [0.0]
    limiter = SignInLimiter(clock=lambda: now[0])
    asked = [limiter.ask("Zoe", "10.1.2.3") for _ in range(30)]
    turns = [t for t in asked if isinstance(t, Turn)]
    assert len(turns) == LOGIN_FAILURES and asked.count(None) == 30 - LOGIN_FAILURES  # the rest wait, none refused
    let_in, waiting = 0, 30 - LOGIN_FAILURES
    while turns:  # each right password ends its check; a waiting one, asking again, takes its place
        limiter.done(turns.pop(), ok=True)
        let_in += 1
        if waiting:
            nxt = limiter.ask("zoe", "10.1.2.3")
            assert isinstance(nxt, Turn)
            turns.append(nxt)
            waiting -= 1
    assert let_in == 30
    guesses = [limiter.ask("yan", "10.1.2.3") for _ in range(250)]
    checked = [g for g in guesses if isinstance(g, Turn)]
    assert len(checked) == LOGIN_FAILURES
    for turn in checked:
        limiter.done(turn, ok=False)
    late = limiter.ask("YAN", "192.0.2.77")  # the same account under another case, from another network
    assert isinstance(late, Refused) and "this account" in late.why and late.wait == pytest.approx(WINDOW)
    assert isinstance(limiter.ask("zoe", "10.1.2.3"), Turn)  # another account behind the same address
    now[0] += WINDOW + 1
    assert isinstance(limiter.ask("yan", "10.1.2.3"), Turn)  # the window passed


def test_a_network_limit_is_high_and_counts_a_whole_network():
    limiter = SignInLimiter(clock=lambda: 0.0)
    for i in range(NETWORK_FAILURES):  # a class behind one NAT, each mistyping a few times
        turn = limiter.ask(f"student{i // 5}", f"203.0.113.{i % 250}")
        assert isinstance(turn, Turn), i
        limiter.done(turn, ok=False)
    refused = limiter.ask("someone-else", "203.0.113.9")
    assert isinstance(refused, Refused) and "this network" in refused.why
    assert isinstance(limiter.ask("someone-else", "203.0.114.9"), Turn)  # the next /24
    assert NETWORK_FAILURES >= 30 * 10  # stated in sessions.py: thirty students, ten typos each
    assert network("127.0.0.1") == network("127.45.6.7") == network("::1") == network("::ffff:127.0.0.9")
    assert network("10.0.0.5") == network("::ffff:10.0.0.200") != network("10.0.1.5")
    assert network("2001:db8:1:2::5") == network("2001:db8:1:2:ffff::1") != network("2001:db8:1:3::1")


# ------------------------------------------------------------------------------------------- over HTTP


def test_thirty_right_sign_ins_at_once_from_one_address_all_get_in(served):
    """A class signing in together: 30 sign-ins released at once (24 of one account, 6 of another) all open a
    session, and each session works."""
    _, base = served
    names = ["ann"] * 24 + ["ben"] * 6
    start = threading.Barrier(len(names))
    got: list[httpx.Response | None] = [None] * len(names)

    def one(i: int) -> None:
        start.wait()
        got[i] = sign_in(base, names[i], PASSWORD + names[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(names))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert [r.status_code for r in got if r is not None] == [200] * len(names), [r.text for r in got if r]
    cookies = {r.cookies[COOKIE] for r in got if r is not None}
    assert len(cookies) == len(names)  # a session each
    for token in list(cookies)[:3]:
        assert httpx.get(base + "/config", cookies={COOKIE: token}, timeout=60).status_code == 200


def test_rotating_loopback_addresses_gets_no_extra_guesses(served):
    """Every 127.x.y.z reaches a server on 127.0.0.1: guesses from new loopback addresses count against the account
    all the same, and the right password then waits too."""
    _, base = served
    codes = [
        sign_in(base, "cat", f"guess {i}", transport=httpx.HTTPTransport(local_address=f"127.0.{i}.{i + 2}"))
        for i in range(LOGIN_FAILURES)
    ]
    assert [r.status_code for r in codes] == [400] * LOGIN_FAILURES
    for address in ("127.9.9.9", "127.200.1.3"):
        late = sign_in(base, "cat", PASSWORD + "cat", transport=httpx.HTTPTransport(local_address=address))
        assert late.status_code == 429 and COOKIE not in late.cookies
        assert late.text.count("\n") == 1 and "try again in 10 minutes" in late.text
        assert int(late.headers["retry-after"]) > 590


def test_one_accounts_failures_do_not_lock_out_another(served):
    """dan's wrong passwords (typed as "DAN" and "Dan" too: one account) lock dan out; eve, behind the same address,
    signs in, and dan's right password waits."""
    studio, base = served
    sessions = lambda: sqlite3.connect(studio.config.db_path).execute("SELECT count(*) FROM sessions").fetchone()  # noqa: E731
    before = sessions()
    typed = ["dan", "DAN", "Dan", "dAn"] * 3
    codes = [sign_in(base, typed[i], f"wrong {i}").status_code for i in range(LOGIN_FAILURES)]
    assert codes == [400] * LOGIN_FAILURES
    refused = sign_in(base, "dan", PASSWORD + "dan")
    assert refused.status_code == 429 and refused.text.count("\n") == 1 and "try again" in refused.text
    assert sessions() == before  # refusals write nothing
    eve = sign_in(base, "eve", PASSWORD + "eve")
    assert eve.status_code == 200 and COOKIE in eve.cookies


def test_the_sign_in_page_says_why_it_refused_and_when_to_retry(served, page):
    """The page a browser shows: the form; a wrong password says so; a locked account says why and when."""
    _, base = served
    page.goto(base + "/?project=p_x&screen=render")
    for i in range(LOGIN_FAILURES):
        page.get_by_label("Username").fill("fay")
        page.get_by_label("Password").fill(f"not it {i}")
        page.get_by_role("button", name="Login").click()
        assert "wrong name or password" in page.locator("#sign_in_message").inner_text()
    page.get_by_label("Username").fill("fay")
    page.get_by_label("Password").fill(PASSWORD + "fay")
    page.get_by_role("button", name="Login").click()
    said = page.locator("#sign_in_message").inner_text()
    assert "too many wrong passwords for this account" in said and "try again in 10 minutes" in said
    page.get_by_label("Username").fill("gus")
    page.get_by_label("Password").fill(PASSWORD + "gus")
    page.get_by_role("button", name="Login").click()
    page.wait_for_url("**/?project=p_x&screen=render")  # back where the link pointed, signed in
    page.locator("#sign_out").wait_for()


def test_a_page_elsewhere_cannot_sign_anyone_out(served, browser, other_site):
    """A cross-site link, redirect or form to /logout changes nothing; the page's own Sign out button signs out."""
    _, base = served
    context = browser.new_context()
    assert context.request.post(base + "/login", form={"username": "gus", "password": PASSWORD + "gus"}).ok
    pg = context.new_page()
    other_site.page = f"<meta http-equiv='refresh' content='0;url={base}/logout'>"
    pg.goto(other_site.url + "/")
    pg.wait_for_url(base + "/logout")
    assert "Sign out button" in pg.content()
    other_site.page = f"<form method=post action='{base}/logout'></form><script>document.forms[0].submit()</script>"
    pg.goto(other_site.url + "/")
    pg.wait_for_url(base + "/logout")
    assert context.request.get(base + "/config").status == 200  # still signed in
    # without a browser: a GET (even one saying it is same-origin) and a POST naming another origin change nothing
    token = next(c["value"] for c in context.cookies() if c["name"] == COOKIE)
    assert (
        httpx.get(base + "/logout", cookies={COOKIE: token}, headers={"Sec-Fetch-Site": "same-origin"}).status_code
        == 405
    )
    other = httpx.post(base + "/logout", cookies={COOKIE: token}, headers={"Origin": "http://127.0.0.1:1"})
    assert other.status_code == 403 and other.text.count("\n") == 1
    assert httpx.post(base + "/logout", cookies={COOKIE: token}).status_code == 403  # no origin at all
    assert context.request.get(base + "/config").status == 200
    pg.goto(base + "/")
    pg.locator("#sign_out").click()
    pg.locator("#sign_in").wait_for()
    assert context.request.get(base + "/config").status == 401


def test_without_a_session_only_the_sign_in_form_is_served(served):
    """Gradio's heartbeat and event streams, its config, events and files: 401 at once, held open by no one."""
    _, base = served
    with httpx.Client(base_url=base, timeout=httpx.Timeout(10)) as c:
        for path in (
            "/gradio_api/heartbeat/abc123",
            "/heartbeat/zz",
            "/gradio_api/queue/data?session_hash=q1",
            "/config",
            "/gradio_api/info",
            "/gradio_api/file=/etc/hostname",
            "/gradio_api/upload_progress",
        ):
            r = c.get(path)
            assert (r.status_code, r.text.count("\n")) == (401, 1), path
        assert (
            c.post("/gradio_api/queue/join", json={"data": [], "fn_index": 0, "session_hash": "x"}).status_code == 401
        )
        assert 'action="/login"' in c.get("/").text
    ann = signed_in(base, "ann")
    with ann.stream("GET", "/gradio_api/heartbeat/abc123") as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")


def test_event_bodies_are_bounded_per_route(served):
    """An event's body is at most EVENT_BODY (Content-Length or chunked); the upload route takes files up to the
    upload cap. Each refusal is one line, before the body is read."""
    from agents.comments import MAX_PASTED_CHARS

    assert EVENT_BODY >= 6 * MAX_PASTED_CHARS + 1000  # the largest paste, JSON-escaped, still fits
    _, base = served
    c = signed_in(base, "ben")
    for path in ("/gradio_api/queue/join", "/gradio_api/run/predict", "/gradio_api/component_server"):
        said = {"Content-Length": str(EVENT_BODY + 1), "Cookie": f"{COOKIE}={c.cookies[COOKIE]}"}
        status, text = raw(base, "POST", path, said)  # the headers alone: answered before any body is sent
        assert status == 413 and text.count("\n") == 1, path

    def chunks():
        for _ in range(EVENT_BODY // 65536 + 2):
            yield b"{" * 65536

    cut = c.post("/gradio_api/call/v2/anything", content=chunks())
    assert cut.status_code == 413
    up = c.post("/gradio_api/upload", files={"files": ("big.txt", b"y" * (EVENT_BODY + 4096))})
    assert up.status_code == 200, up.text


@pytest.mark.parametrize(
    "where", ["//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"]
)
def test_a_sign_in_goes_on_only_to_a_path_of_the_app(served, where):
    """The form's `next` (where the page was) never sends the browser to another site, and is escaped in the page."""
    from app.server.sessions import safe_next, sign_in_page

    assert safe_next(where) == "/"
    assert b"<script>" not in sign_in_page("<script>x</script>", '/"><script>')
    _, base = served
    r = httpx.post(
        base + "/login",
        data={"username": "gus", "password": PASSWORD + "gus", "next": where},
        headers={"Accept": "text/html", "Sec-Fetch-Mode": "navigate"},
        timeout=60,
    )
    assert (r.status_code, r.headers["location"]) == (303, "/")
