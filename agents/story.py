"""Planning a film scene by scene: the story-bible call, the per-scene shot calls, and the arithmetic that keeps
every answer inside the output budget and every duration on target.

One call writes the story (title, logline, character bible, locations, style guide, and a scene list: each scene's
purpose in the plot, location, characters and a duration budget); one call per scene (or per part of a long scene)
writes its shots from the story bible, the scene's place in the plot and a summary of the scene before. Sizes are
estimated in tokens before asking, so no answer is planned to exceed `budget`: a scene whose shots would not fit is
split into parts, and a story that would not fit is asked for in fewer scenes.
"""

from __future__ import annotations

import math
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from prompts import render
from storage.schema import CAMERA_MOVES, WORDS_PER_SECOND, Camera, Character, Line, Location, Scene, Shot, Storyboard

MIN_SHOT, TYPICAL_SHOT, MAX_SHOT = 2.0, 5.0, 12.0
SCENE_SECONDS = 30.0  # a scene lasts about this long: 2 scenes in a minute, 20 in ten
# Answer sizes in tokens, estimated at 4 characters a token on the JSON these schemas produce for typical shots and
# scenes (a real tokenizer, e.g. SmolLM2's, counts up to ~25% more on such JSON), and the share of the budget a plan
# may use (70%), so that margin and a wordier model still finish inside the budget.
SHOT_TOKENS, SCENE_BRIEF_TOKENS, BIBLE_TOKENS, FILL = 160, 110, 700, 0.7
REFINE_OVERHEAD = 2000  # the refiner's request beside the bible and its scenes' shots (see refinable_shots)


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CharacterOut(Closed):
    name: str = Field(min_length=1, max_length=80)
    description: str = Field(min_length=1, max_length=1000, description="how they look, every time they appear")


class LocationOut(Closed):
    name: str = Field(min_length=1, max_length=80)
    description: str = Field(min_length=1, max_length=1000, description="how the place looks, every time we are there")


class LineOut(Closed):
    character: str = Field(max_length=80, description="who says it: a name from the character bible")
    line: str = Field(min_length=1, max_length=500, description="what they say, in character, in the story's language")
    delivery: str = Field(max_length=200, description='how it is said, in words ("whispered"), or ""')


class ShotOut(Closed):
    prompt: str = Field(min_length=1, max_length=2000)
    duration: float = Field(gt=0, le=60, description="seconds")
    camera: Camera
    narration: str = Field(max_length=2000)
    dialogue: list[LineOut] = Field(max_length=12, description="the lines said in the shot, in order; [] for none")
    sounds: str = Field(max_length=1000, description='effects and ambience heard, in words, or ""')
    description: str = Field(
        default="",
        max_length=500,
        description="what is seen, in one short sentence, for viewers who cannot see: said between the lines",
    )
    characters: list[str]


class SceneBrief(Closed):
    title: str = Field(min_length=1, max_length=200)
    purpose: str = Field(max_length=500, description="the scene's place in the plot (its beat)")
    location: str = Field(max_length=80, description="a location name from the locations")
    characters: list[str]
    seconds: float = Field(gt=0, le=3600, description="the scene's duration budget")
    summary: str = Field(max_length=1000, description="what happens, in one to three sentences")
    music: str = Field(max_length=1000, description='the music cue in words (mood, tempo, instruments), or ""')


class StoryOut(Closed):
    title: str = Field(min_length=1, max_length=200)
    logline: str = Field(max_length=2000)
    style_guide: str = Field(max_length=4000)
    characters: list[CharacterOut]
    locations: list[LocationOut]
    scenes: list[SceneBrief] = Field(min_length=1)


class SceneShotsOut(Closed):
    shots: list[ShotOut] = Field(min_length=1)


# ---------------------------------------------------------------- sizes


def shots_for(seconds: float) -> int:
    return max(1, round(seconds / TYPICAL_SHOT))


def shot_range(seconds: float) -> tuple[int, int]:
    """The fewest and most shots that can fill `seconds` with shots of MIN_SHOT..MAX_SHOT."""
    return max(1, math.ceil(seconds / MAX_SHOT - 1e-9)), max(1, math.floor(seconds / MIN_SHOT + 1e-9))


