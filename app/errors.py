"""User-facing failures of the app layer: one line that says what went wrong and what to do."""

from __future__ import annotations


class StudioError(Exception):
    """A user-facing failure: one line that says what went wrong and what to do."""


class RenderFailed(StudioError):
    def __init__(self, shot_id: str, index: int, total: int, reason: str) -> None:
        super().__init__(f"shot {index + 1}/{total} ({shot_id}) failed: {reason}. "
                         f"Finished shots are kept; run render again to retry.")
        self.shot_id, self.index = shot_id, index
