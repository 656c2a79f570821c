"""Helpers every screen shares: error handling, the session's project/version, the status bar.

Each screen module has `build(ctx)`: it lays out its components inside the current Blocks and wires
its events through `ctx`. Handlers call the Studio, never the database or a backend.
"""

from __future__ import annotations

import functools
import html
from dataclasses import dataclass, field
from typing import Any, Callable

import gradio as gr

RENDER_QUEUE = "render"  # concurrency_id shared by every event that renders (one at a time: it holds the GPU)


def one_line(e: BaseException) -> str:
    """A user-facing message: the first line of the error (pydantic errors: the first bad field)."""
    from pydantic import ValidationError

    from storage.schema import first_error

    if isinstance(e, ValidationError):
        return first_error(e)
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def guard(fn: Callable) -> Callable:
    """Known failures become a gr.Error with one line of text: the page never shows a traceback."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from agents.base import AgentError
        from app.errors import StudioError
        from generation.base import Cancelled, RenderError

        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Cancelled:
            raise gr.Error("stopped; finished shots are kept (render again to resume)", title="Stopped") from None
        except (StudioError, AgentError, RenderError, ValueError, KeyError, OSError) as e:
            raise gr.Error(one_line(e)) from None
    return wrapper


def need_project(pid: str | None) -> str:
    if not pid:
        raise gr.Error("open or create a project first (Projects tab)")
    return pid


def ver(v: Any) -> int | None:
    """The version number held in the UI (None: the project's current version)."""
    if v in (None, "", 0):
        return None
    return int(v)


def esc(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def status_line(studio, pid: str | None, v: int | None) -> str:
    """Active backend / model / agents, and the current version's agent cost and render time."""
    st = studio.status()
    parts = [f"**backend** {esc(st.backend_label)}", f"**model** {esc(st.model)}", f"**agents** {esc(st.agents)}"]
    if pid:
        version = studio.version(pid, v)
        u = studio.usage(pid, version.number).total
        info = studio.render_info(pid, version.number)
        parts.append(f"**project** {esc(version.storyboard.title)} · v{version.number}")
        parts.append(f"**agent cost** {u.calls} call(s), {u.prompt_tokens + u.completion_tokens} tokens, "
                     f"{u.seconds:.1f}s")
        parts.append(f"**render** {info.seconds:.1f}s ({info.rendered} rendered, {info.reused} reused)"
                     if info else "**render** none yet")
    return " · ".join(parts)


@dataclass
class Ctx:
    """What screens share: the Studio, the session's project id and version, the status bar."""

    studio: Any
    demo: Any = None
    pid: gr.Textbox = None
    version: gr.Number = None
    status: gr.Markdown = None
    tabs: dict = field(default_factory=dict)

    def status_update(self, pid, v):
        return status_line(self.studio, pid or None, ver(v))

    def refresh_status(self, event):
        """Chain a status bar refresh after an event (cost and render time change)."""
        return event.then(guard(self.status_update), [self.pid, self.version], self.status, api_visibility="private",
                          show_progress="hidden")
