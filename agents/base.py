"""Role protocols and the inputs agents receive. Online and offline roles return the same types."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from storage.schema import Coverage, Critique, Note, Persona, Proposal, Storyboard, Usage


class AgentError(Exception):
    """An agent could not produce a valid result (names the role, model and what was wrong)."""


class AnswerTooLong(AgentError):
    """The answer was cut off at the output-token limit (finish_reason "length"): ask for less, e.g. a smaller chunk."""


class RequestTooLarge(AgentError):
    """The request does not fit the endpoint: too many images, or too long for its context.

    `limit` is "images" or "context"; `setting` names the LLMConfig setting that bounds it. The client never
    retries these: the caller sends a smaller request (once), or shows the line.
    """

    def __init__(self, message: str, *, limit: str, setting: str):
        super().__init__(message)
        self.limit = limit
        self.setting = setting


class Cancelled(AgentError):
    """The action was cancelled: the request's connection was closed."""


@dataclass(frozen=True)
class SampledFrame:
    shot_id: str
    index: int  # 0..k-1 within the shot
    time: float  # seconds from the start of the film
    path: str  # JPEG/PNG file on disk


@dataclass(frozen=True)
class FilmView:
    """What a critic 'watches': the storyboard text and sampled frames per shot, in film order.

    A scoped screening (a scene, a range of shots) holds only the watched shots in `storyboard`, `frames` and `clips`;
    `story` is then the whole storyboard, so a critic can know the story so far and the real timecodes."""

    storyboard: Storyboard
    frames: list[SampledFrame]
    intent: str = ""  # the creator's stated intent (idea / logline), for faithfulness
    renderer_label: str = ""  # e.g. "animatic (previz)": critics are told what they are looking at
    clips: dict[str, str] = field(default_factory=dict)  # shot_id -> the clip file (for measuring every frame)
    references: dict[str, list[str]] = field(default_factory=dict)  # character name -> reference image files
    story: Storyboard | None = None  # the whole storyboard when this view is a part of it (None: it is the whole)
    frames_per_shot: int = 0  # frames each shot is meant to be seen with (0: as many as `frames` holds)
    join_clips: Callable[[list[str]], str] | None = None  # shot ids -> one clip file of them (video input)

    def frames_of(self, shot_id: str) -> list[SampledFrame]:
        return [f for f in self.frames if f.shot_id == shot_id]

    @property
    def whole(self) -> Storyboard:
        """The whole film's storyboard (the watched part's context)."""
        return self.story or self.storyboard


@dataclass
class Result:
    """A typed result plus what it cost."""

    value: object
    usage: Usage = field(default_factory=Usage)
    model: str = "offline"
    coverage: Coverage | None = None  # a critique: how the critic watched (None: the service says what it showed)


def invoke(method: Callable, *args: Any, **optional: Any) -> Any:
    """Call a role's method with the optional keyword arguments it declares (progress, cancel, scope), and
    without the others: every role keeps the protocol's positional arguments; the LLM roles take more."""
    accepted = _keywords(method)
    return method(*args, **{k: v for k, v in optional.items() if k in accepted})


def _keywords(method: Callable) -> frozenset[str]:
    return _keywords_of(getattr(method, "__func__", method))


@functools.lru_cache(maxsize=64)
def _keywords_of(fn: Callable) -> frozenset[str]:
    params = inspect.signature(fn).parameters.values()
    return frozenset(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))


class Planner(Protocol):
    mode: str  # "offline" or "llm:<model>"

    def plan(self, idea: str, minutes: float) -> Result: ...  # Result.value: Storyboard

    # LLM planners also take progress= (ProgressFn-like events) and cancel= (see invoke)


class Critic(Protocol):
    mode: str

    def critique(self, persona: Persona, film: FilmView) -> Result: ...  # Result.value: Critique

    # LLM critics also take progress= and cancel= (see invoke)


class Refiner(Protocol):
    mode: str

    def refine(self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique]) -> Result: ...  # Proposal

    # LLM refiners also take scope= (the scenes to show in full and edit), progress= and cancel= (see invoke)


__all__ = [
    "AgentError",
    "AnswerTooLong",
    "Cancelled",
    "RequestTooLarge",
    "Critic",
    "Critique",
    "FilmView",
    "Planner",
    "Proposal",
    "Refiner",
    "Result",
    "SampledFrame",
    "invoke",
]
