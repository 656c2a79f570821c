"""`chief persona build | calibrate | list | show` through click's CliRunner on a temp home."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from app.cli import main
from storage.files import dump_storyboard
from tests.agents.openai_server import ok
from tests.conftest import tiny_board


@pytest.fixture
def project(chief, tmp_path):
    story = tmp_path / "story.yaml"
    story.write_text(dump_storyboard(tiny_board(2)))
    return json.loads(chief("--json", "new", "--storyboard", str(story)).stdout)["project"]


def test_build_prints_yaml_and_says_it_was_offline(chief, viewer_file):
    res = chief("persona", "build", "--from", str(viewer_file), "--name", "Colour fan")
    data = yaml.safe_load(res.stdout)
    assert data["id"] == "colour_fan" and data["source"] == "built" and data["evidence"]
    assert "built offline from 8 comments" in data["who"]
    assert "persona builder: offline" in res.stderr
    assert "Kate" not in res.stdout and "http" not in res.stdout and "@" not in res.stdout


def test_build_into_a_project_then_calibrate_it_there(chief, viewer_file, project, tmp_path):
    out = tmp_path / "fan.yaml"
    res = chief(
        "persona",
        "build",
        "--from",
        str(viewer_file),
        "--name",
        "Colour fan",
        "--project",
        project,
        "-o",
        str(out),
        "--json",
    )
    made = json.loads(res.stdout)
    assert made["project"] == project and made["version"] == 2 and made["builder"].startswith("offline")
    assert yaml.safe_load(out.read_text())["id"] == "colour_fan"

    rows = json.loads(chief("persona", "list", "--project", project, "--json").stdout)
    fan = next(r for r in rows if r["id"] == "colour_fan")
    assert fan["on_panel"] and fan["source"] == "built" and fan["calibration"] is None

    res = chief(
        "persona",
        "calibrate",
        "colour_fan",
        "--against",
        str(viewer_file),
        "--project",
        project,
        "--holdout",
        "0.5",
        "--json",
    )
    report = json.loads(res.stdout)
    fig = report["calibration"]
    assert fig["n"] == 4 and -1 <= fig["spearman"] <= 1 and report["version"] == 3
    assert len(report["items"]) == 4 and all(0 <= i["predicted"] <= 10 for i in report["items"])

    shown = json.loads(chief("persona", "show", "colour_fan", "--project", project, "--json").stdout)
    assert shown["calibration"] == fig  # stored with the project's persona
    human = chief("persona", "list", "--project", project).stdout
    assert "* colour_fan" in human and "spearman" in human


def test_build_with_calibrate_builds_from_the_rest(chief, viewer_file):
    res = chief("persona", "build", "--from", str(viewer_file), "--name", "Fan", "--calibrate", "0.5", "--seed", "3")
    data = yaml.safe_load(res.stdout)
    assert "built offline from 4 comments" in data["who"] and data["calibration"]["n"] == 4
    assert "calibration on 4 held-out item(s)" in res.stderr


def test_calibrate_a_builtin_persona_and_show_the_table(chief, viewer_file):
    res = chief("persona", "calibrate", "film_critic", "--against", str(viewer_file), "--holdout", "1")
    assert (
        "Blade Runner 2049" in res.stdout
        and "film_critic · rater offline: spearman" in res.stdout
        and "n 8" in res.stdout
    )
    assert "persona rater: offline" in res.stderr


def test_clear_errors(chief, viewer_file, tmp_path):
    res = chief("persona", "calibrate", "nobody", "--against", str(viewer_file), ok=False)
    assert res.exit_code == 1 and "no builtin persona 'nobody'" in res.stderr
    unrated = tmp_path / "u.txt"
    unrated.write_text("nice\nbad\n")
    res = chief("persona", "calibrate", "film_critic", "--against", str(unrated), ok=False)
    assert res.exit_code == 1 and "at least 3 rated items" in res.stderr


def test_build_through_the_llm_when_configured(chief, viewer_file, server):
    from tests.personas.test_builder import _answer

    server.script(ok(_answer()))
    res = chief(
        "persona",
        "build",
        "--from",
        str(viewer_file),
        "--name",
        "Colour fan",
        "--json",
        env={"CHIEF_LLM_BASE_URL": server.base_url, "CHIEF_CRITIC_MODEL": "persona-model"},
    )
    made = json.loads(res.stdout)
    assert made["builder"].startswith("llm:persona-model")
    assert made["persona"]["loves"] == ["lush colour and light", "emotional endings"]
    assert len(server.requests) == 1 and server.requests[0]["model"] == "persona-model"
