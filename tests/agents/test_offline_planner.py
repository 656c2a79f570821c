"""The offline planner: characters read from the idea, a beat sheet scaled to the length, a shot grammar with every
prompt distinct, no invented danger, narration that tells the story, durations that add up."""

from __future__ import annotations

import re

import pytest

from agents.offline import OfflinePlanner
from agents.offline.lexicon import THREATS
from agents.offline.story import BEATS, SHORT_BEATS
from agents.offline.words import READ_WPS, shot_type

# idea -> (the characters it should have, words that must not become characters)
IDEAS = {
    "A lighthouse keeper befriends a lost whale during the autumn storms": (
        ["the lighthouse keeper", "the lost whale"],
        ["storms", "autumn"],
    ),
    "A young cartographer discovers a map of a city that doesn't exist.": (
        ["the young cartographer"],
        ["discovers", "map", "city"],
    ),
    "The city wakes up after a long winter.": (["the night watchman"], ["city", "winter"]),
    "A chef perfects the soup for the king's birthday.": (["the chef", "the king"], ["soup", "birthday"]),
    "Mara, a retired pilot, builds a glider in her barn to fly over the mountains one last time.": (
        ["Mara"],
        ["glider", "barn", "mountains", "pilot"],
    ),
    "Old Tom and his dog Biscuit search the beach for a lost ring.": (["Old Tom", "Biscuit"], ["beach", "ring"]),
    "A girl in a red coat follows a fox through the snowy forest at night.": (
        ["the girl", "the fox"],
        ["coat", "forest"],
    ),
    "Two robots fall in love in a junkyard.": (["the two robots"], ["junkyard", "love"]),
    "A talking teapot escapes from a busy kitchen.": (["the talking teapot"], ["kitchen", "escapes"]),
    "In Paris, a lonely violinist plays for the pigeons every morning.": (
        ["the lonely violinist", "the pigeons"],
        ["paris", "morning"],
    ),
}
DEMO = next(iter(IDEAS))


@pytest.mark.parametrize("idea", list(IDEAS))
def test_characters_are_who_the_idea_names(idea):
    board = OfflinePlanner().plan(idea, 1).value
    names = [c.name for c in board.characters]
    want, never = IDEAS[idea]
    assert names == want
    for word in never:
        assert not any(word in n.lower().split() for n in names), f"{word!r} became a character in {names}"
    bible = set(names)
    for shot in board.shots():
        assert set(shot.characters) <= bible
        assert not re.search(
            r"\b[A-Z][a-z]+ [A-Z][a-z]+ [A-Z][a-z]+s\b", shot.prompt
        )  # no "The Young Cartographer Discovers"


def test_what_the_idea_says_about_a_character_is_in_the_bible():
    board = OfflinePlanner().plan("Mara, a retired pilot, builds a glider in her barn.", 1).value
    assert "retired pilot" in board.characters[0].description
    girl = OfflinePlanner().plan("A girl in a red coat follows a fox through the snowy forest.", 1).value.characters[0]
    assert "red coat" in girl.description and "anorak" not in girl.description  # her clothes are the idea's


@pytest.mark.parametrize("minutes", [1, 3, 10])
@pytest.mark.parametrize("idea", list(IDEAS))
def test_every_prompt_is_distinct_and_durations_add_up(idea, minutes):
    board = OfflinePlanner().plan(idea, minutes).value
    prompts = [s.prompt for s in board.shots()]
    assert len(set(prompts)) == len(prompts)
    assert abs(board.duration() - minutes * 60) <= minutes * 60 * 0.01
    assert all(0.5 <= s.duration <= 12 for s in board.shots())
    assert len({round(s.duration, 1) for s in board.shots()}) >= min(len(prompts), 4)  # varied lengths
    assert len({s.camera for s in board.shots()}) >= 3


@pytest.mark.parametrize("minutes", [1, 3, 10])
def test_beats_are_covered_and_scenes_are_placed(minutes):
    board = OfflinePlanner().plan(DEMO, minutes).value
    beats = [sc.purpose for sc in board.scenes]
    assert list(dict.fromkeys(beats)) == list(BEATS)
    places = {loc.name for loc in board.locations}
    assert all(sc.location in places for sc in board.scenes)
    assert len(board.scenes) >= (7 if minutes < 3 else 10 if minutes == 10 else 7)
    first = [shot_type(sc.shots[0].prompt) for sc in board.scenes]
    assert all(kind in ("establishing", "wide") for kind in first)  # every scene opens by showing where we are
    kinds = {shot_type(s.prompt) for s in board.shots()}
    assert {"establishing", "medium", "close-up"} <= kinds
    if minutes >= 3:
        assert {"reaction", "insert"} <= kinds


