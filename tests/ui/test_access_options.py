"""The captions and audio-description film options (issue 24 items 5, 6) are the same from `chief film` and from the
web app's film options (the storyboard screen's save handler, through the Gradio API): the same version, shown
back by the storyboard's loader. A shot's description is edited on its card (Chromium)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from app.cli import main
from tests.conftest import tiny_board
from tests.ui.test_browser import server, st  # noqa: F401  (the served app and its studio, shared fixtures)
from tests.ui.test_use_cases import _studio


def test_captions_and_the_described_track_are_the_same_from_the_cli_and_the_web(tmp_path, client, studio):
    home = tmp_path / "cli"
    cli_studio = _studio(home)
    cli_pid = cli_studio.create_from_storyboard(tiny_board(2)).project_id
    cli_studio.db.close()
    web_pid = studio.create_from_storyboard(tiny_board(2)).project_id

    out = CliRunner().invoke(
        main, ["--home", str(home), "--json", "film", cli_pid, "--captions", "plain", "--audio-description"]
    )
    assert out.exit_code == 0, out.output
    made = json.loads(out.stdout)
    assert made["film"]["captions"] == "plain" and made["film"]["audio_description"] is True

    loaded = client.predict(web_pid, 1, api_name="/load_storyboard")
    assert loaded[11:13] == ("sdh", False)  # the defaults shown: SDH captions, no described track
    value, v = loaded[0], studio.version(web_pid).number
    client.predict(
        web_pid, v, value, False, 2, 0, False, "web", -8, -14, True, "plain", True, api_name="/save_storyboard"
    )
    a, b = _studio(home).version(cli_pid).storyboard, studio.version(web_pid).storyboard
    assert (b.film.captions, b.film.audio_description) == ("plain", True)
    assert a == b
    assert client.predict(web_pid, 2, api_name="/load_storyboard")[11:13] == ("plain", True)


def test_the_storyboard_card_edits_a_shots_description(server, st, page, tmp_path, errors):
    """The card's description field: shown, edited, saved in a new version (the web twin of `chief edit
    description=`); what the card does not show of the shot is kept."""
    from playwright.sync_api import expect

    from tests.ui.test_browser import LINES_BOARD, LONG, load, open_project

    p = tmp_path / "lines.yaml"
    p.write_text(LINES_BOARD.replace("sounds: gulls}", "sounds: gulls, description: The keeper at the lamp.}"))
    pid = st.create_from_storyboard(load(p)).project_id
    open_project(page, server, pid, "Storyboard")
    field = page.locator("#card_s1 .description textarea")
    expect(field).to_have_value("The keeper at the lamp.", timeout=LONG)
    expect(page.locator("#card_s2 .description textarea")).to_have_value("")
    field.fill("The keeper <b>lights</b> the lamp.")
    page.locator("#shots_save_btn").click()
    expect(page.locator("#shots_message")).to_contain_text("Saved as v2", timeout=LONG)
    board = st.version(pid, 2).storyboard
    assert board.shot("s1").description == "The keeper <b>lights</b> the lamp."  # text, never HTML
    assert board.shot("s1").sounds == "gulls" and board.shot("s2").description == ""
