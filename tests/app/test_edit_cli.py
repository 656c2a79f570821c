"""`chief edit`: a shot's fields by hand, a new version each time; a changed line renders no picture again; unknown
keys and bad values are refused in one line with nothing saved; a line too long for its shot is flagged."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from app.cli import main
from storage.files import dump_storyboard
from tests.conftest import tiny_board


@pytest.fixture
def project(chief, tmp_path):
    p = tmp_path / "story.yaml"
    p.write_text(dump_storyboard(tiny_board(4, duration=2.0, shot_overrides={1: {"dialogue": "Keeper: Who's there?"}})))
    return json.loads(chief("--json", "new", "--storyboard", str(p)).stdout)["project"]


def test_a_line_edit_makes_a_child_that_renders_no_picture(chief, project):
    first = json.loads(chief("render", project, "--json").stdout)
    assert (first["rendered"], first["reused"]) == (4, 0) and first["warnings"] == []
    out = chief(
        "edit",
        project,
        "s2",
        "line.1=Only the wind.",
        "line.1.delivery=whispered",
        "line.2=Go back to sleep.",
        "line.2.character=Whale",
        "sounds=wind in the gallery",
        "music=low cello, 60 bpm",
        "--json",
    )
    v = json.loads(out.stdout)
    assert (v["number"], v["parent_number"], v["kind"]) == (2, 1, "edit")
    shot = v["storyboard"]["scenes"][0]["shots"][1]
    assert shot["dialogue"] == [
        {"character": "Keeper", "line": "Only the wind.", "delivery": "whispered"},
        {"character": "Whale", "line": "Go back to sleep.", "delivery": ""},
    ]
    assert shot["sounds"] == "wind in the gallery" and v["storyboard"]["scenes"][0]["music"] == "low cello, 60 bpm"
    again = json.loads(chief("render", project, "--json").stdout)
    assert again["version"] == 2 and (again["rendered"], again["reused"]) == (0, 4)  # no picture re-rendered
    assert [s["key"] for s in again["shots"]] == [s["key"] for s in first["shots"]]
    assert all(s["status"] == "reused" for s in again["shots"])
    srt = open(again["files"]["srt"], encoding="utf-8").read()
    assert "Only the wind." in srt and "WHALE: Go back to sleep." in srt  # the off-screen speaker is named (SDH)


def test_a_one_line_edit_voices_that_line_only_and_renders_no_picture(chief, project):
    first = json.loads(chief("render", project, "--json").stdout)
    assert first["audio"]["lines_voiced"] + first["audio"]["lines_reused"] == 1
    chief("edit", project, "s2", "line.2=The one-line edit test's own words.", "line.2.character=Whale")
    second = json.loads(chief("render", project, "--json").stdout)  # the added line: voiced once in this suite
    chief("edit", project, "s2", "line.1.delivery=whispered")  # a delivery is how a line is said: voiced again
    third = json.loads(chief("render", project, "--json").stdout)
    for r, before in ((second, first), (third, second)):
        assert (r["rendered"], r["reused"]) == (0, 4) and r["film_sha256"] != before["film_sha256"]
        assert [s["key"] for s in r["shots"]] == [s["key"] for s in first["shots"]]
    assert (third["audio"]["lines_voiced"], third["audio"]["lines_reused"]) == (1, 1)
    assert (second["audio"]["lines_voiced"], second["audio"]["lines_reused"]) == (1, 1)


def test_a_picture_edit_renders_that_shot_only(chief, project):
    chief("render", project)
    chief("edit", project, "s3", "duration=3", "camera=zoom_in")
    again = json.loads(chief("render", project, "--json").stdout)
    assert (again["rendered"], again["reused"]) == (1, 3)


def test_a_line_removed_and_human_output(chief, project):
    out = chief("edit", project, "s2", "line.1=")
    assert out.stdout.strip().splitlines()[-1] == "v2: edit s2: line.1"
    v = json.loads(chief("--json", "show", project).stdout)
    assert v["version"]["storyboard"]["scenes"][0]["shots"][1]["dialogue"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["s2", "colour=red"], "error: unknown key 'colour': keys are prompt, negative_prompt, duration"),
        (["s2", "duration=-1"], "error: duration: duration must be within 0..60 seconds"),
        (["s2", "camera=crane"], "error: camera: camera must be one of static"),
        (["s2", "line.3=too far"], "error: line.3: the shot has 1 line(s); line.2 adds one"),
        (["s2", "line.2.delivery=soft"], "error: line.2.delivery: set line.2=TEXT first to add a line"),
        (["s2", "line.1.character=" + "x" * 81], "error: line.1.character: String should have at most 80"),
        (["s9", "prompt=x"], "error: no shot 's9' in this storyboard"),
        (["s2", "line.1=Who's there?"], "error: nothing to change: shot s2 already has these values"),
        (["s2", "prompt=ok", "prompt="], "error: prompt: a prompt cannot be empty"),
    ],
)
def test_refusals_in_one_line_with_nothing_saved(chief, project, args, message):
    res = chief("edit", project, *args, ok=False)
    assert res.exit_code == 1 and res.stderr.strip().startswith(message), res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert [v["number"] for v in json.loads(chief("--json", "log", project).stdout)["versions"]] == [1]


def test_not_key_value_is_a_usage_error(chief, project):
    res = chief("edit", project, "s2", "line.1", ok=False)
    assert res.exit_code == 2 and "is not KEY=VALUE" in res.stderr


def test_a_line_too_long_for_its_shot_is_flagged_before_render_and_kept(chief, project):
    long_line = "one two three four five six seven eight nine ten eleven twelve"  # 12 words: 4.8 s in a 2-s shot
    res = chief("edit", project, "s2", f"line.1={long_line}")
    assert "warning: shot s2 line 1: 12 words take 4.8 s to say, longer than the 2-s shot" in res.stderr
    out = chief("render", project, "--json")
    assert json.loads(out.stdout)["warnings"] == [
        "shot s2 line 1: 12 words take 4.8 s to say, longer than the 2-s shot (shorten the line or lengthen the shot)"
    ]
    assert "warning: shot s2 line 1" in out.stderr
    srt = open(json.loads(out.stdout)["files"]["srt"], encoding="utf-8").read()
    assert "one two three four five six" in srt and "ten eleven twelve" in srt  # the whole line, never cut


def test_the_timeline_export_carries_lines_sounds_and_music_as_markers(chief, project, tmp_path):
    import opentimelineio as otio

    chief("edit", project, "s2", "line.1.delivery=hoarse", "sounds=rain on glass", "music=low cello")
    chief("render", project)
    chief("export", project, "--timeline", "-o", str(tmp_path / "cut"))
    cut = otio.adapters.read_from_file(str(tmp_path / "cut" / "cut.otio"))
    marks = {c.name: [(m.name, m.color) for m in c.markers] for c in cut.find_clips()}
    assert marks["s1"] == [("music: low cello", "MAGENTA")]  # the scene's cue at its first shot
    assert marks["s2"] == [("Keeper (hoarse): Who's there?", "CYAN"), ("sounds: rain on glass", "MAGENTA")]
    edl = otio.adapters.read_from_file(str(tmp_path / "cut" / "cut.edl"))
    assert [m.name for m in list(edl.find_clips())[1].markers][0] == "KEEPER (HOARSE): WHO'S THERE?"
    assert "Keeper (hoarse): Who&apos;s there?" in (tmp_path / "cut" / "cut.fcpxml").read_text() or (
        "Keeper (hoarse): Who's there?" in (tmp_path / "cut" / "cut.fcpxml").read_text()
    )


def test_a_storyboard_file_with_a_long_line_is_flagged_on_new(chief, tmp_path):
    p = tmp_path / "talky.yaml"
    p.write_text(dump_storyboard(tiny_board(2, duration=1.0, shot_overrides={0: {"dialogue": "Keeper: a b c d"}})))
    res = chief("new", "--storyboard", str(p))
    assert "warning: shot s1 line 1: 4 words take 1.6 s to say, longer than the 1-s shot" in res.stderr
