"""File URLs per account and idle sign-out (issue 33, app/server/security.py): with `chief serve --users` a file is
served only to an account the app's own answers named it to (every file route, enumerated from the served app);
a signed-in session ends on sign-out and after `--idle-minutes` without a request (an injected clock, no sleeps)."""

from __future__ import annotations

import re

import httpx
import pytest
from starlette.responses import FileResponse

from app.server.security import FILE_ROUTE, NOT_FOUND
from storage.owners import Actor, acting
from tests.security.test_accounts import PASSWORD
from tests.security.test_accounts_web import two_students  # noqa: F401 - a fixture

PARAM = re.compile(r"\{(\w+)(:path)?\}")


def signed_in(url: str, name: str, password: str) -> httpx.Client:
    c = httpx.Client(base_url=url, follow_redirects=False)
    assert c.post("/login", data={"username": name, "password": password}).status_code == 200
    return c


def _export_path(url: str, name: str, password: str, pid: str) -> str:
    from tests.conftest import app_client

    out = app_client(url, auth=(name, password), download_files=False).predict(pid, None, api_name="/export_project")
    return str(out[0]["path"])


def all_routes(routes):
    """Every route of the app, those of included routers too (FastAPI keeps them behind one entry)."""
    for r in routes:
        if hasattr(r, "effective_candidates"):
            yield from all_routes(r.effective_candidates())
            yield from r.effective_low_priority_routes()
        else:
            yield r


def _body(client: httpx.Client, url: str, cap: int) -> bytes:
    """Up to `cap` bytes of the answer to GET `url`; an endless stream (a heartbeat, a queue's events) is read
    until it pauses."""
    got = b""
    try:
        with client.stream("GET", url, timeout=httpx.Timeout(10, read=3)) as r:
            for chunk in r.iter_bytes():
                got += chunk
                if len(got) >= cap:
                    break
    except httpx.TransportError:  # an endless stream paused, or one the app broke off (an unknown session's)
        pass
    return got


def _leaks(app, client: httpx.Client, path: str, secret: bytes) -> list[str]:
    """Every GET route of the served app with a path parameter, asked for `path`: the ones whose answer holds
    `secret` (the file's bytes)."""
    leaked = []
    for route in all_routes(app.routes):
        template = getattr(route, "path", "")
        if "GET" not in (getattr(route, "methods", None) or ()) or not PARAM.search(template):
            continue
        url = PARAM.sub(lambda m: path.lstrip("/") if m.group(2) else "x", template)
        url = url.replace("=" + path.lstrip("/"), "=" + path)  # /file=PATH takes the absolute path
        if secret in _body(client, url, len(secret) * 2 + 65536):
            leaked.append(template)
    return leaked


@pytest.fixture
def alices_file(two_students):  # noqa: F811
    """(studio, demo, url, alice's export path, its bytes): the app served with --users, the export made in alice's
    own event."""
    from app.ui import launch
    from tests.process import free_port

    studio, alice, _ = two_students
    port = free_port()
    demo = launch(studio, port=port, users=True, prevent_thread_lock=True, quiet=True)
    url = f"http://127.0.0.1:{port}"
    try:
        path = _export_path(url, "alice", PASSWORD, alice)
        with open(path, "rb") as f:
            data = f.read()
        yield studio, demo, url, path, data
    finally:
        demo.close()


def test_a_file_goes_only_to_the_account_it_was_sent_to(alices_file):
    studio, _, url, path, data = alices_file
    alice = signed_in(url, "alice", PASSWORD)
    bob = signed_in(url, "bob", PASSWORD + "b")
    teacher = signed_in(url, "teach", PASSWORD + "t")
    for route in ("/gradio_api/file=", "/gradio_api/file/"):
        mine = alice.get(route + path)
        assert mine.status_code == 200 and mine.content == data, route
        theirs = bob.get(route + path)
        missing = bob.get(route + path + ".nothere")
        assert (theirs.status_code, theirs.text) == (404, NOT_FOUND + "\n"), route
        assert (missing.status_code, missing.text) == (theirs.status_code, theirs.text)  # no hint it exists
        assert teacher.get(route + path).status_code == 404  # Gradio's copy made for alice's answer: hers alone
    anonymous = httpx.get(url + "/gradio_api/file=" + path, timeout=60)
    assert anonymous.status_code == 401 and data not in anonymous.content  # sign in first
    # a file in the media store that no project names: refused to everyone
    other = studio.config.media_root / "never-named.txt"
    other.write_bytes(b"never shown to anyone")
    assert alice.get(f"/gradio_api/file={other}").status_code == 404


def test_every_route_that_serves_files_refuses_another_accounts_file(alices_file):
    """Every GET route of the served app that takes a path parameter, asked by bob for alice's file: none answers
    with its bytes (a new route serving files without the check would, and fail here)."""
    studio, demo, url, path, data = alices_file
    bob = signed_in(url, "bob", PASSWORD + "b")
    routes = [r for r in all_routes(demo.server_app.routes) if "GET" in (getattr(r, "methods", None) or ())]
    file_routes = [r.path for r in routes if FILE_ROUTE.match(PARAM.sub("p", r.path))]
    assert {"/gradio_api/file={path_or_url:path}", "/gradio_api/file/{path:path}"} <= set(file_routes)
    assert _leaks(demo.server_app, bob, path, data) == []
    alice = signed_in(url, "alice", PASSWORD)
    assert _leaks(demo.server_app, alice, path, data)  # the same enumeration finds her own file served to her


def test_the_enumeration_catches_a_route_that_serves_files_unchecked(alices_file):
    studio, demo, url, path, data = alices_file

    async def leaky(path: str):
        return FileResponse("/" + path)

    demo.server_app.add_api_route("/gradio_api/media/{path:path}", leaky, methods=["GET"])
    bob = signed_in(url, "bob", PASSWORD + "b")
    assert _leaks(demo.server_app, bob, path, data) == ["/gradio_api/media/{path:path}"]
