"""The Story screen's handlers without a browser: `StoryHandlers` (title, logline, style; the API's table of the
bible) and `ReferencesHandlers` (the bible's cards) over a real Studio, called with the values the page sends."""

from __future__ import annotations

import json

import gradio as gr
import pytest

from app.server.jobs import Jobs, in_process
from app.ui.screens.story import ReferencesHandlers, StoryHandlers
from tests.conftest import tiny_board


@pytest.fixture
def story(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    return StoryHandlers(studio), ReferencesHandlers(studio, Jobs(runner=in_process(studio))), pid


def _card(action: str, **fields) -> gr.EventData:
    return gr.EventData(None, {"action": action, **fields})


def test_the_form_saves_a_version_and_keeps_the_bible(story, studio):
    h, _, pid = story
    assert h.load(pid, 1)[:3] == ("Tiny", "A keeper and a whale", "muted colours")
    number, message = h.save_page(pid, 1, "The Keeper", "A keeper, a whale, a storm", "muted colours")
    board = studio.version(pid, number).storyboard
    assert number == 2 and message.startswith("Saved as v2 (child of v1)")
    assert (board.title, board.logline) == ("The Keeper", "A keeper, a whale, a storm")
    assert [c.name for c in board.characters] == ["Keeper"]  # the cards' bible, untouched by the form
    number, _ = h.save_story(
        pid, 2, "The Keeper", "x", "y", [["Keeper", "old man"], ["Whale", "a blue whale"], ["", ""]]
    )
    assert [(c.name, c.description) for c in studio.version(pid, number).storyboard.characters] == [
        ("Keeper", "old man"),
        ("Whale", "a blue whale"),
    ]


def test_the_cards_rename_add_and_refuse_what_would_break_a_shot(story, studio):
    _, refs, pid = story
    first = next(refs.load_refs(pid, 1))
    assert [c["name"] for c in json.loads(first[3])["subjects"]] == ["Keeper"]
    *_, number, shown, _, said = next(
        refs.act(pid, 1, _card("describe", name="Keeper", new_name="Ada", description="a keeper in a red coat"))
    )
    board = studio.version(pid, number).storyboard
    assert number == 2 and said == "Editing v2" and [c["name"] for c in json.loads(shown)["subjects"]] == ["Ada"]
    assert [s.characters for s in board.shots() if s.characters] == [["Ada"], ["Ada"]]  # carried into the shots
    *_, number, _, _, _ = next(
        refs.act(pid, 2, _card("add", name="(new)", new_name="Whale", description="a blue whale"))
    )
    assert [c.name for c in studio.version(pid, number).storyboard.characters] == ["Ada", "Whale"]
    with pytest.raises(ValueError, match=r"Ada is in 2 shot\(s\) \(s2, s4\)"):
        next(refs.act(pid, number, _card("remove", name="Ada")))
    with pytest.raises(ValueError, match="reload the page"):
        next(refs.act(pid, number, _card("explode", name="Ada")))
    assert "not measured" in refs.measure_now(pid, number).lower()
