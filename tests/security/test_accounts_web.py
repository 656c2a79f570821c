"""Accounts in the web app (issue 33): `chief serve --users` signs people in with their own accounts, each sees and
opens only their own projects (a teacher: all), and every registered event handler that takes a project answers
another account's project exactly as it answers one that does not exist."""

from __future__ import annotations

import inspect
import json
import re

import gradio as gr
import pytest

from app.server.sessions import COOKIE
from storage.owners import Actor, acting
from tests.conftest import steps, tiny_board
from tests.security.test_accounts import PASSWORD, one_line, run

SECRET = "Zanzibar Lighthouse Of Alice"  # alice's title: it must never reach bob


@pytest.fixture
def two_students(studio):
    """(studio, alice's project id, bob's project id), with accounts alice, bob and the teacher 'teach'."""
    studio.accounts.add("alice", PASSWORD)
    studio.accounts.add("bob", PASSWORD + "b")
    studio.accounts.add("teach", PASSWORD + "t", teacher=True)
    with acting(Actor("alice")):
        alice = studio.create_from_storyboard(tiny_board(2).model_copy(update={"title": SECRET})).project_id
    with acting(Actor("bob")):
        bob = studio.create_from_storyboard(tiny_board(2).model_copy(update={"title": "Bob's Film"})).project_id
    return studio, alice, bob


def test_serve_users_without_accounts_is_refused_in_one_line(tmp_path):
    line = one_line(run(tmp_path / "home", "serve", "--users", ok=False))
    assert "--users needs accounts" in line and "chief users add" in line


def test_two_students_through_the_served_app(two_students, serve_users):
    """Signed in over HTTP (Gradio's login form, behind the Guard): the project list, export and trash."""
    from tests.conftest import app_client

    studio, alice, bob = two_students
    url = serve_users(studio)
    as_alice = app_client(url, auth=("alice", PASSWORD))
    as_bob = app_client(url, auth=("bob", PASSWORD + "b"))
    as_teacher = app_client(url, auth=("teach", PASSWORD + "t"))

    def listed(client) -> str:
        return str(client.predict("", api_name="/list_projects"))

    assert SECRET in listed(as_alice) and "Bob&#x27;s Film" not in listed(as_alice)
    assert SECRET not in listed(as_bob) and alice not in listed(as_bob) and "Bob&#x27;s Film" in listed(as_bob)
    assert SECRET in listed(as_teacher) and "Bob&#x27;s Film" in listed(as_teacher)
    assert SECRET not in json.dumps(as_bob.config) and alice not in json.dumps(as_bob.config)  # the page as built

    for api, args in (("/export_project", (alice, None)), ("/trash_project", (alice,)), ("/fork_project", (alice, 1))):
        with pytest.raises(Exception) as theirs:
            as_bob.predict(*args, api_name=api)
        with pytest.raises(Exception) as nobody:
            as_bob.predict(*[a.replace(alice, "p_nothere0") if isinstance(a, str) else a for a in args], api_name=api)
        assert f"no project '{alice}'" in str(theirs.value), (api, theirs.value)
        assert str(theirs.value).replace(alice, "P") == str(nobody.value).replace("p_nothere0", "P")
    with acting(None):
        assert not studio.project(alice).trashed and studio.project(alice).versions == 1
    as_alice.predict(alice, api_name="/trash_project")  # her own: done
    with acting(None):
        assert studio.project(alice).trashed


def test_what_a_student_makes_on_the_web_is_theirs(two_students, serve_users, tmp_path):
    """A plan runs as a job in its own thread: the project it makes is the signed-in student's; an archive imported
    on the web is the importer's."""
    import sqlite3

    from gradio_client import handle_file

    from tests.conftest import app_client

    studio, alice, _ = two_students
    url = serve_users(studio)
    as_bob = app_client(url, auth=("bob", PASSWORD + "b"))
    owners = lambda: dict(sqlite3.connect(studio.config.db_path).execute("SELECT id, owner FROM projects"))  # noqa: E731
    before = owners()
    as_bob.predict("A kite lost over a grey harbour", 0.5, "", api_name="/create_project")
    with acting(None):
        archive = studio.export_project(alice, tmp_path / "alice.chief.zip", include_media=False)
    as_bob.predict(handle_file(str(archive)), api_name="/import_project")
    made = {pid: owner for pid, owner in owners().items() if pid not in before}
    assert list(made.values()) == ["bob", "bob"], made


