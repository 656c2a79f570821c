"""Versions a creator can follow (issue 25, item 3): small actions fold into one working draft, which a render, a
critique, a save or a branch ends; the film of the last rendered version stays visible, labelled; an action that
changes clips says how many before it runs. Through the Studio, the CLI, the migration and archives."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from alembic import command
from PIL import Image

from app.errors import StudioError
from storage.db import Database
from storage.repository import DRAFT_SUMMARY_CHARS, Repository, draft_summary
from tests.conftest import tiny_board
from tests.storage.test_migration_0007 import alembic


def picture(path: Path, seed: int = 0) -> Path:
    Image.fromarray(np.random.default_rng(seed).integers(0, 255, (36, 64, 3), dtype=np.uint8)).save(path)
    return path


def five_small_actions(st, pid: str, tmp_path: Path) -> None:
    """A reference upload, keyframes for every shot, a re-roll, an earlier keyframe picked back, a take picked."""
    st.add_reference(pid, "Keeper", picture(tmp_path / "keeper.png"))
    first = st.render_keyframes(pid).keyframes[1]
    st.reroll_keyframe(pid, "s2")
    st.pick_keyframe(pid, "s2", first.id)
    st.render_takes(pid, "s4", 1)
    st.pick_take(pid, "s4", "2")


def test_five_small_actions_make_one_draft_version(studio, tmp_path):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    five_small_actions(studio, pid, tmp_path)
    nodes = studio.versions(pid)
    assert [(n.number, n.parent, n.draft, n.current) for n in nodes] == [(1, None, False, False), (2, 1, True, True)]
    v = studio.version(pid)
    assert v.draft and v.kind == "reference"  # the first action's kind; the summary says every one
    parts = v.message.split("; ")
    assert parts[0] == "reference for Keeper (upload)" and parts[1] == "keyframes for 4 shots (s1–s4)"
    assert parts[2].startswith("re-roll keyframe of s2") and parts[3] == "keyframe of s2: candidate from v2"
    assert parts[4].startswith("pick take 2 of s4") and len(parts) == 5
    board = v.storyboard
    assert board.characters[0].references and all(s.keyframe for s in board.shots())  # every change is in it
    assert board.shot("s4").seed == studio.shot_takes(pid, "s4").takes[1].seed
    assert studio.version(pid, 1).storyboard == tiny_board(4)  # the version it came from is untouched


def test_a_render_ends_the_draft_and_the_next_action_starts_a_new_one(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    studio.render_keyframes(pid)
    studio.render(pid)
    assert studio.version(pid).draft is False
    v = studio.reroll_keyframe(pid, "s3").version
    assert (v.number, v.parent_number, v.draft) == (3, 2, True)
    assert studio.version(pid, 2).draft is False and studio.version(pid, 2).message == "keyframes for 4 shots (s1–s4)"
    studio.clear_keyframe(pid, "s1")  # into v3 again
    assert [n.number for n in studio.versions(pid)] == [1, 2, 3]


def test_a_critique_a_save_and_a_new_panel_end_the_draft_too(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    studio.render_keyframes(pid)
    studio.screen_keyframes(pid)  # a critique of the keyframes
    assert studio.version(pid, 2).draft is False
    assert studio.reroll_keyframe(pid, "s1").version.number == 3
    saved, branched = studio.save_storyboard(pid, studio.version(pid).storyboard, 3, "storyboard edit")
    assert (saved.number, saved.parent_number, saved.draft, branched) == (4, 3, False, False)
    assert studio.version(pid, 3).draft is False  # saving ends the draft: it stays as it was, the save on top
    assert studio.clear_keyframe(pid, "s1").number == 5
    studio.set_panel(pid, ["film_critic"])
    assert studio.version(pid, 5).draft is False and studio.version(pid).number == 6


def test_an_action_on_a_version_that_moved_on_branches_a_new_draft(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    studio.render_keyframes(pid)  # v2, a draft child of v1
    with pytest.raises(StudioError, match="nothing changes"):
        studio.clear_keyframe(pid, "s1", ref=1)  # s1 has no keyframe on v1
    other = studio.render_keyframes(pid, ["s1"], ref=1).version  # v1 moved on (to v2): never into v2
    assert (other.number, other.parent_number, other.draft) == (3, 1, True)
    assert "branched from v1" in other.message and studio.branched(other)
    assert studio.version(pid, 2).draft  # the first draft is still open on its own branch
    again = studio.reroll_keyframe(pid, "s1", ref=3).version
    assert again.number == 3 and "re-roll keyframe of s1" in again.message


def test_a_draft_changed_by_another_tab_is_not_overwritten(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    studio.render_keyframes(pid)
    stale = studio.version(pid, 2)
    studio.clear_keyframe(pid, "s1")  # another tab amends the draft
    with pytest.raises(StudioError, match="v2 changed while this was prepared"):
        studio._projects.fold(stale, stale.storyboard.model_copy(update={"title": "Other"}), "edit", "title")
    assert studio.version(pid).storyboard.shot("s1").keyframe is None and studio.version(pid).storyboard.title == "Tiny"


def test_the_summary_of_a_long_session_is_bounded():
    summary = ""
    for i in range(400):
        summary = draft_summary(summary, f"re-roll keyframe of s{i:03d} (seed {i})")
    assert len(summary) <= DRAFT_SUMMARY_CHARS + 40
    assert summary.startswith("re-roll keyframe of s000") and summary.endswith("more changes")
    head, _, more = summary.partition(" … and ")
    assert len(head.split("; ")) + int(more.split()[0]) == 400  # every change is listed or counted


def test_what_a_keyframe_or_reference_change_re_renders_is_said_before(make_studio):
    st = make_studio()
    board = tiny_board(4, shot_overrides={2: {"continuity": True}, 3: {"continuity": True}})
    pid = st.create_from_storyboard(board).project_id
    before = st.clips_affected(pid, "keyframes")
    assert (before.shots, before.rendered, before.total) == (["s1", "s2", "s3", "s4"], [], 4)
    assert before.describe() == "Drawing keyframes for 4 shots will re-render 4 of 4 clips (none of them rendered yet)"
    st.render(pid)
    one = st.clips_affected(pid, "reroll", shots=["s2"])  # s3 and s4 continue from s2: they render again too
    assert (one.shots, one.rendered) == (["s2", "s3", "s4"], ["s2", "s3", "s4"])
    assert one.describe() == "A new keyframe for s2 will re-render 3 of 4 clips (3 of them rendered now)"
    effects = st.keyframe_effects(pid)  # the cards' counts are the query's, shot by shot
    for s in board.shots():
        assert effects[s.shot_id].shots == st.clips_affected(pid, "reroll", shots=[s.shot_id]).shots
    # the reference of a character changes no clip on a backend that does not take references ...
    assert st.clips_affected(pid, "reference", name="Keeper").shots == []
    with pytest.raises(StudioError, match="no character 'Nobody'"):
        st.clips_affected(pid, "reference", name="Nobody")
    # ... and the count is what the render then does
    made = st.render_keyframes(pid, ["s2"])
    assert made.version.draft
    after = st.render(pid)
    assert [s.shot_id for s in after.shots if s.status == "rendered"] == one.shots


def test_a_version_not_rendered_yet_shows_the_last_film_and_what_changed(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    assert studio.last_film(pid) is None  # nothing rendered anywhere
    film = studio.render(pid)
    assert studio.last_film(pid) is None  # v1 has its own film
    studio.render_keyframes(pid, ["s1", "s3"])
    studio.reroll_keyframe(pid, "s3")
    last = studio.last_film(pid)
    assert last.render.id == film.id and last.render.version == 1 and last.changed == ["s1", "s3"]
    assert last.describe() == "film of v1 — v2 is not rendered yet (2 shots changed)"
    studio.render(pid)
    assert studio.last_film(pid) is None
    board = studio.version(pid).storyboard
    studio.save_storyboard(pid, board.model_copy(update={"logline": "A keeper and a whale, at last."}), None)
    assert studio.last_film(pid) is None  # a version that changes nothing the film shows shares v2's film


def test_the_cli_folds_small_actions_and_says_what_they_re_render(chief, tmp_path):
    from storage.files import dump_storyboard

    (tmp_path / "b.yaml").write_text(dump_storyboard(tiny_board(4)))
    pid = json.loads(chief("--json", "new", "--storyboard", str(tmp_path / "b.yaml")).stdout)["project"]
    ref = picture(tmp_path / "ref.png")
    added = chief("ref", "add", pid, "Keeper", str(ref)).stdout
    assert "v2 (draft): Keeper has 1 reference image(s)" in added and "will re-render 0 of 4 clips" in added
    drawn = chief("keyframes", pid).stdout
    said = drawn.index("Drawing keyframes for 4 shots will re-render 4 of 4 clips (none of them rendered yet)")
    assert said < drawn.index("v2 (draft): 4 keyframe(s)")  # said before the drawing's own lines
    rolled = json.loads(chief("keyframes", pid, "--reroll", "s2", "--json").stdout)
    assert rolled["version"]["number"] == 2 and rolled["clips_affected"]["shots"] == ["s2"]
    chief("keyframe", "clear", pid, "s3")
    chief("keyframe", "set", pid, "s1", str(ref))
    log = chief("log", pid).stdout.splitlines()
    assert len(log) == 2 and " draft " in log[1] and "keyframes for 4 shots (s1–s4); re-roll keyframe of s2" in log[1]
    shown = chief("show", pid).stdout
    assert "v2 (draft: reference for Keeper" in shown and "film:" not in shown  # nothing rendered anywhere yet
    chief("render", pid)
    assert " draft " not in chief("log", pid).stdout
    again = chief("keyframes", pid, "--reroll", "s2").stdout
    assert "A new keyframe for s2 will re-render 1 of 4 clips (1 of them rendered now)" in again
    assert "v3 (draft)" in again
    shown = json.loads(chief("--json", "show", pid).stdout)
    assert shown["render"] is None and shown["last_film"]["render"]["version"] == 2
    assert "(film of v2 — v3 is not rendered yet (1 shot changed))" in chief("show", pid).stdout


def test_migration_0009_adds_the_flag_and_takes_it_away(tmp_path):
    path = tmp_path / "chief.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        command.upgrade(alembic(conn), "0008")
        conn.exec_driver_sql("INSERT INTO projects VALUES ('p_1', 'T', '', '2025-01-01', 'v_1', NULL)")
        conn.exec_driver_sql(
            "INSERT INTO versions VALUES ('v_1', 'p_1', NULL, 1, 'plan', 'planned', '2025-01-01', ?, '[]', '[]')",
            (tiny_board(2).model_dump_json(),),
        )
    engine.dispose()
    db = Database(path)  # migrates to the head
    repo = Repository(db)
    with repo.read() as u:
        v1 = u.version("p_1", 1)
        assert v1.draft is False and v1.message == "planned"  # a version made before drafts is not one
    with repo.write() as u:
        v2, _ = u.fold(v1, tiny_board(3), "keyframe", "keyframes for s1")
    assert v2.draft and v2.number == 2
    db.close()
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        command.downgrade(alembic(conn), "0008")
        cols = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(versions)").all()]
        assert "draft" not in cols
        rows = conn.exec_driver_sql("SELECT number, message FROM versions ORDER BY number").all()
        assert [tuple(r) for r in rows] == [(1, "planned"), (2, "keyframes for s1")]  # nothing else lost
        command.upgrade(alembic(conn), "head")
        assert conn.exec_driver_sql("SELECT draft FROM versions").scalars().all() == [0, 0]
    engine.dispose()


def test_an_archive_carries_the_draft_flag(tmp_path):
    from tests.archives.test_archives import new_studio

    st = new_studio(tmp_path / "a")
    pid = st.create_from_storyboard(tiny_board(3)).project_id
    st.render_keyframes(pid)
    st.render(pid)
    st.reroll_keyframe(pid, "s1")  # v3: an open draft
    out = st.export_project(pid, tmp_path / "p.chief.zip")
    other = new_studio(tmp_path / "b")
    new = other.import_project(out).project_id
    assert [(n.number, n.draft) for n in other.versions(new)] == [(1, False), (2, False), (3, True)]
    assert other.clear_keyframe(new, "s1").number == 3  # still the working draft there
    st.db.close()
    other.db.close()
