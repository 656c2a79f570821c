"""The film's sound in the web app, in a real Chromium against `chief serve`: a character's voice changed and
previewed on the Story screen's card (the preview is the line voiced with the controls' pitch and pace, and
faster at a faster pace), the timeline's
dialogue/music/effects lanes after a render with lines (and one line when the film is silent), and the music soloed
in the Screening room (the audio served measured: the music at its level in the film, no dialogue in a line's
window). Screenshots go to a temporary folder (or $CHIEF_TEST_SCREENSHOTS)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest

from app.services.audio import PREVIEW_LINE
from generation.audio.pcm import RATE, decode, rms_db
from generation.audio.voices import Voices
from storage.schema import Character, CharacterVoice, Line, Scene, Shot, Storyboard
from tests.ui.conftest import TINY_BOARD
from tests.ui.test_browser import LONG, open_project, server, st, tiny  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEEPER = "The lamp is lit tonight."  # 5 words: 2 s at 2.5 words a second, in a 4-s shot


@pytest.fixture
def snap(page, tmp_path):
    folder = Path(os.environ.get("CHIEF_TEST_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(exist_ok=True)
    return lambda name: page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def sound_board() -> Storyboard:
    """Scene a: a line over the cue (s1), then the cue alone (s2); scene b: silence (s3)."""
    return Storyboard(
        title="Sound",
        characters=[
            Character(name="Keeper", description="an old man in a yellow coat"),
            Character(name="Brass", description="a clumsy brass robot with lenses"),
        ],
        scenes=[
            Scene(
                scene_id="a",
                music="low cello, slow and sad",
                shots=[
                    Shot(
                        shot_id="s1",
                        prompt="A lighthouse keeper",
                        duration=4.0,
                        seed=1,
                        characters=["Keeper"],
                        dialogue=[Line(character="Keeper", line=KEEPER)],
                    ),  # fmt: skip
                    Shot(shot_id="s2", prompt="The sea at dusk", duration=4.0, seed=2),
                ],
            ),
            Scene(scene_id="b", shots=[Shot(shot_id="s3", prompt="Night", duration=4.0, seed=3)]),
        ],
        fps=8,
        width=64,
        height=36,
    )


def served_path(url: str) -> Path:
    """The file behind a same-origin media URL (gradio_api/file=PATH)."""
    return Path(unquote(url.split("file=", 1)[1]))


def test_change_a_voice_and_preview_it(server, st, page, tmp_path, errors, snap):  # noqa: F811
    from playwright.sync_api import expect

    pid = st.create_from_storyboard(sound_board()).project_id
    open_project(page, server, pid, "Story")
    brass = page.locator("#ref_character_1")
    expect(brass.locator(".kind")).to_have_text("a machine", timeout=LONG)  # what they are, from the description
    words = brass.locator(".voice-words")
    cast = st.voices(pid)["Brass"].voice
    pitch = f"pitch {cast.pitch:+g}" if cast.pitch else "natural pitch"
    expect(words).to_have_text(f"Voice: Piper, {pitch}, pace {round(cast.pace, 2):g} — cast from the name")
    assert (cast.pitch, round(cast.pace, 2)) == (5.0, 1.05)  # the second name's cast voice: shown rounded

    def preview() -> Path:
        audio = brass.locator("audio.voice-preview")
        old = audio.get_attribute("src") or ""
        brass.locator("button.voice-play").click()
        page.wait_for_function(
            "([a, old]) => a.src && a.src !== old && a.readyState >= 1 && a.duration > 0.5",
            arg=[audio.element_handle(), page.evaluate("u => new URL(u, location.href).href", old) if old else ""],
            timeout=LONG,
        )
        return served_path(audio.get_attribute("src"))

    brass.locator("input.voice-pitch").fill("0")
    brass.locator("input.voice-pace").fill("1")
    plain = preview()
    brass.locator("input.voice-pitch").fill("7")
    brass.locator("input.voice-pace").fill("1.2")
    tried = preview()
    # Lines are kept by (engine, voice, text, delivery) in the server's sound cache (this session's, see
    # tests/conftest.py): the line Piper spoke for the preview is found under the voice the controls set, exactly.
    lines = Voices(Path(os.environ["CHIEF_SOUND_CACHE"]) / "lines", None)
    asked = lines.speak(PREVIEW_LINE, CharacterVoice(pitch=7.0, pace=1.2), "", None)
    assert not asked.made and asked.path.read_bytes() == tried.read_bytes()
    short, long = (len(decode(p, RATE)) / RATE for p in (tried, plain))
    print(f"preview at pace 1: {long:.2f} s, at pace 1.2: {short:.2f} s")
    assert short < 0.9 * long  # faster, as asked
    assert brass.locator("select.voice-engine").count() == 0  # no speech endpoint set: Piper only
    snap("story_voice_preview")
    assert len(st.versions(pid)) == 1  # a preview keeps nothing

    brass.locator("button.voice-use").click()
    expect(page.locator("#status_bar")).to_contain_text("Sound · v2", timeout=LONG)
    expect(page.locator("#ref_character_1 .voice-words")).to_have_text("Voice: Piper, pitch +7, pace 1.2 — chosen")
    expect(page.locator("#references .refs-head .note")).to_contain_text(
        "v2: Brass's voice is Piper, pitch +7, pace 1.2"
    )
    assert st.version(pid).storyboard.characters[1].voice == CharacterVoice(pitch=7, pace=1.2)
    assert st.version(pid).storyboard.characters[0].voice is None  # the other character keeps the cast voice
    snap("story_voice")

    brass = page.locator("#ref_character_1")
    brass.locator("input.voice-pitch").fill("30")
    brass.locator("button.voice-play").click()
    note = brass.locator(".voice-note.err")
    expect(note).to_have_text("voice: pitch: Input should be less than or equal to 12", timeout=LONG)
    brass.locator("button.voice-use").click()
    expect(page.locator(".toast-body.error")).to_contain_text("pitch", timeout=LONG)
    assert len(st.versions(pid)) == 2  # nothing written on refusal


def test_the_lanes_appear_after_a_render_with_lines(server, st, page, tmp_path, errors, snap):  # noqa: F811
    from playwright.sync_api import expect

    silent = tiny(st, tmp_path, TINY_BOARD, title="Silent")
    st.render(silent)
    pid = st.create_from_storyboard(sound_board()).project_id
    st.render(pid)
    open_project(page, server, silent, "Render")
    expect(page.locator("#render_strip .cell")).to_have_count(3, timeout=LONG)
    expect(page.locator("#render_strip .no-sound")).to_have_text(
        "No sound in this film: no line, narration, music or sounds to hear."
    )
    expect(page.locator("#render_strip .lane")).to_have_count(0)

    open_project(page, server, pid, "Render")
    lanes = page.locator("#render_strip .lane")
    expect(lanes).to_have_count(3, timeout=LONG)
    assert [lane.get_attribute("data-stem") for lane in lanes.all()] == ["dialogue", "music", "effects"]
    peak = {lane.get_attribute("data-stem"): lane.locator("svg") for lane in lanes.all()}
    dialogue, music = (float(peak[k].get_attribute("data-peak-db")) for k in ("dialogue", "music"))
    assert dialogue > -20 and music > -40  # the line and the cue, drawn from the render's stems
    expect(page.locator("#render_strip .lane.effects .silent-lane")).to_have_text("silent: nothing on this stem")
    assert float(peak["dialogue"].get_attribute("data-seconds")) == pytest.approx(12.0, abs=0.1)
    assert page.locator("#render_strip .lane input.hear").count() == 0  # solo and mute are the Screening room's
    cells = [c.bounding_box() for c in page.locator("#render_strip .cell").all()]
    wave = peak["music"].bounding_box()
    assert cells[0]["x"] == pytest.approx(wave["x"], abs=1)  # each shot above its own seconds of sound
    assert cells[1]["x"] == pytest.approx(wave["x"] + wave["width"] * 4 / 12, abs=1)
    assert cells[2]["x"] + cells[2]["width"] == pytest.approx(wave["x"] + wave["width"], abs=1)
    snap("render_lanes")


def test_solo_the_music_in_the_screening_room(server, st, page, tmp_path, errors, snap):  # noqa: F811
    from playwright.sync_api import expect

    pid = st.create_from_storyboard(sound_board()).project_id
    info = st.render(pid)
    open_project(page, server, pid, "Screening room")
    video = page.locator("#screening_film video")
    expect(page.locator("#screening_strip .lane")).to_have_count(3, timeout=LONG)
    page.wait_for_function("v => v.readyState >= 1", arg=video.element_handle(), timeout=LONG)
    film_src = video.evaluate("v => v.currentSrc")
    video.evaluate("v => { v.currentTime = 5.0; }")
    page.locator("#screening_strip .lane.music button.solo").click()
    expect(page.locator("#screening_strip .lanes")).to_have_attribute("data-heard", "music", timeout=LONG)
    expect(page.locator("#screening_strip .hearing")).to_have_text("Hearing music only (dialogue, effects muted).")
    page.wait_for_function("v => v.readyState >= 1", arg=video.element_handle(), timeout=LONG)
    src = video.get_attribute("src")
    assert src != film_src
    assert video.evaluate("v => v.currentTime") == pytest.approx(5.0, abs=0.3)  # the same place in the film
    checks = [b.is_checked() for b in page.locator("#screening_strip input.hear").all()]
    assert checks == [False, True, False]
    snap("screening_solo")

    heard = decode(served_path(src), RATE)
    film = decode(st.film_path(info), RATE)
    files = st.media_paths(info)
    dialogue, music = decode(files["dialogue"], RATE), decode(files["music"], RATE)

    def level(x, t0, t1):
        return rms_db(x[round(t0 * RATE) : round(t1 * RATE)])

    frames = np.array([level(dialogue, t, t + 0.05) for t in np.arange(0, 4, 0.05)])
    spoken = np.flatnonzero(frames > frames.max() - 20) * 0.05
    line = (spoken.min() + 0.05, spoken.max())  # the line's window, from the dialogue stem
    alone = (5.0, 7.0)  # s2: the cue with no line over it
    gain = level(heard, *alone) - level(music, *alone)
    print(
        f"line {line[0]:.2f}-{line[1]:.2f} s: film {level(film, *line):.1f}, soloed {level(heard, *line):.1f}, "
        f"music stem {level(music, *line):.1f} dBFS; cue alone: film {level(film, *alone):.1f}, soloed "
        f"{level(heard, *alone):.1f} dBFS (gain {gain:+.1f} dB)"
    )
    assert level(heard, *alone) == pytest.approx(level(film, *alone), abs=1.0)  # the music at its level in the film
    assert level(heard, *line) == pytest.approx(level(music, *line) + gain, abs=2.0)  # the ducked music only...
    assert level(film, *line) - level(heard, *line) >= 15  # ...and none of the line the film has there

    page.locator("#screening_strip .lane.dialogue input.hear").check()
    expect(page.locator("#screening_strip .lanes")).to_have_attribute("data-heard", "dialogue,music", timeout=LONG)
    page.locator("#screening_strip .lane.effects input.hear").check()
    expect(page.locator("#screening_strip .hearing")).to_have_text("Hearing the film's mix.", timeout=LONG)
    page.wait_for_function("v => v.readyState >= 1", arg=video.element_handle(), timeout=LONG)
    assert video.evaluate("v => v.src") == film_src  # the film itself, as first played


def test_a_speech_endpoint_voice_is_chosen_on_the_card(tmp_path, page, errors):
    """With a speech endpoint set, the card offers the engine: ▶ asks the endpoint for the line in the voice named,
    and "Use this voice" stores it."""
    from playwright.sync_api import expect

    from app.config import load_config
    from app.studio import Studio
    from tests.audio.test_voices import SpeechServer
    from tests.ui.conftest import Server

    with SpeechServer() as speech:
        env = {"CHIEF_SPEECH_BASE_URL": speech.base_url, "CHIEF_SPEECH_MODEL": "kokoro"}
        with Server(tmp_path / "home", tmp_path / "serve.log", env) as srv:
            st = Studio(load_config({"home": srv.home, "narration": False, "agents": "offline"}, environ={}))
            pid = st.create_from_storyboard(sound_board()).project_id
            open_project(page, srv, pid, "Story")
            keeper = page.locator("#ref_character_0")
            keeper.locator("select.voice-engine").select_option("speech")
            keeper.locator("input.voice-speaker").fill("af_bella")
            keeper.locator("button.voice-play").click()
            page.wait_for_function(
                "a => a.src && a.readyState >= 1", arg=keeper.locator("audio").element_handle(), timeout=LONG
            )
            (asked,) = speech.requests
            assert asked["path"] == "/v1/audio/speech"
            assert (asked["body"]["voice"], asked["body"]["input"], asked["body"]["model"]) == (
                "af_bella",
                PREVIEW_LINE,
                "kokoro",
            )
            assert len(st.versions(pid)) == 1
            keeper.locator("button.voice-use").click()
            expect(page.locator("#ref_character_0 .voice-words")).to_have_text(
                "Voice: speech endpoint, voice af_bella, pace 1 — chosen", timeout=LONG
            )
            voice = st.version(pid).storyboard.characters[0].voice
            assert (voice.engine, voice.speaker, len(st.versions(pid))) == ("speech", "af_bella", 2)


def test_the_bible_is_edited_on_its_cards(server, st, page, tmp_path, errors, snap):  # noqa: F811
    """A card renames a character (their shot and line follow), another card adds one; each is one version."""
    from playwright.sync_api import expect

    pid = st.create_from_storyboard(sound_board()).project_id
    open_project(page, server, pid, "Story")
    keeper = page.locator("#ref_character_0")
    expect(keeper.locator("input.char-name")).to_have_value("Keeper", timeout=LONG)
    expect(keeper.locator("button.char-save")).to_be_hidden()  # nothing to save yet
    keeper.locator("input.char-name").fill("Tom")
    keeper.locator("textarea.char-desc").fill("an old sailor in a yellow coat")
    keeper.locator("button.char-save").click()
    expect(page.locator("#references .refs-head .note")).to_have_text("v2: Keeper is Tom now.", timeout=LONG)
    board = st.version(pid, 2).storyboard
    assert (board.characters[0].name, board.characters[0].description) == ("Tom", "an old sailor in a yellow coat")
    s1 = board.shots()[0]
    assert s1.characters == ["Tom"] and s1.dialogue[0].character == "Tom"

    add = page.locator("#ref_add_character")
    add.locator("input.char-name").fill("Mara")
    add.locator("textarea.char-desc").fill("a girl of ten with a red scarf")
    add.locator("button.char-add").click()
    expect(page.locator("#ref_character_2 input.char-name")).to_have_value("Mara", timeout=LONG)
    expect(page.locator("#ref_character_2 .kind")).to_have_text("a person")
    expect(page.locator("#status_bar")).to_contain_text("Sound · v3")
    assert [c.name for c in st.version(pid, 3).storyboard.characters] == ["Tom", "Brass", "Mara"]

    page.once("dialog", lambda d: d.accept())
    page.locator("#ref_character_0 button.char-remove").click()  # Tom is in s1: refused, nothing written
    expect(page.locator(".toast-body.error")).to_contain_text("Tom is in 1 shot(s) (s1)", timeout=LONG)
    assert len(st.versions(pid)) == 3
    snap("story_cards")


def test_a_line_is_played_on_its_card_as_the_film_speaks_it(server, st, page, tmp_path, errors, snap):  # noqa: F811
    from playwright.sync_api import expect

    pid = st.create_from_storyboard(sound_board()).project_id
    open_project(page, server, pid, "Storyboard")
    row = page.locator("#card_s1 .lines .line").first
    expect(row.locator("input.said")).to_have_value(KEEPER, timeout=LONG)
    cache = Path(os.environ["CHIEF_SOUND_CACHE"]) / "lines"

    def play(said) -> Path:
        audio = row.locator("audio.line-audio")
        n = int(audio.get_attribute("data-plays") or 0)
        row.locator("button.play-line").click()
        page.wait_for_function(
            "([a, n]) => +(a.dataset.plays || 0) > n && a.readyState >= 1 && a.duration > 0.5",
            arg=[audio.element_handle(), n],
            timeout=LONG,
        )
        expect(row.locator(".heard")).to_have_text(said)
        return served_path(audio.get_attribute("src"))

    first = play(re.compile("voiced now|from the sound cache"))
    # The line as the render voices it: Keeper's cast voice, from the session's sound cache, exactly.
    cast = st.voices(pid)["Keeper"].voice
    line = Voices(cache, None).speak(KEEPER, cast, "")  # the stored voice itself: one type, one unit
    assert not line.made and line.path.read_bytes() == first.read_bytes()
    heard = decode(first, RATE)
    seconds, level = len(heard) / RATE, rms_db(heard)
    print(f"Keeper's line played on the card: {seconds:.2f} s at {level:.1f} dBFS RMS")
    assert 1.0 < seconds < 4.0 and level > -35.0  # 5 words, said and heard
    kept = sorted(cache.rglob("*.wav"))
    assert play("from the sound cache") == first and sorted(cache.rglob("*.wav")) == kept  # nothing voiced again

    row.locator("input.said").fill(KEEPER + " Bring the whale home before the storm.")  # unsaved
    row.locator("input.how").fill("whispered")
    edited = decode(play("voiced now"), RATE)
    print(f"edited and whispered: {len(edited) / RATE:.2f} s at {rms_db(edited):.1f} dBFS RMS")
    assert len(edited) > 1.6 * len(heard) and rms_db(edited) < level - 3  # the new words, said quietly
    assert len(sorted(cache.rglob("*.wav"))) == len(kept) + 1
    snap("card_line_play")
    assert len(st.versions(pid)) == 1  # playing keeps nothing
    row.locator("input.said").fill("")
    row.locator("button.play-line").click()
    expect(row.locator(".heard.err")).to_have_text("Type the line first.")
