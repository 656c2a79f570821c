"""The CHIEF web app: Gradio Blocks over the Studio, one package per screen (app/ui/screens/).

`create_app(studio)` builds the Blocks (tests build it without serving); `launch(...)` serves it:
127.0.0.1 by default, no share link, no analytics, renders one at a time through the queue, behind
`app.server.security.Guard` (Host and Origin checks, login limits, a Content-Security-Policy). Files the
page downloads (films, archives) and uploads are kept in a private folder of the data folder
(`tmp/gradio`, mode 0700), not in the shared /tmp.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

from app.ui.gradio_import import lighten

lighten()  # before any screen imports gradio

OFFLINE_ENV = {
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_SSR_MODE": "False",
}
# The open project, version and screen are in the address too (`?project=ID&version=N&screen=NAME`), so the address
# bar is a link to what the page shows: a reload of this tab, a bookmark or a link opens it (see _restore).
LINK_JS = """
function chiefLink(pid, version, tab) {
  const url = new URL(window.location.href);
  for (const key of ['project', 'version', 'screen']) url.searchParams.delete(key);
  if (pid) {
    url.searchParams.set('project', pid);
    if (version) url.searchParams.set('version', String(version));
    url.searchParams.set('screen', tab || 'projects');
  }
  if (url.href !== window.location.href) window.history.replaceState(window.history.state, '', url);
}
"""
SAVE_JS = (
    "(pid, version, tab) => { (" + LINK_JS + ")(pid, version, tab);"
    " return { pid: pid || '', version: version, tab: tab || 'projects' }; }"
)
# how often an idle server's queue looks for work, and for progress to send (see create_app; bench/idle_server.py)
IDLE_POLL_S, PROGRESS_POLL_S = 0.02, 0.1
WEB_THREADS = 40  # Gradio's thread pool: each step of a sync handler; no page waiting on a job holds one
WEB_EVENTS = 2000  # events in progress at once: pages following jobs (awaiting, no thread) and every other event
SCREENS = ("projects", "story", "storyboard", "render", "screening", "revise", "history", "settings")
TITLES = {
    "projects": "Projects",
    "story": "Story",
    "storyboard": "Storyboard",
    "render": "Render",
    "screening": "Screening room",
    "revise": "Revise",
    "history": "History",
    "settings": "Settings",
}
CSS = """
#status_bar { font-size: 0.85em; padding: 4px 8px; border-bottom: 1px solid var(--border-color-primary);
  position: sticky; top: 0; z-index: 10; background: var(--background-fill-primary); }
