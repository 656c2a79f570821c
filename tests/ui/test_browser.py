"""Each screen's main path in a real Chromium against `chief serve` (one subprocess for the module; each test
makes its own project through a Studio on the same data folder). Elements are found by the elem_ids the
screens set. Screenshots go to a temporary folder (`make screenshots` copies README's picture)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.ui.conftest import TINY_BOARD, Server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LONG = 240_000  # ms: renders and critics on a busy 2-core machine


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("serve")
    with Server(base / "home", base / "serve.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def st(server):
    from app.config import load_config
    from app.studio import Studio

    return Studio(load_config({"home": server.home, "narration": False, "agents": "offline"}, environ={}))


def tiny(st, tmp_path, text: str = TINY_BOARD, title: str = "Tiny Lighthouse") -> str:
    p = tmp_path / "board.yaml"
    p.write_text(text.replace("title: Tiny Lighthouse", f"title: {title}"))
    return st.create_from_storyboard(load(p)).project_id


def load(p):
    from storage.files import load_storyboard

    return load_storyboard(p)


def open_project(page, server, pid: str, tab: str | None = None) -> None:
    """Open `pid` on the screen titled `tab` (Projects by default) by its link, the address the page keeps
    (`?project=ID&screen=NAME`). test_browser_first_hour opens a project through the Projects screen, as a creator
    does first, and follows a link to a project that is not there."""
    from urllib.parse import urlencode

    from playwright.sync_api import expect

    from app.ui import TITLES

    title = tab or "Projects"
    screen = next(name for name, shown in TITLES.items() if shown == title)
    page.goto(server.url + "?" + urlencode({"project": pid, "screen": screen}))
    expect(page.locator("body[data-chief-ready]")).to_be_attached(timeout=LONG)  # the page opened what it links
    expect(page.get_by_role("tab", name=title, exact=True)).to_have_attribute("aria-selected", "true")
    expect(page).to_have_url(re.compile(rf"[?&]project={re.escape(pid)}&version=\d+&"))  # opened: its version is known


def kept(page, home) -> dict:
    """What the page keeps in this browser for a reload and the next visit (the project, version and screen), read as
    the page reads it. Gradio's BrowserState encrypts it with CryptoJS's passphrase mode: OpenSSL's salted format
    (after the IV Gradio writes first and CryptoJS ignores), its AES-256-CBC key and IV drawn from the passphrase by
    EVP_BytesToKey with MD5; the passphrase is the hex SHA-256 of the data folder's secret (app.ui)."""
    import base64
    import hashlib
    import json

    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    from app.ui import browser_state_secret

    stored = page.evaluate("localStorage.getItem('chief_session')")
    if not stored:
        return {}
    raw = base64.b64decode(stored.split(":", 1)[1])
    assert raw[:8] == b"Salted__", stored
    salt, body = raw[8:16], raw[16:]
    passphrase = hashlib.sha256(browser_state_secret(home).encode()).hexdigest().encode()
    derived, block = b"", b""
    while len(derived) < 48:
        block = hashlib.md5(block + passphrase + salt, usedforsecurity=False).digest()
        derived += block
    clear = Cipher(algorithms.AES(derived[:32]), modes.CBC(derived[32:48])).decryptor()
    unpad = padding.PKCS7(128).unpadder()
    return json.loads(unpad.update(clear.update(body) + clear.finalize()) + unpad.finalize())


def wait_kept(page, home, pid: str, version: int, tab: str) -> None:
    """Wait until the browser keeps this project, version and screen (the page writes them, and the address, as they
    change: a moment after the server's answer shows). A reload or the next visit opens what it keeps."""
    import time

    want = {"pid": pid, "version": version, "tab": tab}
    deadline = time.monotonic() + LONG / 1000
    while (now := kept(page, home)) != want:
        assert time.monotonic() < deadline, f"the browser keeps {now}, not {want}"
        page.wait_for_timeout(50)
    expect_url = re.compile(rf"[?&]project={re.escape(pid)}&version={version}&screen={tab}(&|$)")
    assert expect_url.search(page.url), page.url


