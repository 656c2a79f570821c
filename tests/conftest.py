"""Shared test setup: offline environment, a Studio on a temp home, tiny storyboards."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# One compute thread per process: `make test` runs 3 workers on 2 cores, and each torch / OpenBLAS product split over
# 2 threads waits on a thread the other workers hold — measured on the loaded machine: a 64-channel conv 98 ms on 2
# threads, 5.6 ms on 1; tests/generation/test_tiers.py 174 s -> 50 s. Subprocesses (chief serve, chief new) inherit it.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
for var in (
    "CHIEF_LLM_BASE_URL",
    "CHIEF_LLM_API_KEY",
    "OPENAI_API_KEY",
    "CHIEF_AGENTS",
    "CHIEF_VIDEO_BACKEND",
    "CHIEF_VIDEO_MODEL",
    "CHIEF_HOME",
    "CHIEF_IMAGE_MODEL",
    "CHIEF_VACE_MODEL",
    "CHIEF_EMBED_MODEL",
):
    os.environ.pop(var, None)  # tests never pick up a developer's real endpoint or data folder
# Voiced lines, music cues and effects are content-addressed: one folder for the whole test session, so a line the
# suite has voiced once is read back (Piper takes about a second a line) by every test that renders it again.
os.environ["CHIEF_SOUND_CACHE"] = tempfile.mkdtemp(prefix="chief-sound-")
atexit.register(shutil.rmtree, os.environ["CHIEF_SOUND_CACHE"], True)

import ipaddress  # noqa: E402
import socket  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from storage.schema import Character, Scene, Shot, Storyboard  # noqa: E402


def _is_loopback(host: object) -> bool:
    if host in ("localhost", None, ""):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


class RemoteCallForbidden(ConnectionRefusedError):
    """A test tried to reach a non-loopback host (a real model endpoint)."""


@pytest.fixture(autouse=True)
def forbid_remote_network(monkeypatch):
    """Forbid real model calls: name resolution and connections to anything but 127.0.0.1/::1 fail."""
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host, *args, **kwargs):
        if not _is_loopback(host):
            raise RemoteCallForbidden(f"tests may not reach {host!r}: only the local fake server")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            raise RemoteCallForbidden(f"tests may not connect to {address[0]!r}: only the local fake server")
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)


def tiny_board(n: int = 4, duration: float = 1.0, shot_overrides: dict[int, dict] | None = None) -> Storyboard:
    """A small storyboard that renders in well under a second per shot with the animatic."""
    prompts = [
        "A lighthouse on a rock at dawn",
        "The keeper climbs the stairs, warm lamplight",
        "Night storm, dark waves crash",
        "A whale surfaces in golden light",
        "Calm sea at noon, bright sun",
        "Close-up of the keeper smiling",
    ]
    shots = [
        Shot(
            shot_id=f"s{i + 1}",
            prompt=prompts[i % len(prompts)],
            duration=duration,
            seed=i + 1,
            narration="The keeper waits." if i == 0 else "",
            characters=["Keeper"] if i % 2 else [],
            **(shot_overrides or {}).get(i, {}),
        )
        for i in range(n)
    ]
    half = max(1, n // 2)
    return Storyboard(
        title="Tiny",
        logline="A keeper and a whale",
        style_guide="muted colours",
        characters=[Character(name="Keeper", description="old man in a yellow coat")],
        scenes=[
            Scene(scene_id="a", title="A", shots=shots[:half]),
            *([Scene(scene_id="b", title="B", shots=shots[half:])] if shots[half:] else []),
        ],
        fps=8,
        width=128,
        height=72,
    )


@pytest.fixture
def server():
    """A real local OpenAI-compatible server (tests/agents/openai_server.py), scripted per test."""
    from tests.agents.openai_server import FakeOpenAI

    with FakeOpenAI() as s:
        yield s


@pytest.fixture(scope="session")
def empty_database(tmp_path_factory):
    """seed(home) -> `home`, holding a copy of an empty database at the newest migration unless it has one: the
    database is made once per run by the product's own migrations (storage.db), so a test's new data folder does not
    run them again (~85 ms of CPU each; the migration tests make their own)."""

    def build(folder: Path) -> str:
        from storage.db import Database

        folder.mkdir(parents=True)
        Database(folder / "chief.db").close()  # the last connection closed: the WAL is checkpointed and gone
        assert not (folder / "chief.db-wal").exists()
        return str(folder / "chief.db")

    get = _built_once(tmp_path_factory, "empty-database", {"db": build})

    def seed(home: Path) -> Path:
        if not (home / "chief.db").exists():
            home.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(get("db"), home / "chief.db")
        return home

    return seed


@pytest.fixture
def make_studio(tmp_path, empty_database):
    from app.config import load_config
    from app.studio import Studio

    made = []

    def make(backend=None, agents=None, **settings):
        settings.setdefault("narration", False)
        settings.setdefault("sound_cache", os.environ["CHIEF_SOUND_CACHE"])
        cfg = load_config({"home": tmp_path / "home", **settings}, environ={})
        empty_database(cfg.home)
        st = Studio(cfg, backend=backend, agents=agents)
        made.append(st)
        return st

    yield make
    for st in made:
        st.db.close()


@pytest.fixture
def studio(make_studio):
    return make_studio()


@pytest.fixture
def chief(tmp_path, empty_database):
    """The CLI through click's CliRunner on a temp home: `chief("--json", "new", ...)` asserts exit 0 unless
    `ok=False`; `env` adds variables (narration is off); `chief.home` is the data folder."""
    home = empty_database(tmp_path / "home")

    def run(*args, ok=True, env=None):
        res = invoke_cli(home, args, {"CHIEF_NARRATION": "0", **(env or {})})
        if ok:
            assert res.exit_code == 0, res.output + res.stderr
        return res

    run.home = home
    return run


def invoke_cli(home: Path, args, env: dict):
    """`chief --home HOME ARGS` in this process (click's CliRunner, `env` added to the environment meanwhile); an
    exception the CLI did not turn into its one-line error is raised, so it fails the test."""
    from click.testing import CliRunner

    from app.cli import main

    return CliRunner().invoke(main, ["--home", str(home), *args], env=env, catch_exceptions=False)


def job_ended(jobs, job, wait: float = 60) -> bool:
    """`job` ended and its thread is gone: once a job's ended record is written and it says it ended, its thread
    starts what the queue admits next and writes their records (app.server.jobs `_finish`), so a test that ends on
    `wait_ended` alone leaves a thread writing."""
    import threading

    if not jobs.wait_ended(job, wait):
        return False
    for t in threading.enumerate():
        if t.name == f"chief-{job.id}":
            t.join(wait)
    return not any(t.name == f"chief-{job.id}" for t in threading.enumerate())


def app_client(url: str, **kwargs):
    """A gradio_client Client for the app at `url`. Its requests wait up to a minute: httpx's default of 5 s was
    passed once on the loaded CI machine while the app answered its first config request (a refused stop). One TLS
    context serves them all: gradio_client builds an httpx client for each request, and httpx loads its CA bundle
    for each (~30 ms of CPU; ~60 s over a run, for apps served over plain HTTP)."""
    import httpx
    from gradio_client import Client

    kwargs.setdefault("ssl_verify", _tls())  # passed to httpx as `verify`, which takes a context
    return Client(url, verbose=False, httpx_kwargs={"timeout": httpx.Timeout(60.0)}, **kwargs)


@functools.lru_cache(maxsize=1)
def _tls():
    import httpx

    return httpx.create_ssl_context()


def _built_once(tmp_path_factory, kind: str, builders: dict):
    """get(name) -> the folder of builders[name], built once per test run: the xdist workers share one folder
    (the run's temp root) under a lock per model, so a tiny pipeline is built by whichever worker needs it first."""
    import fcntl

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / kind
    root.mkdir(exist_ok=True)

    def get(name: str) -> str:
        done = root / f"{name}.built"
        with open(root / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                folder = root / name
                shutil.rmtree(folder, ignore_errors=True)
                done.write_text(str(builders[name](folder)))
        return done.read_text()

    return get


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """tiny_models(name) -> the saved folder of `generation.tiny.BUILDERS[name]` (tiny random-weight pipelines from
    the real diffusers classes), built once per test run. Tests read these folders and never change them."""
    from generation.tiny import BUILDERS

    return _built_once(tmp_path_factory, "tiny-models", BUILDERS)


@pytest.fixture(scope="session")
def tiny_audio_models(tmp_path_factory):
    """tiny_audio_models(name) -> the saved folder of `generation.audio.tiny.BUILDERS[name]`, built once per run."""
    from generation.audio.tiny import BUILDERS

    return _built_once(tmp_path_factory, "tiny-audio-models", BUILDERS)


# Debian's build of Chromium's headless shell (package chromium-headless-shell: the same Blink and V8 as its
# `chromium`, without the desktop browser's compositor and UI), which Playwright itself runs for headless tests.
# The browser tests: 928 -> 776 s of machine CPU and 472 -> 395 s of wall on 3 workers (side by side, this stop).
CHROMIUM = "/usr/bin/chromium-headless-shell"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def chromium():
    """One Chromium per test process (per xdist worker), started when a browser test first asks for it: Debian's
    headless shell (`CHROMIUM`), driven by the playwright pip package. Tests never share a context (see `page`)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make system-deps` (apt-get install chromium-headless-shell)")
    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
    finally:
        pw.stop()


@pytest.fixture
def browser(chromium):
    """The shared Chromium, for a test that opens its own contexts: they are closed when the test ends."""
    before = set(chromium.contexts)
    yield chromium
    for context in chromium.contexts:
        if context not in before:
            context.close()


@pytest.fixture
def page(chromium):
    """A page in a fresh browser context (its own cookies and storage), closed with its context after the test.
    With CHIEF_TEST_LATE_FRAMES_MS set, its animation frames come that late (`late_frames`)."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    if os.environ.get("CHIEF_TEST_LATE_FRAMES_MS"):
        late_frames(context, int(os.environ["CHIEF_TEST_LATE_FRAMES_MS"]))
    try:
        pg = context.new_page()
        pg.set_default_timeout(60_000)
        yield pg
    finally:
        context.close()


# Gradio draws a tab's contents, and a closed accordion's, only when they are first shown, then pushes the values it
# holds for them into them once more an animation frame later (gradio js/core/src/init.svelte.ts,
# `render_previously_invisible_children`: a tick, Svelte's `settled()`, a frame, then every prop set anew). A value
# typed or an accordion opened in between is undone: a creator is not that quick, a test on a loaded machine, whose
# frames come late, is. A test that acts on what it has just shown waits for `shown` first.
SHOWN_JS = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def shown(what) -> None:
    """Wait until `what` (a locator in what the page just showed for the first time) is visible, then for the frames
    in which Gradio pushes its values into it again (SHOWN_JS): what is typed or clicked there afterwards stays."""
    from playwright.sync_api import expect

    expect(what).to_be_visible()
    what.page.evaluate(SHOWN_JS)


def late_frames(context, ms: int) -> None:
    """Every animation frame of the context's pages comes `ms` late, as on a loaded machine: a test that acts
    between Gradio's showing something and its frame (see `shown`) then fails, not once in many runs (the Settings
    endpoint test without its waits: in every run at 400 ms, in one of three at 300). `CHIEF_TEST_LATE_FRAMES_MS=300`
    runs every `page` so (there, two tests' films opened by a link to their screen stay empty: Gradio's too, seen at
    300 ms, not at 150)."""
    context.add_init_script(
        "const frame = window.requestAnimationFrame.bind(window);"
        f" window.requestAnimationFrame = (f) => setTimeout(() => frame(f), {int(ms)});"
    )


def pytest_terminal_summary(terminalreporter):
    """The time the tests of each folder took (setup, call and teardown summed; with xdist, summed over the
    workers, so the figures add up to more than the wall time), slowest first: where the suite's time goes."""
    per_folder: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) and getattr(report, "duration", None) is not None:
                parts = report.nodeid.split("::")[0].split("/")
                folder = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
                per_folder[folder] = per_folder.get(folder, 0.0) + report.duration
    if per_folder:
        terminalreporter.write_sep("-", "time per folder (s, summed over workers)")
        for folder, seconds in sorted(per_folder.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line(f"{seconds:8.1f}  {folder}")
        terminalreporter.write_line(f"{sum(per_folder.values()):8.1f}  in all")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the test ids
def pytest_collection_modifyitems(config, items):
    """A test that drives Chromium is marked `browser`, whichever folder it is in (`make check` leaves them out).

    The other tests that share a module- or package-scoped fixture (a llama.cpp server, a Ray cluster, a module's
    render) are one xdist group, so it is made once, on one worker, not once on every worker (`make test` runs with
    `--dist loadgroup`; xdist hands out the largest groups first). A browser module's tests are one group too: they
    share its served app (`chief serve`, ~13 s to start), which ungrouped was started on every worker that ran one of
    them; grouped, a module's tests run on one worker in file order, so what they share is the same in every run.
    The 65 browser tests on 3 workers: 1278 s summed ungrouped (a run last stop), 1090 s grouped (this stop)."""
    for item in items:
        if "chromium" in item.fixturenames:
            item.add_marker(pytest.mark.browser)
        shared = [
            d.baseid or "." for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs[-1:]
            if d.scope in ("module", "package")
        ]  # fmt: skip
        if shared:
            item.add_marker(pytest.mark.xdist_group(min(shared, key=len)))


def steps(out) -> list:
    """Every item a registered handler gives the page: a guarded handler is an async generator (it may follow a
    job on the event loop, app.ui.common.guard), run here to its end on a loop of its own in a thread of its own (the
    calling thread may already run one: playwright's sync API does), in the caller's context (who acts); a plain
    generator is listed."""
    import asyncio
    import contextvars
    import inspect
    from concurrent.futures import ThreadPoolExecutor

    if not inspect.isasyncgen(out):
        return list(out)

    async def drain():
        return [item async for item in out]

    context = contextvars.copy_context()
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(context.run, asyncio.run, drain()).result()
