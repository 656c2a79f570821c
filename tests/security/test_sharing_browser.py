"""Two students and a teacher in three Chromium contexts on one `--users` server (issue 33): neither student sees
the other's projects on any screen, the other's file URL is refused, a project shared read-only opens but refuses a
write, and the teacher's Class screen lists both."""

from __future__ import annotations

import pytest

from storage.owners import Actor, acting
from tests.conftest import tiny_board
from tests.security.test_accounts import PASSWORD
from tests.security.test_accounts_web import SECRET
from tests.security.test_media_owner import _export_path

LONG = 60_000
SCREENS = ("Projects", "Story", "Storyboard", "Render", "Screening room", "Revise", "History", "Settings")


@pytest.fixture
def classroom(studio):
    from app.ui import launch
    from tests.process import free_port

    studio.accounts.add("alice", PASSWORD)
    studio.accounts.add("bob", PASSWORD + "b")
    studio.accounts.add("teach", PASSWORD + "t", teacher=True)
    with acting(Actor("alice")):
        mine = studio.create_from_storyboard(tiny_board(2).model_copy(update={"title": SECRET})).project_id
        lent = studio.create_from_storyboard(tiny_board(2).model_copy(update={"title": "Lent Harbour"})).project_id
        studio.sharing.share(lent, "bob")
    with acting(Actor("bob")):
        studio.create_from_storyboard(tiny_board(2).model_copy(update={"title": "Bob Quarry"}))
    port = free_port()
    demo = launch(studio, port=port, users=True, prevent_thread_lock=True, quiet=True)
    try:
        yield studio, f"http://127.0.0.1:{port}", mine, lent
    finally:
        demo.close()


def signed_in(browser, url: str, name: str, password: str):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    assert context.request.post(url + "/login", form={"username": name, "password": password}).ok
    page = context.new_page()
    page.set_default_timeout(LONG)
    page.goto(url)
    expect(page.locator("#steps_path")).to_be_attached(timeout=LONG)
    return context, page


def every_screen(page, own: str) -> str:
    """The page's text on every screen a student has, once the posters show the student's own film `own`."""
    from playwright.sync_api import expect

    expect(page.locator("#posters")).to_contain_text(own, timeout=LONG)
    text = [page.content()]
    for name in SCREENS:
        page.get_by_role("tab", name=name, exact=True).click()
        expect(page.get_by_role("tab", name=name, exact=True)).to_have_attribute("aria-selected", "true")
        text.append(page.content())
    return "\n".join(text)


def test_two_students_a_share_and_the_teacher_in_chromium(classroom, browser, tmp_path):
    from playwright.sync_api import expect

    studio, url, mine, lent = classroom
    archive = _export_path(url, "alice", PASSWORD, mine)  # a file URL the app sent alice
    alice_ctx, alice = signed_in(browser, url, "alice", PASSWORD)
    bob_ctx, bob = signed_in(browser, url, "bob", PASSWORD + "b")

    seen_by_alice, seen_by_bob = every_screen(alice, SECRET), every_screen(bob, "Bob Quarry")
    assert "Bob Quarry" not in seen_by_alice and SECRET in seen_by_alice
    assert SECRET not in seen_by_bob and mine not in seen_by_bob and "Bob Quarry" in seen_by_bob
    assert "Lent Harbour" in seen_by_bob  # shared with him
    assert bob.get_by_role("tab", name="Class", exact=True).count() == 0  # a student has no Class screen

    assert alice_ctx.request.get(f"{url}/gradio_api/file={archive}").status == 200
    refused = bob_ctx.request.get(f"{url}/gradio_api/file={archive}")
    assert refused.status == 404 and refused.text() == "not found\n"

    # the shared project opens for bob, marked read-only, and a write is refused in one line
    bob.get_by_role("tab", name="Projects", exact=True).click()
    pick = bob.locator("#project_pick input")
    pick.click()
    pick.fill(lent)
    bob.keyboard.press("Enter")
    bob.locator("#open_project_btn").click()
    expect(bob.locator("#projects_message")).to_contain_text("Opened", timeout=LONG)
    expect(bob.locator("#status_bar")).to_contain_text("alice's · read-only", timeout=LONG)
    bob.get_by_role("tab", name="Projects", exact=True).click()
    bob.get_by_text("More: start from a storyboard file").click()  # the accordion's label
    bob.get_by_role("tab", name="The open film", exact=True).click()
    bob.locator("#trash_project_btn").click()
    expect(bob.get_by_text("open to you read-only: export it").first).to_be_visible(timeout=LONG)
    with acting(None):
        assert not studio.project(lent).trashed

    _, teacher = signed_in(browser, url, "teach", PASSWORD + "t")
    teacher.get_by_role("tab", name="Class", exact=True).click()
    table = teacher.locator("#class_table")
    expect(table).to_contain_text("Bob Quarry", timeout=LONG)
    expect(table).to_contain_text(SECRET)
    expect(table).to_contain_text("alice")
    expect(teacher.locator("#queue_state")).to_contain_text("waiting", timeout=LONG)  # the queue's part of the screen
    teacher.screenshot(path=str(tmp_path / "class_screen.png"), full_page=True)
