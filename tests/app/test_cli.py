"""The `chief` command line: the loop, --json purity, clear errors that write nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from app.cli import main
from storage.files import dump_storyboard
from tests.conftest import tiny_board


@pytest.fixture
def story_file(tmp_path):
    p = tmp_path / "story.yaml"
    p.write_text(dump_storyboard(tiny_board(4)))
    return p


def test_loop_through_the_cli_with_json(chief, story_file):
    made = json.loads(chief("--json", "new", "--storyboard", str(story_file)).stdout)
    pid = made["project"]
    assert made["active"]["backend"] == "animatic" and "offline" in made["active"]["agents"]

    r1 = json.loads(chief("render", pid, "--json").stdout)  # --json after the command works too
    assert (r1["rendered"], r1["reused"]) == (4, 0)
    crit = json.loads(chief("--json", "critique", pid).stdout)
    assert len(crit["critiques"]) >= 6
    chief("note", pid, "Make the storm scarier", "--shot", "s3")
    prop = json.loads(chief("--json", "refine", pid).stdout)
    n = len(prop["proposal"]["edits"])
    assert n >= 1
    acc = json.loads(chief("--json", "accept", pid, "--only", "1").stdout)
    assert acc["version"]["number"] == 2 and acc["version"]["parent_number"] == 1
    r2 = json.loads(chief("--json", "render", pid).stdout)
    assert r2["rendered"] + r2["reused"] == 4 and r2["reused"] >= 2

    log = json.loads(chief("--json", "log", pid).stdout)
    assert [v["number"] for v in log["versions"]] == [1, 2]
    diff = json.loads(chief("--json", "diff", pid, "1", "2").stdout)
    assert any(c["status"] == "changed" for c in diff["shots"])
    shown = json.loads(chief("--json", "show", pid, "--version", "1").stdout)
    assert shown["version"]["storyboard"]["title"] == "Tiny" and shown["render"]["rendered"] == 4
    said = chief("show", pid, "--version", "1").stdout + chief("diff", pid, "1", "2").stdout
    assert "scores: overall" in said and "score story clarity:" in said and "story_clarity" not in said  # in words
    fork = json.loads(chief("--json", "fork", pid, "--from", "1").stdout)
    assert (fork["version"]["number"], fork["version"]["parent_number"]) == (3, 1)
    listed = json.loads(chief("--json", "projects").stdout)
    assert [p["id"] for p in listed] == [pid]


def test_human_output_names_backend_model_stills_and_agents(chief, story_file):
    out = chief("new", "--storyboard", str(story_file)).stdout
    assert "backend: animatic" in out and "agents: offline" in out and "previz" in out
    assert "stills: animatic keyframes (drawn panels, not a model render)" in out


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["scenes"][0]["shots"][1].__setitem__("duration", -2), "scenes.0.shots.1.duration"),
        (lambda d: d["scenes"][0]["shots"][0].pop("prompt"), "scenes.0.shots.0.prompt"),
        (lambda d: d["scenes"][0]["shots"][0].__setitem__("camera", "spin"), "scenes.0.shots.0.camera"),
        (lambda d: d.pop("title"), "title"),
        (lambda d: d["scenes"][0]["shots"][0].__setitem__("colour", "red"), "scenes.0.shots.0.colour"),
    ],
)
def test_bad_storyboard_file_names_the_field_and_writes_nothing(chief, tmp_path, mutate, field):
    import yaml

    data = tiny_board(4).model_dump(mode="json")
    mutate(data)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    res = chief("new", "--storyboard", str(bad), ok=False)
    assert res.exit_code == 1
    assert field in res.stderr and "Traceback" not in res.output + res.stderr
    assert res.stderr.count("\n") == 1  # one line
    assert json.loads(chief("--json", "projects").stdout) == []


def test_unparseable_storyboard_file(chief, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: [unclosed\n")
    res = chief("new", "--storyboard", str(bad), ok=False)
    assert res.exit_code == 1 and "cannot read storyboard" in res.stderr


def test_duplicate_shot_ids_are_refused(chief, tmp_path):
    import yaml

    data = tiny_board(3).model_dump(mode="json")
    data["scenes"][1]["shots"][0]["shot_id"] = "s1"
    bad = tmp_path / "dup.yaml"
    bad.write_text(yaml.safe_dump(data))
    res = chief("new", "--storyboard", str(bad), ok=False)
    assert res.exit_code == 1 and "duplicate shot_id 's1'" in res.stderr


def test_errors_are_one_line_with_nonzero_exit(chief):
    res = chief("render", "nope", ok=False)
    assert res.exit_code == 1 and res.stderr.strip() == "error: no project 'nope' (see `chief projects`)"


def test_console_script_json_stdout_is_pure_json(tmp_path, story_file):
    """Progress and headers go to stderr; stdout parses as one JSON document."""
    env = {"PATH": "/usr/bin:/bin", "CHIEF_NARRATION": "0", "HF_HUB_OFFLINE": "1", "HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "app.cli", "--home", str(tmp_path / "h"), "--json"]
    made = subprocess.run(
        [*cmd, "new", "--storyboard", str(story_file)], capture_output=True, text=True, env=env, check=True
    )
    pid = json.loads(made.stdout)["project"]
    rendered = subprocess.run([*cmd, "render", pid], capture_output=True, text=True, env=env, check=True)
    assert json.loads(rendered.stdout)["rendered"] == 4


def test_show_yaml_round_trips_into_a_new_project(chief, story_file, tmp_path):
    pid = json.loads(chief("--json", "new", "--storyboard", str(story_file)).stdout)["project"]
    exported = tmp_path / "exported.yaml"
    exported.write_text(chief("show", pid, "--yaml").stdout)
    copy = json.loads(chief("--json", "new", "--storyboard", str(exported)).stdout)
    assert copy["version"]["storyboard"] == json.loads(chief("--json", "show", pid).stdout)["version"]["storyboard"]


def test_every_command_is_listed_with_its_module_and_imported_only_when_it_runs():
    """`app.cli.COMMANDS` names each command's module (read by the group, so a command left out of it is missing from
    `chief`); a command imports its own module only: `chief models --help` in a fresh process never imports the
    loop's commands or the Studio."""
    import importlib
    import pkgutil

    import app.cli
    from app.cli import COMMANDS

    defined = {
        command.name: module.name
        for module in pkgutil.iter_modules(app.cli.__path__)
        if module.name != "__main__"
        for command in getattr(importlib.import_module(f"app.cli.{module.name}"), "COMMANDS", [])
    }
    assert COMMANDS == defined
    assert main.list_commands(None) == sorted(defined)  # type: ignore[arg-type]
    code = (
        "import sys; from app.cli import main; sys.argv = ['chief', 'models', '--help']\n"
        "try: main()\n"
        "except SystemExit: pass\n"
        "print(sorted(m for m in ('app.cli.loop', 'app.cli.images', 'app.studio', 'storage.db') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "pull" in out.stdout and out.stdout.splitlines()[-1] == "[]", out.stderr[-2000:]
