"""The app's parts without a browser: table <-> storyboard, the version tree, settings, `chief serve` guards."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from storage.files import load_storyboard
from tests.conftest import steps
from tests.ui.conftest import TINY_BOARD


@pytest.fixture
def board(tmp_path):
    p = tmp_path / "b.yaml"
    p.write_text(TINY_BOARD)
    return load_storyboard(p)


def test_board_json_round_trip_reorder_add_duplicate_delete(board):
    from app.ui.screens.storyboard import board_json, json_to_board

    data = json.loads(board_json(board, {"s1": "gradio_api/file=/x.jpg"}))
    assert json_to_board(board, json.dumps(data)) == board
    assert data["scenes"][0]["shots"][0]["thumb"] == "gradio_api/file=/x.jpg"
    shots = data["scenes"][0]["shots"]
    s1, s2, s3 = shots
    dup = {**s2, "shot_id": "newabc1", "isNew": True, "seed": 77}
    fresh = {**s1, "shot_id": "newabc2", "isNew": True, "prompt": "The keeper climbs the stairs", "narration": ""}
    data["scenes"][0]["shots"] = [s3, fresh, s2, dup]  # s3 dragged first, s1 deleted
    new = json_to_board(board, json.dumps(data)).shots()
    assert [s.prompt for s in new] == [
        "Night storm waves hit the lighthouse",
        "The keeper climbs the stairs",
        "A whale tail in grey water",
        "A whale tail in grey water",
    ]
    assert new[0].shot_id == "s3" and new[0].camera == "handheld" and new[2].shot_id == "s2"
    assert new[1].shot_id.startswith("sh_") and new[3].shot_id.startswith("sh_") and new[3].seed == 77
    kept = json_to_board(board, json.dumps(data), fresh_ids=False).shots()  # a draft rendered, not saved
    assert [s.shot_id for s in kept] == ["s3", "newabc2", "s2", "newabc1"]


def test_board_json_errors_are_plain(board):
    from pydantic import ValidationError

    from app.ui.screens.storyboard import board_json, json_to_board

    data = json.loads(board_json(board, {}))
    data["scenes"][0]["shots"][0]["camera"] = "spin_wildly"
    with pytest.raises(ValidationError, match="camera"):
        json_to_board(board, json.dumps(data))
    data["scenes"] = [{"scene_id": "a", "shots": []}]
    with pytest.raises(ValueError, match="at least one shot"):
        json_to_board(board, json.dumps(data))
    with pytest.raises(ValueError, match="reload the page"):
        json_to_board(board, "{not json")


def test_version_graph_puts_branches_on_their_own_rows_and_escapes():
    from datetime import datetime

    from app.ui.screens.history import graph_svg, layout
    from storage.records import VersionNode

    now = datetime(2026, 1, 1)
    rows = [
        VersionNode(
            number=1, id="v_1", parent=None, kind="plan", message="m", created_at=now, current=False, renders=1
        ),
        VersionNode(
            number=2,
            id="v_2",
            parent=1,
            kind="accept",
            message="<img src=x onerror=alert(1)>",
            created_at=now,
            current=False,
        ),
        VersionNode(number=3, id="v_3", parent=1, kind="edit", message="b", created_at=now, current=True),
    ]
    assert layout(rows) == {1: (0, 0), 2: (1, 0), 3: (1, 1)}
    svg = graph_svg(rows)
    assert "<img" not in svg and "&lt;img src=x" in svg
    assert "node current' data-version='3'" in svg and svg.count("<path") == 2


def test_score_plot_has_whole_versions_and_a_legend():
    from app.ui.screens.history import plot_svg

    svg = plot_svg([1, 2, 4], {"Maya <16>": {1: 4.0, 2: 6.0, 4: 7.0}, "Sam": {1: 5.0, 4: 6.0}}, "overall")
    ticks = re.findall(r">v([0-9.]+)</text>", svg)
    assert ticks == ["1", "2", "4"]
    legend = re.findall(r"<g class='legend-item'>.*?<text[^>]*>([^<]*)</text>", svg)
    assert legend == ["Maya &lt;16&gt;", "Sam", "panel mean"]


def test_review_names_sources_and_reads_decisions():
    from app.ui.screens.revise import decisions, review_json
    from storage.records import ProposalRecord
    from storage.schema import Proposal, SetShot, utcnow

    edits = [
        SetShot(
            shot_id="s1",
            field="prompt",
            old="a calm sea",
            new="a wild sea",
            rationale="scarier",
            sources=["n_01fb0075", "teen_scroller"],
        ),
        SetShot(
            shot_id="s2",
            field="camera",
            old="static",
            new="dolly_in",
            rationale="motion",
            sources=["film_critic", "n_9999aaaa", "gone_persona", "n_8888bbbb"],
        ),
    ]
    record = ProposalRecord(
        id="pr_1", version=1, created_at=utcnow(), mode="offline", proposal=Proposal(summary="two edits", edits=edits)
    )
    value = review_json(
        record,
        {"n_01fb0075": "Make the storm scarier"},
        {"teen_scroller": "Maya, 16", "film_critic": "Dr. Roux"},
        {"s1": "gradio_api/file=/t.jpg"},
    )
    data = json.loads(value)
    assert data["edits"][0]["sources"] == ["your note “Make the storm scarier”", "Maya, 16"]
    assert data["edits"][1]["sources"] == ["Dr. Roux", "a note", "a critic"]  # unknown ids: what they were, once
    assert not re.search(r"n_01fb0075|n_9999aaaa|gone_persona", json.dumps(data["edits"]))
    assert data["edits"][0]["thumb"].endswith("t.jpg")
    assert data["edits"][0]["diff"] == [["=", "a"], ["-", "calm"], ["+", "wild"], ["=", "sea"]]
    data["edits"][1]["accept"] = False
    data["edits"][0]["text"] = "a sea like the end of the world"
    assert decisions(json.dumps(data)) == ("pr_1", [1], {1: "a sea like the end of the world"})


def test_settings_show_words_not_setting_names(studio):
    from app.ui.screens.settings import status_md

    text = status_md(studio).replace("\\", "")  # read as shown (Markdown escapes gone)
    assert "Making the pictures" in text and "backend_label" not in text and "llm_endpoint" not in text
    assert "**Making the stills (keyframes, references)**: animatic keyframes" in text and "images_label" not in text
    assert "**Checking that characters look the same**: (not set: consistency is not measured)" in text


def test_settings_and_the_status_bar_name_every_model_or_say_none(tmp_path):
    from app.config import load_config
    from app.studio import Studio
    from app.ui.common import status_line
    from app.ui.screens.settings import models_text, status_md

    plain = load_config({"home": tmp_path / "a", "narration": False}, environ={})
    text = models_text(plain).replace("\\", "")  # read as shown (Markdown escapes gone)
    for line in (
        "**VACE model (references and keyframes into the video)**: none",
        "**Image model (keyframes, references)**: none (the animatic draws keyframes)",
        "**Model that checks characters look the same from shot to shot**: none (whether characters stay the same is "
        "not measured)",
    ):
        assert line in text
    wan = load_config(
        {"home": tmp_path / "b", "narration": False},
        environ={
            "CHIEF_VIDEO_BACKEND": "diffusers",
            "CHIEF_VIDEO_MODEL": str(tmp_path / "wan"),
            "CHIEF_VACE_MODEL": str(tmp_path / "vace"),
            "CHIEF_EMBED_MODEL": str(tmp_path / "clip"),
        },
    )
    text = models_text(wan).replace("\\", "")
    assert f"VACE model (references and keyframes into the video)**: {tmp_path / 'vace'}" in text
    assert "**Image model (keyframes, references)**: none (keyframes and references can only be uploaded)" in text
    assert f"**Model that checks characters look the same from shot to shot**: {tmp_path / 'clip'}" in text
    st = Studio(wan)
    try:  # no image model with the diffusers backend: the status bar and Settings say so
        said = "none (no image model on this server: upload keyframes and references)"  # words, not a variable
        assert f"**stills** {said}" in status_line(st, None, None).replace("\\", "")
        assert f"**Making the stills (keyframes, references)**: {said}" in status_md(st).replace("\\", "")
    finally:
        st.db.close()


def test_api_key_is_never_echoed_or_stored(studio, board):
    from app.agent_settings import AgentSettings
    from app.ui.screens.settings import status_md

    pid = studio.create_from_storyboard(board).project_id
    studio.set_agent_settings(
        AgentSettings(
            base_url="http://127.0.0.1:9/v1",
            api_key="sk-SECRET-123456",
            critic_model="c-model",
            refiner_model="r-model",
            planner_model="p-model",
            mode="llm",
            other={"llm_timeout": 30},
        ),
        from_own_page=True,
    )
    assert studio.config.api_key == "sk-SECRET-123456" and studio.agents.label.startswith("llm")
    text = status_md(studio)
    assert "sk-SECRET" not in text and "hidden" in text and "c-model" in text
    studio.add_note(pid, "a note")
    for f in studio.config.home.rglob("*"):
        if f.is_file():
            assert b"sk-SECRET" not in f.read_bytes(), f


def test_serve_refuses_open_host_without_auth(tmp_path):
    from app.cli import main

    r = CliRunner().invoke(main, ["--home", str(tmp_path), "serve", "--host", "0.0.0.0"], env={"CHIEF_AUTH": ""})
    assert r.exit_code != 0 and "--auth" in r.output
    r = CliRunner().invoke(main, ["--home", str(tmp_path), "serve", "--auth", "nopassword"])
    assert r.exit_code != 0 and "user:password" in r.output


def test_launch_guards():
    from app.ui import is_loopback, launch, parse_auth

    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0")
    assert parse_auth("ann:pw:with:colons") == ("ann", "pw:with:colons")
    with pytest.raises(ValueError, match="--auth"):
        launch(object(), host="0.0.0.0")


def test_an_idle_servers_queue_looks_for_work_every_20_ms(studio):
    """Gradio's queue looks for work every 1 ms when it has none: an idle `chief serve` took 7% of a core
    (bench/idle_server.py). The app's queue waits IDLE_POLL_S; the attributes are Gradio's own (a rename would leave
    the setting unread, so a bare queue is read first)."""
    import platform

    import gradio as gr

    from app.ui import IDLE_POLL_S, PROGRESS_POLL_S, create_app

    bare = gr.Blocks().queue()._queue
    if platform.system() != "Windows":
        assert (bare.sleep_when_free, bare.progress_update_sleep_when_free) == (0.001, 0.01)
    queue = create_app(studio)._queue
    assert (
        (queue.sleep_when_free, queue.progress_update_sleep_when_free) == (IDLE_POLL_S, PROGRESS_POLL_S) == (0.02, 0.1)
    )


def test_the_queue_sums_up_no_events_for_a_monitoring_page_it_does_not_serve(studio, monkeypatch):
    """Gradio's queue keeps the last 10,000 events for its monitoring page and, after every event, sums them all up in
    a pandas table (16-25 ms of CPU an event); the app does not serve that page: it keeps one record and never sums.
    Events run through the served app; the attributes are Gradio's own (a bare queue is read first, as above)."""
    import gradio as gr
    from gradio.queueing import Queue

    from app.ui import launch
    from tests.conftest import app_client
    from tests.process import free_port

    bare = gr.Blocks().queue()._queue
    assert (bare.ANALYTICS_MAX_EVENTS, bare.ANAYLTICS_CACHE_FREQUENCY) == (10_000, 1)
    tables = []
    get_df = Queue._get_df
    monkeypatch.setattr(Queue, "_get_df", staticmethod(lambda records: tables.append(len(records)) or get_df(records)))
    demo = launch(studio, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        client = app_client(demo.local_url)
        for _ in range(3):
            client.predict("", api_name="/list_projects")
        assert demo._queue.events_recorded >= 3 and len(demo._queue.event_analytics) <= 1
        assert tables == []
    finally:
        demo.close()


def test_gradios_web_app_is_built_once_when_the_app_is_launched(studio, monkeypatch):
    """Gradio builds its web app (FastAPI routes and the page config) when Blocks are made, when they close, at each
    queue() and at launch(); only launch's is served. The app is built without the first three (counted on a bare
    Blocks first: a Gradio that no longer builds them leaves the test saying so), and the served one answers."""
    import gradio as gr
    from gradio import routes

    from app.ui import create_app, launch
    from tests.conftest import app_client
    from tests.process import free_port

    built: list[int] = []
    real = routes.App.create_app
    monkeypatch.setattr(routes.App, "create_app", staticmethod(lambda *a, **k: built.append(1) or real(*a, **k)))
    with gr.Blocks():
        gr.Markdown("bare")
    assert len(built) == 2  # made and closed: what the app skips
    built.clear()
    demo = create_app(studio)
    assert built == [] and demo.fns
    demo = launch(studio, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        assert len(built) == 1
        assert app_client(demo.local_url).predict("", api_name="/list_projects") is not None
    finally:
        demo.close()
    built.clear()
    with gr.Blocks():  # Gradio's own building is back once the app is made
        gr.Markdown("bare")
    assert len(built) == 2


@pytest.mark.parametrize("users", [False, True])
def test_no_event_tracks_its_progress_on_a_layout_block_or_where_it_is_hidden(studio, users):
    """Gradio's page sets a loading status on every progress target of every event that has run, at each event,
    copying the target's properties and, for a layout block, its whole subtree's (the screens' Tabs: the whole app).
    As the page receives it (the app's config): an event with its progress hidden tracks it on nothing; one that shows
    it, on its outputs that are not layout blocks (when it has any); and the screens' Tabs is still an output (a
    project opens on its screen)."""
    from app.ui import create_app

    config = create_app(studio, users=users).get_config_file()
    kind = {c["id"]: c["type"] for c in config["components"]}
    layout = {"tabs", "tabitem", "row", "column", "group", "accordion", "form", "sidebar"}
    screens = next(c["id"] for c in config["components"] if c["props"].get("elem_id") == "screens")
    deps = config["dependencies"]
    assert any(screens in d["outputs"] for d in deps)
    for d in deps:
        targets = d["outputs"] if d["show_progress_on"] is None else d["show_progress_on"]
        if d["show_progress"] == "hidden":
            assert targets == [], d
        elif any(kind[o] not in layout for o in d["outputs"]):  # (a gr.render's only output is its own column)
            assert not [t for t in targets if kind[t] in layout], d
            assert set(targets) <= set(d["outputs"]), d


def test_the_frame_governor_goes_first_into_each_html_page_and_into_nothing_else():
    """app/ui/page_script.py: a page sent in two chunks comes back whole, frames.js right after `<head>` and its
    length told again, the same length for a HEAD (whose body the server drops); a JSON answer passes as it was, and
    so does a HEAD answered with no body. (The governor at work: test_browser.py.)"""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from app.ui.page_script import SCRIPT, PageScript

    page = b"<!doctype html><html><HEAD lang=en><title>t</title></head><body></body></html>"

    async def app(scope, receive, send):
        kind, body = (b"text/html; charset=utf-8", page) if scope["path"] != "/config" else (b"application/json", b"{}")
        headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if scope["path"] == "/file" and scope["method"] == "HEAD":  # as Starlette's FileResponse answers a HEAD
            return await send({"type": "http.response.body", "body": b""})
        await send({"type": "http.response.body", "body": body[:9], "more_body": True})
        await send({"type": "http.response.body", "body": body[9:]})

    def get(path: str, method: str = "GET") -> tuple[dict, bytes]:
        sent: list[dict] = []

        async def send(message):
            sent.append(message)

        async def receive():
            return {"type": "http.request"}

        scope = {"type": "http", "method": method, "path": path, "headers": []}
        with ThreadPoolExecutor(1) as thread:  # its own event loop (a worker's Playwright holds this thread's)
            thread.submit(asyncio.run, PageScript(app)(scope, receive, send)).result()
        return dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])

    headers, body = get("/")
    assert body == page.replace(b"<HEAD lang=en>", b"<HEAD lang=en>" + SCRIPT)
    assert int(headers[b"content-length"]) == len(body) and SCRIPT.startswith(b"<script>// CHIEF's frame governor")
    assert get("/config") == ({b"content-type": b"application/json", b"content-length": b"2"}, b"{}")
    assert get("/", "HEAD") == (headers, body)
    as_it_was = {b"content-type": b"text/html; charset=utf-8", b"content-length": str(len(page)).encode()}
    assert get("/file", "HEAD") == (as_it_was, b"")


