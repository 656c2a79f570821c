"""Role protocols and the inputs agents receive. Online and offline roles return the same types."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from storage.run import Cancelled, RunContext
from storage.schema import Coverage, Critique, Note, Persona, Proposal, Storyboard, Usage

T = TypeVar("T")


class AgentError(Exception):
    """An agent could not produce a valid result (names the role, model and what was wrong)."""

    usage: Usage  # what the failed LLM call cost, when the LLM client set it (read with getattr: may be unset)


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
class Result(Generic[T]):
    """A typed result plus what it cost."""

    value: T
    usage: Usage = field(default_factory=Usage)
    model: str = "offline"
    coverage: Coverage | None = None  # a critique: how the critic watched (None: the service says what it showed)


# The roles. Each takes its inputs and the action's `RunContext` (cancel, progress, scope, deadline; None: a fresh
# one, nothing to stop or report to) and returns a typed Result. A wrapper (a Ray role) passes `ctx` on: a role that
# drops it loses Stop and progress, which tests/cluster checks.


class Planner(Protocol):
    mode: str  # "offline" or "llm:<model>"

    def plan(self, idea: str, minutes: float, ctx: RunContext | None = None) -> Result[Storyboard]: ...


class Critic(Protocol):
    mode: str

    def critique(self, persona: Persona, film: FilmView, ctx: RunContext | None = None) -> Result[Critique]: ...


class Refiner(Protocol):
    mode: str

    def refine(
        self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique], ctx: RunContext | None = None
    ) -> Result[Proposal]: ...  # ctx.scope: the scenes to show in full and edit (None: the whole film)


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
    "RunContext",
    "SampledFrame",
]
