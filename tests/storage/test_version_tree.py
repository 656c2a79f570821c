"""Version tree rules: nothing is overwritten; stale saves and accepts branch; fork; diff."""

from __future__ import annotations

import sqlite3

import pytest

from app.studio import StudioError
from storage.repository import NotFound
from tests.conftest import tiny_board


def _proposal_with_notes(studio, pid, version=None):
    studio.add_note(pid, "The keeper should wear a red scarf", shot_id="s2", ref=version)
    studio.add_note(pid, "Make the storm scarier", shot_id="s3", ref=version)
    return studio.refine(pid, version)


def test_accepting_a_stale_proposal_creates_a_sibling_branch(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    prop = _proposal_with_notes(studio, pid)
    first = studio.accept(pid, prop.id, only=[1])
    assert first.version.number == 2 and not first.branched
    again = studio.accept(pid, prop.id, only=[2])  # made on v1, which already has v2
    assert again.branched and again.version.parent_number == 1 and again.version.number == 3
    tree = {v.number: v.parent for v in studio.versions(pid)}
    assert tree == {1: None, 2: 1, 3: 1}
    # both edits survive, each on its own branch
    v2, v3 = studio.version(pid, 2).storyboard, studio.version(pid, 3).storyboard
    assert "red scarf" in v2.shot("s2").prompt and "red scarf" not in v3.shot("s2").prompt
    assert "menacing" in v3.shot("s3").prompt  # the note merged into the prompt as prompt words


def test_stale_save_branches_and_keeps_both(studio):
    pid = studio.create_from_storyboard(tiny_board(3)).project_id
    base = studio.version(pid, 1).storyboard
    a = base.model_copy(deep=True)
    a.scenes[0].shots[0].prompt = "tab A's edit"
    b = base.model_copy(deep=True)
    b.scenes[0].shots[0].prompt = "tab B's edit"
    va, branched_a = studio.save_storyboard(pid, a, base=1)
    vb, branched_b = studio.save_storyboard(pid, b, base=1)  # tab B still looked at v1
    assert not branched_a and branched_b
    assert studio.version(pid, va.number).storyboard.shot("s1").prompt == "tab A's edit"
    assert studio.version(pid, vb.number).storyboard.shot("s1").prompt == "tab B's edit"
    # read back from the tree, as the actions that return only the version need it: the same answer
    assert (studio.branched(va), studio.branched(vb), studio.branched(studio.version(pid, 1))) == (False, True, False)
    kf = studio.render_keyframes(pid, ref=1).version  # a keyframe action from v1, which had children by then
    assert kf.parent_number == 1 and studio.branched(kf)
    assert not studio.branched(studio.fork(pid, 1))  # a fork is a branch on purpose, not news


def test_accept_with_only_and_hand_edit(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    prop = _proposal_with_notes(studio, pid)
    res = studio.accept(pid, only=[1], edits={2: "A storm like the end of the world"})
    assert res.applied == [1, 2]
    board = res.version.storyboard
    assert board.shot("s3").prompt == "A storm like the end of the world"
    assert prop.proposal.edits[0].new == board.shot("s2").prompt


def test_accept_rejects_unknown_edit_numbers_and_writes_nothing(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    _proposal_with_notes(studio, pid)
    with pytest.raises(StudioError, match=r"no edit number\(s\) \[9\]"):
        studio.accept(pid, only=[9])
    assert len(studio.versions(pid)) == 1


def test_fork_and_checkout(studio):
    pid = studio.create_from_storyboard(tiny_board(3)).project_id
    board = studio.version(pid, 1).storyboard.model_copy(deep=True)
    board.title = "Second"
    studio.save_storyboard(pid, board, base=1)
    f = studio.fork(pid, 1)
    assert (f.number, f.parent_number, f.kind) == (3, 1, "fork")
    assert f.storyboard == studio.version(pid, 1).storyboard
    assert studio.version(pid).number == 3  # the fork is current
    assert studio.checkout(pid, 2).number == 2 and studio.version(pid).number == 2


def test_diff_reports_shot_changes_by_stable_id(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    board = studio.version(pid, 1).storyboard.model_copy(deep=True)
    board.scenes[0].shots[0].duration = 2.5
    removed = board.scenes[1].shots.pop()
    studio.save_storyboard(pid, board, base=1)
    d = studio.diff(pid, 1, 2)
    status = {c.shot_id: c.status for c in d.shots}
    assert status["s1"] == "changed" and status[removed.shot_id] == "removed" and status["s2"] == "same"
    s1 = next(c for c in d.shots if c.shot_id == "s1")
    assert s1.fields == {"duration": (1.0, 2.5)}


def test_database_is_wal_with_foreign_keys(studio):
    studio.create_from_storyboard(tiny_board(2))
    con = sqlite3.connect(studio.config.db_path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT version_num FROM alembic_version").fetchone()[0] == _head_revision()
    con.close()
    with studio.db.reader() as s:
        assert s.connection().exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_unknown_project_and_version_are_clear_errors(studio):
    with pytest.raises(StudioError, match="no project 'zzz'"):
        studio.resolve_project("zzz")
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    with pytest.raises(NotFound, match="has no version '7'"):
        studio.version(pid, "7")


def _head_revision() -> str:
    from alembic.script import ScriptDirectory

    from storage.db import alembic_config

    cfg = alembic_config()
    return ScriptDirectory.from_config(cfg).get_current_head()
