"""User-facing failures of the app layer: one line that says what went wrong and what to do."""

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


def one_line(e: BaseException) -> str:
    """A user-facing message: the first line of the error (pydantic errors: the first bad field)."""
    from pydantic import ValidationError

    from storage.schema import first_error

    if isinstance(e, ValidationError):
        return first_error(e)
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
