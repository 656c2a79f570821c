"""Read-only sharing and hand-over (issue 33, app/services/sharing.py, storage.repository.Unit._project_row): a project
shared with an account or with the class is read there and refused, in one line, for every write; a teacher reads
every project and writes only their own; a teacher hands a project to another account."""

from __future__ import annotations

import json

import pytest

from app.errors import StudioError
from storage.owners import Actor, acting
from storage.repository import NotFound, ReadOnly
from tests.conftest import tiny_board
from tests.security.test_accounts import PASSWORD, run
from tests.security.test_accounts_web import (  # noqa: F401 - a fixture
    MISSING,
    SECRET,
    _project_handlers,
    _state,
    two_students,
)

ALICE, BOB, CAROL, TEACH = Actor("alice"), Actor("bob"), Actor("carol"), Actor("teach", teacher=True)


@pytest.fixture
def shared(two_students):  # noqa: F811
    studio, alice, bob = two_students
    studio.accounts.add("carol", PASSWORD + "c")
    return studio, alice, bob


def _writes(studio, pid):
    """One call per kind of write a person can make on a project (each through the Studio, as the pages do)."""
    board = tiny_board(2)
    return {
        "save": lambda: studio.save_storyboard(pid, board, None),
        "trash": lambda: studio.trash_project(pid),
        "share": lambda: studio.sharing.share(pid, "carol"),
        "hand": lambda: studio.sharing.hand_over(pid, "carol"),
    }


def test_a_share_is_read_but_never_written(shared, tmp_path):
    studio, alice, _ = shared
    with acting(BOB):
        with pytest.raises(NotFound, match=f"no project '{alice}'"):
            studio.project(alice)
        assert alice not in [p.id for p in studio.projects()]
    with acting(ALICE):
        assert studio.sharing.share(alice, "bob").readers == ["bob"]
    before = _state(studio, alice)
    with acting(BOB):
        assert alice in [p.id for p in studio.projects()] and studio.project(alice).title == SECRET
        access = studio.sharing.access(alice)
        assert (access.owner, access.writable, access.label) == ("alice", False, "alice's · read-only")
        for name, write in _writes(studio, alice).items():
            with pytest.raises((ReadOnly, StudioError)) as e:
                write()
            assert "\n" not in str(e.value) and ("read-only" in str(e.value) or "teacher" in str(e.value)), name
        with pytest.raises(ReadOnly):
            studio.sharing.writable(alice)  # the web app's job check: no render, critique or plan starts
    assert _state(studio, alice) == before
    with acting(BOB):  # what the refusal suggests: a copy of his own, through an archive
        archive = studio.export_project(alice, tmp_path / "lent.chief.zip", include_media=False)
        imported = studio.import_project(archive)
        copy = imported.project_id
        studio.save_storyboard(copy, tiny_board(2), None)
        assert studio.sharing.access(copy).owner == "bob"
    with acting(CAROL):
        assert alice not in [p.id for p in studio.projects()]
    with acting(ALICE):  # with the class: everyone reads it
        studio.sharing.share(alice, "class")
    with acting(CAROL):
        assert studio.project(alice).title == SECRET
        with pytest.raises(ReadOnly):
            studio.trash_project(alice)
    with acting(ALICE):
        studio.sharing.unshare(alice, "bob")
        studio.sharing.unshare(alice, "class")
        studio.save_storyboard(alice, tiny_board(2).model_copy(update={"title": SECRET}), None)  # still hers
    with acting(BOB), pytest.raises(NotFound):
        studio.project(alice)


def test_only_the_owner_shares_and_only_known_accounts(shared):
    studio, alice, bob = shared
    with acting(BOB), pytest.raises(NotFound, match=f"no project '{alice}'"):
        studio.sharing.share(alice, "bob")  # someone else's: not found, as ever
    with acting(ALICE):
        with pytest.raises(StudioError, match="no account 'zed'"):
            studio.sharing.share(alice, "zed")
        with pytest.raises(StudioError, match="already theirs"):
            studio.sharing.share(alice, "alice")


