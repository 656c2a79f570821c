"""The Draft/Final switch sticks (issue 57.7): a render at the Render screen's switched tier, or the Storyboard's
switch flipped, keeps the tier in the project's film options, so the switch shows it again after a reload (the next load), on the other screen and on every
later version; a board's unsaved edits are carried over to the version it makes."""

from __future__ import annotations

import json

import pytest

from app.server.jobs import Jobs, in_process
from app.ui import scenes
from app.ui.screens.render.handlers import RenderHandlers
from app.ui.screens.storyboard import StoryboardHandlers
from generation.animatic import AnimaticBackend
from storage.schema import FilmOptions
from tests.conftest import tiny_board


def _shown(radio_and_note) -> str:
    radio, _ = radio_and_note
    return radio.value


def test_a_render_at_the_switched_tier_keeps_it_across_a_reload_and_new_versions(studio):
    pid = studio.create_from_storyboard(tiny_board(3)).project_id
    render, board = (
        RenderHandlers(studio, Jobs(runner=in_process(studio))),
        StoryboardHandlers(studio, Jobs(runner=in_process(studio))),
    )
    assert _shown(render.default_tier(pid, 1)) == "final"
    list(render.do_render(pid, 1, scenes.WHOLE, "draft"))  # the switch on Draft, then Render
    assert studio.version(pid).number == 2 and render.kept_version(pid, 1) == 2  # the page follows v2
    assert {r.tier for r in studio.render_info(pid, 2).shots} == {"draft"}
    assert _shown(render.default_tier(pid, 2)) == "draft"  # what a reload shows
    assert _shown(board.default_tier(pid, 2)) == "draft"  # and the Storyboard's switch
    w, _ = studio.edit_shot(pid, "s2", [("prompt", "A tern over the rocks")], 2)
    assert _shown(render.default_tier(pid, w.number)) == "draft"  # a later version keeps it
    list(render.do_render(pid, w.number, scenes.WHOLE, "draft"))  # rendered at the tier it has: no new version
    assert studio.version(pid).number == w.number and not isinstance(render.kept_version(pid, w.number), int)
    list(render.do_render(pid, w.number, scenes.WHOLE, "final"))  # the creator finalises
    assert _shown(render.default_tier(pid, w.number + 1)) == "final"


def test_the_boards_switch_keeps_the_tier_and_the_unsaved_edits(studio):
    pid = studio.create_from_storyboard(tiny_board(3)).project_id
    h = StoryboardHandlers(studio, Jobs(runner=in_process(studio)))
    value = next(h.load(pid, 1))[0]
    data = json.loads(value)
    data["scenes"][0]["shots"][0]["prompt"] = "An unsaved lighthouse"
    number, editor, options_tier, _ = h.keep_tier(pid, 1, json.dumps(data), "draft")
    assert number == 2 and studio.version(pid, 2).storyboard.film.tier == "draft"
    assert options_tier.value == "draft"  # the film options' radio: the next Save keeps draft
    assert json.loads(editor)["carried_from"] == f"{pid}:v1"  # the page carries its unsaved edits to v2
    assert studio.version(pid, 2).storyboard.shots()[0].prompt != "An unsaved lighthouse"  # still unsaved
