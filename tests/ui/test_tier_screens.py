"""Drafts and finals on the web app's screens (issue 32), through the app's own endpoints (gradio_client against a
launched app) and its handlers' parts: the Render screen's Draft/Final switch, a film of mixed tiers saying which
shots are drafts (the Render summary, its shot table and clip list, the strip's badges in the Render screen and the
Screening room, the storyboard's cards), the project's default tier in the film options, Finalize's typed action."""

from __future__ import annotations

import json
import re

import pytest

from tests.ui.test_api import create

pytestmark = pytest.mark.slow  # several renders through the launched app


def _badges(strip: str) -> set[str]:
    """The shots whose strip cell carries the draft badge."""
    cells = re.findall(r"<div class='cell[^']*'[^>]*data-shot='(\w+)' data-tier='(\w+)'[^>]*>(.*?)</div>", strip)
    assert cells, strip[:400]
    return {s for s, tier, inner in cells if "class='tier'>draft<" in inner and tier == "draft"}


def test_a_draft_render_then_one_final_shot_is_labelled_on_every_screen(client, board_file, studio):
    from app.ui.common import md

    pid, v = create(client, board_file)
    _, _, summary, strip, shots, picks = client.predict(pid, v, "", "draft", api_name="/render")
    assert "**drafts**: every shot a draft" in summary and "draft (the animatic" not in summary
    assert [r[3] for r in shots["data"]] == ["draft"] * 3  # the table's tier column
    assert _badges(strip) == {"s1", "s2", "s3"}
    assert all(label.endswith("draft)") for label, _ in picks["choices"])

    # one shot finalised (what a card's Finalize runs): the film is cut again, and it says which shots are drafts
    studio.render(pid, v, scope=studio.scope(pid, v, shots="s2"), tier="final")
    _, _, summary, strip, shots, _ = client.predict(pid, v, api_name="/render_info")
    assert f"**drafts**: {md('2 of 3 shots drafts (s1, s3)')}: finalise them" in summary
    assert [r[3] for r in shots["data"]] == ["draft", "final", "draft"]
    assert _badges(strip) == {"s1", "s3"}
    _, film, strip, *_ = client.predict(pid, v, api_name="/screening")
    assert _badges(strip) == {"s1", "s3"}  # the Screening room's strip
    assert film["label"].endswith("2 of 3 shots drafts (s1, s3)")

    cards = json.loads(client.predict(pid, v, api_name="/load_storyboard")[0])["scenes"][0]["shots"]
    assert {s["shot_id"]: s["tier"] for s in cards} == {"s1": "draft", "s2": "final", "s3": "draft"}
    assert all(s["thumb"] for s in cards)  # a draft's clip is shown on its card (the project's default is final)

    # a draft render keeps the finalised shot final; a final render of the whole film leaves no draft badge
    _, _, summary, strip, shots, _ = client.predict(pid, v, "", "draft", api_name="/render")
    assert [r[2:4] for r in shots["data"]] == [["reused", "draft"], ["reused", "final"], ["reused", "draft"]]
    _, _, summary, strip, shots, _ = client.predict(pid, v, "", "final", api_name="/render")
    assert "**drafts**" not in summary and "every shot final" in summary and _badges(strip) == set()


def test_the_projects_default_tier_is_set_in_the_film_options_and_used_when_no_tier_is_asked(
    client, board_file, studio
):
    pid, v = create(client, board_file)
    data = client.predict(pid, v, api_name="/load_storyboard")[0]
    opts = (False, 2, 0, False, "web", -8, -14, True, "sdh", False)
    nv, _, msg = client.predict(pid, v, data, *opts, "draft", api_name="/save_storyboard")
    assert nv == 2 and studio.version(pid, nv).storyboard.film.tier == "draft"
    _, _, summary, _, shots, _ = client.predict(pid, nv, api_name="/render")  # no tier asked: the project's
    assert [r[3] for r in shots["data"]] == ["draft"] * 3 and "every shot a draft" in summary
    data = client.predict(pid, nv, api_name="/load_storyboard")[0]
    nv3, _, _ = client.predict(pid, nv, data, *opts[:9], True, api_name="/save_storyboard")  # no tier sent
    assert studio.version(pid, nv3).storyboard.film.tier == "draft"  # left as it was, not reset to final


def test_the_tier_note_says_each_recipe_the_default_and_what_a_final_keeps(studio):
    from app.ui.common import md
    from app.ui.widgets import tier_note

    note = tier_note(studio, "draft")
    assert md("draft: the animatic draws both tiers alike") in note and md("final: the animatic") in note
    assert "renders **draft** unless switched" in note and "keeps the same seed, keyframe and take" in note


def test_finalize_asks_for_one_shot_or_one_scene_and_nothing_else():
    from app.ui.screens.storyboard import Finalize

    assert Finalize.of({"shot_id": "s2"}).shot_id == "s2"
    assert Finalize.of({"scene_id": "a"}).scene_id == "a"
    for bad in ({}, {"shot_id": "s1", "scene_id": "a"}, {"shot_id": "../x"}, {"scene_id": "a" * 41}, ["s1"], None):
        with pytest.raises(ValueError, match="^the storyboard sent a Finalize it cannot ask for: reload the page$"):
            Finalize.of(bad)


def test_a_finalize_outcome_and_the_status_bar_say_which_shots_are_drafts_still(studio):
    from app.ui.board_media import outcome
    from app.ui.common import md, status_line
    from tests.conftest import tiny_board

    pid = studio.create_from_storyboard(tiny_board(3)).project_id
    studio.render(pid, tier="draft")
    record = studio.render(pid, scope=studio.scope(pid, None, None, "s3"), tier="final")
    made, text, _ = outcome(record)
    assert made is None and text == "v1 rendered: 1 shot(s) rendered, 2 reused; " + md("2 of 3 shots drafts (s1, s2).")
    assert "(1 rendered, 2 reused, 2 of 3 shots drafts)" in status_line(studio, pid, 1)  # the status bar
    record = studio.render(pid, tier="final")
    assert outcome(record)[1].endswith("every shot final.")
    assert "(2 rendered, 1 reused)" in status_line(studio, pid, 1)


def test_the_mix_is_chosen_in_the_film_options_and_left_as_it_was_when_not_sent(client, board_file, studio):
    """The film options' Mix (the twin of `chief film P --channels`): the page shows the stored choice, a save that
    sends mono makes a mono version, and a save that sends none keeps what was stored."""
    pid, v = create(client, board_file)
    loaded = client.predict(pid, v, api_name="/load_storyboard")
    assert "stereo" in loaded  # the page is shown the stored mix (stereo by default)
    opts = (False, 2, 0, False, "web", -8, -14, True, "sdh", False)
    nv, _, _ = client.predict(pid, v, loaded[0], *opts, None, "mono", api_name="/save_storyboard")
    assert studio.version(pid, nv).storyboard.film.channels == "mono"
    data = client.predict(pid, nv, api_name="/load_storyboard")[0]
    nv2, _, _ = client.predict(pid, nv, data, *opts[:9], True, api_name="/save_storyboard")  # no mix sent
    assert nv2 != nv and studio.version(pid, nv2).storyboard.film.channels == "mono"
