"""Drafts and finals in a real Chromium against `chief serve` (issue 32): a draft render from the Render screen's
Draft/Final switch, the draft badge on the storyboard's cards and in the Screening room's strip, one card finalised
and its badge gone (the other drafts keep theirs). Screenshots go to a temporary folder (or $CHIEF_TEST_SCREENSHOTS)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.ui.test_browser import LONG, open_project, server, st, tiny  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_draft_film_shows_its_badges_and_a_finalised_card_loses_its_own(server, st, page, tmp_path, errors):  # noqa: F811
    from playwright.sync_api import expect

    folder = Path(os.environ.get("CHIEF_TEST_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(exist_ok=True)
    pid = tiny(st, tmp_path, title="Tiers")
    open_project(page, server, pid, "Render")
    switch = page.locator("#render_tier")
    expect(switch.get_by_label("Final (full quality)")).to_be_checked(timeout=LONG)  # the project's default, shown
    expect(page.locator("#render_tier_note")).to_contain_text("renders final unless switched")
    switch.get_by_label("Draft (fast)").check()
    page.locator("#render_btn").click()
    expect(page.locator("#render_summary")).to_contain_text("every shot a draft", timeout=LONG)
    expect(page.locator("#render_strip .cell.draft .tier")).to_have_count(3)
    assert {r.tier for r in st.render_info(pid).shots} == {"draft"}
    page.screenshot(path=str(folder / "render_tiers.png"), full_page=True)

    page.get_by_role("tab", name="Storyboard", exact=True).click()
    expect(page.locator("#board .card .tier-badge")).to_have_count(3, timeout=LONG)
    expect(page.locator("#board .scene-finalize")).to_have_text("✓ Finalize scene (3 drafts)")
    page.locator("#card_s2 button.finalize").click()
    expect(page.locator("#shot_progress .job")).to_have_attribute("data-state", "done", timeout=LONG)
    expect(page.locator("#card_s2 .tier-badge")).to_have_count(0, timeout=LONG)
    expect(page.locator("#card_s2 button.finalize")).to_have_count(0)
    expect(page.locator("#board .card .tier-badge")).to_have_count(2)  # s1 and s3 are drafts still
    expect(page.locator("#shots_message")).to_contain_text("2 of 3 shots drafts")
    page.screenshot(path=str(folder / "storyboard_tiers.png"), full_page=True)
    shots = {r.shot_id: r.tier for r in st.render_info(pid).shots}
    assert shots == {"s1": "draft", "s2": "final", "s3": "draft"}

    page.get_by_role("tab", name="Screening room", exact=True).click()
    strip = page.locator("#screening_strip")
    expect(strip.locator(".cell.draft .tier")).to_have_count(2, timeout=LONG)
    expect(strip.locator(".cell[data-shot='s2'] .tier")).to_have_count(0)
    expect(strip.locator(".cell[data-shot='s1'] .tier")).to_have_text("draft")
    page.screenshot(path=str(folder / "screening_tiers.png"), full_page=True)
