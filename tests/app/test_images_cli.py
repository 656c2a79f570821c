"""The image-first commands: ref, keyframes, keyframe, takes, pick, consistency (with --json, one-line errors)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from app.cli import main
from storage.files import dump_storyboard
from tests.conftest import tiny_board


@pytest.fixture
def chief(tmp_path):
    home = tmp_path / "home"
    runner = CliRunner()

    def run(*args, ok=True):
        res = runner.invoke(
            main,
            ["--home", str(home), *args],
            env={"CHIEF_NARRATION": "0", "CHIEF_AGENTS": "offline"},
            catch_exceptions=False,
        )
        if ok:
            assert res.exit_code == 0, res.output + res.stderr
        return res

    return run


def js(res) -> dict:
    return json.loads(res.stdout)


def new_project(chief, tmp_path, shots: int):
    """(project id, a picture file) for a tiny storyboard of `shots` shots."""
    story = tmp_path / "story.yaml"
    story.write_text(dump_storyboard(tiny_board(shots)))
    pid = js(chief("--json", "new", "--storyboard", str(story)))["project"]
    ref = tmp_path / "keeper.png"
    Image.fromarray(np.full((20, 20, 3), 90, np.uint8)).save(ref)
    return pid, ref


def test_the_image_first_workflow_from_the_command_line(chief, tmp_path):
    pid, ref = new_project(chief, tmp_path, 3)
    added = js(chief("ref", "add", pid, "Keeper", str(ref), "--json"))
    assert added["version"]["number"] == 2 and len(added["references"]) == 1
    assert added["images"].startswith("animatic keyframes")

    made = js(chief("keyframes", pid, "--json"))
    assert made["version"]["number"] == 2 and made["version"]["draft"] is True  # into the reference's draft
    assert made["rendered"] == 3 and made["active"]["backend"] == "animatic"
    rolled = js(chief("keyframes", pid, "--reroll", "s2", "--json"))
    assert rolled["version"]["number"] == 2 and rolled["keyframes"][0]["shot_id"] == "s2"
    cards = js(chief("keyframe", "list", pid, "--json"))["shots"]
    assert [len(c["candidates"]) for c in cards] == [1, 2, 1]
    older = cards[1]["candidates"][1]["id"]
    picked = js(chief("keyframe", "pick", pid, "s2", older, "--json"))
    assert picked["keyframe"] == made["keyframes"][1]["sha256"]
    uploaded = js(chief("keyframe", "set", pid, "s1", str(ref), "--json"))
    assert uploaded["file"].endswith(".png") and uploaded["version"]["number"] == 2
    screened = js(chief("keyframes", pid, "--screen", "--json"))
    assert screened["screening"] == "keyframes" and screened["critiques"][0]["screening"] == "keyframes"

    chief("render", pid)
    takes = js(chief("takes", pid, "s3", "-n", "2", "--json"))
    assert [t["number"] for t in takes["takes"]] == [1, 2, 3] and takes["picked"] == takes["takes"][0]["id"]
    assert all(path.endswith(".mp4") for path in takes["files"].values())
    voted = js(chief("takes", pid, "s3", "--vote", "--json"))
    assert voted["votes"]["shot_id"] == "s3" and voted["votes"]["votes"]
    text = chief("pick", pid, "s3", "3").stdout
    assert "s3 uses take 3" in text and "nothing re-renders" in text
    assert "rendered 0, reused 3" in chief("render", pid).stdout

    table = js(chief("consistency", pid, "--json"))
    assert table["measured"] is False and "CHIEF_EMBED_MODEL" in table["note"]
    assert "not measured" in chief("consistency", pid).stdout
    cleared = js(chief("keyframe", "clear", pid, "s1", "--json"))
    assert cleared["keyframe"] is None and cleared["file"] is None


def test_errors_are_one_line_and_write_nothing(chief, tmp_path):
    pid, _ = new_project(chief, tmp_path, 2)
    bad = tmp_path / "bad.png"
    bad.write_text("hello")
    for args, message in (
        (("ref", "add", pid, "Keeper", str(bad)), "bad.png: not a readable PNG, JPEG or WebP"),
        (("keyframe", "set", pid, "s9", str(bad)), "v1 has no shot 's9'"),
        (("takes", pid, "s1", "--vote"), "has 0 take(s) matching v1"),
        (("keyframes", pid, "--screen"), "2 shot(s) have no keyframe"),
    ):
        res = chief(*args, ok=False)
        assert res.exit_code == 1
        assert "\n" not in res.stderr.strip() and message in res.stderr, res.stderr
    assert len(js(chief("--json", "log", pid))["versions"]) == 1


def test_an_image_change_made_from_a_version_that_moved_on_says_it_branched(chief, tmp_path):
    pid, ref = new_project(chief, tmp_path, 2)
    first = chief("ref", "add", pid, "Keeper", str(ref), "--version", "1")
    assert "new branch" not in first.stdout
    again = chief("keyframe", "set", pid, "s1", str(ref), "--version", "1")  # v1 already has v2: a branch
    assert "v3 (draft): s1 keyframe" in again.stdout  # a new draft, branched from v1
    assert "note: v1 already had a newer version, so this is a new branch (nothing was lost)" in again.stdout
    assert js(chief("keyframe", "set", pid, "s2", str(ref), "--version", "1", "--json"))["branched"] is True
