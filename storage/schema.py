"""What a project *is*: the pydantic schema shared by every layer.

A version's storyboard is stored as JSON of `Storyboard`; critiques, notes and proposals
are stored as JSON of their models. Agents return these types, online or offline.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

DIMENSIONS: tuple[str, ...] = (
    "story_clarity",
    "visual_quality",
    "character_consistency",
    "pacing",
    "emotional_impact",
    "intent_faithfulness",
)
Dimension = Literal[
    "story_clarity",
    "visual_quality",
    "character_consistency",
    "pacing",
    "emotional_impact",
    "intent_faithfulness",
]
CAMERA_MOVES = ("static", "pan_left", "pan_right", "tilt_up", "tilt_down", "zoom_in", "zoom_out", "dolly_in", "handheld")
Camera = Literal["static", "pan_left", "pan_right", "tilt_up", "tilt_down", "zoom_in", "zoom_out", "dolly_in", "handheld"]
# Fields of a shot that an edit may change (the refiner and the creator's hand edits).
EDITABLE_SHOT_FIELDS = ("prompt", "negative_prompt", "duration", "seed", "camera", "narration", "dialogue", "continuity")


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(4)}"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Character(Strict):
    name: str = Field(min_length=1, max_length=80)
    description: str = Field(min_length=1, max_length=1000, description="How the character looks, every time they appear.")


class Shot(Strict):
    shot_id: str = Field(default_factory=lambda: new_id("sh"), pattern=r"^[A-Za-z0-9_\-]{1,40}$")
    prompt: str = Field(min_length=1, max_length=2000)
    negative_prompt: str = Field(default="", max_length=1000)
    duration: float = Field(default=5.0, gt=0, le=60, description="seconds")
    seed: int = Field(default=0, ge=0, lt=2**32)
    camera: Camera = "static"
    narration: str = Field(default="", max_length=2000, description="voice-over, spoken and subtitled")
    dialogue: str = Field(default="", max_length=2000, description="on-screen speech, subtitled")
    characters: list[str] = Field(default_factory=list, description="names from the character bible seen in this shot")
    locked: bool = Field(default=False, description="the refiner never touches a locked shot")
    continuity: bool = Field(default=False, description="condition on the previous shot's last frame")


class Scene(Strict):
    scene_id: str = Field(default_factory=lambda: new_id("sc"), pattern=r"^[A-Za-z0-9_\-]{1,40}$")
    title: str = Field(default="", max_length=200)
    description: str = Field(default="", max_length=2000)
    shots: list[Shot] = Field(min_length=1)


class Storyboard(Strict):
    """A full snapshot of the film's plan. One per version."""

    title: str = Field(min_length=1, max_length=200)
    logline: str = Field(default="", max_length=2000)
    style_guide: str = Field(default="", max_length=4000)
    characters: list[Character] = Field(default_factory=list)
    scenes: list[Scene] = Field(min_length=1)
    fps: int | None = Field(default=None, ge=1, le=60, description="None: the backend's default")
    width: int | None = Field(default=None, ge=16, le=4096)
    height: int | None = Field(default=None, ge=16, le=4096)

    @model_validator(mode="after")
    def _unique_ids(self) -> "Storyboard":
        seen: set[str] = set()
        for shot in self.shots():
            if shot.shot_id in seen:
                raise ValueError(f"duplicate shot_id {shot.shot_id!r}")
            seen.add(shot.shot_id)
        names = [c.name for c in self.characters]
        if len(set(names)) != len(names):
            raise ValueError("duplicate character name in the character bible")
        return self

    def shots(self) -> list[Shot]:
        return [shot for scene in self.scenes for shot in scene.shots]

    def shot(self, shot_id: str) -> Shot:
        for shot in self.shots():
            if shot.shot_id == shot_id:
                return shot
        raise KeyError(f"no shot {shot_id!r} in this storyboard")

    def duration(self) -> float:
        return sum(s.duration for s in self.shots())

    def timeline(self) -> list[tuple[Shot, float, float]]:
        """(shot, start, end) in seconds, in film order."""
        out, t = [], 0.0
        for shot in self.shots():
            out.append((shot, t, t + shot.duration))
            t += shot.duration
        return out


