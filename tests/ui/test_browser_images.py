"""The image-first workflow in a real Chromium against `chief serve` (issue 16's browser test, one behaviour each):
draw keyframes, re-roll one and pick the earlier one back, replace one by an upload, render takes of a shot and
watch them, use one (a child version the page follows), a takes job that survives a reload and stops, the
panel's keyframe screening in the Screening room, and a reference uploaded on the Story screen. Screenshots go
to a temporary folder (or $CHIEF_TEST_SCREENSHOTS)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.ui.conftest import TINY_BOARD
from tests.ui.test_browser import LONG, open_project, server, st, tiny  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEEPER_BOARD = TINY_BOARD.replace(
    "scenes:", "characters:\n  - {name: Keeper, description: an old keeper in a yellow coat}\nscenes:"
).replace("duration: 1, seed: 1}", "duration: 1, seed: 1, characters: [Keeper]}")


@pytest.fixture
def snap(page, tmp_path):
    folder = Path(os.environ.get("CHIEF_TEST_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(exist_ok=True)
    return lambda name: page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def picture(path: Path, seed: int) -> Path:
    Image.fromarray(np.random.default_rng(seed).integers(0, 255, (64, 96, 3), dtype=np.uint8)).save(path)
    return path


def test_draw_keyframes_for_the_board(server, st, page, tmp_path, errors, snap):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Keyframes")
    page.on("dialog", lambda d: d.accept())  # what it re-renders, asked first (tests/ui/test_browser_drafts.py)
    open_project(page, server, pid, "Storyboard")
    expect(page.locator("#card_s1 .thumb .none")).to_be_visible(timeout=LONG)
    expect(page.locator("#stills_label")).to_contain_text("animatic keyframes")  # what draws them, said
    page.locator("#keyframes_btn").click()
    expect(page.locator("#shot_progress .job")).to_have_attribute("data-state", "done", timeout=LONG)
    expect(page.locator("#board .kf-badge")).to_have_count(3)
    expect(page.locator("#status_bar")).to_contain_text("Keyframes · v2")  # the page follows the new version
    for shot in st.version(pid).storyboard.shots():
        expect(page.locator(f"#card_{shot.shot_id} .thumb img")).to_have_attribute("src", re.compile(shot.keyframe))
    snap("storyboard_keyframes")


def test_reroll_one_keyframe_then_pick_the_earlier_one(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Re-roll")
    first = st.render_keyframes(pid).version.storyboard.shot("s2").keyframe
    page.on("dialog", lambda d: d.accept())  # what it re-renders, asked first (tests/ui/test_browser_drafts.py)
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s2")
    card.locator(".kf-reroll").click()
    expect(card.locator(".cand")).to_have_count(2, timeout=LONG)
    rerolled = st.version(pid).storyboard.shot("s2").keyframe
    assert rerolled != first and st.version(pid).number == 2  # into the working draft
    expect(card.locator(".thumb img")).to_have_attribute("src", re.compile(rerolled))
    expect(page.locator("#card_s1 .cand")).to_have_count(0)  # the other shots keep theirs
    card.locator(".cand:not(.on)").click()
    expect(card.locator(".thumb img")).to_have_attribute("src", re.compile(first), timeout=LONG)
    assert st.version(pid).number == 2 and st.version(pid).storyboard.shot("s2").keyframe == first


def test_replace_a_keyframe_by_an_upload(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Upload keyframe")
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s3")
    expect(card).to_be_visible(timeout=LONG)
    card.locator("input.kf-file").set_input_files(str(picture(tmp_path / "mine.png", 7)))
    expect(page.locator("#shots_message")).to_contain_text("keyframe is the uploaded picture", timeout=LONG)
    sha = st.version(pid).storyboard.shot("s3").keyframe
    assert sha and st.version(pid).number == 2
    expect(card.locator(".thumb img")).to_have_attribute("src", re.compile(sha))
    expect(card.locator(".kf-badge")).to_be_visible()


def test_render_takes_of_a_shot_side_by_side(server, st, page, tmp_path, errors, snap):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Takes")
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s3")
    card.locator("details.takes summary").click()
    card.locator(".take-count").select_option("2")
    card.locator(".take-render").click()
    expect(card.locator("figure.take")).to_have_count(3, timeout=LONG)  # the shot's own seed, and 2 more
    expect(page.locator("#shots_message")).to_contain_text("Shot s3 has 3 take(s)")
    assert [t.number for t in st.shot_takes(pid, "s3").takes] == [1, 2, 3] and len(st.versions(pid)) == 1
    video = card.locator("figure.take video").nth(2)
    video.hover()
    page.wait_for_function("v => !v.paused && v.currentTime > 0", arg=video.element_handle(), timeout=LONG)
    snap("storyboard_takes")


def test_use_a_take_makes_a_child_version_the_page_follows(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Use a take")
    second = st.render_takes(pid, "s1", 2).takes[1]
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s1")
    card.locator("details.takes summary").click()
    card.locator(f"figure.take[data-take='{second.id}'] .take-use").click()
    expect(page.locator("#shots_message")).to_contain_text("uses take #2", timeout=LONG)
    expect(page.locator("#shots_message")).to_contain_text("nothing re-renders")
    expect(page.locator("#status_bar")).to_contain_text("Use a take · v2")
    expect(card.locator(f"figure.take[data-take='{second.id}']")).to_have_class(re.compile("picked"))
    v2 = st.version(pid)
    assert v2.number == 2 and v2.parent_number == 1 and v2.storyboard.shot("s1").seed == second.seed


def test_the_panel_with_no_preference_between_takes_says_so(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Vote on takes")
    st.render_takes(pid, "s2", 1)
    n = len(st.version(pid).panel)
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s2")
    card.locator("details.takes summary").click()
    card.locator(".take-vote").click()
    expect(page.locator("#shots_message")).to_contain_text(f"0 vote(s), {n} with no preference", timeout=LONG)
    expect(card.locator(".take-votes .no-preference")).to_have_text(f"no preference: {n}")
    expect(card.locator("figure.take .votes")).to_have_count(0)  # the offline critics score seeds alike: no votes


def test_a_keyframe_change_on_a_version_another_tab_moved_on_from_says_branched(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Two tabs")
    v2 = st.render_keyframes(pid).version
    st.render(pid)  # v2 is rendered: no longer a draft that small actions amend in place
    open_project(page, server, pid, "Storyboard")
    expect(page.locator("#card_s2 .kf-clear")).to_be_visible(timeout=LONG)
    st.clear_keyframe(pid, "s1", v2.number)  # another tab moves on from v2: v3
    page.locator("#card_s2 .kf-clear").click()
    expect(page.locator("#shots_message")).to_contain_text("Branched: v2 already had a newer version", timeout=LONG)
    v4 = st.version(pid)
    assert (v4.number, v4.parent_number, v4.storyboard.shot("s2").keyframe) == (4, 2, None)


def test_a_takes_job_survives_a_reload_and_stops(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    board = (
        "title: Long take\nwidth: 1280\nheight: 720\nfps: 24\nscenes:\n  - scene_id: a\n    shots:\n"
        "      - {shot_id: s1, prompt: Waves break on the rocks all night long, duration: 20, seed: 1}\n"
    )
    pid = tiny(st, tmp_path, board, title="Long take")
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s1")
    card.locator("details.takes summary").click()
    card.locator(".take-count").select_option("4")
    card.locator(".take-render").click()
    progress = page.locator("#shot_progress .job")
    expect(progress).to_contain_text("take", timeout=LONG)
    page.reload()
    expect(page.locator("#status_bar")).to_contain_text("Long take · v1", timeout=LONG)
    page.get_by_role("tab", name="Storyboard", exact=True).click()
    expect(progress).to_have_attribute("data-state", "running", timeout=LONG)  # followed again
    expect(progress).to_contain_text("4 take(s) of s1")
    page.locator("#shot_stop_btn").click()
    expect(progress).to_have_attribute("data-state", "stopped", timeout=LONG)
    expect(progress).to_contain_text("Stopped. Finished takes are kept.")
    assert len(st.shot_takes(pid, "s1").takes) < 5
    expect(page.locator(".toast-body.error")).to_have_count(0)


def test_screen_the_keyframes_shows_in_the_screening_room(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Keyframe screening")
    st.render_keyframes(pid)
    open_project(page, server, pid, "Storyboard")
    page.locator("#screen_keyframes_btn").click()
    expect(page.locator("#shot_progress .job")).to_have_attribute("data-state", "done", timeout=LONG)
    expect(page.locator("#shots_message")).to_contain_text("The panel screened the keyframes of v2")
    crits = st.critiques(pid)
    assert crits and {c.screening for c in crits} == {"keyframes"}
    page.get_by_role("tab", name="Screening room", exact=True).click()
    expect(page.locator("#screening_kind")).to_contain_text("Keyframe screening", timeout=LONG)
    expect(page.locator("#critic_cards details.critic-card")).to_have_count(len(crits))


def test_upload_a_reference_on_the_story_screen(server, st, page, tmp_path, errors, snap):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, KEEPER_BOARD, title="References")
    open_project(page, server, pid, "Story")
    keeper = page.locator("#ref_character_0")
    expect(keeper).to_contain_text("no reference yet", timeout=LONG)
    keeper.locator("input.ref-file").set_input_files(str(picture(tmp_path / "keeper.png", 3)))
    expect(keeper.locator(".pics img")).to_have_count(1, timeout=LONG)
    expect(page.locator("#status_bar")).to_contain_text("References · v2")
    (sha,) = st.version(pid).storyboard.characters[0].references
    expect(keeper.locator(".pics img")).to_have_attribute("src", re.compile(sha))
    expect(page.locator("#consistency_not_measured")).to_contain_text("Not measured yet")
    snap("story_references")


def test_a_file_that_is_not_a_picture_is_refused_in_one_line(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, KEEPER_BOARD, title="Not a picture")
    open_project(page, server, pid, "Story")
    keeper = page.locator("#ref_character_0")
    expect(keeper).to_be_visible(timeout=LONG)
    fake = tmp_path / "keeper.png"
    fake.write_text("this is not a picture")
    keeper.locator("input.ref-file").set_input_files(str(fake))
    toast = page.locator(".toast-body.error")
    expect(toast).to_contain_text("keeper.png: not a readable PNG, JPEG or WebP image", timeout=LONG)
    assert len(st.versions(pid)) == 1  # nothing written
