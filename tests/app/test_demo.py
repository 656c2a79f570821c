"""`chief demo`: two iterations on the sample story, saying what each step did and what is heuristic."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from app.cli import main


@pytest.mark.slow
def test_demo_runs_the_loop_and_says_what_is_heuristic(tmp_path):
    runner = CliRunner()
    res = runner.invoke(
        main,
        ["--home", str(tmp_path), "demo", "--minutes", "0.25"],
        env={"CHIEF_NARRATION": "0"},
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    assert "beats: setup → inciting incident → climax → resolution" in res.stderr
    assert "proposal (offline):" in res.stderr and "panel similarity" in res.stderr
    out = res.stdout
    assert "what is heuristic here:" in out
    for role in ("planner: heuristic", "critics: heuristic", "refiner: heuristic", "video: animatic previz"):
        assert role in out
    assert "chief models" in out and "panel overall:" in out

    data = json.loads(
        runner.invoke(
            main,
            ["--home", str(tmp_path / "j"), "--json", "demo", "--minutes", "0.25"],
            env={"CHIEF_NARRATION": "0"},
            catch_exceptions=False,
        ).stdout
    )
    assert [f["version"] for f in data["films"]] == [1, 2]
    assert len(data["heuristic"]) == 4 and isinstance(data["servers"], list)
    assert len(data["scores"]["overall"]) == 2
