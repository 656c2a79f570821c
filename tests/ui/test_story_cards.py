"""The character bible's cards on the Story screen, below the page: a card's rename follows the character into the
shots that show them and the lines they say (keeping their references and voice); a character in shots is not
removed; a new one is added; duplicates and empty fields are refused in one line; saving the story keeps every
character's voice and references."""

from __future__ import annotations

import pytest

from app.ui.screens.story import RefAction, edited_bible, voice_words, what_they_are
from storage.schema import Character, CharacterVoice, Line, Scene, Shot, Storyboard
from tests.conftest import tiny_board


def board() -> Storyboard:
    return Storyboard(
        title="Cards",
        characters=[
            Character(name="Keeper", description="an old man", references=["a" * 64], voice=CharacterVoice(pitch=3)),
            Character(name="Whale", description="a grey whale"),
        ],
        scenes=[
            Scene(
                scene_id="a",
                shots=[
                    Shot(shot_id="s1", prompt="p", duration=2, characters=["Keeper"],
                         dialogue=[Line(character="Keeper", line="Who is there?"), Line(character="Whale", line="Me.")]),
                    Shot(shot_id="s2", prompt="q", duration=2, dialogue=[Line(character="Keeper", line="Go.")]),
                ],
            )
        ],
    )  # fmt: skip


def act(**kw) -> RefAction:
    return RefAction.model_validate(kw)


def test_a_rename_follows_the_character_into_shots_and_lines():
    new = edited_bible(board(), act(name="Keeper", action="describe", new_name="Tom", description="an old sailor"))
    tom = new.characters[0]
    assert (tom.name, tom.description, tom.references, tom.voice) == (
        "Tom",
        "an old sailor",
        ["a" * 64],
        CharacterVoice(pitch=3),
    )
    s1, s2 = new.shots()
    assert s1.characters == ["Tom"] and [ln.character for ln in s1.dialogue] == ["Tom", "Whale"]
    assert [ln.character for ln in s2.dialogue] == ["Tom"]  # off screen, still theirs
    same = edited_bible(board(), act(name="Whale", action="describe", new_name="Whale", description="a blue whale"))
    assert same.characters[1].description == "a blue whale" and same.shots() == board().shots()


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(name="Keeper", action="describe", new_name="Whale", description="x"), "Whale is in the bible already"),
        (dict(name="Keeper", action="describe", new_name=" ", description="x"), "a character needs a name and a"),
        (dict(name="Nobody", action="describe", new_name="N", description="x"), "no character 'Nobody' in this"),
        (dict(name="(new)", action="add", new_name="Whale", description="x"), "Whale is in the bible already"),
        (dict(name="(new)", action="add", new_name="Mara", description=""), "a new character needs a name and a"),
        (dict(name="Keeper", action="remove"), "Keeper is in 1 shot(s) (s1): take them out of those shots first"),
    ],
)
def test_refusals_are_one_line(kw, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        edited_bible(board(), act(**kw))


def test_add_and_remove():
    added = edited_bible(board(), act(name="(new)", action="add", new_name="Mara", description="a girl of ten"))
    assert [c.name for c in added.characters] == ["Keeper", "Whale", "Mara"]
    assert [c.name for c in edited_bible(board(), act(name="Whale", action="remove")).characters] == ["Keeper"]


def test_what_they_are_and_the_voice_in_words(studio):
    assert (what_they_are("a clumsy brass robot"), what_they_are("a grey whale"), what_they_are("xyzzy")) == (
        "a machine",
        "an animal",
        "",
    )
    cast = studio.voice_cast(board())
    assert voice_words(cast["Keeper"]) == "Piper, pitch +3, pace 1 — chosen"
    assert voice_words(cast["Whale"]).endswith("— cast from the name")


def test_saving_the_story_keeps_voices_and_references(client, studio):
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    v, _ = studio.set_voice(pid, "Keeper", {"pitch": 4.0, "pace": 1.1})
    chars = {"headers": ["name", "description"], "data": [["Keeper", "old man in a yellow coat, a grey beard"]]}
    v2, _ = client.predict(pid, v.number, "Tiny", "A keeper", "muted", chars, api_name="/save_story")
    keeper = studio.version(pid, v2).storyboard.characters[0]
    assert keeper.description.endswith("grey beard") and keeper.voice == CharacterVoice(pitch=4.0, pace=1.1)
