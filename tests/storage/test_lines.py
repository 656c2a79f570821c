"""A shot's dialogue as lines, a scene's music, a shot's sounds: reading text dialogue from before lines, edits with
their caps, subtitles, and the clip keys that lines must never change."""

from __future__ import annotations

import json
import sqlite3

import pytest
from pydantic import ValidationError

from generation.base import clip_key
from storage.edits import apply_edits, diff_storyboards, sanitize
from storage.schema import Limits, Line, SetShot, Shot, Storyboard, lines_from_script, script
from tests.conftest import tiny_board

# ----------------------------------------------------------------------------------- text dialogue


def test_text_dialogue_is_attributed():
    shot = Shot(
        prompt="the quay at night",
        characters=["Mara"],
        dialogue="Tom (shouting over the wind): Cast off!\nHold the rope\n: somebody, far away\nthe captain said: go",
    )
    assert shot.dialogue == [
        Line(character="Tom", line="Cast off!", delivery="shouting over the wind"),  # "NAME (delivery): text"
        Line(character="Mara", line="Hold the rope"),  # no name: the shot's single character
        Line(character="", line="somebody, far away"),  # ": text" is said by nobody named
        Line(character="Mara", line="the captain said: go"),  # lower-case words before a colon are no name
    ]
    assert Shot(prompt="x", characters=["A", "B"], dialogue="Hello").dialogue == [Line(line="Hello")]
    assert Shot(prompt="x", dialogue="").dialogue == []
    assert lines_from_script(script(shot.dialogue), shot.characters) == shot.dialogue  # the script round-trips


def test_subtitles_name_an_off_screen_speaker_only():
    shot = Shot(
        prompt="x",
        characters=["Mara"],
        dialogue=[Line(character="Mara", line="Who is there?"), Line(character="Tom", line="Only me.")],
    )
    assert shot.subtitles() == ["Who is there?", "Tom: Only me."]
    assert Shot(prompt="x", narration="Night fell.").subtitles() == ["Night fell."]


def test_a_line_longer_than_its_shot_is_flagged_not_cut():
    shot = Shot(prompt="x", duration=2.0, dialogue=[Line(line="one two three four five"), Line(line="a b c d e f")])
    assert shot.long_lines() == [2]  # 5 words / 2.5 = 2.0 s fits; 6 words = 2.4 s does not
    assert shot.dialogue[1].line == "a b c d e f"


def test_a_stored_version_with_text_dialogue_still_opens(studio):
    pid = studio.create_from_storyboard(tiny_board(3)).project_id
    con = sqlite3.connect(studio.config.db_path)
    (raw,) = con.execute("SELECT storyboard FROM versions WHERE project_id = ?", (pid,)).fetchone()
    board = json.loads(raw)
    board["scenes"][1]["shots"][0]["dialogue"] = "Keeper: Not tonight."  # as CHIEF stored it before lines
    del board["scenes"][1]["music"]
    con.execute("UPDATE versions SET storyboard = ? WHERE project_id = ?", (json.dumps(board), pid))
    con.commit()
    con.close()
    v = studio.version(pid)
    assert v.storyboard.shot("s2").dialogue == [Line(character="Keeper", line="Not tonight.")]
    assert v.storyboard.scenes[1].music == ""


# ----------------------------------------------------------------------------------- the clip key


def test_sound_fields_never_change_a_clip_key(studio):
    """Keys of tiny_board(3) with text dialogue, computed by CHIEF before lines, sounds and music existed: a clip
    rendered then is reused now, and lines, sounds and music change no key."""
    before = [
        "ee7af330b083b4df3af3517fb4d885e434f6afc6d0d51d35e0b7de5c25887d29",
        "3f8a10f7b935ec8c29ef37a2ecb37e55af683709431e3b92efe9a1c324a04fa7",
        "e7b4a66b049d453a55be18262c9be78b089c221d8331d172a207295053c0bd64",
    ]
    backend = studio.backend

    def keys(board: Storyboard) -> list[str]:
        clips = studio._clips
        reqs = [clips.request_for(board, i, continuity=False) for i in range(len(board.shots()))]
        return [clip_key(backend, backend.resolve(r)) for r in reqs]

    old = tiny_board(3, shot_overrides={1: {"dialogue": "Keeper (whispered): Not tonight."}})
    assert keys(old) == before
    louder = old.model_copy(deep=True)
    louder.scenes[0].music = "low cello drone, 60 bpm"
    louder.scenes[1].shots[0].sounds = "rain on the lamp-room glass"
    louder.scenes[1].shots[0].dialogue = [Line(character="Whale", line="Come to the sea.", delivery="far off")]
    assert keys(louder) == before
    moved = old.model_copy(deep=True)
    moved.scenes[1].shots[0].prompt = "the keeper climbs the stairs in the dark"
    assert keys(moved)[1] != before[1]  # the picture's own fields still do


