"""Role protocols and the inputs agents receive. Online and offline roles return the same types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from storage.schema import Critique, Note, Persona, Proposal, Storyboard, Usage


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
    """What a critic 'watches': the storyboard text and sampled frames per shot, in film order."""

    storyboard: Storyboard
    frames: list[SampledFrame]
    intent: str = ""  # the creator's stated intent (idea / logline), for faithfulness
    renderer_label: str = ""  # e.g. "animatic (previz)": critics are told what they are looking at
    clips: dict[str, str] = field(default_factory=dict)  # shot_id -> the clip file (for measuring every frame)
    references: dict[str, list[str]] = field(default_factory=dict)  # character name -> reference image files

    def frames_of(self, shot_id: str) -> list[SampledFrame]:
        return [f for f in self.frames if f.shot_id == shot_id]


@dataclass
class Result:
    """A typed result plus what it cost."""

    value: object
    usage: Usage = field(default_factory=Usage)
    model: str = "offline"


class Planner(Protocol):
    mode: str  # "offline" or "llm:<model>"

    def plan(self, idea: str, minutes: float) -> Result: ...  # Result.value: Storyboard


class Critic(Protocol):
    mode: str

    def critique(self, persona: Persona, film: FilmView) -> Result: ...  # Result.value: Critique


class Refiner(Protocol):
    mode: str

    def refine(self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique]) -> Result: ...  # Proposal


__all__ = ["AgentError", "AnswerTooLong", "Cancelled", "RequestTooLarge", "Critic", "Critique", "FilmView", "Planner", "Proposal", "Refiner", "Result", "SampledFrame"]
