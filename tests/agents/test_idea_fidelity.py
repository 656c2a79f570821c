"""Idea fidelity on a held-out set (tests/agents/fidelity.py): every named check for every idea at 1, 3 and 10
minutes, and every note read for its intent and applied on the right shots only. Figures before/after: the module's
`report()` (python -m tests.agents.fidelity)."""

from __future__ import annotations

import pytest

from agents.offline import OfflinePlanner, OfflineRefiner
from agents.offline.idea import read_idea
from storage.schema import Note, RemoveShot
from tests.agents.fidelity import HELD_OUT, MINUTES, NOTES, idea_checks, note_checks

_BOARDS: dict[tuple[str, float], object] = {}


def _board(idea: str, minutes: float):
    key = (idea, minutes)
    if key not in _BOARDS:
        _BOARDS[key] = OfflinePlanner().plan(idea, minutes).value
    return _BOARDS[key].model_copy(deep=True)


@pytest.mark.parametrize("minutes", MINUTES)
@pytest.mark.parametrize("case", HELD_OUT, ids=[c.name for c in HELD_OUT])
def test_idea_checks(case, minutes):
    failed = [f"{name} ({why})" for name, ok, why in idea_checks(case, _board(case.idea, minutes)) if not ok]
    assert not failed, failed


@pytest.mark.parametrize("case", NOTES, ids=[n.name for n in NOTES])
def test_note_checks(case):
    board = _board(case.idea, 3)
    refine = lambda b, notes: OfflineRefiner().refine(b, notes, []).value  # noqa: E731
    failed = [f"{name} ({why})" for name, ok, why in note_checks(case, board, refine) if not ok]
    assert not failed, failed


def test_idea_reader_finds_what_each_character_is_and_the_plot():
    idea = read_idea(HELD_OUT[0].idea)
    assert [(c.name, c.kind) for c in idea.cast] == [
        ("the retired clockmaker", "person"),
        ("the clumsy brass robot apprentice", "machine"),
    ]
    assert idea.goal == "repair the frozen clock tower" and idea.obstacle == "the ice storm"
    fable = read_idea(HELD_OUT[1].idea)
    assert fable.events[-2:] == ["the hare naps halfway", "the tortoise wins"]


def test_the_fable_ends_as_the_idea_says():
    board = _board(HELD_OUT[1].idea, 3)
    climax = " ".join(s.prompt.lower() for sc in board.scenes if sc.purpose == "climax" for s in sc.shots)
    assert "the tortoise wins" in climax and "hare wins" not in climax
    told = " ".join(f"{sc.title} {sc.description}" for sc in board.scenes).lower()
    assert "find" not in told and "search" not in told  # a race, not a quest: the fable's own plot
    middle = next(sc for sc in board.scenes if sc.purpose == "midpoint")
    assert middle.title == "The hare naps halfway"  # the idea's turn is the middle of the film


def test_the_cli_does_not_load_the_lexicon_at_start():
    import subprocess
    import sys

    code = "import sys, app.cli, agents.offline.idea, agents.offline.notes; print('lemminflect' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"  # lemminflect is imported on first use, by the offline planner or refiner


def test_every_named_character_is_seen_in_a_tenth_of_a_long_film():
    board = _board(HELD_OUT[-1].idea, 10)  # three characters: the third (the bear) is named once in the idea
    shots = board.shots()
    for who in ("grandmother", "grandson", "polar bear"):
        seen = sum(who in s.prompt.lower() and any(who in c for c in s.characters) for s in shots)
        assert seen >= len(shots) // 10, (who, seen)


def test_what_a_note_removes_is_a_thing_in_the_picture_not_the_shot_or_its_line():
    board = _board(HELD_OUT[3].idea, 1)
    sid = board.shots()[2].shot_id
    p = OfflineRefiner().refine(board, [Note(text="drop the narration", shot_id=sid)], []).value
    assert not [e for e in p.edits if isinstance(e, RemoveShot)]  # the line goes, the shot stays
    p = OfflineRefiner().refine(board, [Note(text="remove the fireworks", shot_id=sid)], []).value
    assert not p.edits and any("'fireworks' is not in" in u.why for u in p.not_changed)  # said plainly