# ----------------------------------------------------------------------------------- edits


def test_dialogue_music_and_sounds_are_edits():
    board = tiny_board(3)
    edits = [
        {"op": "set", "shot_id": "s2", "field": "dialogue", "new": "Keeper (softly): Steady now.", "rationale": "r"},
        {"op": "set", "shot_id": "s2", "field": "sounds", "new": "wind in the gallery", "rationale": "r"},
        {"op": "set", "shot_id": "s3", "field": "music", "new": "taiko drums, 120 bpm", "rationale": "r"},
    ]
    kept, dropped = sanitize(edits, board)
    assert not dropped and [e.old for e in kept] == ["", "", ""]
    after = apply_edits(board, kept)
    assert after.shot("s2").dialogue == [Line(character="Keeper", line="Steady now.", delivery="softly")]
    assert after.shot("s2").sounds == "wind in the gallery"
    assert after.scene_of("s3").music == "taiko drums, 120 bpm" and after.scenes[0].music == ""
    diff = diff_storyboards(board, after)
    s2 = next(c for c in diff.shots if c.shot_id == "s2")
    assert s2.fields["dialogue"] == ("", "Keeper (softly): Steady now.")
    assert diff.story["music b"] == ("", "taiko drums, 120 bpm")
    again, _ = sanitize(
        [
            {
                "op": "set",
                "shot_id": "s2",
                "field": "dialogue",
                "new": script(after.shot("s2").dialogue),
                "rationale": "r",
            }
        ],
        after,
    )
    assert again == []  # the same lines: no edit


def test_line_edits_keep_their_caps():
    board = tiny_board(3)
    long_line = {"op": "set", "shot_id": "s2", "field": "dialogue", "new": "Keeper: " + "x" * 2001, "rationale": "r"}
    music = {"op": "set", "shot_id": "s2", "field": "music", "new": "m" * 1001, "rationale": "r"}
    talky = {
        "op": "set",
        "shot_id": "s2",
        "field": "dialogue",
        "new": "\n".join(f"Keeper: line {i}" for i in range(13)),
        "rationale": "r",
    }
    kept, dropped = sanitize([long_line, music], board)
    assert kept == [] and len(dropped) == 2
    assert "line is invalid" in dropped[0].why and "at most 1000" in dropped[1].why
    kept, dropped = sanitize([talky], board, limits=Limits())
    assert kept == [] and "max_shot_lines (12)" in dropped[0].why
    assert Limits(max_shot_lines=13).problem(apply_edits(board, [SetShot(**talky)])) is None


def test_a_line_is_one_line_and_never_empty():
    assert Line(line="  two\n words ").line == "two words"
    with pytest.raises(ValidationError):
        Line(line="   ")


def test_a_storyboard_file_with_text_dialogue_loads(tmp_path):
    from storage.files import load_storyboard

    p = tmp_path / "old.yaml"
    p.write_text(
        "title: Old\nscenes:\n  - shots:\n"
        '      - {prompt: the quay, characters: [Mara], dialogue: "Cast off!\\nTom (far off): Wait!"}\n'
    )
    shot = load_storyboard(p).shots()[0]
    assert shot.dialogue == [
        Line(character="Mara", line="Cast off!"),
        Line(character="Tom", line="Wait!", delivery="far off"),
    ]
    assert shot.subtitles() == ["Cast off!", "Tom: Wait!"] and shot.sounds == ""


def test_a_storyboard_file_that_lists_a_shots_sounds_loads(tmp_path):
    """`sounds: [wind, rain]` reads as the words "wind, rain" (each item a phrase, as the captions' tags split them);
    a list holding anything but text is still refused."""
    from generation.subtitles import sound_tags
    from storage.files import load_storyboard

    p = tmp_path / "listed.yaml"
    p.write_text(
        "title: Listed\nscenes:\n  - shots:\n"
        "      - {prompt: the quay, sounds: [gulls crying, '  distant   thunder ', '', halyards clanking]}\n"
        "      - prompt: the quay at night\n        sounds:\n          - surf\n          - a foghorn\n"
    )
    first, second = load_storyboard(p).shots()
    assert first.sounds == "gulls crying, distant thunder, halyards clanking"
    assert sound_tags(first.sounds) == ["[gulls crying]", "[distant thunder]", "[halyards clanking]"]
    assert second.sounds == "surf, a foghorn"
    with pytest.raises(ValidationError, match="sounds"):
        Shot(prompt="x", sounds=["wind", {"rain": 1}])