def test_storyboard_reorder_by_drag(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Drag")
    open_project(page, server, pid, "Storyboard")
    expect(page.locator("#card_s3")).to_be_visible(timeout=LONG)
    s1 = page.locator("#card_s1")
    box = s1.bounding_box()
    page.locator("#card_s3").drag_to(s1, target_position={"x": 10, "y": box["height"] / 2})  # s1's left half
    expect(page.locator("#board .sb")).to_have_attribute("data-dirty", "yes")
    assert [c.get_attribute("data-shot") for c in page.locator("#board .card").all()] == ["s3", "s1", "s2"]
    page.locator("#shots_save_btn").click()
    expect(page.locator("#shots_message")).to_contain_text("Saved as v2", timeout=LONG)
    assert [s.shot_id for s in st.version(pid, 2).storyboard.shots()] == ["s3", "s1", "s2"]


def test_per_shot_render_renders_that_shot_as_edited(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="One shot")
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s2")
    expect(card.locator(".thumb .none")).to_be_visible(timeout=LONG)  # nothing rendered yet
    card.locator("textarea").first.fill("A whale tail in silver water")
    card.locator("button.rerender").click()
    expect(page.locator("#shot_progress .job")).to_have_attribute("data-state", "done", timeout=LONG)
    expect(card.locator(".thumb img")).to_be_visible(timeout=LONG)
    expect(page.locator("#card_s1 .thumb .none")).to_be_visible()  # only that shot was rendered
    expect(page.locator("#board_clip video")).to_be_attached()
    board = st.version(pid).storyboard
    board.scenes[0].shots[1].prompt = "A whale tail in silver water"
    assert set(st.cached_shots(board)) == {"s2"}  # the clip of the draft, in the cache; no version was made
    assert len(st.versions(pid)) == 1


def _proposal(st, tmp_path, title: str) -> tuple[str, int]:
    pid = tiny(st, tmp_path, title=title)
    st.render(pid)
    st.critique(pid)
    st.add_note(pid, "Make the storm scarier", "s3")
    return pid, len(st.refine(pid).proposal.edits)


def test_revise_accept_all_commits_once(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid, n = _proposal(st, tmp_path, "Accept all")
    open_project(page, server, pid, "Revise")
    expect(page.locator("#review .edit-row")).to_have_count(n, timeout=LONG)
    assert not re.search(r"\b(n|pr)_[0-9a-f]{8}\b", page.locator("#review").inner_text())  # names, not ids
    page.locator("#reject_all_btn").click()
    expect(page.locator("#commit_btn")).to_be_disabled()  # nothing accepted: nothing to commit
    page.locator("#accept_all_btn").click()
    commit = page.locator("#commit_btn")
    expect(commit).to_be_enabled()
    commit.click()
    expect(page.locator("#revise_message")).to_contain_text("Committed v2", timeout=LONG)
    expect(commit).to_be_disabled()
    expect(commit).to_have_text("Committed as v2")
    commit.click(force=True)  # a second click does nothing
    assert len(st.versions(pid)) == 2 and f"accepted {n}/{n}" in st.version(pid, 2).message


def test_revise_partial_with_an_edit_in_place(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid, n = _proposal(st, tmp_path, "Partial")
    prop = st.proposal(pid, ref=1).proposal
    mine = next(i for i, e in enumerate(prop.edits, 1) if e.op == "set" and e.field == "prompt")
    open_project(page, server, pid, "Revise")
    expect(page.locator("#review .edit-row")).to_have_count(n, timeout=LONG)
    page.locator("#reject_all_btn").click()
    row = page.locator(f"#edit_{mine}")
    row.locator("button.edit-btn").click()
    row.locator("textarea").fill("A gentle whale eye in close-up")
    expect(row.locator("input.accept")).to_be_checked()  # editing a value accepts it
    page.locator("#commit_btn").click()
    expect(page.locator("#revise_message")).to_contain_text("Committed v2", timeout=LONG)
    v2 = st.version(pid, 2)
    assert f"accepted 1/{n}" in v2.message and "1 edited by hand" in v2.message
    assert "A gentle whale eye in close-up" in [s.prompt for s in v2.storyboard.shots()]


def test_reload_during_a_render_reattaches_and_stop_is_neutral(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    shots = "\n".join(
        f"      - {{shot_id: s{i}, prompt: Wave number {i} breaks on the rocks, duration: 2, seed: {i}}}"
        for i in range(60)
    )
    board = "title: Long\nwidth: 320\nheight: 192\nfps: 8\nscenes:\n  - scene_id: a\n    shots:\n" + shots + "\n"
    pid = tiny(st, tmp_path, board, title="Long")
    open_project(page, server, pid, "Render")
    page.locator("#render_btn").click()
    progress = page.locator("#render_progress .job")
    expect(progress).to_contain_text("shot", timeout=LONG)
    page.reload()
    expect(page.locator("#status_bar")).to_contain_text("Long · v1", timeout=LONG)  # the browser brought it back
    page.get_by_role("tab", name="Render", exact=True).click()
    expect(progress).to_have_attribute("data-state", "running", timeout=LONG)
    expect(progress).to_contain_text("render v1")
    page.locator("#stop_btn").click()
    expect(progress).to_have_attribute("data-state", "stopped", timeout=LONG)
    expect(progress).to_contain_text("Stopped. Finished shots are kept")
    assert st.render_info(pid) is None
    expect(page.locator(".toast-body.error")).to_have_count(0)  # stopping is not an error


def test_history_graph_click_compares_with_the_parent(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="History")
    st.render(pid)
    board = st.version(pid).storyboard
    board.scenes[0].shots[0].prompt = "A lighthouse at dusk"
    st.save_storyboard(pid, board, 1)
    open_project(page, server, pid, "History")
    page.locator("#vnode_2").click()
    expect(page.locator("#cmp_diff")).to_contain_text("v1 → v2", timeout=LONG)
    expect(page.locator("#cmp_diff")).to_contain_text("dusk")
    expect(page.locator("#cmp_film_a video")).to_be_attached()  # v1's film; v2 shares it (a new prompt: no)
    expect(page.locator("#restore_version input")).to_have_value("2")
    page.locator("#fork_btn").click()
    expect(page.locator("#history_message")).to_contain_text("v3 forked from v2", timeout=LONG)


def test_screening_room_scores_notes_and_screenshots(server, st, page, tmp_path, errors):
    """Critics run as a job; the panel's score at a glance; notes edited and deleted; every screen pictured."""
    from playwright.sync_api import expect

    shots_dir = Path(os.environ.get("CHIEF_TEST_SCREENSHOTS") or tmp_path / "screenshots")
    shots_dir.mkdir(exist_ok=True)

    def snap(name: str) -> Path:
        path = shots_dir / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    pid = tiny(st, tmp_path, title="Screening")
    st.render(pid)
    open_project(page, server, pid, "Screening room")
    expect(page.locator("#screening_film video")).to_be_attached(timeout=LONG)
    page.locator("#critique_btn").click()
    expect(page.locator("#panel_glance .big")).to_be_visible(timeout=LONG)
    crits = st.critiques(pid)
    mean = sum(c.critique.overall for c in crits) / len(crits)
    expect(page.locator("#panel_glance .big")).to_have_attribute("data-score", f"{mean:.1f}")
    expect(page.locator("#critic_cards details.critic-card")).to_have_count(len(crits))
    page.locator("#note_text textarea").fill("Keep the whale gentle")
    page.locator("#add_note_btn").click()
    expect(page.locator("#note_1_text textarea")).to_have_value("Keep the whale gentle", timeout=LONG)
    page.locator("#note_1_text textarea").fill("Keep the whale gentle and curious")
    page.locator("#note_1_save").click()
    expect(page.locator("#notes_message")).to_contain_text("Note saved", timeout=LONG)
    assert [n.text for n in st.notes(pid)] == ["Keep the whale gentle and curious"]
    screening_png = snap("screening")
    page.locator("#note_1_delete").click()
    expect(page.locator("#notes_message")).to_contain_text("Note deleted", timeout=LONG)
    assert st.notes(pid) == []
    ready = {
        "Storyboard": ("#board .card img", None),
        "Render": ("#render_summary", "rendered"),
        "History": ("#version_graph svg", None),
        "Settings": ("#settings_status", "Making the pictures"),
    }
    for name, (selector, text) in ready.items():
        page.get_by_role("tab", name=name, exact=True).click()
        if text:
            expect(page.locator(selector)).to_contain_text(text, timeout=LONG)
        else:
            expect(page.locator(selector).first).to_be_visible(timeout=LONG)
        snap(name.lower())
    if os.environ.get("CHIEF_SCREENSHOT_DIR"):  # `make screenshots` refreshes README's picture; tests never do
        shutil.copyfile(screening_png, Path(os.environ["CHIEF_SCREENSHOT_DIR"]) / "screening.png")


def test_errors_show_a_message_not_a_traceback(server, page, errors):
    from playwright.sync_api import expect

    page.goto(server.url)
    page.get_by_role("tab", name="Render", exact=True).click()
    page.locator("#render_btn").click()
    expect(page.get_by_text("open or create a project first").first).to_be_visible(timeout=30_000)


# Counts the frames the page asks the browser for: an init script runs before any script of the page, so the
# governor (frames.js) and everything after it ask through this counter.
COUNT_FRAMES = """
window.__asked = 0;
const ask = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (f) => (window.__asked++, ask(f));
"""


def test_an_idle_page_asks_for_4_frames_a_second_and_a_changing_one_for_all(server, page):
    """frames.js is the page's first script (app/ui/page_script.py), so Gradio's own loops ask through it: Gradio
    6.31's status tracker leaves a loop asking for every frame on a page nobody touches. A HEAD of the page tells
    the length of the page with it."""
    import httpx
    from playwright.sync_api import expect

    page.add_init_script(COUNT_FRAMES)
    page.goto(server.url)
    expect(page.locator("body[data-chief-ready]")).to_be_attached(timeout=LONG)
    assert page.evaluate("document.head.firstElementChild.textContent").lstrip().startswith("// CHIEF's frame governor")
    got, head = httpx.get(server.url, timeout=60), httpx.head(server.url, timeout=60)  # a HEAD tells the same length
    assert int(head.headers["content-length"]) == len(got.content) and head.content == b"", head.headers
    wait_quiet = "() => window.chiefFrames.idle()"
    page.wait_for_function(wait_quiet, timeout=LONG)
    idle = page.evaluate(
        """async () => {
            const ran = [], sleep = (ms) => new Promise((r) => setTimeout(r, ms));
            const before = window.__asked;
            const t0 = performance.now();
            requestAnimationFrame(() => ran.push(performance.now() - t0));
            const atOnce = window.__asked - before;
            cancelAnimationFrame(requestAnimationFrame(() => ran.push("cancelled")));
            while (ran.length === 0) await sleep(20);
            await sleep(2 * window.chiefFrames.IDLE_FRAME_MS);
            return { atOnce, ran, wait: window.chiefFrames.IDLE_FRAME_MS };
        }"""
    )
    assert idle["atOnce"] == 0 and len(idle["ran"]) == 1, idle  # asked for later, and the cancelled one never
    assert idle["ran"][0] >= idle["wait"] - 1, idle  # (performance.now() is coarsened)
    changed = page.evaluate(
        """async () => {
            document.body.dataset.touched = "yes";  // a change to the page
            await new Promise((r) => setTimeout(r, 0));  // its mutation record delivered
            const before = window.__asked;
            requestAnimationFrame(() => {});
            return { idle: window.chiefFrames.idle(), atOnce: window.__asked - before };
        }"""
    )
    assert changed == {"idle": False, "atOnce": 1}
    # A video that plays keeps every frame, however long nothing else changes
    playing = page.evaluate(
        """async () => {
            const canvas = document.createElement("canvas"), video = document.createElement("video");
            const paint = canvas.getContext("2d"), painting = setInterval(() => paint.fillRect(0, 0, 8, 8), 100);
            paint.fillRect(0, 0, 8, 8);
            video.muted = true;
            video.srcObject = canvas.captureStream(10);
            document.body.append(video);
            await video.play();
            while (performance.now() - window.chiefFrames.quietSince() < window.chiefFrames.IDLE_MS) {
                await new Promise((r) => setTimeout(r, 50));
            }
            const before = window.__asked;
            requestAnimationFrame(() => {});
            const result = { idle: window.chiefFrames.idle(), atOnce: window.__asked - before };
            video.pause();
            clearInterval(painting);
            return { ...result, pausedIdle: window.chiefFrames.idle() };
        }"""
    )
    assert playing == {"idle": False, "atOnce": 1, "pausedIdle": True}
    # Over a quiet stretch of the app's page, every frame Gradio's loops asked for waited its turn
    for _ in range(5):
        page.wait_for_function(wait_quiet, timeout=LONG)
        before = page.evaluate("[window.__asked, {...window.chiefFrames.counts}, performance.now()]")
        page.wait_for_timeout(2000)
        after = page.evaluate("[window.__asked, {...window.chiefFrames.counts}, window.chiefFrames.quietSince()]")
        if after[2] <= before[2]:  # nothing changed on the page meanwhile
            break
    asked, deferred, at_once = (after[0] - before[0], *(after[1][k] - before[1][k] for k in ("deferred", "atOnce")))
    print(f"\n[frames] a quiet page asked for {asked} frames in 2 s ({deferred} deferred, {at_once} at once)")
    assert after[2] <= before[2] and at_once == 0, (before, after)


LINES_BOARD = """\
title: Lines
characters:
  - {name: Keeper, description: old man in a yellow coat}
  - {name: Whale, description: a grey whale}
scenes:
  - scene_id: a
    title: Dawn
    music: slow cello
    shots:
      - {shot_id: s1, prompt: A lighthouse at dawn, duration: 2, seed: 1, characters: [Keeper],
         dialogue: "Keeper (hoarse): Who is <b>there</b>?", sounds: gulls}
      - {shot_id: s2, prompt: A whale tail in grey water, duration: 2, seed: 2}
"""


def test_storyboard_card_shows_and_edits_lines_sounds_and_music(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    p = tmp_path / "lines.yaml"
    p.write_text(LINES_BOARD)
    pid = st.create_from_storyboard(load(p)).project_id
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s1")
    line = card.locator('.lines .line[data-n="1"]')
    expect(line.locator(".said")).to_have_value("Who is <b>there</b>?", timeout=LONG)  # text, never HTML
    expect(line.locator(".who")).to_have_value("Keeper")
    expect(line.locator(".how")).to_have_value("hoarse")
    expect(line.locator(".off")).to_have_text("")  # the keeper is in the shot
    expect(card.locator(".sounds textarea")).to_have_value("gulls")
    expect(page.locator('section[data-scene="a"] .scene-music')).to_have_value("slow cello")
    line.locator(".said").fill("one two three four five six seven eight")  # 8 words: 3.2 s in a 2-s shot
    expect(line.locator(".warn")).to_contain_text("too long for the shot: 8 words take 3.2 s")
    card.locator(".row .duration input").fill("4")
    expect(line.locator(".warn")).to_have_text("")  # the shot is long enough now
    line.locator(".who").select_option("Whale")
    expect(line.locator(".off")).to_have_text("off screen")
    card.locator("button.add-line").click()
    second = card.locator('.lines .line[data-n="2"]')
    second.locator(".said").fill("Go home.")
    second.locator(".how").fill("softly")
    card.locator(".sounds textarea").fill("gulls, surf")
    page.locator('section[data-scene="a"] .scene-music').fill("taiko drums")
    page.locator("#shots_save_btn").click()
    expect(page.locator("#shots_message")).to_contain_text("Saved as v2", timeout=LONG)
    board = st.version(pid, 2).storyboard
    shot = board.shot("s1")
    assert [(ln.character, ln.line, ln.delivery) for ln in shot.dialogue] == [
        ("Whale", "one two three four five six seven eight", "hoarse"),
        ("Keeper", "Go home.", "softly"),
    ]
    assert shot.duration == 4 and shot.sounds == "gulls, surf" and board.scenes[0].music == "taiko drums"
