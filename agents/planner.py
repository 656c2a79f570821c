"""The LLM planner: an idea and a target length -> a Storyboard whose shot durations add up to the target.

A short film whose whole storyboard fits one answer is planned in one call. A longer one is planned scene by
scene (agents/story.py): one call writes the story bible and the scene list, then one call per scene writes its
shots, scenes in parallel within the endpoint's concurrency, parts of a long scene in order. Every answer is
planned to fit the output budget; one cut off at the limit is met by asking for less (fewer scenes, a scene in
smaller parts), a scene that fails is retried alone, and nothing comes back until every scene is written.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

from pydantic import Field

from agents.base import AgentError, AnswerTooLong, Cancelled, RequestTooLarge, Result
from agents.llm import LLMClient, Progress
from agents.story import (
    MAX_SHOT,
    MIN_SHOT,
    TYPICAL_SHOT,
    CharacterOut,
    Closed,
    LocationOut,
    SceneShotsOut,
    ShotOut,
    StoryOut,
    assemble,
    check_shots,
    check_story,
    fit_durations,
    fits_one_answer,
    parts_of,
    refinable_shots,
    scene_budgets,
    scene_count,
    scene_messages,
    shots_for,
    shots_per_answer,
    story_messages,
    storyboard_from,
    system_message,
)
from prompts import render
from storage.run import CancelToken, PlanProgress, RunContext
from storage.schema import Storyboard, Usage

__all__ = ["LLMPlanner", "PlanOut", "fit_durations", "to_storyboard"]

log = logging.getLogger(__name__)
TOLERANCE = 0.01  # a one-answer plan off the target by more than this fraction is rescaled (issue: within 1%)
SCENE_ATTEMPTS = 2  # a scene that fails is asked again once, alone


class SceneOut(Closed):
    title: str = Field(max_length=200)
    description: str = Field(max_length=2000)
    purpose: str = Field(default="", max_length=500, description="the scene's place in the plot")
    location: str = Field(default="", max_length=80, description="a location name from the locations")
    music: str = Field(max_length=1000, description='the music cue in words (mood, tempo, instruments), or ""')
    shots: list[ShotOut] = Field(min_length=1)


class PlanOut(Closed):
    """The whole storyboard in one answer (a short film)."""

    title: str = Field(min_length=1, max_length=200)
    logline: str = Field(max_length=2000)
    style_guide: str = Field(max_length=4000)
    characters: list[CharacterOut]
    locations: list[LocationOut] = Field(default_factory=list)
    scenes: list[SceneOut] = Field(min_length=1)


MAX_MINUTES = 24 * 60  # the caller keeps to its own limit (Config.max_film_minutes); this only bounds the sizes


class LLMPlanner:
    """Planner role over an OpenAI-compatible model (agents.base.Planner)."""

    def __init__(self, client: LLMClient, model: str | None = None):
        self.client = client
        self.model = model or client.config.planner_model
        self.mode = f"llm:{self.model}"
        self._per_answer: int | None = None  # shots per answer, lowered when an answer is cut off at the limit
        self._lock = threading.Lock()

    @property
    def budget(self) -> int:
        return self.client.max_tokens_for("planner", self.model)

    def messages(self, idea: str, minutes: float) -> list[dict]:
        """The one-answer request (a short film)."""
        seconds = minutes * 60
        n_shots = shots_for(seconds)
        user = render(
            "planner_user.j2",
            idea=idea.strip(),
            minutes=minutes,
            seconds=seconds,
            n_shots=n_shots,
            n_scenes=max(1, round(n_shots / 6)),
        )
        return [system_message(), {"role": "user", "content": user}]

    def plan(self, idea: str, minutes: float, ctx: RunContext | None = None) -> Result[Storyboard]:
        if not idea.strip():
            raise ValueError("the idea is empty")
        if not 0 < minutes <= MAX_MINUTES:
            raise ValueError(f"target length must be within 0..{MAX_MINUTES} minutes (1-10 intended), got {minutes:g}")
        run = _Run(self, idea, minutes * 60, ctx or RunContext())
        if fits_one_answer(run.seconds, self.budget):
            try:
                return run.one_answer()
            except AnswerTooLong as e:
                log.info("planner: the one-answer plan was cut off (%s); planning scene by scene", e)
                run.emit(note="the plan did not fit one answer: planning scene by scene")
        return run.by_scene()

    def refinable(self) -> int:
        """The most shots a scene may have for the refiner to take it whole (its context less its answer)."""
        model = self.client.config.refiner_model
        ctx, _ = self.client.context_tokens(model)
        return refinable_shots(ctx - self.client.max_tokens_for("refiner", model))

    def per_answer(self) -> int:
        with self._lock:
            return self._per_answer or shots_per_answer(self.budget)

    def smaller(self, shots: int) -> int:
        """After an answer of `shots` shots was cut off: ask for half as many from now on."""
        with self._lock:
            self._per_answer = max(1, min(self._per_answer or shots, shots) // 2)
            return self._per_answer


class _Run:
    """One plan: its progress, its cancel, its usage."""

    def __init__(self, planner: LLMPlanner, idea: str, seconds: float, ctx: RunContext):
        self.p, self.idea, self.seconds, self.ctx = planner, idea, seconds, ctx
        self.deadline = planner.client.deadline(ctx)  # the whole plan: story, scenes and retries
        self.stop = CancelToken(parent=ctx.cancel)  # cancelled too when a scene failed for good: the others stop
        self.usage: list[Usage] = []
        self.lock = threading.Lock()
        self.done = 0
        self.total = 1

    def stopped(self) -> bool:
        return self.stop.cancelled

    def emit(self, **event) -> None:
        with self.lock:
            done, total = self.done, self.total
        self.ctx.progress(PlanProgress(done=done, total=total, **event))

    def on_tokens(self, what: str) -> Callable[[Progress], None]:
        def report(p: Progress) -> None:
            self.emit(
                scene=what,
                tokens=p.tokens,
                tokens_per_s=round(p.tokens_per_s, 1),
                status="writing",
                note=p.note,
            )

        return report

    def ask(self, role: str, what: str, messages: list[dict], result_type, check=None):
        try:
            value, usage = self.p.client.structured(
                role,
                self.p.model,
                messages,
                result_type,
                check=check,
                on_length="raise",
                on_progress=self.on_tokens(what),
                cancel=self.stop,
                deadline=self.deadline,
            )
        except AgentError as e:
            with self.lock:
                self.usage.append(getattr(e, "usage", Usage()))
            raise
        with self.lock:
            self.usage.append(usage)
        return value

    def result(self, board: Storyboard) -> Result[Storyboard]:
        return Result(value=board, usage=sum(self.usage, Usage()), model=self.p.model)

    # -- a short film: one answer

    def one_answer(self) -> Result[Storyboard]:
        seconds = self.seconds

        def check(plan: PlanOut) -> list[str]:
            n = sum(len(s.shots) for s in plan.scenes)
            if seconds / n > MAX_SHOT or seconds / n < MIN_SHOT:
                many = "few" if seconds / n > MAX_SHOT else "many"
                return [
                    f"{n} shots is too {many} for {seconds:.0f} seconds: write about {shots_for(seconds)} shots "
                    f"of ~{TYPICAL_SHOT:g} s"
                ]
            return []

        self.emit(scene="the storyboard", status="writing")
        out = self.ask("planner", "the storyboard", self.p.messages(self.idea, seconds / 60), PlanOut, check)
        with self.lock:
            self.done = 1
        self.emit(scene="the storyboard", status="done")
        return self.result(to_storyboard(out, seconds))

    # -- a longer film: the story, then its scenes in parallel

    def by_scene(self) -> Result[Storyboard]:
        story = self.story()
        budgets = scene_budgets([s.seconds for s in story.scenes], self.seconds)
        with self.lock:
            self.total = 1 + len(story.scenes)
            self.done = 1
        self.emit(scene="the story", status="done")
        shots: list[list[ShotOut] | None] = [None] * len(story.scenes)
        workers = max(1, min(len(story.scenes), self.p.client.config.max_concurrency))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="chief-plan") as pool:
            futures = {pool.submit(self.scene, story, i, budgets[i]): i for i in range(len(story.scenes))}
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            if any(f.exception() for f in done):
                self.stop.cancel()  # the scenes still writing close their connections
            wait(futures)
        errors = [e for f in futures if (e := f.exception()) is not None]
        if errors:
            if self.ctx.cancel.cancelled:
                raise next((e for e in errors if isinstance(e, Cancelled)), errors[0])
            raise next((e for e in errors if not isinstance(e, Cancelled)), errors[0])
        for f, i in futures.items():
            shots[i] = f.result()
        written = [s for s in shots if s is not None]
        if len(written) != len(shots):  # every scene has a future above
            raise RuntimeError("a scene's shots were not written")
        return self.result(storyboard_from(story, budgets, written))

    def story(self) -> StoryOut:
        least = scene_count(self.seconds, 1, self.p.refinable())  # scenes small enough to refine
        n = scene_count(self.seconds, self.p.budget, self.p.refinable())
        self.emit(scene="the story", status="writing")
        try:
            return self.ask(
                "planner",
                "the story",
                story_messages(self.idea, self.seconds, n),
                StoryOut,
                lambda s: check_story(s, n),
            )
        except AnswerTooLong:
            fewer = max(least, n // 2)
            self.emit(
                scene="the story", status="retrying", note=f"cut off at the limit: asking for {fewer} briefer scenes"
            )
            return self.ask(
                "planner",
                "the story",
                story_messages(self.idea, self.seconds, fewer, brief=True),
                StoryOut,
                lambda s: check_story(s, fewer),
            )

    def scene(self, story: StoryOut, index: int, seconds: float) -> list[ShotOut]:
        """A scene's shots, part by part; a scene that fails is asked again once, alone."""
        what = f"sc{index + 1:02d}"
        for attempt in range(1, SCENE_ATTEMPTS + 1):
            try:
                shots = self.scene_parts(story, index, seconds, what)
                break
            except (Cancelled, AnswerTooLong, RequestTooLarge):
                raise
            except AgentError as e:
                if self.stopped() or attempt == SCENE_ATTEMPTS:
                    title = " ".join(story.scenes[index].title.split())[:80]  # the model's words, on one line
                    raise AgentError(
                        f"scene {index + 1} of {len(story.scenes)} (“{title}”) failed"
                        f"{' twice' if attempt > 1 else ''}: {e}"
                    ) from None
                self.emit(scene=what, status="retrying", note=str(e)[:120])
        with self.lock:
            self.done += 1
        self.emit(scene=what, status="done")
        return shots

    def scene_parts(self, story: StoryOut, index: int, seconds: float, what: str) -> list[ShotOut]:
        written: list[ShotOut] = []
        parts = parts_of(seconds, self.p.per_answer())
        k = 0
        while k < len(parts):
            if self.stopped():
                raise Cancelled(f"planner ({self.p.model}): cancelled")
            part = parts[k]
            label = what if len(parts) == 1 else f"{what} part {k + 1}/{len(parts)}"
            self.emit(scene=label, status="writing")
            try:
                out = self.ask(
                    "planner",
                    label,
                    scene_messages(story, index, part, k + 1, len(parts), written),
                    SceneShotsOut,
                    lambda o, s=part: check_shots(o, s),
                )
            except AnswerTooLong:
                per = self.p.smaller(shots_for(part))
                if shots_for(part) <= 1:
                    raise
                rest = parts_of(round(sum(parts[k:]), 2), per)
                self.emit(
                    scene=label, status="split", note=f"cut off at the limit: {len(rest)} smaller parts of ~{per} shots"
                )
                parts = parts[:k] + rest
                continue
            written += fit_as_written(out.shots, part)
            k += 1
        return written


def fit_as_written(shots: list[ShotOut], seconds: float) -> list[ShotOut]:
    """A part's shots with their durations fitted to the part's budget (the scene is fitted again as a whole)."""
    return [
        s.model_copy(update={"duration": d}) for s, d in zip(shots, fit_durations([s.duration for s in shots], seconds))
    ]


def to_storyboard(out: PlanOut, seconds: float) -> Storyboard:
    """Readable stable ids (sc01, sh01...), distinct seeds, durations fitted to the target, known names only."""
    raw = [shot.duration for scene in out.scenes for shot in scene.shots]
    total = sum(raw)
    durations = (
        raw
        if abs(total - seconds) <= TOLERANCE * seconds and all(MIN_SHOT / 2 <= d <= 60 for d in raw)
        else fit_durations(raw, seconds)
    )
    scenes, n = [], 0
    for scene in out.scenes:
        fields = dict(
            title=scene.title,
            description=scene.description,
            purpose=scene.purpose,
            location=scene.location,
            music=scene.music,
        )
        scenes.append((fields, scene.shots, durations[n : n + len(scene.shots)]))
        n += len(scene.shots)
    return assemble(out, scenes)
