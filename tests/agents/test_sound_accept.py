"""A sound note, refined offline and accepted through the CLI, changes what the film sounds like, measured on the
render: the music level of its scene (the music stem the render keeps) with no picture rendered again, and a
character's voice (the pitch of their line in the film, YIN)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from generation.audio.pcm import RATE, decode, rms_db
from storage.files import dump_storyboard
from tests.app.test_sound import render, sound_board, window
from tests.audio.test_voices import f0


@pytest.fixture
def project(chief, tmp_path):
    p = tmp_path / "story.yaml"
    p.write_text(dump_storyboard(sound_board()))
    return json.loads(chief("--json", "new", "--storyboard", str(p)).stdout)["project"]


def refine_and_accept(chief, project, note: str) -> tuple[dict, str]:
    chief("note", project, note)
    proposal = json.loads(chief("--json", "refine", project).stdout)
    accepted = chief("accept", project).stdout
    return proposal, accepted


def test_a_music_note_lowers_its_scenes_measured_music_and_renders_no_picture(chief, project):
    chief("film", project, "--no-ducking")  # the music stem as levelled, not moved by the lines
    before = render(chief, project)
    proposal, accepted = refine_and_accept(chief, project, "the music is too loud in scene 1")
    edits = proposal["proposal"]["edits"]
    assert [(e["op"], e["scene_id"], e["field"], e["new"]) for e in edits] == [("set_level", "a", "music_level", -6.0)]
    assert "Scene 1: music −6 dB" in accepted
    after = render(chief, project)
    assert (after["rendered"], after["reused"]) == (0, 3)  # no picture rendered again
    was, now = (rms_db(window(decode(r["files"]["music"], RATE), 0.5, 7.5)) for r in (before, after))
    print(f"scene 1's music stem: {was:.1f} dBFS before, {now:.1f} dBFS after the edit")
    assert now - was == pytest.approx(-6.0, abs=1.0)
    assert after["audio"]["cues_made"] == 1 and after["film_sha256"] != before["film_sha256"]


KEEPER_LINES = (
    "The lamp is lit tonight and the sea is calm.",
    "I have kept this light for forty long years.",
    "Bring the oil up the stairs before the dark.",
    "Listen to the bell out there beyond the rocks.",
)


@pytest.fixture
def keeper(chief, tmp_path):
    """The keeper's four lines, one a shot, no music: each line is voiced alone (Piper samples noise, so one line's
    pitch varies by about a semitone run to run; the median of four is steadier)."""
    from storage.schema import Character, Line, Scene, Shot, Storyboard

    shots = [
        Shot(shot_id=f"k{i}", prompt=f"The keeper, view {i}", duration=4.0, seed=i, characters=["Keeper"],
             dialogue=[Line(character="Keeper", line=text)])
        for i, text in enumerate(KEEPER_LINES, 1)
    ]  # fmt: skip
    board = Storyboard(
        title="Keeper",
        characters=[Character(name="Keeper", description="old man in a yellow coat")],
        scenes=[Scene(scene_id="a", shots=shots)],
        fps=8,
        width=64,
        height=36,
    )
    p = tmp_path / "keeper.yaml"
    p.write_text(dump_storyboard(board))
    return json.loads(chief("--json", "new", "--storyboard", str(p)).stdout)["project"]


def test_a_voice_note_lowers_the_measured_pitch_of_the_characters_lines(chief, keeper):
    before = render(chief, keeper)
    proposal, accepted = refine_and_accept(chief, keeper, "make the keeper sound older and deeper")
    (e,) = proposal["proposal"]["edits"]
    assert (e["op"], e["character"], e["pitch"]) == ("set_voice", "Keeper", e["old"]["pitch"] - 5)
    assert e["pace"] == pytest.approx(0.85 * e["old"]["pace"], abs=0.001)
    assert "Keeper's voice: lower (−5 semitones), slower" in accepted
    after = render(chief, keeper)
    assert after["rendered"] == 0 and after["audio"]["lines_voiced"] == 4  # no picture; every keeper line again

    def pitch(r) -> float:
        film = decode(r["film"], RATE)
        return float(np.median([f0(window(film, 4.0 * k, 4.0 * k + 4.0), RATE) for k in range(4)]))

    was, now = pitch(before), pitch(after)
    shift = 12 * np.log2(now / was)
    print(f"Keeper's lines (median of 4): {was:.1f} Hz before, {now:.1f} Hz after ({shift:+.2f} semitones, -5 asked)")
    assert -7.5 <= shift <= -2.5  # the voice moved down by about what was asked (run-to-run noise: ~1 semitone)
