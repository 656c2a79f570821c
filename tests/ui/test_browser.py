"""A full creator session in a real Chromium against `chief serve` (a subprocess), with screenshots."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
LONG = 240_000  # ms: renders and critics on a busy 2-core machine


def studio_on(home: Path):
    from app.config import load_config
    from app.studio import Studio

    return Studio(load_config({"home": home, "narration": False, "agents": "offline"}, environ={}))


def tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()


def test_full_creator_session(served, page, tmp_path):
    from playwright.sync_api import expect

    shots_dir = tmp_path / "screenshots"
    shots_dir.mkdir()

    def snap(name: str) -> Path:
        path = shots_dir / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(served.url)
    expect(page.locator("#status_bar")).to_contain_text("animatic")

    # 1. create a project from an idea (offline planner, a ~15 s film)
    page.locator("#idea textarea").fill("A lighthouse keeper befriends a lost whale during an autumn storm")
    page.locator("#minutes input").fill("0.25")
    page.locator("#create_idea_btn").click()
    expect(page.locator("#projects_message")).to_contain_text("Created", timeout=LONG)
    expect(page.locator("#status_bar")).to_contain_text("v1")
    st = studio_on(served.home)
    pid = st.projects()[0].id
    n_shots = len(st.version(pid, 1).storyboard.shots())
    snap("projects")

    # 2. render
    tab(page, "Render")
    page.locator("#render_btn").click()
    expect(page.locator("#render_summary")).to_contain_text(f"rendered {n_shots}, reused 0", timeout=LONG)
    expect(page.locator("#film video")).to_be_attached()
    snap("render_v1")

    # 3. screening room: run the critics, read the cards, write a note, click a shot note to seek the player
    tab(page, "Screening room")
    expect(page.locator("#screening_film video")).to_be_attached(timeout=LONG)
    page.locator("#critique_btn").click()
    cards = page.locator("#critic_cards .critic-card")
    expect(cards.first).to_be_visible(timeout=LONG)
    assert cards.count() == len(st.version(pid, 1).panel)
    expect(page.locator("#diversity")).to_contain_text("similarity", timeout=LONG)
    page.locator("#note_text textarea").fill("Make the storm less frightening")
    page.locator("#add_note_btn").click()
    expect(page.locator("#notes_list")).to_contain_text("whole film")
    screening_png = snap("screening")
    link = page.locator("#critic_cards a.seek").last
    target = float(link.get_attribute("data-t"))
    link.click()
    video = page.locator("#screening_film video")
    expect(video).to_have_attribute("data-seeked-to", str(target).rstrip("0").rstrip(".") if target else "0")
    assert video.evaluate("v => v.readyState") == 0 or abs(video.evaluate("v => v.currentTime") - target) < 0.5


    # 4. refine; accept two edits, edit a third in place, reject the rest
    tab(page, "Revise")
    page.locator("#refine_btn").click()
    expect(page.locator("#edit_1_decision")).to_be_visible(timeout=LONG)
    prop = st.proposal(pid, ref=1).proposal
    editable = [i for i, e in enumerate(prop.edits, 1) if e.op == "set" and e.field == "prompt"]
    assert len(prop.edits) >= 3 and editable, prop
    third = editable[-1]
    keep = [i for i in range(1, len(prop.edits) + 1) if i != third][:2]
    for i in range(1, len(prop.edits) + 1):
        if i not in keep and i != third:
            page.locator(f"#edit_{i}_decision label", has_text="reject").click()
    my_prompt = "A gentle whale eye in close-up, curious, soft morning light"
    page.locator(f"#edit_{third}_new textarea").fill(my_prompt)
    snap("revise")
    page.locator("#commit_btn").click()
    expect(page.locator("#revise_message")).to_contain_text("Committed v2", timeout=LONG)
    v2 = st.version(pid, 2)
    assert v2.parent_number == 1
    assert my_prompt in [s.prompt for s in v2.storyboard.shots()]
    assert "3/" in v2.message and "1 edited by hand" in v2.message

    # 5. render again: only the changed shots render
    changed = {c.shot_id for c in st.diff(pid, 1, 2).shots if c.status in ("changed", "added")}
    tab(page, "Render")
    page.locator("#render_btn").click()
    expect(page.locator("#render_summary")).to_contain_text("v2:", timeout=LONG)
    info = st.render_info(pid, 2)
    assert info.rendered + info.reused == len(v2.storyboard.shots())
    assert 1 <= info.rendered <= len(changed) and info.reused >= 1
    expect(page.locator("#render_summary")).to_contain_text(f"rendered {info.rendered}, reused {info.reused}")

    # 6. compare v1 and v2
    tab(page, "History")
    expect(page.locator("#version_tree")).to_contain_text("v2 accept", timeout=LONG)
    page.locator("#cmp_a input").fill("1")
    page.locator("#cmp_b input").fill("2")
    page.locator("#compare_btn").click()
    expect(page.locator("#cmp_diff")).to_contain_text("v1 → v2", timeout=LONG)
    expect(page.locator("#cmp_film_a video")).to_be_attached()
    expect(page.locator("#cmp_film_b video")).to_be_attached()
    snap("history")

    # 7. export the archive
    tab(page, "Projects")
    page.locator("#export_btn").click()
    expect(page.locator("#projects_message")).to_contain_text("Exported", timeout=LONG)
    link = page.locator("#export_file a").first
    expect(link).to_have_attribute("href", re.compile(r"\.chief\.zip$"))

    assert not errors, errors
    assert "Traceback" not in page.content()
    if os.environ.get("CHIEF_SCREENSHOT_DIR"):  # `make screenshots` refreshes README's picture; tests never do
        shutil.copyfile(screening_png, Path(os.environ["CHIEF_SCREENSHOT_DIR"]) / "screening.png")


def test_errors_show_a_message_not_a_traceback(served, page):
    from playwright.sync_api import expect

    page.goto(served.url)
    tab(page, "Render")
    page.locator("#render_btn").click()
    toast = page.get_by_text("open or create a project first")
    expect(toast.first).to_be_visible(timeout=30_000)
    assert "Traceback" not in page.content()
