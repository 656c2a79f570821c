"""The LLM planner: an idea and a target length -> a Storyboard whose shot durations add up to the target."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agents.base import Result
from agents.llm import LLMClient
from prompts import render
from storage.schema import CAMERA_MOVES, Camera, Character, Scene, Shot, Storyboard

MIN_SHOT, TYPICAL_SHOT, MAX_SHOT = 2.0, 5.0, 12.0
TOLERANCE = 0.03  # rescale durations when the model is off the target by more than this fraction


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShotOut(_Closed):
    prompt: str = Field(min_length=1, max_length=2000)
    duration: float = Field(gt=0, le=60, description="seconds")
    camera: Camera
    narration: str = Field(max_length=2000)
    dialogue: str = Field(max_length=2000)
    characters: list[str]


class SceneOut(_Closed):
    title: str = Field(max_length=200)
    description: str = Field(max_length=2000)
    shots: list[ShotOut] = Field(min_length=1)


class PlanOut(_Closed):
    title: str = Field(min_length=1, max_length=200)
    logline: str = Field(max_length=2000)
    style_guide: str = Field(max_length=4000)
    characters: list[Character]
    scenes: list[SceneOut] = Field(min_length=1)


def fit_durations(durations: list[float], target: float) -> list[float]:
    """Scale to sum to `target`, each shot kept within MIN_SHOT..MAX_SHOT (shots at a bound stop moving)."""

    def clamp(d: float) -> float:
        return min(MAX_SHOT, max(MIN_SHOT, d))

    out = [clamp(d) for d in durations]
    for _ in range(10):
        diff = target - sum(out)
        if abs(diff) <= 0.01:
            break
        movable = [i for i, d in enumerate(out) if (d < MAX_SHOT if diff > 0 else d > MIN_SHOT)]
        if not movable:
            break
        scale = 1 + diff / sum(out[i] for i in movable)
        for i in movable:
            out[i] = clamp(out[i] * scale)
    out = [round(d, 2) for d in out]
    out[-1] = round(min(60.0, max(0.1, out[-1] + target - sum(out))), 2)  # the last shot absorbs rounding
    return out


class LLMPlanner:
    """Planner role over an OpenAI-compatible model (agents.base.Planner)."""

    def __init__(self, client: LLMClient, model: str | None = None):
        self.client = client
        self.model = model or client.config.planner_model
        self.mode = f"llm:{self.model}"

    def messages(self, idea: str, minutes: float) -> list[dict]:
        seconds = minutes * 60
        n_shots = max(1, round(seconds / TYPICAL_SHOT))
        system = render("planner_system.j2", min_shot=f"{MIN_SHOT:g}", max_shot=f"{MAX_SHOT:g}",
                        typical_shot=f"{TYPICAL_SHOT:g}", camera_moves=CAMERA_MOVES)
        user = render("planner_user.j2", idea=idea.strip(), minutes=minutes, seconds=seconds,
                      n_shots=n_shots, n_scenes=max(1, round(n_shots / 6)))
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def plan(self, idea: str, minutes: float) -> Result:
        if not idea.strip():
            raise ValueError("the idea is empty")
        if not 0 < minutes <= 10:
            raise ValueError(f"target length must be within 0..10 minutes (1-10 intended), got {minutes:g}")
        seconds = minutes * 60

        def check(plan: PlanOut) -> list[str]:
            n = sum(len(s.shots) for s in plan.scenes)
            if seconds / n > MAX_SHOT:
                return [f"{n} shots is too few for {seconds:.0f} seconds: write about {round(seconds / TYPICAL_SHOT)} shots of ~{TYPICAL_SHOT:g} s"]
            if seconds / n < MIN_SHOT:
                return [f"{n} shots is too many for {seconds:.0f} seconds: write about {round(seconds / TYPICAL_SHOT)} shots of ~{TYPICAL_SHOT:g} s"]
            return []

        out, usage = self.client.structured("planner", self.model, self.messages(idea, minutes), PlanOut, check=check)
        return Result(value=to_storyboard(out, seconds), usage=usage, model=self.model)


def to_storyboard(out: PlanOut, seconds: float) -> Storyboard:
    """Readable stable ids (sc01, sh01...), distinct seeds, durations fitted to the target, known names only."""
    raw = [shot.duration for scene in out.scenes for shot in scene.shots]
    total = sum(raw)
    durations = raw if abs(total - seconds) <= TOLERANCE * seconds and all(MIN_SHOT / 2 <= d <= 60 for d in raw) else fit_durations(raw, seconds)
    names = {c.name for c in out.characters}
    characters = list({c.name: c for c in out.characters}.values())
    scenes, n = [], 0
    for i, scene in enumerate(out.scenes, 1):
        shots = []
        for shot in scene.shots:
            shots.append(Shot(
                shot_id=f"sh{n + 1:02d}", prompt=shot.prompt, duration=durations[n], seed=1000 + n, camera=shot.camera,
                narration=shot.narration, dialogue=shot.dialogue, characters=[c for c in shot.characters if c in names],
            ))
            n += 1
        scenes.append(Scene(scene_id=f"sc{i:02d}", title=scene.title, description=scene.description, shots=shots))
    return Storyboard(title=out.title, logline=out.logline, style_guide=out.style_guide, characters=characters, scenes=scenes)