def test_a_wrong_password_is_refused(two_students, serve_users):
    import httpx

    studio, _, _ = two_students
    url = serve_users(studio)
    wrong = httpx.post(f"{url}/login", data={"username": "alice", "password": "not it at all"}, timeout=60)
    right = httpx.post(f"{url}/login", data={"username": "alice", "password": PASSWORD}, timeout=60)
    assert wrong.status_code == 400 and right.status_code == 200
    assert COOKIE not in wrong.cookies and COOKIE in right.cookies
    # the Guard's limits count failures per account: after 10 of bob's even his right password waits, alice's does not
    from app.server.security import LOGIN_FAILURES

    codes = [
        httpx.post(f"{url}/login", data={"username": "bob", "password": f"guess {i}"}, timeout=60).status_code
        for i in range(LOGIN_FAILURES)
    ]
    assert codes == [400] * LOGIN_FAILURES
    late = httpx.post(f"{url}/login", data={"username": "bob", "password": PASSWORD + "b"}, timeout=60)
    assert late.status_code == 429 and COOKIE not in late.cookies
    assert httpx.post(f"{url}/login", data={"username": "alice", "password": PASSWORD}, timeout=60).status_code == 200


@pytest.fixture
def serve_users():
    """serve_users(studio) -> the base URL of the app launched in this process with --users (on a free port)."""
    from app.ui import launch
    from tests.process import free_port

    demos = []

    def start(studio) -> str:
        port = free_port()
        demos.append(launch(studio, port=port, users=True, prevent_thread_lock=True, quiet=True))
        return f"http://127.0.0.1:{port}"

    yield start
    for demo in demos:
        demo.close()


# ------------------------------------------------------------------------------------ every handler, enumerated
PICKERS = {"project_pick", "trash_pick"}  # the finder and the trash: their values are project ids
MISSING = "p_nothere0"


def _payload(pid: str) -> dict:
    """What a component's event sends (a card's button, a poster, a version in the tree, a scene's track, a
    reference card, a line's ▶), with the project wherever a payload may name one: each handler reads its fields."""
    return {
        "pid": pid,
        "project": pid,
        "version": 1,
        "shot_id": "s1",
        "scene_id": "a",
        "action": "clear",  # an action the card, reference and track payloads all know
        "name": "Keeper",
        "line": "Hello there",
        "character": "",
        "delivery": "",
    }


def _normal(value, pid: str):
    """An outcome without the project id and object addresses, to compare two outcomes."""
    if isinstance(value, BaseException):
        return ("raised", type(value).__name__, str(value).replace(pid, "PID"))
    if isinstance(value, dict):
        return {k: _normal(v, pid) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(v, pid) for v in value]
    if isinstance(value, gr.blocks.Block):
        return (type(value).__name__, _normal(getattr(value, "constructor_args", {}), pid))
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value)).replace(pid, "PID")


def _call(fn, args, kwargs):
    """The handler's outcome as the page gets it (tests.conftest.steps: a guarded handler runs to its end), or the
    exception it raised."""
    try:
        out = fn(*args, **kwargs)
        return steps(out) if inspect.isgenerator(out) or inspect.isasyncgen(out) else out
    except Exception as e:  # noqa: BLE001 - an outcome like any other: compared below
        return e


def _project_handlers(demo):
    """(name, call(pid) -> outcome) for every registered event handler and component server function that takes
    a project: an input that holds the open project or a project picker, a parameter named pid or project, or an
    event payload (which may name one)."""
    ctx = demo.chief_ctx
    for index, block_fn in demo.fns.items():
        fn = block_fn.fn
        if fn is None:
            continue
        params = list(inspect.signature(fn).parameters.values())
        positional = [p for p in params if p.annotation not in (gr.EventData, "gr.EventData") and p.name != "evt"]
        takes_evt = len(positional) < len(params)
        holds = [
            c is ctx.pid
            or getattr(c, "elem_id", None) in PICKERS
            or (k < len(positional) and positional[k].name in ("pid", "project"))
            for k, c in enumerate(block_fn.inputs)
        ]
        if not (any(holds) or takes_evt):
            continue

        def call(pid, fn=fn, block_fn=block_fn, holds=holds, takes_evt=takes_evt):
            args = [
                pid if held else (None if c is ctx.version else getattr(c, "value", None))
                for c, held in zip(block_fn.inputs, holds, strict=True)
            ]
            kwargs = {"evt": gr.EventData(None, _payload(pid))} if takes_evt else {}
            return _call(fn, args, kwargs)

        yield f"{index}:{fn.__qualname__}", call
    for block in demo.blocks.values():
        for fn in getattr(block, "server_fns", None) or ():
            yield f"{block.elem_id}.{fn.__name__}", lambda pid, fn=fn: _call(fn, [_payload(pid)], {})