def test_gradio_imported_by_the_app_writes_no_stubs_and_compiles_each_event_doc_once():
    """Gradio parses every component's source and writes `.pyi` stubs next to it at each import (1.5 s of CPU), and
    compiles each event's docstring with jinja again for each component class; the app's processes skip the first
    and compile each docstring once (app/ui/gradio_import.py). In fresh processes, as `chief serve` imports it: the
    rendered docstrings are Gradio's own, and the names are still the ones Gradio's code reads, so a rename in
    Gradio fails here."""
    import subprocess
    import sys

    docs = (
        "import gradio.components.base as b; "
        "walk = lambda c: [x for s in c.__subclasses__() for x in (s, *walk(s))]; "
        "print(repr(sorted((c.__module__, c.__qualname__, e.event_name, getattr(c, e.event_name).__doc__) "
        "for c in set(walk(b.Component)) for e in c.EVENTS)))"
    )
    code = (
        "import app.ui.common, gradio.component_meta as m, gradio.events as ev; "
        "from app.ui.gradio_import import _no_stubs, _template; "
        "print(m.create_or_modify_pyi is _no_stubs, 'create_or_modify_pyi' in m.ComponentMeta.__new__.__code__.co_names,"
        " ev.Template is _template, 'Template' in ev.EventListener.set_doc.__code__.co_names,"
        " _template.cache_info().hits > 2 * _template.cache_info().misses); " + docs
    )
    ours, theirs = (
        subprocess.run([sys.executable, "-c", c], capture_output=True, text=True, timeout=300)
        for c in (code, "from app.ui import gradio_import as g; del g.PATCHES[g.EVENTS]; g.lighten(); " + docs)
    )  # the second renders Gradio's docstrings its own way (and writes no stubs either)
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr[-2000:] + theirs.stderr[-2000:]
    checks, rendered = ours.stdout.split("\n", 1)
    assert checks.split() == ["True"] * 5
    assert rendered == theirs.stdout and "{{" not in rendered and len(rendered) > 10_000


