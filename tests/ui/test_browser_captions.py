"""Captions and the hand-off in a real Chromium against `chief serve` on a real user's default data folder (a fake
HOME, the data folder where `chief` puts it by default, outside the system's temp folder and the working folder,
which Gradio serves from anyway): the player's track has cues and shows them by default, the CC button turns them
off and on, the player's label does not cover the picture's top band, the film downloads under its title and
version, and the hand-off zip downloads with the captions and the creator's note inside."""

from __future__ import annotations

import os
import sys
import zipfile

import pytest

from tests.process import ServerProcess, free_port
from tests.ui.conftest import ROOT, TINY_BOARD
from tests.ui.test_browser import LONG, open_project

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LINE = "Now. It has to be now."
BOARD = TINY_BOARD.replace(
    "duration: 1, seed: 1}",
    f"duration: 2, seed: 1, characters: [Keeper], dialogue: [{{character: Keeper, line: '{LINE}'}}]}}",
).replace("title: Tiny Lighthouse", "title: Ada's Lighthouse\ncharacters:\n  - {name: Keeper, description: an old man}")


class DefaultHomeServer(ServerProcess):
    """`chief serve` with no --home: the data folder is the default one under a fake HOME; the system temp folder is
    elsewhere (TMPDIR), so nothing is served only because it happens to lie under /tmp."""

    def __init__(self, base) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        fake_home, systmp = base / "home", base / "systmp"
        systmp.mkdir()
        env = {**os.environ, "HOME": str(fake_home), "TMPDIR": str(systmp), "CHIEF_NARRATION": "false"}
        env["CHIEF_AGENTS"] = "offline"
        for k in ("CHIEF_HOME", "XDG_DATA_HOME", "CHIEF_AUTH", "GRADIO_TEMP_DIR"):
            env.pop(k, None)
        from app.config import default_home

        old = os.environ.get("HOME")
        os.environ["HOME"] = str(fake_home)
        try:
            self.home = default_home()  # what the server will use
        finally:
            os.environ["HOME"] = old or ""
        assert str(self.home).startswith(str(fake_home)) and "/." in str(self.home)  # a hidden folder, as for a user
        super().__init__(
            "chief serve",
            [sys.executable, "-m", "app.cli", "serve", "--port", str(self.port)],
            base / "serve.log",
            env,
            ready_url=self.url + "config",
            timeout=90,
            cwd=ROOT,
        )


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with DefaultHomeServer(tmp_path_factory.mktemp("captions")) as srv:
        yield srv


@pytest.fixture(scope="module")
def st(server):
    from app.config import load_config
    from app.studio import Studio

    return Studio(load_config({"home": server.home, "narration": False, "agents": "offline"}, environ={}))


def project(st, tmp_path) -> str:
    from storage.files import load_storyboard

    p = tmp_path / "board.yaml"
    p.write_text(BOARD)
    return st.create_from_storyboard(load_storyboard(p)).project_id


TRACK = """(sel) => {
  const v = document.querySelector(sel);
  const t = v && v.textTracks[0];
  if (!t || !t.cues || t.cues.length === 0) return null;
  return { cues: [...t.cues].map((c) => c.text), mode: t.mode, src: v.querySelector('track').getAttribute('src') };
}"""


