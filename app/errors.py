"""User-facing failures of the app layer: one line that says what went wrong and what to do.

`StudioError` is the app's own; `user_errors()` is the one list of failures the front ends tell a person about in
one line (the CLI on stderr with exit status 1, the web app as an error toast) — the same list for both. Anything
else is a bug and keeps its traceback."""

from __future__ import annotations


class StudioError(Exception):
    """A user-facing failure: one line that says what went wrong and what to do."""


class RenderFailed(StudioError):
    def __init__(self, shot_id: str, index: int, total: int, reason: str) -> None:
        super().__init__(
            f"shot {index + 1}/{total} ({shot_id}) failed: {reason}. "
            f"Finished shots are kept; run render again to retry."
        )
        self.shot_id, self.index = shot_id, index


class NotRendered(StudioError):
    """A continuity shot whose previous shot's clip is not in the cache: its request cannot be made yet."""

    def __init__(self, shot_id: str, previous: str) -> None:
        super().__init__(f"shot {shot_id} continues from {previous}: render {previous} first")
        self.shot_id, self.previous = shot_id, previous


def user_errors() -> tuple[type[BaseException], ...]:
    """What a person is told in one line: the app's errors, an agent's or a backend's failure, a refused input
    (ValueError: pydantic, parsing, storage's NotFound and edit errors) and the disk (OSError). Not KeyError:
    a lookup a person can miss is checked where it happens and says what exists."""
    from agents.base import AgentError
    from generation.base import RenderError

    return (StudioError, AgentError, RenderError, ValueError, OSError)


def one_line(e: BaseException) -> str:
    """A user-facing message: the first line of the error (pydantic errors: the first bad field)."""
    from pydantic import ValidationError

    from storage.schema import first_error

    if isinstance(e, ValidationError):
        return first_error(e)
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