@pytest.mark.slow
def test_120_shots_and_50_versions_stay_responsive(client, studio):
    """Tab loads read one version's rows, not every version's media: the Storyboard and Story tabs ask the database as
    many questions for a 120-shot project with 50 versions as for the same film with 2; History (a node and a word
    of what changed per version) and the film's tabs (the walk up the version's line to the film it shows,
    `Clips.last_film`: none of these versions is rendered, so it goes back to v1) at most 10 more a version.
    Counted, not timed (a test run shares the machine)."""
    from sqlalchemy import event

    from storage.schema import Scene, Shot, Storyboard

    shots = [Shot(shot_id=f"s{i:03d}", prompt=f"shot number {i}", duration=5) for i in range(120)]
    board = Storyboard(
        title="Long",
        width=96,
        height=64,
        fps=8,
        scenes=[Scene(scene_id=f"sc{j}", shots=shots[j * 10 : (j + 1) * 10]) for j in range(12)],
    )

    def project(versions: int) -> tuple[str, int]:
        b = board.model_copy(deep=True)
        pid = studio.create_from_storyboard(b).project_id
        for n in range(versions - 1):
            b = b.model_copy(deep=True)
            b.scenes[n % 12].shots[0].prompt = f"edit {n}"
            studio.save_storyboard(pid, b, None)
        return pid, studio.version(pid).number

    statements: list[str] = []

    def count(conn, cursor, statement, *args):
        statements.append(statement)

    def questions(pid: str, v: int) -> dict[str, int]:
        asked = {}
        for api, args in (
            ("/load_storyboard", (pid, v)),
            ("/history", (pid, v, "overall")),
            ("/screening", (pid, v)),
            ("/render_info", (pid, v)),
            ("/load_story", (pid, v)),
        ):
            statements.clear()
            client.predict(*args, api_name=api)
            asked[api] = len(statements)
        return asked

    (few, v2), (many, v50) = project(2), project(50)
    assert (v2, v50) == (2, 50)
    engines = (studio.db.engine, studio.db.read_engine)
    for engine in engines:
        event.listen(engine, "before_cursor_execute", count)
    try:
        small, large = questions(few, v2), questions(many, v50)
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", count)
    print("statements per tab load (2 versions, 50 versions):", small, large)
    assert all(small[api] > 0 for api in small), small  # the count sees the tabs' reads
    per_version = ("/history", "/screening", "/render_info")
    assert {api: n for api, n in large.items() if api not in per_version} == {
        api: n for api, n in small.items() if api not in per_version
    }
    walked = {api: large[api] - small[api] for api in per_version}
    assert all(0 <= n <= 10 * (v50 - v2) for n in walked.values()), walked