def test_a_very_short_film_keeps_the_four_essential_beats():
    board = OfflinePlanner().plan(DEMO, 0.25).value
    assert [sc.purpose for sc in board.scenes] == list(SHORT_BEATS)
    assert abs(board.duration() - 15) <= 0.15


@pytest.mark.parametrize("idea", [i for i in IDEAS if i != DEMO])
def test_no_danger_the_idea_does_not_suggest(idea):
    board = OfflinePlanner().plan(idea, 3).value
    text = " ".join(f"{s.prompt} {s.narration}" for s in board.shots()).lower()
    invented = {w for w in re.findall(r"[a-z]+", text) if w in THREATS}
    assert not invented


def test_the_danger_the_idea_names_arrives_at_the_crisis():
    board = OfflinePlanner().plan(DEMO, 1).value
    crisis = [s for sc in board.scenes if sc.purpose in ("crisis", "climax") for s in sc.shots]
    assert any("storm" in s.prompt for s in crisis)
    assert not any("storm" in s.prompt for sc in board.scenes if sc.purpose == "setup" for s in sc.shots)


@pytest.mark.parametrize("idea", list(IDEAS))
def test_narration_tells_the_story_at_a_readable_pace(idea):
    board = OfflinePlanner().plan(idea, 1).value
    lines = [s.narration for s in board.shots() if s.narration]
    assert len(lines) >= len(board.scenes) // 2
    titles = {sc.title for sc in board.scenes}
    assert not set(lines) & titles and len(set(lines)) == len(lines)
    assert all(len(line.split()) >= 3 and line.endswith(".") for line in lines)
    for s in board.shots():
        assert len(s.narration.split()) <= s.duration * READ_WPS + 1e-9


def test_a_long_idea_is_read_not_pasted():
    sentence = "The keeper rows out past the rocks to find the whale again, and the sea is calm. "
    idea = ("A lighthouse keeper befriends a lost whale. " + sentence * 300)[:20_000]
    board = OfflinePlanner().plan(idea, 2).value
    assert len(board.logline) <= 300 and all(len(s.narration) <= 200 for s in board.shots())
    assert board.characters[0].name == "the lighthouse keeper"
    with pytest.raises(ValueError, match="at most 20,000"):
        OfflinePlanner().plan("word " * 5000, 1)


@pytest.mark.parametrize("bad", [0.1, 1441])
def test_length_is_bounded(bad):
    """The planner's own bounds; the app keeps to max_film_minutes before it asks (tests/app/test_cli_servers.py)."""
    with pytest.raises(ValueError, match="between 0.25 and 1440 minutes"):
        OfflinePlanner().plan(DEMO, bad)


def test_empty_idea_is_refused():
    with pytest.raises(ValueError, match="empty"):
        OfflinePlanner().plan("   ", 1)


@pytest.mark.parametrize("minutes", [1, 3])
def test_lines_fit_their_shots_with_a_cue_per_scene_and_sounds_per_shot(minutes):
    from storage.schema import WORDS_PER_SECOND

    idea = "A lighthouse keeper and a stranger weather the autumn storms"
    board = OfflinePlanner().plan(idea, minutes).value
    lines = [(s, ln) for s in board.shots() for ln in s.dialogue]
    talking = [sc for sc in board.scenes if any(s.dialogue for s in sc.shots)]
    assert len(talking) > len(board.scenes) / 2  # most scenes have something said
    for shot, ln in lines:
        assert ln.words() / WORDS_PER_SECOND <= shot.duration, (shot.shot_id, ln.line, shot.duration)
        assert ln.character in ("the lighthouse keeper", "the stranger") and ln.delivery
        assert not shot.narration  # a line never shares its shot with the narration
    assert {ln.character for _, ln in lines} == {"the lighthouse keeper", "the stranger"}  # both speak
    on_screen = [ln for shot, ln in lines if not shot.off_screen(ln)]
    assert len(on_screen) >= len(lines) / 2  # a line goes on a shot that shows its speaker when there is one
    assert all(sc.music for sc in board.scenes) and len({sc.music for sc in board.scenes}) >= min(5, len(board.scenes))
    assert all(s.sounds for s in board.shots())
    crisis = [s for sc in board.scenes if sc.purpose == "crisis" for s in sc.shots]
    assert all("storm" in s.sounds or "thunder" in s.sounds for s in crisis) and crisis
    assert all(not s.long_lines() for s in board.shots())


def test_animals_do_not_talk():
    board = OfflinePlanner().plan("A lighthouse keeper befriends a lost whale during the autumn storms", 2).value
    assert {ln.character for s in board.shots() for ln in s.dialogue} == {"the lighthouse keeper"}