def _state(studio, pid: str):
    with acting(None):
        p = studio.project(pid)
        return p.model_dump(), [n.model_dump() for n in studio.versions(pid)]


def test_every_handler_answers_another_accounts_project_as_a_missing_one(two_students):
    """Each handler, called as bob with alice's project id, gives exactly what it gives for an id that does not
    exist (the same refusal, with the id in its place, or the same empty answer), changes nothing of hers, and starts
    no job on it. A new handler that reads or writes a project without going through the repository's lookup makes
    its two outcomes differ."""
    from app.ui import create_app

    studio, alice, _ = two_students
    demo = create_app(studio, users=True)
    jobs = demo.chief_ctx.jobs
    before = _state(studio, alice)
    handlers = list(_project_handlers(demo))
    assert len(handlers) > 60  # the enumeration found the app's handlers (about 70 today)
    refused = 0
    with acting(Actor("bob")):
        for name, call in handlers:
            theirs, nobody = call(alice), call(MISSING)
            assert SECRET not in repr(theirs), name
            assert _normal(theirs, alice) == _normal(nobody, MISSING), name
            refused += isinstance(theirs, Exception) and f"no project '{alice}'" in str(theirs)
    assert refused > 40  # most handlers reach the project and are refused there (the rest refuse their input first)
    assert _state(studio, alice) == before
    for kind in ("render", "critique", "plan", "refine", "keyframes", "takes", "reference"):
        assert jobs.last(alice, kind) is None, kind


def test_the_enumeration_catches_a_handler_that_skips_the_lookup(two_students):
    """The check above can fail: a handler that reads the database around the repository's lookup shows alice's
    title to bob, and its two outcomes differ."""
    from app.ui import create_app

    studio, alice, _ = two_students

    def leaky(pid):
        import sqlite3

        row = sqlite3.connect(studio.config.db_path).execute("SELECT title FROM projects WHERE id=?", (pid,)).fetchone()
        return row[0] if row else ""

    demo = create_app(studio, users=True)
    with demo:  # one more handler on the open project, as a new screen would add it
        out = gr.Textbox(visible=False)
        demo.chief_ctx.pid.change(leaky, demo.chief_ctx.pid, out, api_visibility="private")
    with acting(Actor("bob")):
        differing = [
            n for n, call in _project_handlers(demo) if _normal(call(alice), alice) != _normal(call(MISSING), MISSING)
        ]
    assert [n.split(":", 1)[1] for n in differing] == [
        "test_the_enumeration_catches_a_handler_that_skips_the_lookup.<locals>.leaky"
    ]


def test_only_a_teacher_changes_the_servers_settings(two_students):
    """Rendering and agent settings apply to every account: a student's change is refused, a teacher's applies."""
    from app.ui import create_app

    studio, _, _ = two_students
    demo = create_app(studio, users=True)
    apply_render = next(f.fn for f in demo.fns.values() if f.fn and f.fn.__qualname__.endswith("apply_render"))
    assert studio.config.steps != 7
    with acting(Actor("bob")), pytest.raises(gr.Error, match="only a teacher"):
        apply_render(7, None, "random")
    assert studio.config.steps != 7
    with acting(Actor("teach", teacher=True)):
        apply_render(7, None, "random")
    assert studio.config.steps == 7


def test_without_users_the_app_acts_as_the_account_that_serves_it(two_students, serve):
    """`chief --user bob serve` (no --users): every page acts as bob; plain `chief serve` as the local owner."""
    from tests.conftest import app_client

    studio, _, _ = two_students
    with acting(Actor("bob")):
        as_bob = app_client(serve(studio))
    listed = str(as_bob.predict("", api_name="/list_projects"))
    assert "Bob&#x27;s Film" in listed and SECRET not in listed
    local = str(app_client(serve(studio)).predict("", api_name="/list_projects"))
    assert "Bob&#x27;s Film" not in local and SECRET not in local
