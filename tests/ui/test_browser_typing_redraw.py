"""Typing is never lost to a redraw of the storyboard, in a real Chromium against `chief serve` (issue 57.9): the
board the server answers with after a tab switch may come back just after ↶ Undo, while the creator has already put
the caret in a card and goes on typing. The answer redraws every card; the caret, and every key pressed after it,
stay in the field the creator was typing in, and the edit counts."""

from __future__ import annotations

import pytest

from tests.ui.test_browser import LONG, open_project, server, st, tiny  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _narration(page, sid: str):
    return page.locator(f"#card_{sid} .narration textarea")


def _hold_answers(page) -> list:
    held: list = []

    def hold(route):
        held.append(route)

    page.route("**/gradio_api/queue/join*", hold)  # the server's answers wait until released
    return held


def _release(page, held: list) -> None:
    for route in held:
        route.continue_()
    page.unroute("**/gradio_api/queue/join*")


def test_keys_pressed_while_the_board_redraws_after_undo_land_in_the_field(server, st, page, tmp_path, errors):  # noqa: F811
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Caret kept")
    open_project(page, server, pid, "Storyboard")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})  # a slow laptop: redraws take their time
    dirty = page.locator("#board .dirty")
    page.locator("#card_s3 .duration input").fill("2.5")
    expect(dirty).to_contain_text("1 unsaved change", timeout=LONG)
    page.locator("#card_s2 .duration input").fill("3.5")
    expect(dirty).to_contain_text("2 unsaved changes", timeout=LONG)

    held = _hold_answers(page)
    page.get_by_role("tab", name="Render", exact=True).click()
    page.get_by_role("tab", name="Storyboard", exact=True).click()
    for _ in range(200):
        if len(held) >= 2:  # the Render tab's and the Storyboard tab's own questions, unanswered
            break
        page.wait_for_timeout(50)
    assert len(held) >= 2, "the tab switch asked the server nothing"
    page.locator("#board .undo").click()
    expect(page.locator("#card_s2 .duration input")).to_have_value("1")
    expect(dirty).to_contain_text("1 unsaved change")

    field = _narration(page, "s1")
    was = field.input_value()
    field.click()
    page.keyboard.press("End")
    page.keyboard.type("The keeper ")  # the first keys, then the answer arrives mid-word
    page.evaluate("document.querySelector('#card_s1 .narration textarea').dataset.before = 'answer'")
    _release(page, held)
    redrawn = page.locator("#card_s1 .narration textarea[data-before]")
    expect(redrawn).to_have_count(0, timeout=LONG)  # the answer replaced the cards
    page.keyboard.type("climbs the stair")  # …and the creator never stopped typing
    expect(field).to_have_value(was + "The keeper climbs the stair")
    expect(dirty).to_contain_text("2 unsaved changes", timeout=LONG)
    assert page.evaluate("document.activeElement.closest('#card_s1') !== null")

    page.locator("#board .undo").click()  # Undo takes back the typing, not the edit before it
    expect(field).not_to_have_value(was + "The keeper climbs the stair")
    expect(page.locator("#card_s3 .duration input")).to_have_value("2.5")
