"""#34.5: a stale tab cannot revert a take pick. The storyboard editor sent every shot's fields back, so tab B's
save of a prompt edit from its older page put take 2's seed back over tab A's pick (draft v16 → v17, no "branched"
warning). A save now carries only what the person changed since the page was loaded, applied onto the newest board
(`storage.edits.merge_boards`); the same field changed on both sides is refused in one line, nothing saved.

The handler tests call the real /save_storyboard event of a launched app (no browser); the last test drives two
Chromium pages."""

from __future__ import annotations

import json

import pytest
import yaml
from gradio_client.exceptions import AppError

from storage.schema import Storyboard
from tests.conftest import app_client
from tests.security.hostile_archives import BOARD

THREE_SHOTS = yaml.safe_load(BOARD)
THREE_SHOTS["scenes"][0]["shots"].append({"shot_id": "s3", "prompt": "A gull over the rocks", "duration": 1, "seed": 3})


@pytest.fixture
def app(make_studio, serve, monkeypatch):
    """(studio, gradio client, project id) with takes of s1 rendered on v1 (the shot's own seed and 2 more)."""
    monkeypatch.delenv("http_proxy", raising=False)
    monkeypatch.delenv("HTTP_PROXY", raising=False)
    studio = make_studio()
    pid = studio.create_from_storyboard(Storyboard.model_validate(THREE_SHOTS)).project_id
    studio.render_takes(pid, "s1", 2, 1)
    client = app_client(serve(studio))
    return studio, client, pid


def load(client, pid, v) -> tuple[dict, list]:
    """The editor's value (parsed) and the film options' values, as a page gets them."""
    out = client.predict(pid, v, api_name="/load_storyboard")
    return json.loads(out[0]), list(out[3:13])


def save(client, pid, v, value: dict, opts: list):
    number, _, message = client.predict(pid, v, json.dumps(value), *opts, api_name="/save_storyboard")
    return number, message


def shot(value: dict, sid: str) -> dict:
    return next(s for sc in value["scenes"] for s in sc["shots"] if s["shot_id"] == sid)


def test_a_prompt_saved_from_an_older_page_keeps_the_pick_made_since(app):
    studio, client, pid = app
    b, opts = load(client, pid, 1)  # tab B opens v1
    take = studio.shot_takes(pid, "s1", 1).takes[2]
    picked = studio.pick_take(pid, "s1", take.id, 1).version  # tab A picks take 3: draft v2
    assert picked.number == 2 and picked.draft and picked.storyboard.shot("s1").seed == take.seed
    shot(b, "s2")["prompt"] = "A whale tail in silver water"
    number, message = save(client, pid, 1, b, opts)  # tab B saves its prompt edit from v1's page
    v3 = studio.version(pid, number)
    assert (v3.number, v3.parent_number) == (3, 2) and "Branched" not in message, message
    assert v3.storyboard.shot("s1").seed == take.seed  # A's pick stands
    assert v3.storyboard.shot("s2").prompt == "A whale tail in silver water"
    assert [s.seed for s in v3.storyboard.shots()][1:] == [2, 3]


def test_a_draft_amended_in_place_since_the_page_was_loaded_keeps_the_amendment(app):
    studio, client, pid = app
    takes = studio.shot_takes(pid, "s1", 1).takes
    draft = studio.pick_take(pid, "s1", takes[1].id, 1).version  # v2, an open draft
    b, opts = load(client, pid, draft.number)  # tab B opens the draft
    again = studio.pick_take(pid, "s1", takes[2].id, draft.number).version  # tab A amends it in place
    assert again.number == draft.number and again.storyboard.shot("s1").seed == takes[2].seed
    shot(b, "s3")["prompt"] = "Two gulls over the rocks"
    number, message = save(client, pid, draft.number, b, opts)
    saved = studio.version(pid, number)
    assert saved.parent_number == draft.number and "Branched" not in message
    assert saved.storyboard.shot("s1").seed == takes[2].seed  # not take 2's seed, which B's page still showed
    assert saved.storyboard.shot("s3").prompt == "Two gulls over the rocks"


