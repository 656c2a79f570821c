"""The web app as an adversary meets it: forged Host and Origin headers (raw HTTP), another page on
localhost driving the app (Chromium), the Settings event called from outside the page, login guessing,
another session's Stop, where served files are copied, and what the server log shows."""

from __future__ import annotations

import http.client
import json
import os
import stat
import urllib.request
import uuid
from urllib.parse import urlsplit

import pytest
from gradio_client import handle_file
from gradio_client.exceptions import AppError
from playwright.sync_api import expect

from tests.conftest import app_client
from tests.security.conftest import DATA, OtherSite


def raw(base: str, method: str, path: str, headers: dict, body: bytes | None = None) -> tuple[int, str]:
    """One HTTP request with exactly these headers (Host included: http.client sends ours, not its own)."""
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for k, v in {"Host": u.netloc, **headers}.items():
        conn.putheader(k, v)
    if body is not None:
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    res = conn.getresponse()
    text = res.read().decode(errors="replace")
    conn.close()
    return res.status, text


def event(base: str, elem_id: str, kind: str = "click") -> tuple[int, int]:
    """(index, number of inputs) of the event component `elem_id` triggers, found as the page's JavaScript
    finds it: in /config."""
    config = json.loads(urllib.request.urlopen(base + "/config").read())
    comp = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == elem_id)
    i = next(i for i, d in enumerate(config["dependencies"]) if [comp, kind] in [list(t) for t in d["targets"]])
    return i, len(config["dependencies"][i]["inputs"])


def queue_call(base: str, target: tuple[int, int], data: list, headers: dict | None = None) -> dict:
    """Join the queue with raw HTTP, as any program that reaches the port can, and read the outcome.
    `data` is padded with None to the event's number of inputs."""
    index, inputs = target
    data = [*data, *[None] * (inputs - len(data))]
    session = uuid.uuid4().hex
    body = json.dumps({"data": data, "fn_index": index, "session_hash": session, "event_data": None}).encode()
    status, text = raw(
        base, "POST", "/gradio_api/queue/join", {"Content-Type": "application/json", **(headers or {})}, body
    )
    if status != 200:
        return {"status": status, "text": text}
    with urllib.request.urlopen(f"{base}/gradio_api/queue/data?session_hash={session}", timeout=60) as stream:
        for line in stream:
            if line.startswith(b"data:"):
                msg = json.loads(line[5:])
                if msg.get("msg") == "process_completed":
                    return {"status": 200, **msg}
    raise AssertionError("the event never completed")


# ------------------------------------------------------------------------------------------- Host and Origin


def test_requests_naming_another_host_are_refused(make_studio, serve):
    base = serve(make_studio(allowed_hosts="chief.lan"))
    port = urlsplit(base).port
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.nip.io:{port}", ""):
        for method, path in (
            ("GET", "/"),
            ("GET", "/config"),
            ("GET", "/gradio_api/info"),
            ("POST", "/gradio_api/queue/join"),
        ):
            status, text = raw(base, method, path, {"Host": host}, b"{}" if method == "POST" else None)
            assert status == 403 and "unknown host" in text, (host, path, status)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"chief.lan:{port}", f"CHIEF.LAN:{port}"):
        assert raw(base, "GET", "/config", {"Host": host})[0] == 200, host


