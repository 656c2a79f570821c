"""The Storyboard's handlers without a browser: `StoryboardHandlers` over a real Studio and the server's real jobs,
called with the values the page would send (the board's JSON, the film options, a card's event data)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import gradio as gr
import pytest

from app.server.jobs import Jobs, in_process
from app.ui.screens.storyboard import StoryboardHandlers
from tests.conftest import job_ended, tiny_board

OPTIONS = (False, 2, 0, False, "web", -8, -14, True, "sdh", False)  # the film options as the page sends them


@pytest.fixture
def board(studio):
    """(handlers, project id, the loaded editor value) for a 4-shot project at v1."""
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    h = StoryboardHandlers(studio, Jobs(runner=in_process(studio)))
    first = next(h.load(pid, 1))
    return h, pid, first[0]


def _edited(value: str, shot_id: str, **fields) -> str:
    data = json.loads(value)
    for sc in data["scenes"]:
        for s in sc["shots"]:
            if s["shot_id"] == shot_id:
                s.update(fields)
    return json.dumps(data)


def test_load_gives_the_board_and_its_film_options(board):
    h, pid, value = board
    first = next(h.load(pid, 1))
    data = json.loads(first[0])
    assert [s["shot_id"] for sc in data["scenes"] for s in sc["shots"]] == ["s1", "s2", "s3", "s4"]
    assert data["key"] == f"{pid}:v1" and data["project"] == pid
    assert first[2] == "v1: 4 shots in 2 scene(s), 4s"
    assert first[3:7] == (False, 2.0, 0.0, False)  # title card, its seconds, crossfade, burn: as saved


def test_save_makes_a_version_with_only_the_edit_and_nothing_changed_makes_none(board, studio):
    h, pid, value = board
    number, fresh, message = h.save_board(pid, 1, _edited(value, "s2", prompt="A gull over the rock"), *OPTIONS)
    assert number == 2 and message.startswith("Saved as v2 (child of v1)")
    saved = studio.version(pid, 2).storyboard
    assert saved.shot("s2").prompt == "A gull over the rock"
    assert saved.shot("s1").prompt == studio.version(pid, 1).storyboard.shot("s1").prompt
    assert json.loads(fresh)["saved_from"] == f"{pid}:v1"  # the browser's kept edits for v1 are done with
    again = h.save_board(pid, 2, fresh, *OPTIONS)
    assert again[2] == "Nothing changed since v2: no new version."


def test_film_options_are_saved_and_reloaded(board, studio):
    h, pid, value = board
    opts = (True, 3.5, 0.5, True, "ebu", -10, -20, False, "plain", False)
    number, *_ = h.save_board(pid, 1, value, *opts, "draft", "mono")
    film = studio.version(pid, number).storyboard.film
    assert (film.title_card, film.title_seconds, film.crossfade, film.loudness, film.tier, film.channels) == (
        True,
        3.5,
        0.5,
        "ebu",
        "draft",
        "mono",
    )
    reloaded = next(h.load(pid, number))
    assert reloaded[3:15] == (True, 3.5, 0.5, True, "ebu", -10.0, -20.0, False, "plain", False, "draft", "mono")
    switch, note = h.default_tier(pid, number)
    assert switch.value == "draft" and "renders **draft** unless switched" in note


def test_keyframes_are_refused_over_unsaved_edits(board):
    h, pid, value = board
    edited = _edited(value, "s1", prompt="something else")
    with pytest.raises(ValueError, match=r"save the storyboard first: .* the saved version \(v1\)"):
        next(h.draw_keyframes(pid, 1, edited, "(all scenes)"))
    with pytest.raises(ValueError, match=r"no keyframe yet \(s1, s2, s3, s4\)"):
        next(h.screen_keyframes(pid, 1))
    declined = list(h.draw_keyframes(pid, 1, "(not confirmed)", "(all scenes)"))
    assert declined[0][4] == "Not drawn: nothing changed."


def test_a_shot_renders_as_the_card_has_it_without_saving(board, studio):
    h, pid, value = board
    edited = _edited(value, "s3", prompt="A red boat in fog", duration=0.5)
    steps = list(h.render_shot(pid, 1, edited, "draft", gr.EventData(None, {"shot_id": "s3"})))
    progress, job_id, _, shown, text, clip = steps[-1]
    assert "data-state='done'" in progress and job_id
    assert Path(clip).is_file() and text.startswith("Shot s3 rendered")
    assert json.loads(shown)["scenes"][1]["shots"][0]["prompt"] == "A red boat in fog"  # the draft stays on the page
    assert studio.version(pid, None).number == 1  # nothing saved
    # Play finds the clip of the shot as the card has it, and none for a shot never rendered
    assert h.play(pid, 1, edited, gr.EventData(None, {"shot_id": "s3"})) == clip


def test_stop_asks_the_boards_running_job_and_finalize_refuses_an_unclear_request(board):
    h, pid, value = board
    go = threading.Event()

    def waits(progress, cancel):
        go.wait()
        cancel.raise_if_cancelled()

    job, started = h.jobs.start("keyframes", pid, waits, label="keyframes for 1 shot(s)", version=1)
    assert started
    h.stop_job(pid, "")  # no job id on the page (a reload): the board's running job is found by its kind
    assert job.cancel.cancelled and job.desc == "stopping…"
    go.set()
    assert job_ended(h.jobs, job) and job.state == "stopped"
    with pytest.raises(ValueError, match="reload the page"):  # a shot and a scene at once
        next(h.finalize(pid, 1, value, gr.EventData(None, {"shot_id": "s1", "scene_id": "a"})))