def test_film_options_set_in_another_tab_stay(app):
    studio, client, pid = app
    b, opts = load(client, pid, 1)
    studio.set_film_options(pid, {"crossfade": 0.5, "music_level": -12.0}, 1)  # another tab: v2
    shot(b, "s1")["prompt"] = "A lighthouse at dusk"
    number, _ = save(client, pid, 1, b, opts)  # B's options are as it loaded them
    film = studio.version(pid, number).storyboard.film
    assert (film.crossfade, film.music_level) == (0.5, -12.0)
    opts[2] = 0.25  # the crossfade changed on both sides: refused
    b2, _ = load(client, pid, 1)
    with pytest.raises(AppError, match=r"crossfade was changed in v3 since this page was loaded") as e:
        save(client, pid, 1, b2, opts)
    assert "\n" not in str(e.value) and [n.number for n in studio.versions(pid)] == [1, 2, 3]


def test_the_same_field_changed_on_both_sides_is_refused_and_nothing_is_saved(app):
    studio, client, pid = app
    b, opts = load(client, pid, 1)
    take = studio.shot_takes(pid, "s1", 1).takes[1]
    studio.pick_take(pid, "s1", take.id, 1)  # A: s1's seed
    shot(b, "s1")["seed"] = 12345  # B re-seeds s1 by hand
    shot(b, "s2")["prompt"] = "A whale"
    with pytest.raises(AppError, match=r"shot s1: seed was changed in v2 since this page was loaded") as e:
        save(client, pid, 1, b, opts)
    assert "\n" not in str(e.value)
    assert [n.number for n in studio.versions(pid)] == [1, 2] and studio.version(pid).storyboard.shot("s1").seed == (
        take.seed
    )


def test_an_edit_to_a_shot_removed_since_is_refused(app):
    studio, client, pid = app
    b, opts = load(client, pid, 1)
    board = studio.version(pid, 1).storyboard
    fewer = board.model_copy(update={"scenes": [board.scenes[0].model_copy(update={"shots": board.shots()[:2]})]})
    studio.save_storyboard(pid, fewer, 1)  # another tab removes s3: v2
    shot(b, "s3")["prompt"] = "Three gulls"
    with pytest.raises(AppError, match="shot s3 was removed in v2 since this page was loaded"):
        save(client, pid, 1, b, opts)
    assert len(studio.versions(pid)) == 2


def test_a_save_with_nothing_changed_on_the_page_makes_no_version(app):
    studio, client, pid = app
    b, opts = load(client, pid, 1)
    studio.pick_take(pid, "s1", studio.shot_takes(pid, "s1", 1).takes[1].id, 1)
    number, message = save(client, pid, 1, b, opts)
    assert number == 2 and "no new version" in message and len(studio.versions(pid)) == 2


@pytest.mark.browser
def test_two_tabs_a_take_picked_in_one_survives_a_prompt_saved_in_the_other(make_studio, serve, browser):
    from playwright.sync_api import expect

    from tests.security.test_web import _open_project

    studio = make_studio()
    pid = studio.create_from_storyboard(Storyboard.model_validate(THREE_SHOTS)).project_id
    take = studio.render_takes(pid, "s1", 2, 1).takes[2]
    base = serve(studio)
    tab_a = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    tab_b = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    for tab in (tab_a, tab_b):
        tab.set_default_timeout(60_000)
        _open_project(tab, base, pid)
        tab.get_by_role("tab", name="Storyboard", exact=True).click()
        expect(tab.locator("#card_s2 textarea").first).to_have_value("A whale tail in grey water")
    card = tab_a.locator("#card_s1")
    card.locator("details.takes summary").click()
    card.locator(f"figure.take[data-take='{take.id}'] .take-use").click()
    expect(tab_a.locator("#shots_message")).to_contain_text("uses take #3", timeout=60_000)
    assert studio.version(pid).number == 2 and studio.version(pid).storyboard.shot("s1").seed == take.seed

    tab_b.locator("#card_s2 textarea").first.fill("A whale tail in silver water")
    tab_b.locator("#shots_save_btn").click()
    expect(tab_b.locator("#shots_message")).to_contain_text("v3", timeout=60_000)
    v3 = studio.version(pid)
    assert (v3.number, v3.parent_number) == (3, 2)
    assert v3.storyboard.shot("s1").seed == take.seed  # B's page still showed seed 1: the pick stands
    assert v3.storyboard.shot("s2").prompt == "A whale tail in silver water"
    expect(tab_b.locator("#shots_message")).not_to_contain_text("Branched")
