"""Helpers every screen shares: error handling, the session's project/version, the status bar.

Each screen module has `build(ctx)`: it lays out its components inside the current Blocks and wires
its events through `ctx`. Handlers call the Studio, never the database or a backend.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import html
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import gradio as gr

from app.errors import one_line  # noqa: F401 - re-exported: every screen words errors the same way

if TYPE_CHECKING:
    from app.server.jobs import Jobs
    from app.studio import Studio


def user_error(message: str, title: str = "Error") -> gr.Error:
    """A toast with `message` as text (the toast renders HTML, so it is escaped), and no traceback in the
    server log: a user's mistake or a refused file is not a bug. Paths inside the private temp folder
    (where Gradio keeps uploads) are shown as the file name only."""
    temp = os.environ.get("GRADIO_TEMP_DIR")
    if temp:
        for root in {temp, os.path.realpath(temp)}:
            message = re.sub(re.escape(root.rstrip("/")) + r"/(?:[^/\s]+/)*", "", message)
    return ShownError(html.escape(message, quote=False), title=title, print_exception=False)


class ShownError(gr.Error):
    """A toast whose message is escaped already: a guard around a guard passes it on as it is."""


def _quiet(e: gr.Error) -> gr.Error:
    """A gr.Error a handler raised itself, escaped and without a traceback in the log (see user_error)."""
    return e if isinstance(e, ShownError) else user_error(str(e.message), e.title)


def branch_note(studio, pid: str, number: int) -> str:
    """ " Branched: …" (plain text) when version `number` was made from one that already had a newer version (another
    tab or user moved on first), else ""."""
    v = studio.version(pid, number)
    if not studio.branched(v):
        return ""
    return (
        f" Branched: v{v.parent_number} already had a newer version (another tab or user moved on first), so "
        "this is a new branch; nothing was lost."
    )


def notice(message: str) -> None:
    """A passing note to the page (a gr.Info toast) with `message` as text: the toast renders HTML, so it is
    escaped here, and every note goes through this (a shot id or a job label may come from anyone)."""
    gr.Info(html.escape(message, quote=False))


def guard(fn: Callable) -> Callable:
    """Known failures become a gr.Error with one line of text: the page never shows a traceback.
    Works for handlers that are generators (they follow a job) too."""
    import inspect

    def translated(e: BaseException) -> BaseException | None:
        from app.errors import user_errors
        from generation.base import Cancelled

        if isinstance(e, Cancelled):  # API callers; the page follows jobs, which report "stopped" as an outcome
            return user_error("stopped; finished shots are kept (render again to resume)", "Stopped")
        if isinstance(e, user_errors()):
            return user_error(one_line(e))
        return None

    @contextlib.contextmanager
    def one_line_errors():
        try:
            yield
        except gr.Error as e:
            raise _quiet(e) from None
        except Exception as e:
            if (err := translated(e)) is None:
                raise
            raise err from None

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        async def gen_wrapper(*args, **kwargs):
            """Each step of the handler in a worker thread (as Gradio runs a generator), but a job it follows is
            waited for on the event loop (`Following`): a page waiting on a queued render holds no thread."""
            import anyio

            steps = fn(*args, **kwargs)
            try:
                while True:
                    with one_line_errors():
                        item = await anyio.to_thread.run_sync(_step, steps)
                        if item is _DONE:
                            return
                        if not isinstance(item, Following):
                            yield item
                            continue
                        async for line in item.lines():
                            yield line
            finally:
                steps.close()

        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with one_line_errors():
            return fn(*args, **kwargs)

    return wrapper


_DONE = object()


def _step(steps):
    """The generator's next item, or _DONE (a StopIteration cannot cross a thread's future). The step runs in its
    own copy of the context (anyio's), where `follow` is told to hand its waiting to the loop."""
    _ON_LOOP.set(True)
    return next(steps, _DONE)


def page_session() -> str:
    """Whose jobs an event sees (app/server/jobs.py `owner`): the signed-in account's name (`--users`, `--auth`),
    so every session of the account — another tab, another device — sees and stops its jobs; without a sign-in,
    the browser session (its `chief_session` cookie, set by app.server.security); "" outside an event or for a
    client without the cookie."""
    from gradio.context import LocalContext

    from app.server.security import session_of

    request = LocalContext.request.get(None)
    if request is None:
        return ""
    user = getattr(request, "username", None)
    return f"account:{user}" if user else session_of({k.lower(): v for k, v in request.headers.items()})


def request_actor():
    """Who acts in the event being handled (storage.owners' source for the web app): the Blocks' `chief_actor`
    (set by create_app) applied to the event's request; None outside an event."""
    from gradio.context import LocalContext

    request, blocks = LocalContext.request.get(None), LocalContext.blocks.get(None)
    who = getattr(blocks, "chief_actor", None)
    if request is None or who is None:
        return None
    return who(request)


def need_project(pid: str | None) -> str:
    """The project a handler acts on. Whether the signed-in account may open it is checked wherever the id becomes
    a project (storage.repository.Unit._project_row, storage.owners): another account's project is "not found"."""
    if not pid:
        raise gr.Error("open or create a project first (Projects tab)")
    return pid


def server_settings_allowed() -> None:
    """Refuse, in one line, a signed-in student's change of the server's own settings (agents, rendering): with
    `chief serve --users` they apply to every account, and a student who chose the LLM endpoint would receive the
    others' ideas and frames. A teacher may; without --users the one person (the local owner) may."""
    from storage.owners import LOCAL_OWNER, current

    actor = current()
    if actor is not None and actor.name != LOCAL_OWNER and not actor.teacher:
        raise gr.Error("only a teacher changes this server's settings: they apply to everyone signed in to it")


def ver(v: Any) -> int | None:
    """The version number held in the UI (None: the project's current version)."""
    if v in (None, "", 0):
        return None
    return int(v)


def esc(text: Any) -> str:
    """`text` for an HTML component (gr.HTML): tags and quotes escaped."""
    return html.escape("" if text is None else str(text))


# inline marks: code, emphasis, links, images, math, and ":" so that no "http://" is autolinked (an autolink
# would swallow the backslashes that follow it)
_MARKDOWN_MARKS = re.compile(r"([\\`*_{}\[\]()#+!|~$:])")
_WWW = re.compile(r"(?i)\bwww\.")  # an autolink too
_BLOCK_START = re.compile(r"^(\d+)([.)])|^([-=])")  # what would start a list or a rule at the start of a line


def md(text: Any) -> str:
    """`text` shown as itself inside a gr.Markdown, on one line: HTML escaped, every Markdown mark (links,
    images, emphasis, headings, lists, math) backslash-escaped. Titles, notes and messages come from users,
    files, archives and LLMs: none of them may draw a form or make the browser fetch an image."""
    text = html.escape("" if text is None else str(text), quote=False)
    text = " ".join(_WWW.sub(lambda m: m.group(0)[:3] + "\\.", _MARKDOWN_MARKS.sub(r"\\\1", text)).split())
    return _BLOCK_START.sub(lambda m: f"{m.group(1)}\\{m.group(2)}" if m.group(1) else f"\\{m.group(3)}", text)


def media_url(path) -> str:
    """A same-origin URL for a file in the media store (served because the store is an allowed path)."""
    from urllib.parse import quote

    return "gradio_api/file=" + quote(str(path))


def thumbs(studio, render) -> dict[str, str]:
    """shot_id -> thumbnail URL for a render's clips (cut once per clip, then looked up)."""
    if render is None:
        return {}
    return {r.shot_id: media_url(studio.thumbnail(r.sha256)) for r in render.shots}


def progress_html(job) -> str:
    """A job's progress bar and line (or its outcome once it ended)."""
    if job is None:
        return ""
    from app.server.jobs import DONE, FAILED, QUEUED, RUNNING, STOPPED

    pct = round(100 * job.fraction)
    # a queued job's line is its place in the queue and an estimate (app/server/queue.py `line`), kept by app/server/jobs.py
    state = {QUEUED: "queued", RUNNING: "running", DONE: "done", FAILED: "failed", STOPPED: "stopped"}[job.state]
    text = job.desc if job.running else (job.message or "done")
    return (
        f"<div class='job {state}' data-state='{state}' data-job='{esc(job.id)}'>"
        f"<progress max='100' value='{pct}'></progress> <b>{esc(job.label)}</b> · {esc(text)}"
        f" · {job.elapsed:.0f}s</div>"
    )


def ask_to_stop(jobs, job) -> Any:
    """Ask `job` to stop and leave the progress line to the page's follow loop (`follow`), which shows "stopping…"
    and then the outcome: a Stop handler that wrote the line itself could land after the outcome and leave a stale
    "stopping…" on a job that has ended."""
    if job is not None:
        jobs.stop(job)
    return gr.skip()


FOLLOW_EVERY = 0.25  # s: the most often a followed job's line is sent to the page (a render reports every frame)
FOLLOW_QUIET = 15.0  # s: the longest a followed job's page goes without its line again (the elapsed time moves)
_ON_LOOP: contextvars.ContextVar[bool] = contextvars.ContextVar("chief_follow_on_loop", default=False)


@dataclass(frozen=True)
class Following:
    """A job a handler follows, handed to `guard`'s loop: it waits on the event loop (Jobs.until), holding no worker
    thread while the job is queued or runs, and draws `frame(job)` and `final(job)` in a thread."""

    jobs: Any
    job: Any
    frame: Callable[[Any], tuple]
    final: Callable[[Any], tuple]

    def mapped(self, fn: Callable[[tuple], tuple]) -> Following:
        """The same job, each line drawn through `fn` (a screen that shows the lines in outputs of its own)."""
        frame, final = self.frame, self.final
        return Following(self.jobs, self.job, lambda job: fn(frame(job)), lambda job: fn(final(job)))

    async def lines(self):
        import anyio

        jobs, job, seen = self.jobs, self.job, -1
        while job.running:
            await jobs.until(lambda: job.seq != seen or not job.running, FOLLOW_QUIET)
            seen = job.seq
            if not job.running:
                break
            yield await anyio.to_thread.run_sync(self.frame, job)
            await jobs.until(lambda: not job.running, FOLLOW_EVERY)  # at most one line every FOLLOW_EVERY
        yield await anyio.to_thread.run_sync(self.final, job)


def follow(jobs, job, frame: Callable[[Any], tuple], final: Callable[[Any], tuple]):
    """Yield `frame(job)` on every change while the job runs, at most every FOLLOW_EVERY seconds (a job that
    reports each frame would otherwise redraw the page hundreds of times a second), then `final(job)`: a page that
    follows a job. The end is never held back: a job that ends while the loop waits is shown at once.

    In an event (a handler wrapped by `guard`) the waiting is handed to the event loop (`Following`): no worker
    thread is held while the job waits in the queue or runs. Called directly (tests, scripts) it waits here."""
    if _ON_LOOP.get():
        yield Following(jobs, job, frame, final)
        return
    seen = -1
    while job.running:
        seq = jobs.wait(job, seen, timeout=2.0)
        if seq != seen:
            seen = seq
            yield frame(job)
            jobs.wait_ended(job, FOLLOW_EVERY)
    yield final(job)


def mapped(lines, fn: Callable[[tuple], tuple]):
    """The lines of a followed job (`follow`, or a generator that ends in it) drawn through `fn`: in an event the
    `Following` is handed on with `fn` applied (its waiting still on the loop), called directly each line is."""
    for line in lines:
        yield line.mapped(fn) if isinstance(line, Following) else fn(line)


def stills_label(studio, label: str) -> str:
    """What draws stills, in a creator's words: without an image model, what they can still do (the setting's name
    is for whoever runs the server: Settings shows it in a tooltip)."""
    if label.startswith("none") and not studio.config.image_model:
        return "none (no image model on this server: upload keyframes and references)"
    return label


def named(v) -> str:
    """A version as the page names it: "v6", or "v6 (draft)" while small actions still fold into it."""
    return f"v{v.number}" + (" (draft)" if v.draft else "")


def status_line(studio, pid: str | None, v: int | None) -> str:
    """Active backend / model / still-image backend / agents, and the current version's agent cost and render
    time."""
    st = studio.status()
    parts = [
        f"**backend** {md(st.backend_label)}",
        f"**model** {md(st.model)}",
        f"**stills** {md(stills_label(studio, st.images_label))}",
        f"**agents** {md(st.agents)}",
    ]
    if pid:
        version = studio.version(pid, v)
        u = studio.usage(pid, version.number).total
        info = studio.render_info(pid, version.number)
        parts.append(f"**project** {md(version.storyboard.title)} · {named(version)}")
        if not (access := studio.sharing.access(pid)).writable:  # shared with this account, or a teacher's view
            parts.append(f"**shared** {md(access.label)}")
        parts.append(
            f"**agent cost** {u.calls} call(s), {u.prompt_tokens + u.completion_tokens} tokens, {u.seconds:.1f}s"
        )
        drafts = sum(r.tier == "draft" for r in info.shots) if info else 0  # a film of mixed tiers says so
        parts.append(
            f"**render** {info.seconds:.1f}s ({info.rendered} rendered, {info.reused} reused"
            f"{f', {drafts} of {len(info.shots)} shots drafts' if drafts else ''})"
            if info
            else "**render** none yet"
        )
    return " · ".join(parts)


@dataclass
class Ctx:
    """What screens share: the Studio, the session's project id and version, the status bar."""

    studio: Studio
    jobs: Jobs  # renders, critiques and plans the server tracks
    # The shared components, made by create_app inside its Blocks before any screen is built
    demo: gr.Blocks = field(init=False)
    pid: gr.Textbox = field(init=False)
    version: gr.Number = field(init=False)
    status: gr.Markdown = field(init=False)
    steps: gr.HTML = field(init=False)  # the creator's path (app/ui/flow.py)
    screen: gr.Textbox = field(init=False)  # the open screen's id, kept in the browser with the project
    screens: gr.Tabs = field(init=False)
    tabs: dict = field(default_factory=dict)

    def status_update(self, pid, v):
        """The status bar and the path under it."""
        from app.ui import flow

        pid, number = pid or None, ver(v)
        return status_line(self.studio, pid, number), flow.steps_html(flow.next_step(self.studio, pid, number))

    def refresh_status(self, event):
        """Chain a status bar refresh after an event (cost and render time change)."""
        return event.then(
            guard(self.status_update),
            [self.pid, self.version],
            [self.status, self.steps],
            api_visibility="private",
            show_progress="hidden",
        )