def test_a_teacher_reads_everything_writes_their_own_and_hands_over(shared):
    studio, alice, bob = shared
    with acting(TEACH):
        assert {alice, bob} <= {p.id for p in studio.projects()}
        with pytest.raises(ReadOnly, match="alice's"):
            studio.save_storyboard(alice, tiny_board(2), None)
        mine = studio.create_from_storyboard(tiny_board(1)).project_id
        studio.save_storyboard(mine, tiny_board(2), None)
    with acting(BOB), pytest.raises(StudioError, match="only a teacher"):
        studio.sharing.hand_over(bob, "carol")
    with acting(TEACH):
        assert studio.sharing.hand_over(alice, "bob")[0].owner == "bob"
    with acting(ALICE), pytest.raises(NotFound):
        studio.project(alice)  # no longer hers
    with acting(BOB):
        studio.save_storyboard(alice, tiny_board(2), None)  # now bob's to change
        assert studio.project(alice).versions == 2


def test_every_handler_refuses_to_write_a_shared_project(shared):
    """Every registered handler that takes a project, called by a reader of alice's shared project: nothing of hers
    changes, no job starts, and a refusal says read-only (never "no project": the reader may open it)."""
    from app.ui import create_app

    studio, alice, _ = shared
    with acting(ALICE):
        studio.sharing.share(alice, "bob")
    demo = create_app(studio, users=True)
    before = _state(studio, alice)
    refusals = []
    with acting(BOB):
        for name, call in _project_handlers(demo):
            out = call(alice)
            if isinstance(out, Exception):
                assert f"no project '{alice}'" not in str(out), name
                refusals.append(str(out))
    assert _state(studio, alice) == before
    for kind in ("render", "critique", "plan", "refine", "keyframes", "takes", "reference"):
        assert demo.chief_ctx.jobs.last(alice, kind) is None, kind
    assert sum("read-only" in r for r in refusals) > 10, refusals  # the writing handlers refuse in these words


def test_share_and_hand_over_on_the_cli(tmp_path):
    home = tmp_path / "home"
    run(home, "users", "add", "alice", "--password-stdin", stdin=PASSWORD + "\n")
    run(home, "users", "add", "bob", "--password-stdin", stdin=PASSWORD + "\n")
    run(home, "users", "add", "teach", "--teacher", "--password-stdin", stdin=PASSWORD + "\n")
    from tests.security.hostile_archives import BOARD

    board = tmp_path / "board.yaml"
    board.write_text(BOARD)
    pid = json.loads(run(home, "--json", "--user", "alice", "new", "--storyboard", str(board)).output)["project"]
    run(home, "--user", "alice", "share", "add", pid, "bob")
    listed = json.loads(run(home, "--json", "--user", "bob", "share", "list", pid).output)
    assert (listed["owner"], listed["writable"], listed["readers"]) == ("alice", False, ["bob"])
    res = run(home, "--user", "bob", "trash", pid, ok=False)
    assert res.exit_code == 1 and "read-only" in res.stderr
    run(home, "--user", "teach", "share", "hand", pid, "bob")
    assert json.loads(run(home, "--json", "--user", "bob", "share", "list", pid).output)["writable"] is True


def test_the_sharing_box_shares_and_takes_back_the_files_sent(shared, tmp_path):
    """The box above the screens (app/ui/share_box.py), called as the page calls it: the owner shares and stops
    sharing; the reader may fetch the project's files while it is shared, not after (app.server.security.FileAccess
    decides by what the account may read)."""
    from app.server.security import FileAccess
    from app.server.sessions import Changes
    from app.ui import create_app
    from app.ui.share_box import ShareBox

    studio, alice, _ = shared
    demo = create_app(studio, users=True)
    box = next(f.fn.__wrapped__.__self__ for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "add")
    assert isinstance(box, ShareBox)
    exports = studio.config.home / "exports"
    changes = Changes(studio.config.db_path)
    files = FileAccess(studio.ctx.repo, studio.accounts.actor, changes, studio.config.media_root, exports, [tmp_path])
    demo.chief_files = files
    film = f"{exports}/{alice}/film.mp4"
    assert not files.allowed("bob", film)
    with acting(ALICE):
        assert "read by bob" in box.add(alice, " bob ")
    with acting(BOB):
        assert "alice's, read-only for you" in box.shown(alice)
        with pytest.raises(ReadOnly, match="only its owner"):
            box.add(alice, "carol")  # he reads it; sharing it on is its owner's
    assert files.allowed("bob", film) and files.allowed("alice", film)
    with acting(ALICE):
        assert "no one else" in box.remove(alice, "bob")
    assert not files.allowed("bob", film) and files.allowed("alice", film)
    changes.close()
