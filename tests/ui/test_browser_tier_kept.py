"""The Draft/Final switch is kept (issue 57.7), in a real Chromium against `chief serve`: rendered at Draft on the
Render screen, the switch shows Draft after a reload; flipped on the Storyboard with an edit not yet saved, the edit
stays (unsaved) on the version the switch made."""

from __future__ import annotations

import pytest

from tests.ui.test_browser import LONG, open_project, server, st, tiny  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_draft_render_keeps_draft_after_a_reload(server, st, page, tmp_path, errors):  # noqa: F811
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Kept tier")
    open_project(page, server, pid, "Render")
    switch = page.locator("#render_tier")
    expect(switch.get_by_label("Final (full quality)")).to_be_checked(timeout=LONG)
    switch.get_by_label("Draft (fast)").check()
    page.locator("#render_btn").click()
    expect(page.locator("#render_summary")).to_contain_text("every shot a draft", timeout=LONG)
    expect(page.locator("#status_bar")).to_contain_text("v2", timeout=LONG)  # the page follows the version made
    assert st.version(pid).storyboard.film.tier == "draft"
    page.reload()
    expect(page.locator("#status_bar")).to_contain_text("Kept tier", timeout=LONG)
    page.get_by_role("tab", name="Render", exact=True).click()
    expect(switch.get_by_label("Draft (fast)")).to_be_checked(timeout=LONG)
    page.get_by_role("tab", name="Storyboard", exact=True).click()
    expect(page.locator("#board_tier").get_by_label("Draft (fast)")).to_be_checked(timeout=LONG)


def test_the_boards_switch_keeps_the_tier_and_an_unsaved_edit(server, st, page, tmp_path, errors):  # noqa: F811
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Board tier")
    open_project(page, server, pid, "Storyboard")
    prompt = page.locator("#card_s2 .prompt textarea")
    prompt.fill("A whale tail under the pier")
    dirty = page.locator("#board .dirty")
    expect(dirty).to_contain_text("1 unsaved change", timeout=LONG)
    page.locator("#board_tier").get_by_label("Draft (fast)").check()
    expect(page.locator("#status_bar")).to_contain_text("v2", timeout=LONG)
    assert st.version(pid, 2).storyboard.film.tier == "draft"
    expect(page.locator("#opt_tier").get_by_label("Draft (fast)")).to_be_checked(timeout=LONG)
    expect(prompt).to_have_value("A whale tail under the pier")
    expect(dirty).to_contain_text("1 unsaved change", timeout=LONG)
    page.locator("#shots_save_btn").click()  # the edit saved over v2: the tier stays draft
    expect(page.locator("#shots_message")).to_contain_text("Saved as v3", timeout=LONG)
    v3 = st.version(pid, 3).storyboard
    assert v3.film.tier == "draft" and v3.shots()[1].prompt == "A whale tail under the pier"
