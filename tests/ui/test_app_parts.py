"""The app's parts without a browser: table <-> storyboard, the version tree, settings, `chief serve` guards."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from app.ui.history import tree_text
from app.ui.storyboard import add_row, board_to_rows, move_row, remove_row, rows_to_board
from storage.files import load_storyboard
from tests.ui.conftest import TINY_BOARD


@pytest.fixture
def board(tmp_path):
    p = tmp_path / "b.yaml"
    p.write_text(TINY_BOARD)
    return load_storyboard(p)


def test_table_round_trip_add_move_remove(board):
    rows = board_to_rows(board)
    assert rows_to_board(board, rows) == board
    rows = add_row(rows, 1)  # a new shot after s1
    rows[1][2] = "The keeper climbs the stairs"
    rows, at = move_row(rows, 4, -1)  # s3 before s2
    assert at == 3
    rows = remove_row(rows, 1)  # drop s1
    new = rows_to_board(board, rows)
    shots = new.shots()
    assert [s.prompt for s in shots] == ["The keeper climbs the stairs", "Night storm waves hit the lighthouse",
                                         "A whale tail in grey water"]
    assert shots[0].shot_id not in {"s1", "s2", "s3"} and shots[1].camera == "handheld"


def test_table_errors_are_plain(board):
    rows = board_to_rows(board)
    rows[0][4] = "long"
    with pytest.raises(ValueError, match="row 1: duration and seed must be numbers"):
        rows_to_board(board, rows)
    with pytest.raises(ValueError, match="at least one shot"):
        rows_to_board(board, [["", "", "", "", None, None, "", "", False, False]])


def test_tree_text_indents_branches():
    from datetime import datetime

    from storage.records import VersionNode

    now = datetime(2026, 1, 1)
    rows = [VersionNode(number=1, id="v_1", parent=None, kind="plan", message="m", created_at=now, current=False,
                        renders=1),
            VersionNode(number=2, id="v_2", parent=1, kind="accept", message="a", created_at=now, current=False),
            VersionNode(number=3, id="v_3", parent=1, kind="edit", message="b", created_at=now, current=True)]
    assert tree_text(rows).splitlines() == ["  v1 plan: m  [1R 0C 0N]", "    └ v2 accept: a  [0R 0C 0N]",
                                            "*   └ v3 edit: b  [0R 0C 0N]"]


def test_api_key_is_never_echoed_or_stored(studio, board):
    from app.agent_settings import AgentSettings
    from app.ui.settings import status_md

    pid = studio.create_from_storyboard(board).project_id
    studio.set_agent_settings(AgentSettings(base_url="http://127.0.0.1:9/v1", api_key="sk-SECRET-123456",
                                            critic_model="c-model", refiner_model="r-model", planner_model="p-model",
                                            mode="llm"), from_own_page=True)
    assert studio.config.api_key == "sk-SECRET-123456" and studio.agents.label.startswith("llm")
    text = status_md(studio)
    assert "sk-SECRET" not in text and "hidden" in text and "c-model" in text
    studio.add_note(pid, "a note")
    for f in studio.config.home.rglob("*"):
        if f.is_file():
            assert b"sk-SECRET" not in f.read_bytes(), f


def test_serve_refuses_open_host_without_auth(tmp_path):
    from app.cli import main

    r = CliRunner().invoke(main, ["--home", str(tmp_path), "serve", "--host", "0.0.0.0"], env={"CHIEF_AUTH": ""})
    assert r.exit_code != 0 and "--auth" in r.output
    r = CliRunner().invoke(main, ["--home", str(tmp_path), "serve", "--auth", "nopassword"])
    assert r.exit_code != 0 and "user:password" in r.output


def test_launch_guards():
    from app.ui import is_loopback, launch, parse_auth

    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0")
    assert parse_auth("ann:pw:with:colons") == ("ann", "pw:with:colons")
    with pytest.raises(ValueError, match="--auth"):
        launch(object(), host="0.0.0.0")


@pytest.mark.slow
def test_120_shots_and_50_versions_stay_responsive(client, studio):
    """Tab loads read one version's rows, not every version's media."""
    from storage.schema import Scene, Shot, Storyboard

    shots = [Shot(shot_id=f"s{i:03d}", prompt=f"shot number {i}", duration=5) for i in range(120)]
    board = Storyboard(title="Long", width=96, height=64, fps=8,
                       scenes=[Scene(scene_id=f"sc{j}", shots=shots[j * 10:(j + 1) * 10]) for j in range(12)])
    pid = studio.create_from_storyboard(board).project_id
    for n in range(49):
        board = board.model_copy(deep=True)
        board.scenes[n % 12].shots[0].prompt = f"edit {n}"
        studio.save_storyboard(pid, board, None)
    v = studio.version(pid).number
    assert v == 50
    timings = {}
    for api, args in (("/load_storyboard", (pid, v)), ("/history", (pid, v, "overall")), ("/screening", (pid, v)),
                      ("/render_info", (pid, v)), ("/load_story", (pid, v))):
        t = time.perf_counter()
        client.predict(*args, api_name=api)
        timings[api] = round(time.perf_counter() - t, 3)
    print("tab load seconds (120 shots, 50 versions):", timings)
    assert max(timings.values()) < 5, timings
