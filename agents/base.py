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

    `limit` is "images" or "context"; `setting` names the LLMConfig setting that bounds it; `tokens`, the context
    the server stated in its refusal (None when it said none). The client never retries these: the caller sends a
    smaller request (once), or shows the line.
    """

    def __init__(self, message: str, *, limit: str, setting: str, tokens: int | None = None):
        super().__init__(message)
        self.limit = limit
        self.setting = setting
        self.tokens = tokens


@dataclass(frozen=True)
class SampledFrame:
    shot_id: str
    index: int  # 0..k-1 within the shot
    time: float  # seconds from the start of the film
    path: str  # JPEG/PNG file on disk


@dataclass(frozen=True)
class HeardLine:
    """A line as the film says it: who, what, how, and when (seconds on the film's timeline)."""

    character: str  # "" unattributed
    line: str
    delivery: str
    start: float
    end: float
    off_screen: bool  # the speaker is not among the shot's characters


@dataclass(frozen=True)
class SoundFacts:
    """The film's mix measured over one shot's window (generation.audio.listen): measured, never estimated."""

    loudness_lufs: float | None  # integrated loudness of the mix over the window (None: silent)
    speech_to_music_db: float | None  # dialogue level minus music level while lines are spoken (None: no line/music)
    longest_silence_s: float  # the longest stretch of the mix under the silence threshold
    clipped: bool  # samples at full scale
    words_per_s: float | None  # the lines' words over the time they are spoken (None: no line)


@dataclass(frozen=True)
class ShotSound:
    """What is heard in one shot: its lines, the music and sounds playing (in words, as the storyboard gives
    them, with what made them), and the mix's measured facts over the shot's window."""

    shot_id: str
    start: float  # the shot's window on the film's timeline
    end: float
    lines: tuple[HeardLine, ...] = ()
    music: str = ""  # the scene's cue in words ("" no music)
    music_label: str = ""  # what made it: "temp score", "uploaded track", a model's name
    sounds: str = ""  # the shot's effects and ambience in words
    facts: SoundFacts | None = None  # None: not measured (the render has no sound)


@dataclass(frozen=True)
class Hearing:
    """What a critic hears of the watched shots: one ShotSound per shot in film order, the whole film's measured
    loudness, each character's measured voice pitch, and the mix itself (for critics that take audio input)."""

    shots: tuple[ShotSound, ...]
    loudness_lufs: float | None = None  # the film's mix, integrated (ebur128)
    true_peak_dbtp: float | None = None
    target_lufs: float | None = None  # the loudness the mix was normalised to
    label: str = ""  # what made the sound: "Piper voices, temp score, temp effects"
    voice_pitch_hz: dict[str, float] = field(default_factory=dict)  # character -> median f0 of their lines
    audio: str | None = None  # the film's mix as a WAV file, time 0 = the film's start (None: no sound)

    def of(self, shot_id: str) -> ShotSound | None:
        return next((s for s in self.shots if s.shot_id == shot_id), None)


@dataclass(frozen=True)
class FilmView:
    """What a critic 'watches' and hears: the storyboard text, sampled frames per shot and the sound, in film order.

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
    hearing: Hearing | None = None  # what is heard in the watched shots (None: the film is silent or not heard)

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
    @property
    def mode(self) -> str: ...  # "offline" or "llm:<model>" (read-only: a role may compute it)

    def plan(self, idea: str, minutes: float, ctx: RunContext | None = None) -> Result[Storyboard]: ...


class Critic(Protocol):
    @property
    def mode(self) -> str: ...

    def critique(self, persona: Persona, film: FilmView, ctx: RunContext | None = None) -> Result[Critique]: ...


class Refiner(Protocol):
    @property
    def mode(self) -> str: ...

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
