"""Versions a creator can follow, in a real Chromium against `chief serve` (issue 25, item 3): the Render tab keeps
the last film on screen (and the Screening room, and the status bar names the draft), labelled, while the working draft is not rendered; a keyframe drawing says how many clips
it re-renders and asks first (no: nothing changes); the History graph labels the draft."""

from __future__ import annotations

import hashlib

import pytest

from tests.ui.test_browser import LONG, open_project, server, st, tiny  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class Dialogs:
    """The page's confirm() dialogs: each message kept, answered by the next of `answers` (True: OK)."""

    def __init__(self, page) -> None:
        self.messages: list[str] = []
        self.answers: list[bool] = []
        page.on("dialog", self._on)

    def _on(self, dialog) -> None:
        self.messages.append(dialog.message)
        if self.answers.pop(0):
            dialog.accept()
        else:
            dialog.dismiss()


def test_the_render_tab_keeps_the_last_film_while_the_draft_is_not_rendered(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Last film")
    first = st.render(pid)
    st.render_keyframes(pid, ["s2"])  # v2: a draft, not rendered
    open_project(page, server, pid, "Render")
    summary = page.locator("#render_summary")
    expect(summary).to_contain_text("film of v1 — v2 is not rendered yet (1 shot changed)", timeout=LONG)
    expect(summary).not_to_contain_text("Not rendered yet")
    expect(page.locator("#film video")).to_be_attached(timeout=LONG)
    src = page.locator("#film video").get_attribute("src", timeout=LONG) or ""
    assert src.endswith("Last-film-v1.mp4"), src  # v1's film, named for the film (not its hash)
    served = page.request.get(src)
    assert hashlib.sha256(served.body()).hexdigest() == first.film_sha256  # v1's film itself
    expect(page.locator("#status_bar")).to_contain_text("Last film · v2 (draft)")
    page.get_by_role("tab", name="Screening room").click()  # the screening room shows it too, labelled
    expect(page.locator("#screening_film")).to_contain_text("film of v1 — v2 is not rendered yet", timeout=LONG)
    src = page.locator("#screening_film video").get_attribute("src", timeout=LONG) or ""
    assert hashlib.sha256(page.request.get(src).body()).hexdigest() == first.film_sha256
    page.get_by_role("tab", name="Render").click()
    page.locator("#render_btn").click()
    expect(summary).to_contain_text("v2", timeout=LONG)
    expect(summary).not_to_contain_text("film of v1", timeout=LONG)
    assert not st.version(pid).draft  # the render ended the draft


def test_a_keyframe_re_roll_says_what_it_re_renders_and_no_changes_nothing(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Ask first")
    st.render_keyframes(pid)
    st.render(pid)  # v2 rendered: a re-roll makes a new draft
    expected = st.clips_affected(pid, "reroll", shots=["s2"]).describe()
    assert expected == "A new keyframe for s2 will re-render 1 of 3 clips (1 of them rendered now)"
    dialogs = Dialogs(page)
    dialogs.answers = [False, True]
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s2")
    expect(card.locator(".kf-reroll")).to_be_visible(timeout=LONG)
    card.locator(".kf-reroll").click()  # asked, and the answer is no
    assert dialogs.messages == [f"{expected}. Draw it?"]
    card.locator(".kf-reroll").click()  # asked again: yes
    expect(card.locator(".cand")).to_have_count(2, timeout=LONG)  # the drawn one and the new one: one re-roll only
    v = st.version(pid)
    assert len(dialogs.messages) == 2 and (v.number, v.draft) == (3, True) and v.message.count("re-roll") == 1
    expect(page.locator("#shots_message")).to_contain_text("v3 (draft)")


def test_draw_keyframes_asks_with_the_count_and_the_history_labels_the_draft(server, st, page, tmp_path, errors):
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Draw all")
    st.render(pid)
    expected = st.clips_affected(pid, "keyframes").describe()
    assert expected == "Drawing keyframes for 3 shots will re-render 3 of 3 clips (3 of them rendered now)"
    dialogs = Dialogs(page)
    dialogs.answers = [False, True]
    open_project(page, server, pid, "Storyboard")
    expect(page.locator("#card_s1")).to_be_visible(timeout=LONG)
    page.locator("#keyframes_btn").click()
    expect(page.locator("#shots_message")).to_contain_text("Not drawn: nothing changed.", timeout=LONG)
    assert dialogs.messages == [f"{expected}. Draw them?"]
    assert len(st.versions(pid)) == 1 and st.shot_keyframes(pid)[0].candidates == []  # nothing drawn, no version
    page.locator("#keyframes_btn").click()
    expect(page.locator("#shot_progress .job")).to_have_attribute("data-state", "done", timeout=LONG)
    expect(page.locator("#board .kf-badge")).to_have_count(3)
    card = page.locator("#card_s1")
    card.locator(".kf-clear").click()  # a second small action: into the same draft
    expect(card.locator(".kf-badge")).to_have_count(0, timeout=LONG)
    assert [(n.number, n.draft) for n in st.versions(pid)] == [(1, False), (2, True)]
    page.get_by_role("tab", name="History", exact=True).click()
    node = page.locator("#vnode_2")
    expect(node).to_have_class("node current draft", timeout=LONG)
    expect(node.locator("text.kind")).to_have_text("draft")


def test_a_reference_that_re_renders_clips_asks_first(page, tmp_path, errors, tiny_models):
    """On a backend that takes references (tiny random-weight Wan with Wan VACE: the first reference of each
    character is in its shots' clip keys), an upload says how many clips it re-renders; no: nothing changes."""
    from playwright.sync_api import expect

    from app.config import load_config
    from app.studio import Studio
    from tests.ui.conftest import Server
    from tests.ui.test_browser_images import KEEPER_BOARD, picture

    wan, vace = (tiny_models(name) for name in ("wan", "wan_vace"))
    env = {"CHIEF_VIDEO_BACKEND": "diffusers", "CHIEF_VIDEO_MODEL": wan, "CHIEF_VACE_MODEL": vace}
    with Server(tmp_path / "home", tmp_path / "serve.log", env) as srv:
        studio = Studio(
            load_config(
                {"home": srv.home, "narration": False, "agents": "offline"},
                environ=env,  # the server's own settings
            )
        )
        pid = tiny(studio, tmp_path, KEEPER_BOARD, title="Asked")
        expected = studio.clips_affected(pid, "reference", name="Keeper").describe()
        assert expected == "A new reference for Keeper will re-render 1 of 3 clips (none of them rendered yet)"
        dialogs = Dialogs(page)
        dialogs.answers = [False, True]
        open_project(page, srv, pid, "Story")
        keeper = page.locator("#ref_character_0")
        expect(keeper).to_contain_text("no reference yet", timeout=LONG)
        keeper.locator("input.ref-file").set_input_files(str(picture(tmp_path / "a.png", 3)))
        expect(page.locator(".refs .refs-head .note")).to_have_text("Nothing changed.", timeout=LONG)
        assert dialogs.messages == [f"{expected}. Go on?"] and len(studio.versions(pid)) == 1
        keeper.locator("input.ref-file").set_input_files(str(picture(tmp_path / "b.png", 4)))
        expect(keeper.locator(".pics img")).to_have_count(1, timeout=LONG)
        v = studio.version(pid)
        assert len(dialogs.messages) == 2 and (v.number, v.draft) == (2, True)
        studio.db.close()