class Persona(Strict):
    """An audience member on the critics' panel (prompts/personas/*.yaml, or per project)."""

    id: str = Field(pattern=r"^[a-z0-9_\-]{1,40}$")
    name: str
    who: str = Field(description="who they are")
    viewing_history: list[str] = Field(default_factory=list)
    loves: list[str] = Field(default_factory=list)
    hates: list[str] = Field(default_factory=list)
    notices_first: str = ""
    voice: str = Field(default="", description="how they talk")
    weights: dict[str, float] = Field(default_factory=lambda: {d: 1.0 for d in DIMENSIONS})
    # Measurable tastes used by the offline critic (and shown to LLM critics as context).
    tastes: dict[str, float] = Field(default_factory=dict)
    source: Literal["builtin", "custom", "built"] = "builtin"
    evidence: dict[str, list[str]] = Field(default_factory=dict, description="trait -> source comments")
    calibration: dict[str, float] | None = None

    @field_validator("weights")
    @classmethod
    def _known_dimensions(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = set(v) - set(DIMENSIONS)
        if unknown:
            raise ValueError(f"unknown critique dimension(s): {sorted(unknown)}")
        return {d: float(v.get(d, 1.0)) for d in DIMENSIONS}


class ShotNote(Strict):
    shot_id: str
    note: str


class CritiqueIssue(Strict):
    summary: str
    urgency: int = Field(ge=1, le=5, description="5 = fix first")
    dimension: Dimension
    shot_ids: list[str] = Field(default_factory=list)
    suggestion: str = Field(default="", description="a concrete change to the prompt or the cut")


class Critique(Strict):
    """One persona's reaction to one film."""

    persona_id: str
    overall: float = Field(ge=0, le=10)
    scores: dict[Dimension, float]
    shot_notes: list[ShotNote] = Field(default_factory=list)
    top_issues: list[CritiqueIssue] = Field(default_factory=list, description="most urgent first")
    keep_watching: bool
    keep_watching_reason: str
    summary: str = Field(description="the reaction in the persona's own voice")

    @field_validator("scores")
    @classmethod
    def _all_dimensions(cls, v: dict[str, float]) -> dict[str, float]:
        missing = set(DIMENSIONS) - set(v)
        if missing:
            raise ValueError(f"missing score(s) for {sorted(missing)}")
        for d, s in v.items():
            if not 0 <= s <= 10:
                raise ValueError(f"score for {d} must be within 0..10, got {s}")
        return v


class Note(Strict):
    """The creator's note on a version: an instruction the refiner must follow."""

    id: str = Field(default_factory=lambda: new_id("n"))
    text: str = Field(min_length=1, max_length=4000)
    shot_id: str | None = None


EditOp = Literal["set", "add_shot", "remove_shot", "move_shot", "set_character", "set_story"]
STORY_FIELDS = ("title", "logline", "style_guide")


class Edit(Strict):
    """One proposed change. Numbered by position (1-based) when shown to the creator.

    - set: shot `shot_id`, `field` from old -> new
    - add_shot: a new shot with prompt `new` inserted after `shot_id` (None: at the start)
    - remove_shot: remove `shot_id`
    - move_shot: move `shot_id` to just after the shot whose id is `new` ("" = first)
    - set_character: character `character`'s description old -> new (added if old is None)
    - set_story: the storyboard's `field` (title, logline, style_guide) old -> new
    """

    op: EditOp = "set"
    shot_id: str | None = None
    field: str | None = None
    character: str | None = None
    old: str | None = None
    new: str | None = None
    rationale: str
    sources: list[str] = Field(default_factory=list, description="note ids and persona ids")

    @model_validator(mode="after")
    def _shape(self) -> "Edit":
        if self.op == "set":
            if not self.shot_id or self.field not in EDITABLE_SHOT_FIELDS or self.new is None:
                raise ValueError(f"a 'set' edit needs shot_id, new and a field in {EDITABLE_SHOT_FIELDS}")
        elif self.op in ("remove_shot", "move_shot") and not self.shot_id:
            raise ValueError(f"a '{self.op}' edit needs shot_id")
        elif self.op == "add_shot" and not self.new:
            raise ValueError("an 'add_shot' edit needs the new shot's prompt in 'new'")
        elif self.op == "set_character" and not (self.character and self.new):
            raise ValueError("a 'set_character' edit needs character and new")
        elif self.op == "set_story" and (self.field not in STORY_FIELDS or self.new is None):
            raise ValueError(f"a 'set_story' edit needs new and a field in {STORY_FIELDS}")
        return self


class Unchanged(Strict):
    what: str
    why: str


class Proposal(Strict):
    """The refiner's proposal for the next version. The creator decides each edit."""

    summary: str = ""
    edits: list[Edit] = Field(default_factory=list)
    not_changed: list[Unchanged] = Field(default_factory=list)


class Usage(Strict):
    """Cost of one agent call (or a sum of them)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            seconds=round(self.seconds + other.seconds, 3),
        )


def first_error(e: ValidationError) -> str:
    """A validation error in one line: where the first problem is, what it is, and how many more."""
    first = e.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
    return f"{loc}: {first['msg']}{more}"


def slug(text: str, n: int = 40) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:n] or "untitled"