def shots_per_answer(budget: int) -> int:
    """How many shots one answer of `budget` tokens is planned to hold."""
    return max(1, int(budget * FILL // SHOT_TOKENS))


def fits_one_answer(seconds: float, budget: int) -> bool:
    """Whether the whole storyboard fits one answer (a short film: one call instead of one per scene)."""
    n = shots_for(seconds)
    scenes = max(1, round(seconds / SCENE_SECONDS))
    return BIBLE_TOKENS + scenes * 40 + n * SHOT_TOKENS <= budget * FILL


def refinable_shots(room: int) -> int:
    """The most shots a scene may have for the refiner to take it whole in `room` tokens (its context less its
    answer), beside the bible and REFINE_OVERHEAD (its instructions, the other scenes' lines, the critics' issues)."""
    fits = int((room - BIBLE_TOKENS - REFINE_OVERHEAD) * FILL // SHOT_TOKENS)
    return max(fits, shots_for(SCENE_SECONDS))  # never more scenes than the usual pace: a tiny context stays tiny


def scene_count(seconds: float, budget: int, refinable: int | None = None) -> int:
    """Scenes to ask the story for: about one per SCENE_SECONDS, fewer when the scene list would not fit the answer
    — but never so few that a scene has more shots than `refinable` (a scene too long to refine can never change)."""
    fits = max(1, int((budget * FILL - BIBLE_TOKENS) // SCENE_BRIEF_TOKENS))
    n = max(1, min(round(seconds / SCENE_SECONDS), fits))
    return max(n, math.ceil(shots_for(seconds) / refinable)) if refinable else n


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


def scene_budgets(asked: list[float], target: float) -> list[float]:
    """The scenes' budgets scaled to sum to `target` exactly (0.01 s), none under one short shot."""
    scale = target / sum(asked)
    out = [max(MIN_SHOT, round(s * scale, 2)) for s in asked]
    out[out.index(max(out))] += round(target - sum(out), 2)  # the longest scene absorbs rounding
    return [round(s, 2) for s in out]


def parts_of(seconds: float, per_answer: int) -> list[float]:
    """A scene's budget split into parts whose shots each fit one answer (one part when it fits)."""
    n = shots_for(seconds)
    k = math.ceil(n / per_answer)
    return [round(seconds / k, 2)] * (k - 1) + [round(seconds - round(seconds / k, 2) * (k - 1), 2)]


# ---------------------------------------------------------------- messages


def system_message(min_shot=MIN_SHOT, max_shot=MAX_SHOT) -> dict:
    return {
        "role": "system",
        "content": render(
            "planner_system.j2",
            min_shot=f"{min_shot:g}",
            max_shot=f"{max_shot:g}",
            typical_shot=f"{TYPICAL_SHOT:g}",
            camera_moves=CAMERA_MOVES,
            words_per_second=f"{WORDS_PER_SECOND:g}",
        ),
    }


def story_messages(idea: str, seconds: float, n_scenes: int, brief: bool = False) -> list[dict]:
    user = render(
        "planner_story.j2",
        idea=idea.strip(),
        minutes=seconds / 60,
        seconds=seconds,
        n_scenes=n_scenes,
        n_shots=shots_for(seconds),
        scene_seconds=seconds / n_scenes,
        brief=brief,
    )
    return [system_message(), {"role": "user", "content": user}]


def scene_messages(
    story: StoryOut, index: int, seconds: float, part: int, parts: int, earlier: list[ShotOut]
) -> list[dict]:
    """The call for scene `index` (0-based), part `part` of `parts`; `earlier`: this scene's shots written so far."""
    lo, hi = shot_range(seconds)
    scene = story.scenes[index]
    user = render(
        "planner_scene.j2",
        story=story,
        index=index,
        scene=scene,
        before=story.scenes[index - 1] if index else None,
        after=story.scenes[index + 1] if index + 1 < len(story.scenes) else None,
        seconds=seconds,
        n_shots=shots_for(seconds),
        lo=lo,
        hi=hi,
        part=part,
        parts=parts,
        earlier=earlier[-2:],
    )
    return [system_message(), {"role": "user", "content": user}]


def check_story(story: StoryOut, n_scenes: int) -> list[str]:
    problems = []
    if len(story.scenes) > 2 * n_scenes + 2:
        problems.append(f"{len(story.scenes)} scenes is too many: write about {n_scenes}")
    names = [c.name for c in story.characters]
    if len(set(names)) != len(names):
        problems.append("two characters have the same name: give each character one entry")
    places = [loc.name for loc in story.locations]
    if len(set(places)) != len(places):
        problems.append("two locations have the same name: give each location one entry")
    return problems


def check_shots(out: SceneShotsOut, seconds: float) -> list[str]:
    lo, hi = shot_range(seconds)
    n = len(out.shots)
    if not lo <= n <= hi:
        return [
            f"{n} shots cannot fill {seconds:.0f} seconds with shots of {MIN_SHOT:g}-{MAX_SHOT:g} s: "
            f"write {shots_for(seconds)} shots (between {lo} and {hi})"
        ]
    return []


# ---------------------------------------------------------------- the storyboard


def lines_of(shot: ShotOut) -> list[Line]:
    """A shot's lines as the storyboard keeps them (the speaker may be off screen: not among its characters)."""
    return [Line(character=ln.character, line=ln.line, delivery=ln.delivery) for ln in shot.dialogue]


def storyboard_from(story: StoryOut, budgets: list[float], scene_shots: list[list[ShotOut]]) -> Storyboard:
    """The story and its scenes' shots, each scene's shots fitted to its budget (see `assemble`)."""
    scenes = [
        (
            dict(
                title=brief.title,
                description=brief.summary,
                purpose=brief.purpose,
                location=brief.location,
                music=brief.music,
            ),
            outs,
            fit_durations([s.duration for s in outs], seconds),
        )
        for brief, seconds, outs in zip(story.scenes, budgets, scene_shots)
    ]
    return assemble(story, scenes)


class Bible(Protocol):
    """What a plan's answer says of the whole film (a one-answer plan's, or the story's when scenes are apart)."""

    title: str
    logline: str
    style_guide: str
    characters: list[CharacterOut]
    locations: list[LocationOut]


def assemble(head: Bible, scenes: list[tuple[dict[str, str], list[ShotOut], list[float]]]) -> Storyboard:
    """A planner's answer as a storyboard: stable readable ids (sc01, sh01, ...), distinct seeds, the durations
    given, and only the names the bible knows (a character or location the model made up in passing is dropped).
    `scenes`: each scene's own fields (title, description, purpose, location, music), its shots as written, and
    their durations."""
    characters = list({c.name: Character(name=c.name, description=c.description) for c in head.characters}.values())
    locations = list(
        {loc.name: Location(name=loc.name, description=loc.description) for loc in head.locations}.values()
    )
    names, places = {c.name for c in characters}, {loc.name for loc in locations}
    out, n = [], 0
    for i, (scene, shots, durations) in enumerate(scenes, 1):
        made = []
        for shot, d in zip(shots, durations):
            made.append(
                Shot(
                    shot_id=f"sh{n + 1:02d}",
                    prompt=shot.prompt,
                    duration=d,
                    seed=1000 + n,
                    camera=shot.camera,
                    narration=shot.narration,
                    dialogue=lines_of(shot),
                    sounds=shot.sounds,
                    description=shot.description,
                    characters=[c for c in dict.fromkeys(shot.characters) if c in names],
                )
            )
            n += 1
        out.append(
            Scene(
                scene_id=f"sc{i:02d}",
                title=scene["title"],
                description=scene["description"],
                purpose=scene["purpose"],
                location=scene["location"] if scene["location"] in places else "",
                music=scene["music"],
                shots=made,
            )
        )
    return Storyboard(
        title=head.title,
        logline=head.logline,
        style_guide=head.style_guide,
        characters=characters,
        locations=locations,
        scenes=out,
    )
