"""`--scene` and `--shots` on render, critique, note and refine; what the CLI shows of coverage and scope."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from app.cli import main
from storage.files import dump_storyboard
from tests.app.test_longform import four_scenes


@pytest.fixture
def chief(tmp_path):
    home = tmp_path / "home"
    runner = CliRunner()

    def run(*args, code=0):
        res = runner.invoke(main, ["--home", str(home), *args], env={"CHIEF_NARRATION": "0"}, catch_exceptions=False)
        assert res.exit_code == code, res.output + res.stderr
        return res

    return run


def test_a_scene_through_the_cli(chief, tmp_path):
    story = tmp_path / "story.yaml"
    story.write_text(dump_storyboard(four_scenes()))
    pid = json.loads(chief("--json", "new", "--storyboard", str(story), "--panel", "film_critic,teen_scroller").stdout)[
        "project"
    ]
    out = chief("render", pid, "--scene", "sc02").stdout
    assert "rendered 2, reused 0 of 2 shots" in out and "not in this film yet (never rendered): 6 shot(s)" in out
    r = json.loads(chief("--json", "render", pid, "--shots", "s3-s6").stdout)
    assert [(s["shot_id"], s["status"]) for s in r["shots"]] == [
        ("s3", "reused"),
        ("s4", "reused"),
        ("s5", "rendered"),
        ("s6", "rendered"),
    ]
    text = chief("critique", pid, "--scene", "3").stdout
    assert "watched: scene sc03" in text and "watched 2/2 shots · measured offline" in text
    crit = json.loads(chief("--json", "critique", pid, "--shots", "s3,s4").stdout)
    assert all(c["scope"] == {"scenes": [], "shots": ["s3", "s4"]} for c in crit["critiques"])
    assert chief("note", pid, "darker", "--scene", "sc02").stdout.strip().endswith("on scene sc02")
    prop = json.loads(chief("--json", "refine", pid, "--scene", "sc02").stdout)
    assert prop["scope"] == {"scenes": ["sc02"], "shots": []}
    assert all(e.get("shot_id") in ("s3", "s4", None) for e in prop["proposal"]["edits"])
    assert "scope scene sc02" in chief("refine", pid, "--scene", "sc02").stdout


def test_a_scope_that_is_not_there_is_one_line(chief, tmp_path):
    story = tmp_path / "story.yaml"
    story.write_text(dump_storyboard(four_scenes()))
    pid = json.loads(chief("--json", "new", "--storyboard", str(story)).stdout)["project"]
    res = chief("render", pid, "--scene", "sc09", code=1)
    assert res.stderr.strip() == "error: no scene 'sc09': scenes are sc01, sc02, sc03, sc04"
    res = chief("render", pid, "--scene", "sc01", "--shots", "s1", code=1)
    assert "a scene or a range of shots, not both" in res.stderr
    assert chief("--json", "log", pid).stdout.count('"number"') == 1
