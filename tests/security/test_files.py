"""Hostile files (tests/security/data): deeply nested, duplicate keys, alias bombs, caps on what a storyboard
asks for. Each is refused with one line that names the file, and nothing is written."""

from __future__ import annotations

import sqlite3

import pytest

from tests.security.conftest import DATA, chief, one_line_error


def _projects(home) -> int:
    return sqlite3.connect(home / "chief.db").execute("SELECT COUNT(*) FROM projects").fetchone()[0]


@pytest.mark.parametrize(
    "name, says",
    [
        ("deep_storyboard.yaml", "nested more than 64 levels deep"),
        ("deep_storyboard.json", "nested more than 64 levels deep"),
        ("duplicate_keys.yaml", "key 'title' appears twice in one mapping at line 7"),
        ("alias_bomb.yaml", "aliases (*name) are not allowed at line 3"),
    ],
)
def test_hostile_storyboard_files_are_one_line(tmp_path, name, says):
    home = tmp_path / "home"
    chief(home, "projects")
    line = one_line_error(chief(home, "new", "--storyboard", str(DATA / name)))
    assert name in line and says in line, line
    assert _projects(home) == 0


@pytest.mark.parametrize(
    "name, says",
    [
        ("thousand_shots.yaml", "1000 shots is over the limit CHIEF_MAX_SHOTS=300 (Most shots in one storyboard"),
        ("huge_frames.yaml", "shot s1 lasts 60 s is over the limit CHIEF_MAX_SHOT_SECONDS=20"),
    ],
)
def test_storyboards_beyond_the_caps_are_refused_with_the_reason_and_the_setting(tmp_path, name, says):
    home = tmp_path / "home"
    line = one_line_error(chief(home, "new", "--storyboard", str(DATA / name)))
    assert says in line and "raise the setting" in line, line
    assert _projects(home) == 0


def test_each_cap_is_a_setting_that_raises_it(tmp_path):
    home = tmp_path / "home"
    env = {"CHIEF_MAX_SHOT_SECONDS": "60"}
    line = one_line_error(chief(home, "new", "--storyboard", str(DATA / "huge_frames.yaml"), env=env))
    assert "60 fps is over the limit CHIEF_MAX_FPS=30" in line
    env["CHIEF_MAX_FPS"] = "60"
    line = one_line_error(chief(home, "new", "--storyboard", str(DATA / "huge_frames.yaml"), env=env))
    assert "4096x4096 frames is over the limit CHIEF_MAX_FRAME_SIDE=1920" in line
    env["CHIEF_MAX_FRAME_SIDE"] = "4096"
    res = chief(home, "new", "--storyboard", str(DATA / "huge_frames.yaml"), env=env)
    assert res.returncode == 0, res.stderr
    assert _projects(home) == 1
    res = chief(home, "new", "--storyboard", str(DATA / "thousand_shots.yaml"), env={"CHIEF_MAX_SHOTS": "1000"})
    assert res.returncode == 0, res.stderr


def test_a_version_stored_before_the_caps_were_lowered_is_not_rendered(make_studio, board_file, tmp_path):
    from app.errors import StudioError
    from storage.files import load_storyboard

    pid = make_studio().create_from_storyboard(load_storyboard(board_file)).project_id
    lowered = make_studio(max_film_minutes=0.01)  # 0.6 s: the 2-second film is over it
    with pytest.raises(StudioError, match="a 0.0-minute film is over the limit CHIEF_MAX_FILM_MINUTES=0.01"):
        lowered.render(pid)
    assert lowered.render_info(pid) is None


def test_proposals_and_accepted_edits_cannot_take_a_storyboard_past_the_caps(make_studio, board_file):
    from app.errors import StudioError
    from storage.files import load_storyboard

    st = make_studio(max_shot_seconds=1.1)
    pid = st.create_from_storyboard(load_storyboard(board_file)).project_id
    st.add_note(pid, "make this shot longer", "s2")
    prop = st.refine(pid).proposal
    assert prop.edits == []  # the note asks past the cap: the edit is dropped and says why
    assert any(
        "over the storyboard cap max_shot_seconds (1.1)" in u.why and u.what == "set s2" for u in prop.not_changed
    )

    st = make_studio(max_shot_seconds=5)
    pid = st.create_from_storyboard(load_storyboard(board_file)).project_id
    st.add_note(pid, "make this shot longer", "s2")
    rec = st.refine(pid)
    [edit] = rec.proposal.edits
    assert (edit.op, edit.field) == ("set", "duration") and float(edit.new) <= 5
    with pytest.raises(StudioError, match="shot s2 lasts 9 s is over the limit CHIEF_MAX_SHOT_SECONDS=5"):
        st.accept(pid, rec.id, edits={1: "9"})  # the creator's own value is checked too
    assert len(st.versions(pid)) == 1


@pytest.mark.parametrize(
    "args, name, says",
    [
        (["persona", "show", str(DATA / "deep_persona.yaml")], "deep_persona.yaml", "nested more than 64 levels deep"),
        (
            ["persona", "build", "--from", str(DATA / "deep_comments.jsonl"), "--name", "Deep"],
            "deep_comments.jsonl:2",
            "nested more than 64 levels deep",
        ),
        (["batch", str(DATA / "deep_stories.yaml"), "--out", "OUT"], "deep_stories.yaml", "nested more than 64 levels"),
    ],
)
def test_other_yaml_and_json_inputs_are_one_line(tmp_path, args, name, says):
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    line = one_line_error(chief(tmp_path / "home", *args))
    assert name in line and says in line, line


def test_duplicate_keys_are_refused_in_json_too(tmp_path):
    bad = tmp_path / "dup.json"
    bad.write_text('{"title": "a", "title": "b", "scenes": []}')
    line = one_line_error(chief(tmp_path / "home", "new", "--storyboard", str(bad)))
    assert "dup.json: cannot read storyboard: key 'title' appears twice in one object" in line


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_a_storyboard_of_100000_shots_is_refused_while_it_is_parsed(tmp_path, suffix):
    """3 MB of one-line shots: under the byte cap, far over the shot cap. YAML is refused while it is composed, at
    the first value past what 300 shots can hold (it cost 23 s and 460 MB before the shot cap refused it)."""
    from storage.files import NODES_BESIDE_SHOTS, NODES_PER_SHOT

    home = tmp_path / "home"
    path = tmp_path / f"runaway.{suffix}"
    if suffix == "yaml":
        shots = "".join(f"  - {{shot_id: s{i}, prompt: a}}\n" for i in range(100_000))
        path.write_text(f"title: runaway\nscenes:\n- scene_id: a\n  shots:\n{shots}")
    else:
        shots = ",".join(f'{{"shot_id": "s{i}", "prompt": "a"}}' for i in range(100_000))
        path.write_text(f'{{"title": "runaway", "scenes": [{{"scene_id": "a", "shots": [{shots}]}}]}}')
    line = one_line_error(chief(home, "new", "--storyboard", str(path)))
    cap = 300 * NODES_PER_SHOT + NODES_BESIDE_SHOTS
    assert f"runaway.{suffix}: cannot read storyboard: more than {cap:,} values" in line, line
    assert "at most 300 shots" in line and "max_shots" in line, line
    if suffix == "yaml":
        # refused where the count ran out: a few thousand shots in (5 values a shot), not at the end of the file
        assert f"at line {4 + (cap - 6) // 5 + 1}" in line, line
    assert _projects(home) == 0