.job progress { width: 240px; vertical-align: middle; }
.job.failed { color: var(--error-text-color, #b91c1c); }
.job.stopped { color: var(--body-text-color-subdued); }
footer { display: none !important; }
#steps { padding: 0 8px; }
.film-player [data-testid="block-label"] { position: static; margin-bottom: 4px; }  /* above the picture, not on it */
body:not([data-chief-ready]) #screens, body:not([data-chief-ready]) #steps { pointer-events: none; opacity: 0.6; }
"""
# The screens take clicks once the page has restored its project and screen: a click or a keystroke before that
# would be overwritten by what the restore writes (on a busy server that is seconds after the page shows).
READY_JS = "(pid, version, tab) => { (" + LINK_JS + ")(pid, version, tab); document.body.dataset.chiefReady = 'yes'; }"


def _quiet_env() -> None:
    for k, v in OFFLINE_ENV.items():
        os.environ.setdefault(k, v)


def theme():
    """The default theme with system fonts: the page asks no font server for anything."""
    import gradio as gr

    fonts = [gr.themes.Font("system-ui"), gr.themes.Font("sans-serif")]
    mono = [gr.themes.Font("ui-monospace"), gr.themes.Font("monospace")]
    return gr.themes.Default(font=fonts, font_mono=mono)


def private_temp_dir(home) -> Path:
    """`home/tmp/gradio`, readable by this user only: where Gradio copies what it serves and receives."""
    folder = Path(home) / "tmp" / "gradio"
    folder.mkdir(parents=True, exist_ok=True)
    for p in (folder.parent, folder):
        p.chmod(0o700)
    return folder


def upload_cap(config) -> int:
    """The largest upload the web app accepts, in bytes: the largest thing any of its upload buttons takes (a track,
    a picture, a storyboard file, an archive for Import: `web_archive_mb`). Gradio refuses a bigger file while it
    streams in, and `security.Guard` a bigger body before it is read."""
    from app.services.keyframes import MAX_UPLOAD_BYTES
    from generation.audio.upload import UploadLimits
    from storage.files import MAX_STORYBOARD_BYTES

    return max(UploadLimits().max_bytes, MAX_UPLOAD_BYTES, MAX_STORYBOARD_BYTES, config.web_archive_mb << 20)


def sweep_temp(folder: Path, older_than: float) -> int:
    """Remove what is left in the private temp folder (uploads, copies of served files, the half-written files of
    uploads a refusal or a dropped connection cut off) once it is `older_than` seconds old. Everything there is a
    copy: the media store keeps what CHIEF uses."""
    import time

    removed = 0
    for p in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True) if folder.is_dir() else ():
        try:
            if time.time() - p.lstat().st_mtime <= older_than:
                continue
            if p.is_dir() and not p.is_symlink():
                if not any(p.iterdir()):
                    p.rmdir()
            else:
                p.unlink()
                removed += 1
        except OSError:
            continue
    return removed


def create_app(studio, users: bool = False):
    """The Blocks app over `studio`: a status bar and one tab per screen. With `users`, each event acts as the
    account signed in (`chief serve --users`), else as the local owner (storage.owners)."""
    from storage.media import STALE_SECONDS

    _quiet_env()
    temp = private_temp_dir(studio.config.home)
    sweep_temp(temp, STALE_SECONDS)  # what an earlier server (or a killed one) left
    os.environ["GRADIO_TEMP_DIR"] = str(temp)  # read when the Blocks are made
    import gradio as gr

    from app.server.jobs import Jobs
    from app.ui import flow
    from app.ui.common import Ctx, guard, page_session, request_actor
    from app.ui.screens import builders
    from storage import owners

    owners.add_source(request_actor)  # every project lookup in an event checks the signed-in account
    # each browser session sees its own jobs; a job on a project is started only for an account that may change it
    # a class's server runs its long work in worker processes, one lane each (app/workers.py): the web process serves
    workers = _workers(studio) if users and studio.portable else None
    runner = workers.run if workers is not None else None
    jobs = Jobs.for_studio(studio, owner=page_session, check=studio.sharing.writable, shared=users, runner=runner)
    ctx = Ctx(studio=studio, jobs=jobs)
    # Gradio deletes the uploads and served copies it made once they are 6 hours old (checked every hour),
    # and all of them when the server stops
    with (
        _web_app_at_launch_only(),
        gr.Blocks(title="CHIEF", analytics_enabled=False, delete_cache=(3600, STALE_SECONDS)) as demo,
    ):
        ctx.demo = demo
        # without --users everyone acts as the account that serves (`chief --user NAME serve`; the local owner)
        serving = owners.current() or owners.Actor(owners.LOCAL_OWNER)
        # the app's own state on the Blocks (Gradio has no typed slot for it): read by request_actor and the tests
        demo.chief_actor = _signed_in(studio) if users else (lambda request: serving)  # pyright: ignore[reportAttributeAccessIssue]
        demo.chief_ctx = ctx  # pyright: ignore[reportAttributeAccessIssue] - tests reach the jobs through it
        ctx.status = gr.Markdown(elem_id="status_bar")
        if users:  # ends the account's sessions: a POST from this page only (security.py); idle ones end by themselves
            gr.HTML('<form method="post" action="/logout"><button type="submit" id="sign_out" class="lg secondary sm">'
                    "Sign out</button></form>", elem_id="sign_out_form", js_on_load=None)  # fmt: skip
        ctx.steps = gr.HTML(elem_id="steps", js_on_load=flow.STEPS_JS, css_template=flow.CSS)
        with gr.Row(visible=False):
            ctx.pid = gr.Textbox(label="project", elem_id="current_project")
            ctx.version = gr.Number(label="version", precision=0, elem_id="current_version")
            ctx.screen = gr.Textbox(value="projects", label="screen", elem_id="current_screen")
        if users:  # the open project's owner shares it read-only (app/ui/share_box.py)
            from app.ui.share_box import ShareBox

            ShareBox(ctx)
        # The open project, version and screen live in the browser too, so a reload (or a second tab) comes back
        # to them and finds their running jobs. The secret is the data folder's own, so a restarted server still
        # reads what the browser kept (it only scrambles the value: the page is sent it anyway).
        saved = gr.BrowserState(
            {"pid": "", "version": None, "tab": "projects"},
            storage_key="chief_session",
            secret=browser_state_secret(studio.config.home),
        )
        with gr.Tabs(elem_id="screens") as ctx.screens:
            build = builders()
            for name in SCREENS:
                with gr.Tab(TITLES[name], id=name, elem_id=f"tab_{name}") as tab:
                    ctx.tabs[name] = tab
                    build[name](ctx)
            if users:  # the Class screen: built hidden, shown when a teacher's page loads (app/ui/teacher.py)
                from app.ui import teacher

                with gr.Tab("Class", id="teacher", elem_id="tab_teacher", visible=False) as ctx.tabs["teacher"]:
                    teacher.build(ctx)
        status = guard(lambda p, v: _status(ctx, p, v))
        bar = [ctx.status, ctx.steps]
        for name, tab in ctx.tabs.items():
            tab.select(None, None, ctx.screen, js=f"() => {name!r}", api_visibility="private", show_progress="hidden")
            tab.select(status, [ctx.pid, ctx.version], bar, api_visibility="private", show_progress="hidden")
        for comp in (ctx.pid, ctx.version):
            comp.change(status, [ctx.pid, ctx.version], bar, api_visibility="private", show_progress="hidden")
        for comp in (ctx.pid, ctx.version, ctx.screen):
            # written in the browser as the value changes: a reload right after a save finds the new version
            comp.change(None, [ctx.pid, ctx.version, ctx.screen], saved, js=SAVE_JS, api_visibility="private")
        ctx.steps.go(guard(flow.go), None, ctx.screens, api_visibility="private")
        # the project, version and screen in one step (a change of the project writes the saved state again, with
        # the screen it then holds), then the status bar, the path and the screen together (the page opens on
        # Projects; when that is where it was, a tab chosen meanwhile stays chosen)
        demo.load(
            guard(lambda s: _restore(studio, s)),
            saved,
            [ctx.pid, ctx.version, ctx.screen],
            api_visibility="private",
            show_progress="hidden",
        ).then(
            lambda p, v, screen: (*status(p, v), gr.skip() if screen == "projects" else gr.Tabs(selected=screen)),
            [ctx.pid, ctx.version, ctx.screen],
            [*bar, ctx.screens],
            api_visibility="private",
            show_progress="hidden",
        ).then(
            None,
            [ctx.pid, ctx.version, ctx.screen],
            None,
            js=READY_JS,
            api_visibility="private",
            show_progress="hidden",
        )
    _closing_with(demo, workers)
    _progress_where_shown(demo)
    with _web_app_at_launch_only():
        demo.queue(
            default_concurrency_limit=None
        )  # long work runs as jobs (app/server/jobs.py); renders take turns there
    # Gradio's queue looks for work every 1 ms when it has none (and for progress every 10 ms; 50 and 100 ms on
    # Windows): an idle `chief serve` took 7% of a core. Every 20 ms costs an event at most 20 ms before it starts.
    demo._queue.sleep_when_free, demo._queue.progress_update_sleep_when_free = IDLE_POLL_S, PROGRESS_POLL_S
    # It also keeps a record of each event (the last 10,000) for its monitoring page, which CHIEF does not serve
    # (`enable_monitoring=False`), and after every event sums them all up in a pandas table: 16-25 ms of CPU an event
    # once a few dozen are recorded. One record kept, never summed.
    demo._queue.ANALYTICS_MAX_EVENTS, demo._queue.ANAYLTICS_CACHE_FREQUENCY = 1, sys.maxsize
    _room_for_waiting_pages(demo._queue)
    return demo


def _workers(studio):
    """The worker processes of a class's server: the GPU lane's places (one per device unless `queue_running` says
    more), and `queue_cpu_running` for plans and critiques."""
    from app.workers import WorkerPool

    c = studio.config
    gpu = c.queue_running or max(1, int(getattr(studio.backend, "max_parallel", 1)))
    return WorkerPool(c, {"gpu": gpu, "cpu": c.queue_cpu_running})


def _closing_with(demo, workers) -> None:
    """The worker processes stop when the server closes; `demo.chief_workers` names them (tests read it)."""
    demo.chief_workers = workers
    if workers is None:
        return
    close = demo.close

    def close_with_workers(*args, **kwargs):
        workers.close()
        return close(*args, **kwargs)

    demo.close = close_with_workers


def _room_for_waiting_pages(queue) -> None:
    """Gradio's queue runs at most `max_threads` events at once (its `active_jobs` slots, made when the server
    starts), whether an event holds a thread or awaits: 40 pages following queued renders filled every slot and
    the whole server froze. A page that follows a job awaits on the event loop (app.ui.common.follow), so it costs
    a slot and no thread: the slots are WEB_EVENTS, the threads stay WEB_THREADS (Gradio's limiter for sync steps)."""
    start = queue.start

    def start_with_room() -> None:
        queue.max_thread_count = WEB_EVENTS
        start()

    queue.start = start_with_room


@contextlib.contextmanager
def _web_app_at_launch_only():
    """Within the block, Gradio does not build its web app (`gradio.routes.App.create_app`).

    Gradio builds it (the FastAPI app with its ~80 routes, and the page's config again) when the Blocks are made, when
    they close, at each `queue()` and at `launch()`; only launch's is served. Measured in the process: `create_app`
    0.63 s of CPU before, 0.16 s after; a whole launch 0.56-0.67 s before, 0.33-0.54 s after; a `chief serve` start
    4.9 s before, 4.4 s after (means of six, alternated). Held under the launch lock, so no launch in this process
    runs while it is skipped."""
    from gradio import routes

    real = routes.App.__dict__["create_app"]
    with _LAUNCH_LOCK:
        routes.App.create_app = staticmethod(_no_web_app)
        try:
            yield
        finally:
            routes.App.create_app = real


def _no_web_app(blocks, *args, **kwargs) -> Any:  # what Gradio then stores as the Blocks' app, until launch()
    return None


def _progress_where_shown(demo) -> None:
    """Give each event the components its progress shows on (Gradio's `show_progress_on`): none when it is hidden,
    its outputs that are not layout blocks otherwise.

    Gradio 6's page keeps a loading status for every output and input of each event that has run, and at every event
    it sets them all again, copying each one's properties (a layout block's: its whole subtree's) and finding each in
    the page's tree. An output that is the screens' Tabs (opening a project, a step of the path) made every later
    click copy the whole app. Measured in the headless shell, a storyboard page: 12 tab switches took 11.5-12.4 s of
    the page's main thread, 6.1-6.8 s with this; its load 2.5-2.6 s, 2.1-2.2 s. What the page shows is the same (a
    hidden progress stays hidden; a shown one covers the changed widgets, not the whole screen)."""
    from gradio.blocks import BlockContext  # the layout blocks: Tabs, Tab, Row, Column, Group, Accordion...

    for fn in demo.fns.values():
        if fn.show_progress_on is not None:
            continue
        if fn.show_progress == "hidden":
            fn.show_progress_on = []
        elif any(isinstance(o, BlockContext) for o in fn.outputs):
            shown = [o for o in fn.outputs if not isinstance(o, BlockContext)]
            if shown:
                fn.show_progress_on = shown


def _signed_in(studio):
    """request -> the Actor of the account it is signed in as (one lookup per event); an event without a signed-in
    name acts as no account and opens nothing."""
    from app.errors import StudioError
    from storage.owners import Actor

    def actor(request):
        cached = getattr(request, "_chief_actor", None)
        if cached is None:
            # the account the Guard signed the request in as (app/server/security.py): every route has it, the
            # component server functions' too (a card's ▶), whose request carries no Gradio username
            scope = getattr(getattr(request, "request", request), "scope", None)  # a gr.Request's own, or the route's
            signed = scope.get("chief.account") if isinstance(scope, dict) else None
            name = signed or getattr(request, "username", None) or ""
            try:
                cached = studio.accounts.actor(name) if name else Actor("")
            except StudioError:
                cached = Actor("")  # removed since signing in: opens nothing
            request._chief_actor = cached
        return cached

    return actor


def _status(ctx, pid, v):
    """The status bar and the path; skipped while the project and version are out of step (opening or planning changes both:
    each fires its own change, the first with the other's old value), so no "has no version" flashes up."""
    import gradio as gr

    from app.ui.common import ver
    from storage.repository import NotFound

    try:
        return ctx.status_update(pid, v)
    except NotFound:
        if not pid or ver(v) is None:
            raise
        ctx.studio.project(pid)  # an unknown project is still an error; a version it lacks is a step behind
        return gr.skip(), gr.skip()


def _screen(saved) -> str:
    """The screen this browser had open (Projects if it names none we have)."""
    tab = (saved or {}).get("tab")
    return tab if tab in SCREENS else "projects"


def browser_state_secret(home) -> str:
    """A key for the page's saved session that outlives a restart of the server (Gradio draws a new one per start
    otherwise, and the browser's saved project then reads as nothing). Derived from the data folder."""
    import hashlib

    return hashlib.sha256(f"chief browser state {Path(home).resolve()}".encode()).hexdigest()[:32]


def _restore(studio, saved, link: dict | None = None) -> tuple[str, int | None, str]:
    """The project, version and screen the page opens: the address's (`?project=ID&version=N&screen=NAME`: a link,
    a bookmark, a reload of this tab), else the ones this browser had open, if they still exist. A linked project
    that is not there (or not this account's) opens Projects and says so."""
    from storage.repository import NotFound

    link = link if link is not None else _page_link()
    linked = bool(link.get("project"))
    if linked:
        saved = {"pid": link["project"], "version": link.get("version"), "tab": link.get("screen") or "projects"}
    pid, number = (saved or {}).get("pid") or "", (saved or {}).get("version")
    if not pid:
        return "", None, _screen(saved)
    try:
        return pid, studio.version(pid, int(number) if number else None).number, _screen(saved)
    except (NotFound, ValueError, TypeError):
        if linked:
            from app.ui.common import notice

            what = f"v{number} of project {pid}" if number else f"project {pid}"
            notice(f"The link names {what}, which is not here (or not yours): pick one from Projects.")
        return "", None, "projects"


def _page_link() -> dict:
    """The query of the page the event comes from (Gradio's client sends the page's own query with each event)."""
    from gradio.context import LocalContext

    request = LocalContext.request.get(None)
    query = getattr(request, "query_params", None) if request is not None else None
    return {k: str(v)[:200] for k, v in dict(query or {}).items() if k in ("project", "version", "screen")}


def parse_auth(auth: str | None) -> tuple[str, str] | None:
    if not auth:
        return None
    user, sep, password = auth.partition(":")
    if not sep or not user or not password:
        raise ValueError("auth must look like user:password")
    return user, password


def is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_proxies(text: str | None) -> str:
    """`--forwarded-allow-ips`: the reverse proxies (IP addresses or networks, comma-separated) whose
    X-Forwarded-For names the client, as uvicorn's `forwarded_allow_ips` takes them; "" trusts no one. Anything
    but an address or a network (a name, `*`) is refused: `*` would let every client name its own address."""
    import ipaddress

    items = [t.strip() for t in (text or "").split(",") if t.strip()]
    for item in items:
        try:
            ipaddress.ip_network(item, strict=False) if "/" in item else ipaddress.ip_address(item)
        except ValueError:
            raise ValueError(
                f"{item!r} is not an IP address or network: name the proxy's address (e.g. 127.0.0.1 or 10.0.0.0/8)"
            ) from None
    return ",".join(items)


_LAUNCH_LOCK = threading.Lock()


def launch(
    studio,
    host: str = "127.0.0.1",
    port: int = 7860,
    auth: str | None = None,
    prevent_thread_lock: bool = False,
    quiet: bool = False,
    forwarded_allow_ips: str = "",
    users: bool = False,
    idle_minutes: float | None = None,
    clock=None,
):
    """Serve the app. Binding anything but loopback requires auth (`auth`, one person, or `users`: the accounts of
    `chief users`, each seeing only their own projects); never a share link.

    The client address (what login limits count by) is the connection's peer: uvicorn's proxy headers are trusted
    only from `forwarded_allow_ips` (uvicorn trusts 127.0.0.1 by default, so a local client could name any address
    in X-Forwarded-For). Its `FORWARDED_ALLOW_IPS`, read when Gradio builds the server, is set for that moment.

    The Guard signs people in; their sessions are kept in the database (app/server/sessions.py) and end after
    `idle_minutes` without a request (security.IDLE_MINUTES by default; `clock` gives epoch seconds, for tests); with
    `users` a file URL is served by what the account may read (security.FileAccess)."""
    credentials = parse_auth(auth)
    proxies = parse_proxies(forwarded_allow_ips)
    if users and credentials is not None:
        raise ValueError("--users and --auth both say who may sign in: pass one")
    if users:
        if not studio.accounts.any():
            raise ValueError(
                "--users needs accounts: add one first (chief users add NAME [--teacher] --password-stdin)"
            )
        credentials = studio.accounts.sign_in  # Gradio then asks for a signed-in user; the Guard signs people in
    if not is_loopback(host) and credentials is None:
        raise ValueError(
            f"serving on {host} exposes your projects: pass --auth user:password or --users (or set CHIEF_AUTH)"
        )
    from starlette.middleware import Middleware

    from app.server.security import IDLE_MINUTES, FileAccess, Guard, allowed_hosts
    from app.server.sessions import Changes, OnePerson, Sessions

    demo = create_app(studio, users=users)
    cap = upload_cap(studio.config)
    minutes = IDLE_MINUTES if idle_minutes is None else idle_minutes
    changes = Changes(studio.config.db_path) if credentials is not None else None
    sessions = None
    if changes is not None:  # signed in by the Guard, kept in the database (app/server/sessions.py)
        who = studio.accounts if users else OnePerson(*parse_auth(auth))  # pyright: ignore[reportCallIssue, reportOptionalIterable] - credentials: auth parsed
        sessions = Sessions(studio.ctx.repo, who, changes, idle=minutes * 60, **({"clock": clock} if clock else {}))
    files = None
    if users and changes is not None:  # file URLs by what each account may read (security.FileAccess)
        media, exports, *copies = served_roots(studio)
        files = FileAccess(studio.ctx.repo, studio.accounts.actor, changes, media, exports, copies)
        studio.media.on_store(files.made)
    demo.chief_files = files  # pyright: ignore[reportAttributeAccessIssue] - hand-over and unshare read again
    hosts = allowed_hosts(studio.config.allowed_hosts)
    guard = Middleware(Guard, hosts=hosts, max_body=cap, sessions=sessions, files=files)
    with _LAUNCH_LOCK, _environment(FORWARDED_ALLOW_IPS=proxies):
        _launch(demo, studio, host, port, credentials, prevent_thread_lock, quiet, guard, cap)
    return demo


def served_roots(studio) -> list[str]:
    """Every folder the app serves files from: the media store, exports/, its private temp folder (copies and
    uploads) and Gradio's examples cache."""
    from gradio.utils import get_cache_folder

    from app.ui.player import EXPORTS

    home = studio.config.home
    return [str(studio.config.media_root), str(home / EXPORTS), str(home / "tmp" / "gradio"), str(get_cache_folder())]


@contextlib.contextmanager
def _environment(**values: str):
    """`values` in os.environ for the block, the earlier values (or none) after it."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _launch(demo, studio, host, port, credentials, prevent_thread_lock, quiet, guard, cap: int) -> None:
    from starlette.middleware import Middleware

    from app.ui.asset_cache import AssetCache
    from app.ui.page_script import PageScript
    from app.ui.player import EXPORTS

    demo.launch(
        max_file_size=cap,
        server_name=host,
        server_port=port,
        auth=credentials,
        share=False,
        show_error=False,
        prevent_thread_lock=prevent_thread_lock,
        quiet=quiet,
        inbrowser=False,
        ssr_mode=False,
        mcp_server=False,
        pwa=False,
        allowed_paths=[str(studio.config.media_root), str(studio.config.home / EXPORTS)],  # films, downloads
        theme=theme(),
        css=CSS,
        enable_monitoring=False,
        # Gradio's own bounds, set on purpose (docs/DESIGN.md, Serving a class): its thread pool runs each step of
        # a handler (a page that follows a job waits on the event loop, app.ui.common.follow, and holds none), and
        # at most `web_sessions` sessions' state is kept (app/ui/session_state.py)
        max_threads=WEB_THREADS,
        state_session_capacity=studio.config.web_sessions,
        footer_links=[],
        # the Guard first: it sees every request (Gradio adds its own CORS and compression outside all three)
        app_kwargs={"middleware": [guard, Middleware(PageScript), Middleware(AssetCache)]},
        # Gradio's hosted-notebook probe: one HEAD of the page with a 3-s timeout, and a timeout means "not reachable,
        # share instead", so a busy machine failed to start the server. CHIEF binds the address itself, never shares.
        _frontend=False,
    )
    from app.ui.session_state import Sweeper

    demo.chief_sweeper = Sweeper(demo)  # closed pages' state dropped a minute after their last event