def test_other_origins_are_refused_on_every_route(make_studio, serve):
    base = serve(make_studio())
    port = urlsplit(base).port
    foreign = [
        {"Origin": f"http://localhost:{port + 1}"},
        {"Origin": "null"},
        {"Origin": "http://evil.example"},
        {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"},  # another port on localhost, no Origin
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"},
    ]
    for headers in foreign:
        for method, path in (
            ("POST", "/gradio_api/queue/join"),
            ("POST", "/gradio_api/upload"),
            ("GET", "/gradio_api/info"),
            ("GET", "/config"),
            ("OPTIONS", "/gradio_api/queue/join"),
        ):
            status, _ = raw(base, method, path, headers, b"{}" if method == "POST" else None)
            assert status == 403, (headers, path, status)
    ours = {"Origin": base, "Sec-Fetch-Site": "same-origin"}
    assert raw(base, "GET", "/config", ours)[0] == 200
    link = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    assert raw(base, "GET", "/", link)[0] == 200  # following a link to the app opens it


def test_every_page_may_load_only_from_its_own_origin(make_studio, serve):
    base = serve(make_studio())
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.request("GET", "/")
    res = conn.getresponse()
    res.read()
    csp = res.getheader("Content-Security-Policy")
    for rule in ("img-src 'self' data: blob:", "form-action 'self'", "frame-ancestors 'none'", "connect-src 'self'"):
        assert rule in csp, csp
    assert res.getheader("X-Content-Type-Options") == "nosniff"


ATTACK_PAGE = """<!doctype html><html><body><script>
(async () => {
  const app = "APP", session = "s" + Math.random().toString(16).slice(2);
  const body = JSON.stringify({data: [PID, 1, "added by another site", "(whole film)"], fn_index: INDEX,
                               session_hash: session, event_data: null});
  let result = "none";
  try {
    const r = await fetch(app + "/gradio_api/queue/join", {method: "POST", credentials: "include", body,
                                                          headers: {"Content-Type": "application/json"}});
    result = "joined " + r.status;
    const src = new EventSource(app + "/gradio_api/queue/data?session_hash=" + session, {withCredentials: true});
    src.onmessage = (e) => { if (JSON.parse(e.data).msg === "process_completed") { result = "done"; src.close(); } };
    src.onerror = () => { src.close(); };
  } catch (e) { result = "refused: " + e; }
  setTimeout(() => { document.title = result; }, 3000);
})();
</script></body></html>"""


def test_a_page_on_another_localhost_port_cannot_add_a_note(make_studio, serve, board_file, page):
    from storage.files import load_storyboard

    studio = make_studio()
    pid = studio.create_from_storyboard(load_storyboard(board_file)).project_id
    base = serve(studio)
    index, inputs = event(base, "add_note_btn")
    assert inputs == 4  # project, version, text, about: what the page below sends
    site = OtherSite(ATTACK_PAGE.replace("APP", base).replace("PID", json.dumps(pid)).replace("INDEX", str(index)))
    try:
        page.goto(site.url + "/")
        page.wait_for_function("document.title !== ''", timeout=30_000)
        outcome = page.title()
    finally:
        site.close()
    assert studio.notes(pid) == [], outcome
    assert outcome == "joined 403" or outcome.startswith("refused"), outcome  # the app refused it


# ------------------------------------------------------------------------------------------- the API key


def test_agent_settings_cannot_be_changed_from_outside_the_page(make_studio, serve):
    studio = make_studio(api_key="sk-OLD-123456", llm_base_url="http://127.0.0.1:9/v1")
    base = serve(studio)
    out = queue_call(base, event(base, "apply_llm_btn"), ["http://127.0.0.1:8/steal", "", "", "", "", "llm"])
    assert out["status"] == 200 and not out["success"], out
    assert "only be changed from the app's own Settings page" in out["output"]["error"]
    assert (studio.config.llm_base_url, studio.config.api_key) == ("http://127.0.0.1:9/v1", "sk-OLD-123456")


def test_a_new_endpoint_set_in_the_page_never_receives_the_old_key(make_studio, serve, board_file, page):
    """The key held for endpoint A is not sent to endpoint B entered in Settings without a key. The page's frames
    come 400 ms late, as on a loaded machine: this test without its `shown` waits (tests/conftest.py), acting before
    Gradio's frame after showing the tab and the field, failed in three runs of three so, not once in many runs."""
    from playwright.sync_api import expect

    from storage.files import load_storyboard
    from tests.agents.openai_server import FakeOpenAI, error
    from tests.conftest import late_frames, shown

    late_frames(page.context, 400)

    with FakeOpenAI(responder=lambda body: error(500, "no")) as b:
        studio = make_studio(api_key="sk-OLD-123456", llm_base_url="http://127.0.0.1:9/v1", llm_max_retries=0)
        pid = studio.create_from_storyboard(load_storyboard(board_file)).project_id
        studio.add_note(pid, "make the whale bigger", "s2")
        base = serve(studio)
        page.goto(base + "/")
        page.get_by_role("tab", name="Settings").click()
        llm = page.get_by_text("The AI model behind the critics").first
        shown(llm)  # opened before Gradio's frame after showing the tab, the section closes again
        llm.click()
        field = page.locator("#llm_base_url textarea, #llm_base_url input").first
        expect(field).to_have_value("http://127.0.0.1:9/v1", timeout=60_000)  # the tab's settings have loaded
        shown(field)  # the section's fields were just shown too
        field.fill(b.base_url)
        expect(field).to_have_value(b.base_url)
        page.locator("#llm_critic_audio input").check()  # applied with the endpoint, like every other field
        page.locator("#apply_llm_btn").click()
        page.wait_for_function("document.querySelector('#settings_message')?.innerText.includes('Applied')")
        assert "API key was dropped" in page.locator("#settings_message").inner_text()
        assert studio.config.llm_base_url == b.base_url and studio.config.api_key == ""
        assert studio.config.llm_critic_audio and not studio.config.llm_critic_video
        with pytest.raises(Exception):  # noqa: B017 - any failure will do
            studio.refine(pid)  # B answers 500: what matters is what B was sent
        assert b.headers, "the agents never called the new endpoint"
        assert all("sk-OLD" not in str(h) for h in b.headers), b.headers


# ------------------------------------------------------------------------------------------- login


def test_failed_logins_are_limited(make_studio, serve):
    base = serve(make_studio(), auth="ann:correct-horse")

    def login(password: str) -> int:
        body = f"username=ann&password={password}".encode()
        return raw(base, "POST", "/login", {"Content-Type": "application/x-www-form-urlencoded"}, body)[0]

    from app.server.security import LOGIN_FAILURES

    assert [login(f"guess{i}") for i in range(LOGIN_FAILURES)] == [400] * LOGIN_FAILURES
    assert login("correct-horse") == 429  # even the right password waits: the guesser cannot tell
    assert login("guess-again") == 429


def test_a_burst_of_concurrent_logins_gets_no_more_tries_than_a_sequence(make_studio, serve):
    """250 logins at once (threads released together): each is counted before Gradio checks it, so at most
    LOGIN_FAILURES are checked (answered 400), the rest 429; the right password after the burst waits too. A login
    that succeeds is not counted (the right password before the burst leaves every try to the burst)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from app.server.security import LOGIN_FAILURES

    base = serve(make_studio(), auth="ann:correct-horse")

    def login(password: str) -> int:
        body = f"username=ann&password={password}".encode()
        return raw(base, "POST", "/login", {"Content-Type": "application/x-www-form-urlencoded"}, body)[0]

    assert login("correct-horse") == 200
    n = 250
    start = threading.Barrier(n)

    def guess(i: int) -> int:
        start.wait()
        return login(f"guess{i}")

    with ThreadPoolExecutor(n) as pool:
        statuses = list(pool.map(guess, range(n)))
    assert statuses.count(400) == LOGIN_FAILURES, sorted(set(statuses))
    assert statuses.count(429) == n - LOGIN_FAILURES
    assert login("correct-horse") == 429


# ------------------------------------------------------------------------------------------- sessions


def test_a_job_is_seen_and_stopped_only_by_the_browser_that_started_it(make_studio, serve, browser, tmp_path):
    """Two browsers (two Chromium contexts: separate cookies) open the same project. A's render reaches A only:
    B's Render screen shows no progress and B's Stop stops nothing; A's reloaded page finds its render again and
    stops it. (Before, B followed A's render and its Stop stopped it.)"""
    from storage.files import load_storyboard

    shots = "\n".join(
        f"      - {{shot_id: s{i}, prompt: Wave number {i} breaks on the rocks, duration: 2, seed: {i}}}"
        for i in range(180)  # long enough to outlast two page loads on a loaded machine (60 shots ended first once)
    )
    path = tmp_path / "long.yaml"
    path.write_text(
        "title: Long\nwidth: 320\nheight: 192\nfps: 8\nscenes:\n  - scene_id: a\n    shots:\n" + shots + "\n"
    )
    studio = make_studio()
    pid = studio.create_from_storyboard(load_storyboard(path)).project_id
    base = serve(studio)
    a, b = (browser.new_context(viewport={"width": 1400, "height": 1000}).new_page() for _ in range(2))
    for pg in (a, b):
        pg.set_default_timeout(60_000)
        _open_project(pg, base, pid)
        pg.get_by_role("tab", name="Render", exact=True).click()
    a.locator("#render_btn").click()
    progress_a, progress_b = a.locator("#render_progress .job"), b.locator("#render_progress .job")
    expect(progress_a).to_have_attribute("data-state", "running", timeout=60_000)
    expect(progress_a).to_contain_text("shot")

    b.reload()  # a page that opens the project while A's render runs
    expect(b.locator("#status_bar")).to_contain_text("Long · v1", timeout=60_000)
    b.get_by_role("tab", name="Render", exact=True).click()
    b.locator("#stop_btn").click()
    expect(b.locator(".toast-body").first).to_contain_text("nothing is rendering for this project", timeout=60_000)
    assert progress_b.count() == 0 and "render v1" not in b.locator("#render_progress").inner_text()

    a.reload()  # A's own page, reloaded, finds its render: still running after B's Stop
    expect(a.locator("#status_bar")).to_contain_text("Long · v1", timeout=60_000)
    a.get_by_role("tab", name="Render", exact=True).click()
    expect(progress_a).to_have_attribute("data-state", "running", timeout=60_000)
    expect(progress_a).to_contain_text("render v1")
    a.locator("#stop_btn").click()
    expect(progress_a).to_have_attribute("data-state", "stopped", timeout=60_000)
    assert studio.render_info(pid) is None


def test_the_render_screen_says_whose_render_stop_stops(make_studio, serve, page):
    """A render belongs to the browser that started it (app/server/jobs.py); the screen says so, next to the button."""
    from app.ui.screens.render import STOP_NOTE

    page.goto(serve(make_studio()) + "/")
    page.get_by_role("tab", name="Render").click()
    expect(page.locator("body")).to_contain_text(STOP_NOTE, timeout=60_000)


def test_the_settings_page_says_the_agents_are_the_servers(make_studio, serve, page):
    from app.agent_settings import SCOPE_NOTE

    page.goto(serve(make_studio()) + "/")
    page.get_by_role("tab", name="Settings").click()
    page.get_by_text("The AI model behind the critics").first.click()
    expect(page.locator("body")).to_contain_text(SCOPE_NOTE, timeout=60_000)  # the tab renders after the click


# ------------------------------------------------------------------------------------------- files and logs


def test_served_files_stay_in_a_private_folder_and_errors_show_no_paths(make_studio, serve, board_file, tmp_path):
    studio = make_studio()
    base = serve(studio)
    client = app_client(base + "/")
    pid, v, *_ = client.predict(handle_file(str(board_file)), api_name="/create_from_file")
    client.predict(pid, v, api_name="/render")
    client.predict(pid, v, api_name="/export_project")
    private = studio.config.home / "tmp" / "gradio"
    assert list(private.rglob("*.mp4")) and list(private.rglob("*.chief.zip"))
    for folder in (private, private.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    bad = tmp_path / "broken.yaml"
    bad.write_text("title: [unclosed\n")
    with pytest.raises(AppError) as e:
        client.predict(handle_file(str(bad)), api_name="/create_from_file")
    message = str(e.value)
    assert message.startswith("broken.yaml: cannot read storyboard: not valid YAML"), message
    assert str(private) not in message and "/tmp/" not in message


def test_user_errors_leave_no_traceback_in_the_server_log(make_studio, serve, capfd):
    client = app_client(serve(make_studio()) + "/")
    capfd.readouterr()
    with pytest.raises(AppError, match="write an idea first"):
        client.predict("  ", 1, "", api_name="/create_project")
    with pytest.raises(AppError, match="no project 'p_missing'"):
        client.predict("p_missing", 1, api_name="/render")
    log = capfd.readouterr()
    assert "Traceback" not in log.out + log.err, log.err


# ------------------------------------------------------------------------------------------- rendering


def _open_project(page, base: str, pid: str) -> None:
    page.goto(base + "/")
    pick = page.locator("#project_pick input").first
    pick.click()
    pick.fill(pid)
    page.keyboard.press("Enter")
    page.locator("#open_project_btn").click()
    page.wait_for_function("document.querySelector('#status_bar')?.innerText.includes('v1')")


def _everything_shown(page) -> str:
    """The page's text and the values of its fields: what a person sees, wherever a screen puts it."""
    return page.evaluate("""() => document.body.innerText + "\\n" +
        [...document.querySelectorAll('textarea, input')].map(e => e.value).join("\\n")""")


def test_a_title_with_html_and_an_image_draws_nothing_and_fetches_nothing(
    make_studio, serve, board_file, page, other_site
):
    from storage.files import load_storyboard

    studio = make_studio()
    title = f'<form id="phish"><b>Session expired</b><input type="password"></form> ![x]({other_site.url}/title.png)'
    board = load_storyboard(board_file).model_copy(update={"title": title})
    pid = studio.create_from_storyboard(board).project_id
    _open_project(page, serve(studio), pid)
    for where in ("#status_bar", "#projects_message"):
        expect(page.locator(where)).to_contain_text(title, timeout=60_000)  # shown as text, every character
        assert page.locator(f"{where} form, {where} input, {where} img").count() == 0, where
    page.wait_for_timeout(500)  # let any image request the page started reach the other site
    assert other_site.paths == []


def test_a_note_with_a_remote_image_makes_the_browser_fetch_nothing(make_studio, serve, board_file, page, other_site):
    from storage.files import load_storyboard

    studio = make_studio()
    pid = studio.create_from_storyboard(load_storyboard(board_file)).project_id
    notes = [f"![x]({other_site.url}/markdown.png)", f'<img src="{other_site.url}/html.png">']
    for text in notes:
        studio.add_note(pid, text)
    _open_project(page, serve(studio), pid)
    page.get_by_role("tab", name="Screening room").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('textarea, input')].some(e => "
        "e.value.includes('markdown.png')) || document.body.innerText.includes('markdown.png')"
    )
    shown = _everything_shown(page)
    assert all(text in shown for text in notes), shown  # shown as text, every character
    assert page.locator(f'img[src^="{other_site.url}"]').count() == 0  # escaping held, not only the CSP
    page.wait_for_timeout(500)
    assert other_site.paths == []


def test_refusals_show_their_line_in_the_page_not_error(make_studio, serve, page, other_site, tmp_path):
    """A deeply nested storyboard, one whose duplicate key is HTML, and a project name typed as HTML: each
    toast shows its one line as text, and the browser fetches nothing."""
    studio = make_studio()
    base = serve(studio)
    dup = tmp_path / "dup.yaml"
    key = f"<img src='{other_site.url}/toast.png'>"
    dup.write_text(f'"{key}": 1\n"{key}": 2\ntitle: x\n')
    for path, says in (
        (DATA / "deep_storyboard.yaml", "deep_storyboard.yaml: cannot read storyboard: nested more than 64 levels"),
        (dup, f'dup.yaml: cannot read storyboard: key "{key}" appears twice in one mapping'),
    ):
        page.goto(base + "/")
        page.locator("#projects_more").click()  # storyboard files and archives are under "More"
        page.get_by_role("tab", name="From a storyboard file").click()
        page.locator("#storyboard_file input[type=file]").set_input_files(str(path))
        page.locator("#create_file_btn").click()
        toast = page.locator("[data-testid='toast-text']").last
        toast.wait_for()
        assert says in toast.inner_text(), toast.inner_text()
    page.goto(base + "/")
    name = f"<img src='{other_site.url}/name.png'>"
    pick = page.locator("#project_pick input").first
    pick.click()
    pick.fill(name)
    page.keyboard.press("Enter")
    page.locator("#open_project_btn").click()
    toast = page.locator("[data-testid='toast-text']").last
    toast.wait_for()
    assert f"no project {name!r}" in toast.inner_text(), toast.inner_text()
    assert page.locator("[data-testid='toast-body'] img").count() == 0
    page.wait_for_timeout(500)
    assert other_site.paths == [] and studio.projects() == []


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """urllib must talk to 127.0.0.1 directly."""
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(var, raising=False)
    os.environ.setdefault("no_proxy", "127.0.0.1,localhost")
