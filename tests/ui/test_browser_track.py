"""A creator's track uploaded on a scene header in a real Chromium against `chief serve`: the scene then says
"uploaded track" and the version holds it; a file that is not audio is refused in one line, nothing saved or
stored; the ✕ takes it away. The same from the film options for a track under the whole film."""

from __future__ import annotations

import pytest

from generation.video_io import run_ffmpeg
from tests.ui.test_browser import LONG, open_project, server, st, tiny  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def media_files(home) -> set[str]:
    return {p.name for p in (home / "media").rglob("*.*")}


def test_a_track_uploaded_on_the_scene_header_is_labelled_and_kept(server, st, page, tmp_path, errors):  # noqa: F811
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Scene track")
    wav = tmp_path / "theme.wav"
    run_ffmpeg(["-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2", str(wav)])
    open_project(page, server, pid, "Storyboard")
    header = page.locator("#board section.scene[data-scene=a] header")
    expect(header.locator(".track-upload")).to_be_visible(timeout=LONG)
    expect(header.locator(".track-label")).to_have_count(0)
    header.locator("input.track-file").set_input_files(str(wav))
    expect(page.locator("#shots_message")).to_contain_text("scene a plays the uploaded track", timeout=LONG)
    expect(header.locator(".track-label")).to_have_text("♫ uploaded track")
    v = st.version(pid)
    assert v.number == 2 and len(v.storyboard.scenes[0].music_track) == 64
    expect(page.locator("#status_bar")).to_contain_text("v2")

    header.locator(".track-clear").click()
    expect(page.locator("#shots_message")).to_contain_text("its cue plays again", timeout=LONG)
    expect(header.locator(".track-label")).to_have_count(0)
    assert st.version(pid).number == 3 and st.version(pid).storyboard.scenes[0].music_track == ""


def test_a_file_that_is_not_audio_is_refused_in_one_line(server, st, page, tmp_path, errors):  # noqa: F811
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Not a track")
    fake = tmp_path / "theme.wav"
    fake.write_text("this is not a sound\n" * 100)
    open_project(page, server, pid, "Storyboard")
    header = page.locator("#board section.scene[data-scene=a] header")
    expect(header.locator(".track-upload")).to_be_visible(timeout=LONG)
    before = media_files(server.home)
    header.locator("input.track-file").set_input_files(str(fake))
    toast = page.locator(".toast-body.error")
    expect(toast).to_contain_text("track refused: theme.wav: not an audio file", timeout=LONG)
    assert "\n" not in toast.first.inner_text().split("track refused:")[1].strip()
    assert len(st.versions(pid)) == 1 and media_files(server.home) == before  # nothing written
    expect(header.locator(".track-label")).to_have_count(0)


def test_a_track_under_the_whole_film_from_the_film_options(server, st, page, tmp_path, errors):  # noqa: F811
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Film track")
    fake = tmp_path / "score.wav"
    fake.write_text("this is not a sound\n" * 100)
    wav = tmp_path / "score.flac"
    run_ffmpeg(["-y", "-f", "lavfi", "-i", "sine=frequency=330:sample_rate=44100:duration=3", str(wav)])
    open_project(page, server, pid, "Storyboard")
    label, clear = page.locator("#film_track_label"), page.locator("#film_track_clear")
    expect(page.locator("#film_track_btn")).to_be_visible(timeout=LONG)
    expect(clear).to_be_hidden()
    expect(label).to_have_text("No track of yours under the whole film: each scene's cue or track plays.")

    def upload(path) -> None:
        with page.expect_file_chooser() as chooser:
            page.locator("#film_track_btn").click()
        chooser.value.set_files(str(path))

    before = media_files(server.home)
    upload(fake)
    toast = page.locator(".toast-body.error")
    expect(toast).to_contain_text("track refused: score.wav: not an audio file", timeout=LONG)
    assert "\n" not in toast.first.inner_text().split("track refused:")[1].strip()
    assert len(st.versions(pid)) == 1 and media_files(server.home) == before  # nothing written
    expect(clear).to_be_hidden()

    upload(wav)
    expect(page.locator("#shots_message")).to_contain_text(
        "the uploaded track plays under the whole film", timeout=LONG
    )
    expect(label).to_have_text("♫ uploaded track under the whole film")
    expect(clear).to_be_visible()
    v = st.version(pid)
    assert v.number == 2 and len(v.storyboard.film.music_track) == 64
    assert not any(sc.music_track for sc in v.storyboard.scenes)  # the film's, not a scene's
    expect(page.locator("#status_bar")).to_contain_text("v2")

    clear.click()
    expect(page.locator("#shots_message")).to_contain_text("no track under the whole film", timeout=LONG)
    expect(label).to_contain_text("No track of yours under the whole film")
    expect(clear).to_be_hidden()
    assert st.version(pid).number == 3 and st.version(pid).storyboard.film.music_track == ""


def test_a_track_placed_with_unsaved_edits_makes_its_own_version_and_keeps_the_edits(
    server,  # noqa: F811
    st,  # noqa: F811
    page,
    tmp_path,
    errors,
):
    """No "save first": the track goes on the saved version (a version of its own, made in one step), and the card
    edits not saved yet stay on the board, unsaved, over that version; saving then keeps both."""
    from playwright.sync_api import expect

    pid = tiny(st, tmp_path, title="Track over edits")
    wav = tmp_path / "theme.wav"
    run_ffmpeg(["-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2", str(wav)])
    open_project(page, server, pid, "Storyboard")
    prompt = page.locator("#card_s2 .prompt textarea")
    expect(prompt).to_be_visible(timeout=LONG)
    prompt.fill("A whale tail in silver water")
    expect(page.locator("#board .dirty")).to_contain_text("1 unsaved change")
    header = page.locator("#board section.scene[data-scene=a] header")
    header.locator("input.track-file").set_input_files(str(wav))
    expect(page.locator("#shots_message")).to_contain_text("scene a plays the uploaded track", timeout=LONG)
    expect(page.locator("#shots_message")).to_contain_text("unsaved edits stay unsaved")
    v2 = st.version(pid)
    assert v2.number == 2 and len(v2.storyboard.scenes[0].music_track) == 64
    assert v2.storyboard.shots()[1].prompt == "A whale tail in grey water"  # the edit is not saved by the track
    expect(header.locator(".track-label")).to_have_text("♫ uploaded track")
    expect(prompt).to_have_value("A whale tail in silver water")
    expect(page.locator("#board .dirty")).to_contain_text("1 unsaved change")
    page.locator("#shots_save_btn").click()
    expect(page.locator("#board .dirty")).to_contain_text("Saved", timeout=LONG)
    v3 = st.version(pid)
    assert v3.number == 3 and v3.storyboard.shots()[1].prompt == "A whale tail in silver water"
    assert v3.storyboard.scenes[0].music_track == v2.storyboard.scenes[0].music_track
