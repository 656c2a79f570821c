"""The Screening room's handlers without a browser: `ScreeningHandlers` over a real Studio and the server's real
jobs, called with the values the page would send."""

from __future__ import annotations

import gradio as gr
import pytest

from app.server.jobs import Jobs, in_process
from app.ui.screens.screening import ScreeningHandlers
from app.ui.screens.screening.values import SCENE, WHOLE_FILM, hearing
from tests.conftest import tiny_board


@pytest.fixture
def room(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    return ScreeningHandlers(studio, Jobs(runner=in_process(studio))), pid


def test_notes_on_the_film_a_scene_and_a_shot_are_added_edited_and_deleted(room, studio):
    h, pid = room
    assert h.add_note(pid, 1, "Make the storm scarier", WHOLE_FILM) == ("", [h.note_rows(pid, 1)[0]], "Note added.")
    h.add_note(pid, 1, "Longer whale", "s4")
    _, rows, _ = h.add_note(pid, 1, "Slower opening", SCENE + "a")
    assert [(r["text"], r["about"]) for r in rows] == [
        ("Make the storm scarier", "whole film"),
        ("Longer whale", "about shot s4"),
        ("Slower opening", "about scene a"),
    ]
    rows, message = h.edit_note(pid, 1, rows[1]["id"], "A longer whale shot")
    assert message == "Note saved." and [n.text for n in studio.notes(pid, 1)][1] == "A longer whale shot"
    rows, message = h.delete_note(pid, 1, rows[0]["id"])
    assert message == "Note deleted." and [r["text"] for r in rows] == ["A longer whale shot", "Slower opening"]
    with pytest.raises(gr.Error, match="write the note first"):
        h.add_note(pid, 1, "   ", WHOLE_FILM)
    with pytest.raises(gr.Error, match="delete it instead"):
        h.edit_note(pid, 1, rows[0]["id"], "")
    assert len(studio.notes(pid, 1)) == 2  # the refusals wrote nothing


def test_load_offers_the_scenes_and_shots_and_says_nothing_is_rendered(room):
    h, pid = room
    progress, film, strip, cards, _, earlier, notes, about, message = next(h.load(pid, 1))
    assert about.choices[0] == (WHOLE_FILM, WHOLE_FILM) and ("scene a · A", SCENE + "a") in about.choices
    assert [c[1] for c in about.choices[-4:]] == ["s1", "s2", "s3", "s4"]
    assert progress == "" and notes == [] and earlier == ""
    assert h.load_diversity(pid, 1) == ""  # no critiques: no diversity line
    assert h.load_diversity("", None) == ""


def test_the_critics_watch_the_rendered_film_and_their_cards_show(room, studio):
    h, pid = room
    studio.render(pid, 1)
    steps = list(h.critique(pid, 1, ""))
    progress, cards, _ = steps[-1]
    assert "data-state='done'" in progress
    crits = studio.critiques(pid, 1)
    assert crits and cards.count("class='critic-card'") == len(crits)
    for c in crits:
        assert f"data-persona='{c.persona_id}'" in cards
    # the strip's server function: one stem heard, or a refusal in one line
    info = studio.render_info(pid, 1)
    assert "error" in hearing(studio)({"project": pid, "version": 1, "render": "other", "stems": ["music"]})
    heard = hearing(studio)(
        {"project": pid, "version": 1, "render": info.id, "stems": ["dialogue", "music", "effects"]}
    )
    assert heard.get("note") == "Hearing the film's mix." and heard["url"].startswith("gradio_api/file=")