def test_guard_turns_known_failures_into_one_line_for_handlers_and_generators():
    import gradio as gr

    from app.errors import StudioError
    from app.ui.common import guard

    def handler(kind):
        raise kind("no such project P9\n  (traceback details)")

    def following(kind):
        yield "started"
        raise kind("no such project P9\n  (traceback details)")

    with pytest.raises(gr.Error) as e:
        guard(handler)(StudioError)
    assert e.value.message == "no such project P9" and e.value.__cause__ is None

    async def first_then_error(kind):
        seen = []
        with pytest.raises(gr.Error) as e:
            async for item in guard(following)(kind):
                seen.append(item)
        yield seen, e.value

    ((seen, error),) = steps(first_then_error(StudioError))  # a generator handler runs as an async one
    assert seen == ["started"] and error.message == "no such project P9"
    with pytest.raises(ZeroDivisionError):  # a bug is not dressed up as a user's error
        guard(handler)(ZeroDivisionError)
    with pytest.raises(ZeroDivisionError):
        steps(guard(following)(ZeroDivisionError))


def test_notes_to_the_page_are_text_and_every_one_goes_through_notice(capsys):
    from pathlib import Path

    from app.ui.common import notice

    notice("shot <img src=x onerror=alert(1)> has no clip as it stands")  # outside a page, Gradio prints it
    assert capsys.readouterr().out.strip() == "shot &lt;img src=x onerror=alert(1)&gt; has no clip as it stands"
    screens = [f for f in (Path(__file__).parents[2] / "app" / "ui").rglob("*.py") if f.name != "common.py"]
    assert len(screens) > 10
    raw = [f.name for f in screens if re.search(r"gr\.(Info|Warning|Success)\(", f.read_text())]
    assert raw == []  # a toast renders HTML: no screen calls it with an unescaped message


def test_a_poster_says_whose_film_it_shows(studio, board):
    """The start screen's poster shows the latest film: the current version's own, else it says which version's
    it is (a draft saved after a render shows the earlier film, not one of its own)."""
    from app.ui.screens.projects import poster

    pid = studio.create_from_storyboard(board).project_id
    project = next(p for p in studio.projects() if p.id == pid)
    assert poster(studio, project)["meta"].startswith("v1 · not rendered yet")
    studio.render(pid)
    assert poster(studio, project)["meta"] == "v1 · rendered just now"
    v2, _ = studio.edit_shot(pid, "s2", [("prompt", "A whale breaches in grey water")])
    draft = studio._projects.fold(v2, v2.storyboard.model_copy(update={"title": "Tiny Whale"}), "edit", "title")
    assert (draft.number, draft.draft) == (3, True)
    assert poster(studio, project)["meta"] == "v3 (draft) · v1's film, rendered just now"
