"""The offline refiner as an assistant editor: notes scoped by shot id, scene, character, keyword or the whole film;
prompts rewritten as prompts (no note text, no ids, never against the note); critics taken only where no note
disagrees; what is left is said, briefly."""

from __future__ import annotations

import re

import pytest

from agents.offline import OfflineRefiner
from agents.offline.directions import Direction, read, write
from storage.edits import apply_edits, sanitize
from storage.schema import (
    DIMENSIONS,
    Character,
    Critique,
    CritiqueIssue,
    Note,
    Scene,
    SetCharacter,
    SetShot,
    SetStory,
    Shot,
    Storyboard,
)


@pytest.fixture
def board() -> Storyboard:
    def shot(i, prompt, **kw):
        return Shot(shot_id=f"s0{i}", prompt=prompt, duration=4, seed=i, **kw)

    return Storyboard(
        title="The Keeper and the Whale",
        logline="A keeper guides a lost whale home through a storm",
        style_guide="Painterly animated look, muted teal palette, soft film grain",
        characters=[
            Character(name="the keeper", description="the keeper: grey beard, yellow oilskin coat"),
            Character(name="the whale", description="the whale: blue-grey skin, a notch in the left fin"),
        ],
        scenes=[
            Scene(
                scene_id="arrival",
                title="Arrival",
                purpose="setup",
                shots=[
                    shot(1, "Establishing wide shot of the lighthouse at dawn, calm sea, bright morning sun"),
                    shot(
                        2,
                        "Medium shot: the keeper polishes the great lamp, warm light",
                        characters=["the keeper"],
                        narration="Every morning the keeper polished the lamp.",
                    ),
                ],
            ),
            Scene(
                scene_id="storm",
                title="The storm",
                purpose="crisis",
                shots=[
                    shot(3, "Wide shot: night storm, huge waves crash against the lighthouse, rain"),
                    shot(4, "Close-up of the keeper's face, afraid, lit by the lamp", characters=["the keeper"]),
                ],
            ),
            Scene(
                scene_id="goodbye",
                title="Goodbye",
                purpose="resolution",
                shots=[
                    shot(5, "Wide shot: the whale swims out to open sea, golden light", characters=["the whale"]),
                    shot(
                        6,
                        "Two-shot of the keeper and the whale at the harbour wall",
                        characters=["the keeper", "the whale"],
                    ),
                ],
            ),
        ],
    )


def refine(board, notes, critiques=()):
    notes = [Note(id=f"n{i}", **n) if isinstance(n, dict) else Note(id=f"n{i}", text=n) for i, n in enumerate(notes)]
    return OfflineRefiner().refine(board, notes, list(critiques)).value


def prompt_edits(p) -> dict[str, str]:
    return {e.shot_id: e.new for e in p.edits if isinstance(e, SetShot) and e.field == "prompt"}


def pasted(note: str, old: str, new: str) -> list[str]:
    """Runs of three words of the note that the new prompt has and the old one did not."""
    words = re.findall(r"[a-z0-9']+", note.lower())
    runs = [" ".join(words[i : i + 3]) for i in range(len(words) - 2)]
    return [
        r
        for r in runs
        if r in " ".join(re.findall(r"[a-z0-9']+", new.lower()))
        and r not in " ".join(re.findall(r"[a-z0-9']+", old.lower()))
    ]


def test_a_note_on_a_shot_changes_that_shot_only(board):
    p = refine(board, [{"text": "Make it scarier", "shot_id": "s03"}])
    edits = prompt_edits(p)
    assert list(edits) == ["s03"]
    assert "menacing" in edits["s03"] and "scarier" not in edits["s03"]


def test_a_shot_id_named_in_the_text_scopes_the_note_and_never_enters_the_prompt(board):
    note = "shot s05 goodbye should be more tender"
    edits = prompt_edits(refine(board, [note]))
    assert list(edits) == ["s05"]
    new = edits["s05"]
    assert "tender" in new and "s05" not in new and "shot s05" not in new and "should be" not in new
    assert not pasted(note, board.shot("s05").prompt, new)


def test_a_note_on_a_scene_changes_its_shots(board):
    edits = prompt_edits(refine(board, ["The storm scene should be scarier"]))
    assert set(edits) == {"s03", "s04"}
    assert all("menacing" in v for v in edits.values())


def test_a_keyword_finds_the_shots_it_names(board):
    edits = prompt_edits(refine(board, ["Make the waves bigger"]))
    assert list(edits) == ["s03"] and "towering" in edits["s03"]


def test_a_character_note_changes_the_character_bible(board):
    p = refine(board, ["Keep the whale gentle and curious, never threatening"])
    char = [e for e in p.edits if isinstance(e, SetCharacter)]
    assert [e.character for e in char] == ["the whale"]
    assert "gentle" in char[0].new and "curious" in char[0].new and "threatening" not in char[0].new
    neg = {e.shot_id: e.new for e in p.edits if isinstance(e, SetShot) and e.field == "negative_prompt"}
    assert neg == {"s05": "threatening", "s06": "threatening"}  # the shots the whale is in, told what to avoid
    assert not prompt_edits(p)


def test_a_film_level_style_note_changes_the_style_guide(board):
    p = refine(board, ["Make the whole film feel like a watercolour, and warmer"])
    story = [e for e in p.edits if isinstance(e, SetStory)]
    assert [e.field for e in story] == ["style_guide"]
    assert story[0].new.startswith("Watercolour look") and "warm golden tones" in story[0].new
    assert "Painterly animated look" not in story[0].new and "soft film grain" in story[0].new
    assert not prompt_edits(p)