def test_the_player_shows_captions_with_a_cc_toggle_and_the_film_and_hand_off_download(
    server, st, page, tmp_path, errors
):
    from playwright.sync_api import expect

    pid = project(st, tmp_path)
    st.render(pid)
    st.add_note(pid, "Hold on the keeper's face", "s1")
    open_project(page, server, pid, "Render")
    expect(page.locator("#render_summary")).to_contain_text("rendered", timeout=LONG)
    got = page.wait_for_function(f"() => ({TRACK})('#film video')", timeout=LONG).json_value()
    print("track:", got)
    assert any(LINE in c for c in got["cues"]) and got["mode"] == "showing"  # on by default
    cc = page.locator("#film_cc button.cc")
    expect(cc).to_have_attribute("aria-pressed", "true")
    cc.click()
    expect(cc).to_have_attribute("aria-pressed", "false")
    assert page.evaluate("() => document.querySelector('#film video').textTracks[0].mode") == "hidden"
    cc.click()
    assert page.evaluate("() => document.querySelector('#film video').textTracks[0].mode") == "showing"

    # the player's label is not drawn over the picture (the animatic writes ANIMATIC · PREVIZ in its top band); the
    # label lets clicks through (pointer-events: none), so the boxes are compared, not what a point hits
    overlap = page.evaluate(
        """() => {
      const v = document.querySelector('#film video').getBoundingClientRect();
      return [...document.querySelectorAll('#film [data-testid=block-label]')].map((l) => l.getBoundingClientRect())
        .filter((l) => l.width && l.left < v.right && v.left < l.right && l.top < v.bottom && v.top < l.bottom)
        .map((l) => [l.left, l.top, l.right, l.bottom]);
    }"""
    )
    assert overlap == [], overlap
    page.evaluate("() => { document.querySelector('#film video').currentTime = 1.0; }")  # inside the line's cue
    shown = page.wait_for_function(
        "() => { const t = document.querySelector('#film video').textTracks[0];"
        " return t.activeCues && t.activeCues.length ? t.activeCues[0].text : null; }",
        timeout=LONG,
    ).json_value()
    assert LINE in shown
    page.locator("#film").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "render-captions.png"))

    with page.expect_download() as film_dl:
        page.locator("#film a[download]").first.click()
    assert film_dl.value.suggested_filename == "Ada-s-Lighthouse-v1.mp4"

    page.locator("#handoff_btn").click()
    expect(page.locator("#handoff_files")).to_contain_text("Ada-s-Lighthouse-v1-for-an-editor", timeout=LONG)
    expect(page.locator(".toast-body.error")).to_have_count(0)
    with page.expect_download() as zip_dl:
        page.locator("#handoff_files a").first.click()
    path = tmp_path / "handoff.zip"
    zip_dl.value.save_as(path)
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        assert {"cut.otio", "cut.edl", "cut.fcpxml", "cut.srt", "cut.vtt", "media/001_s1.mp4"} <= names, names
        assert LINE in zf.read("cut.srt").decode() and LINE in zf.read("cut.vtt").decode()
        assert "note: Hold on the keeper" in zf.read("cut.otio").decode()
    page.screenshot(path=str(tmp_path / "render-handoff.png"))

    page.get_by_role("tab", name="Screening room", exact=True).click()
    got = page.wait_for_function(f"() => ({TRACK})('#screening_film video')", timeout=LONG).json_value()
    assert any(LINE in c for c in got["cues"]) and got["mode"] == "showing"
    page.screenshot(path=str(tmp_path / "screening-captions.png"))
    print("screenshots in", tmp_path)


def test_card_fields_keep_their_labels_once_filled(server, st, page, tmp_path, errors):
    """A card's text fields are named above them, not only by a placeholder that goes once they are filled."""
    from playwright.sync_api import expect

    pid = project(st, tmp_path)
    open_project(page, server, pid, "Storyboard")
    card = page.locator("#card_s1")
    expect(card).to_be_visible(timeout=LONG)
    for field, text in (("prompt", "Keeper at the rail"), ("narration", "It was late."), ("sounds", "gulls, surf")):
        card.locator(f".f.{field} textarea").fill(text)
    card.locator(".f.description textarea").fill("The keeper looks out.")
    card.locator(".line .how").first.fill("quietly")
    labels = {}
    for field in ("prompt", "narration", "sounds", "description"):
        box = card.locator(f".f.{field}")
        assert box.locator("textarea").input_value()  # filled: its placeholder is gone
        labels[field] = box.locator(".lbl").inner_text()
        expect(box.locator(".lbl")).to_be_visible()
    assert labels == {"prompt": "Picture", "narration": "Narration", "sounds": "Sounds", "description": "Description"}
    expect(card.locator(".line .how-lbl").first).to_have_text("delivery")
    card.screenshot(path=str(tmp_path / "card-labels.png"))
