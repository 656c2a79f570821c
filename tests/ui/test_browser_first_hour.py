"""The first hour of a creator in a real Chromium against `chief serve`: no stale-version toast when opening another
project; storyboard edits survive a tab switch and a reload, can be undone, a delete can be undone; a long board
can jump to a shot and collapse its scenes (and how long a key takes to type there is printed, not asserted)."""

from __future__ import annotations

import pytest

from tests.ui.conftest import TINY_BOARD, Server
from tests.ui.test_browser import LONG, load, open_project

pytestmark = [pytest.mark.browser, pytest.mark.slow]


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


@pytest.fixture
def errors(page):
    seen: list[str] = []
    page.on("pageerror", lambda e: seen.append(str(e)))
    yield seen
    assert not seen, seen
    assert "Traceback" not in page.content()


def tiny(st, tmp_path, title: str, text: str = TINY_BOARD) -> str:
    p = tmp_path / f"{title}.yaml"
    p.write_text(text.replace("title: Tiny Lighthouse", f"title: {title}"))
    return st.create_from_storyboard(load(p)).project_id


def test_opening_another_project_shows_no_stale_version_error(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    many = tiny(st, tmp_path, "Many versions")
    board = st.version(many).storyboard
    for n in (1, 2):
        board.title = f"Many versions {n}"
        st.save_storyboard(many, board, n, "an edit")
    one = tiny(st, tmp_path, "One version")
    open_project(page, server, many)
    expect(page.locator("#status_bar")).to_contain_text("v3", timeout=LONG)
    page.locator("#project_pick input").click()
    page.locator("ul[role=listbox] li", has_text=one).click()
    page.locator("#open_project_btn").click()
    expect(page.locator("#projects_message")).to_contain_text("Opened", timeout=LONG)
    expect(page.locator("#status_bar")).to_contain_text("One version · v1", timeout=LONG)
    page.wait_for_timeout(1500)  # a toast would have come by now
    expect(page.locator(".toast-body.error")).to_have_count(0)


WATCH_DONE = """() => {
  window.cardsAtDone = null;
  const box = document.querySelector('#critique_progress');
  new MutationObserver(() => {
    if (window.cardsAtDone === null && box.querySelector('[data-state=done]')) {
      window.cardsAtDone = document.querySelectorAll('#critic_cards details.critic-card').length;
    }
  }).observe(box, { childList: true, subtree: true, attributes: true });
}"""


def test_first_critique_says_done_only_with_the_cards(server, st, page, tmp_path, errors):
    """The first critique after start: "done" appears together with the critics' cards (the sentence model for the
    panel's diversity loads in the background and its line follows)."""
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, "First critique")
    st.render(pid)
    open_project(page, server, pid, "Screening room")
    expect(page.locator("#screening_film video")).to_be_attached(timeout=LONG)
    page.evaluate(WATCH_DONE)
    page.locator("#critique_btn").click()
    expect(page.locator("#critique_progress [data-state=done]")).to_be_attached(timeout=LONG)
    crits = st.critiques(pid)
    assert len(crits) >= 2
    assert page.evaluate("window.cardsAtDone") == len(crits)
    expect(page.locator("#diversity")).to_contain_text("similarity", timeout=LONG)