@pytest.mark.parametrize(
    "note",
    [
        "Make the storm scarier",
        "shot s05 goodbye should be more tender",
        "The storm scene should be scarier",
        "More fog around the lighthouse",
        "The ending feels too abrupt, make it sadder",
    ],
)
def test_no_note_text_is_pasted_into_a_prompt(board, note):
    p = refine(board, [note])
    assert prompt_edits(p) or any(isinstance(e, SetShot) for e in p.edits)
    for sid, new in prompt_edits(p).items():
        assert not pasted(note, board.shot(sid).prompt, new), (note, new)
        assert not re.search(r"\bs0\d\b", new)


def critique(pid, *issues) -> Critique:
    return Critique(
        persona_id=pid,
        overall=5,
        scores={d: 5 for d in DIMENSIONS},
        keep_watching=True,
        keep_watching_reason="-",
        summary="-",
        top_issues=[
            CritiqueIssue(summary=s, urgency=4, dimension="visual_quality", shot_ids=ids, suggestion=sug)
            for s, ids, sug in issues
        ],
    )


def test_a_scarier_storm_is_never_made_brighter(board):
    crits = [
        critique(
            p,
            ("s03 is too dark to read", ["s03"], "make s03 brighter, well-lit, clear key light"),
            ("s01 is too dark", ["s01"], "make it brighter"),
        )
        for p in ("a", "b")
    ]
    p = refine(board, [{"text": "Make the storm scarier", "shot_id": "s03"}, "Make the dawn scarier too"], crits)
    edits = prompt_edits(p)
    for sid in ("s03", "s01"):
        assert "menacing" in edits[sid]
        assert not re.search(r"bright|well-lit|key light|calm|sun", edits[sid]), edits[sid]
    assert any("too dark" in u.what for u in p.not_changed)


def test_critics_are_taken_only_where_no_note_disagrees(board):
    crits = [
        critique(
            pid,
            ("s03 drags", ["s03"], write([Direction("duration", "s03", "3.0")])),
            ("s05 drags", ["s05"], write([Direction("duration", "s05", "3.0")])),
            ("s02 says what we see", ["s02"], write([Direction("unsay", "s02")])),
        )
        for pid in ("teen", "commuter")
    ]
    notes = [
        {"text": "Let it linger, make it longer", "shot_id": "s03"},
        {"text": "Keep the narration: 'He never missed a morning.'", "shot_id": "s02"},
    ]
    p = refine(board, notes, crits)
    by = {(e.shot_id, e.field): e for e in p.edits if isinstance(e, SetShot)}
    assert float(by[("s03", "duration")].new) > 4 and by[("s03", "duration")].sources == ["n0"]
    assert float(by[("s05", "duration")].new) < 4 and set(by[("s05", "duration")].sources) == {"teen", "commuter"}
    assert by[("s02", "narration")].new == "He never missed a morning."
    left = {u.what.split(":")[0]: u.why for u in p.not_changed}
    assert "note" in left["s03"] and "note" in left["s02"]
    assert all(len(u.why) <= 120 for u in p.not_changed)


def test_a_lone_low_priority_complaint_is_left_and_said_so(board):
    crit = Critique(
        persona_id="teen",
        overall=5,
        scores={d: 5 for d in DIMENSIONS},
        keep_watching=True,
        keep_watching_reason="-",
        summary="-",
        top_issues=[
            CritiqueIssue(
                summary="s04 is slow",
                urgency=2,
                dimension="pacing",
                shot_ids=["s04"],
                suggestion=write([Direction("duration", "s04", "2.0")]),
            )
        ],
    )
    p = refine(board, [], [crit])
    assert not p.edits and p.not_changed[0].why == "only teen raised it"


def test_cut_this_shot_removes_it(board):
    p = refine(board, [{"text": "Cut this shot", "shot_id": "s04"}])
    assert [(e.op, e.shot_id) for e in p.edits] == [("remove_shot", "s04")]


def test_every_edit_survives_the_shared_check_and_applies(board):
    notes = [
        "Make the storm scarier",
        "Keep the whale gentle and curious, never threatening",
        "Make the whole film feel like a watercolour",
        {"text": "Cut this shot", "shot_id": "s04"},
    ]
    p = refine(board, notes)
    kept, dropped = sanitize(p.edits, board, {f"n{i}" for i in range(len(notes))})
    assert len(kept) == len(p.edits) and not dropped
    apply_edits(board, kept)


def test_directions_read_back_what_they_write():
    ds = [
        Direction("duration", "s01", "3.5"),
        Direction("reframe", "s02", "close-up"),
        Direction("camera", "s03", "dolly_in"),
        Direction("narrate", "s04"),
        Direction("unsay", "s05"),
        Direction("include", "s06", "the whale"),
        Direction("steady", "s01"),
    ]
    durations = {f"s0{i}": 4.0 for i in range(1, 7)}
    assert read(write(ds), [], durations) == [Direction("duration", "s01", "3.5")] + ds[1:]
    loose = read("Tighten this shot and try a close-up", ["s02", "zz"], durations)
    assert loose == [Direction("duration", "s02", "3.00"), Direction("reframe", "s02", "close-up")]
