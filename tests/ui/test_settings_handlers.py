"""The Settings screen's handlers without a browser: `SettingsHandlers` over a real Studio, called with the values
the page's fields would send. Settings saved are read back by the screen's own load."""

from __future__ import annotations

import gradio as gr
import pytest

from app.errors import StudioError
from app.ui.screens.settings import SettingsHandlers
from app.ui.screens.settings.values import MODEL_DEFAULT, NEW_PERSONA, PERSONA_FORM, TASTES
from tests.conftest import tiny_board

OWN_PAGE = {"origin": "http://127.0.0.1:7860", "host": "127.0.0.1:7860"}


@pytest.fixture
def settings(studio):
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    return SettingsHandlers(studio), pid


def _llm(url="", key="", mode="auto", timeout=30, retries=1):
    """The LLM fields as the page sends them (SettingsHandlers.apply's order)."""
    return (url, key, "critic-m", "refiner-m", "planner-m", mode, timeout, retries, 2, 3, "low", 8, 1024, 8192)


def test_rendering_settings_are_applied_and_the_screen_reloads_them(settings, studio):
    h, pid = settings
    assert "applied for everyone on this server" in h.apply_render(12, 4.5, "fixed")
    loaded = h.load(pid, None)
    assert loaded[17:20] == (12, 4.5, "fixed")  # steps, guidance, seeds as the fields show them
    assert (studio.config.steps, studio.config.guidance, studio.config.seed_policy) == (12, 4.5, "fixed")
    h.apply_render(None, "", "random")  # empty: the model's own
    assert (studio.config.steps, studio.config.guidance) == (None, None)


def test_the_llm_is_changed_only_from_the_own_page_and_the_key_is_never_shown(settings, studio):
    h, pid = settings
    with pytest.raises(StudioError, match="own Settings page"):
        h.apply(*_llm("http://127.0.0.1:9/v1", "sk-secret"), False, False, request=None)
    assert studio.config.llm_base_url != "http://127.0.0.1:9/v1"
    key_field, status, notice = h.apply(
        *_llm("http://user:pw@127.0.0.1:9/v1", "sk-secret", "offline", 45, 2),
        True,
        False,
        request=gr.Request(headers=OWN_PAGE),
    )
    assert key_field == "" and "Applied for everyone" in notice and "sk-secret" not in status
    assert studio.config.api_key == "sk-secret" and studio.config.agents == "offline"
    loaded = h.load(pid, 1)
    assert "pw" not in loaded[1] and loaded[1].endswith("127.0.0.1:9/v1")  # credentials hidden
    assert loaded[2] == "" and loaded[3:10] == ("critic-m", "refiner-m", "planner-m", "offline", 45, 2, 2)
    assert loaded[15] is True  # the critics watch video
    assert "hidden" in loaded[0]  # "Key for the AI model: set for this server session (hidden)"


def test_the_picture_makes_a_version_once(settings, studio):
    h, pid = settings
    number, text = h.save_picture(pid, 1, "1:1 · 512×512", 12)
    board = studio.version(pid, number).storyboard
    assert number == 2 and (board.width, board.height, board.fps) == (512, 512, 12) and "12 fps" in text
    same = h.save_picture(pid, 2, "1:1 · 512×512", 12)
    assert same[1] == "v2 already has this picture: no new version."
    assert h.load(pid, 2)[-2:] == ("1:1 · 512×512", 12)
    with pytest.raises(gr.Error, match="choose one of the sizes"):
        h.save_picture(pid, 2, "7:5 · odd", 12)
    assert h.load("", None)[-2:] == (MODEL_DEFAULT, None)


def test_a_viewer_made_in_the_form_joins_the_panel_and_is_picked_again(settings, studio):
    h, pid = settings
    blank = h.pick_persona(pid, 1, NEW_PERSONA)
    assert blank[1] == NEW_PERSONA and blank[-1].visible
    words = ["Ana, a night-shift nurse", "Watches films after work", "- thrillers\n\n- quiet dramas", "", "", "", ""]
    tastes = [4.0, 0.2, 0.5, 0.5, 0.9, 0.1, 0.5, 0.3]
    assert len(words) == len(PERSONA_FORM) and len(tastes) == len(TASTES)
    number, message, pick, editing, *form = h.save_persona_form(pid, 1, NEW_PERSONA, *words, *tastes)
    assert number == 2 and editing == "ana_a_night_shift_nurse" and "saved and on the panel" in message
    assert form[2] == "thrillers\nquiet dramas"  # list marks and blank lines gone
    version = studio.version(pid, 2)
    assert editing in version.panel and studio.personas_of(version)[editing].tastes.captions == 0.9
    yaml_text, again, *_ = h.pick_persona(pid, 2, editing)
    assert again == editing and "night-shift nurse" in yaml_text
    with pytest.raises(ValueError, match="say who the persona is"):
        h.save_persona_form(pid, 2, NEW_PERSONA, "Bo", "", "", "", "", "", "", *tastes)
