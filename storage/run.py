"""The run contract every long action shares: one stop flag (`CancelToken`), one `Cancelled`, the typed progress
events and the `RunContext` a role is called with.

The standard library only (storage.schema is imported for type checking alone), so generation/, which imports
nothing else of ours, may use it: a backend's Stop, an agent's Stop and a job's Stop are the same flag and end in the
same exception.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from storage.schema import Scope, Usage


class Cancelled(Exception):
    """The user stopped the action (a render, a critic, a plan, a proposal...): an outcome, not a failure."""

    usage: Usage  # what a stopped LLM call had cost, when the LLM client set it (read with getattr: may be unset)


class CancelToken:
    """A thread-safe stop flag shared by the UI/CLI and the work it runs.

    A token made with a `parent` is cancelled when its parent is, and can be cancelled alone: a panel stops its
    other critics when one fails without stopping the job that runs the panel."""

    def __init__(self, parent: CancelToken | None = None) -> None:
        self._event = threading.Event()
        self._parent = parent

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or (self._parent is not None and self._parent.cancelled)

    def raise_if_cancelled(self, what: str = "cancelled") -> None:
        if self.cancelled:
            raise Cancelled(what)


# ---------------------------------------------------------------------------------------- progress events


@dataclass(frozen=True, kw_only=True)
class Streamed:
    """What an answer streaming in adds to an event: answer tokens so far, their rate, a retry's note."""

    tokens: int = 0
    tokens_per_s: float = 0.0
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class ShotProgress:
    """One item of a render (a shot), a keyframe run (a still) or a takes run (a take): its steps, then its outcome."""

    stage: Literal["render", "keyframe", "take"] = "render"
    shot_index: int  # 0-based, of `shots`
    shots: int
    shot_id: str
    step: int
    steps: int
    status: str  # "rendering" while it runs, then "rendered" | "reused" (| "earlier" for a render)


@dataclass(frozen=True, kw_only=True)
class AssembleProgress:
    """The film is being cut from `shots` clips."""

    shots: int


@dataclass(frozen=True, kw_only=True)
class DoneProgress:
    """The action finished with `shots` items."""

    shots: int


@dataclass(frozen=True, kw_only=True)
class WatchProgress(Streamed):
    """One critic watching the film in parts: part `chunk` of `chunks` ("watching", or "smaller" after a refusal)."""

    persona: str
    chunk: int = 0
    chunks: int = 0
    status: str = ""


@dataclass(frozen=True, kw_only=True)
class PanelProgress(Streamed):
    """The panel: `done` of `total` critics finished; `fraction` of the film watched by all; the last event's critic."""

    done: int
    total: int
    persona: str
    fraction: float = 0.0
    chunk: int = 0
    chunks: int = 0


@dataclass(frozen=True, kw_only=True)
class PlanProgress(Streamed):
    """A plan: `done` of `total` answers written (the story, then each scene); what is being written."""

    done: int
    total: int
    scene: str = ""
    status: str = ""


@dataclass(frozen=True, kw_only=True)
class RefineProgress(Streamed):
    """The refiner writing its proposal."""


ProgressEvent = (
    ShotProgress | AssembleProgress | DoneProgress | WatchProgress | PanelProgress | PlanProgress | RefineProgress
)
ProgressSink = Callable[[ProgressEvent], None]


def no_progress(_event: ProgressEvent) -> None:
    pass


# ---------------------------------------------------------------------------------------- the context


@dataclass(frozen=True)
class RunContext:
    """What every role (planner, critic, refiner) is called with, besides its inputs.

    `cancel` stops it (it raises `Cancelled`); `progress` receives its typed events; `scope` is the part of the film
    the action is about (None: the whole film; the refiner edits within it); `deadline` is the `time.monotonic()` by
    which it must end (None: the role's own limit, e.g. the LLM client's `action_timeout`)."""

    cancel: CancelToken = field(default_factory=CancelToken)
    progress: ProgressSink = no_progress
    scope: Scope | None = None
    deadline: float | None = None

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: no deadline)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def but(self, **changes) -> RunContext:
        """A copy with some fields changed (e.g. a panel's own token and progress for each critic)."""
        return dataclasses.replace(self, **changes)
