"""LLMPlanner: a typed storyboard whose durations add up to the target."""

from __future__ import annotations

import pytest

from agents.planner import LLMPlanner, fit_durations
from storage.schema import Storyboard
from tests.agents.openai_server import ok


def plan(n_shots, duration, per_scene=4):
    shots = [
        {
            "prompt": f"shot {i}",
            "duration": duration,
            "camera": "static",
            "narration": "",
            "dialogue": [],
            "sounds": "",
            "characters": ["Ada", "Nobody"],
        }
        for i in range(n_shots)
    ]
    scenes = [
        {"title": f"s{k}", "description": "", "music": "", "shots": shots[k : k + per_scene]}
        for k in range(0, n_shots, per_scene)
    ]
    return {
        "title": "Gulls",
        "logline": "l",
        "style_guide": "s",
        "characters": [{"name": "Ada", "description": "old woman, yellow raincoat"}],
        "scenes": scenes,
    }


def test_plan_rescales_to_the_target(server, client):
    server.script(ok(plan(12, 6.5)))  # 78 s for a 60 s film
    result = LLMPlanner(client).plan("an old keeper and a gull", 1)
    sb = result.value
    assert isinstance(sb, Storyboard) and result.model == "planner-model"
    assert sb.duration() == pytest.approx(60, abs=0.05)
    assert [s.shot_id for s in sb.shots()][:2] == ["sh01", "sh02"] and sb.scenes[0].scene_id == "sc01"
    assert len({s.seed for s in sb.shots()}) == 12
    assert sb.shots()[0].characters == ["Ada"]  # names outside the bible dropped
    text = server.texts()
    assert "an old keeper and a gull" in text and "60 seconds" in text and "about 12 shots" in text


def test_plan_close_enough_is_kept_and_one_further_off_is_fitted(server, client):
    server.script(ok(plan(12, 5.04)))  # 60.48 s: within 1%
    sb = LLMPlanner(client).plan("idea", 1).value
    assert all(s.duration == 5.04 for s in sb.shots())
    server.script(ok(plan(12, 5.1)))  # 61.2 s: 2% over, fitted to the target
    sb = LLMPlanner(client).plan("idea", 1).value
    assert abs(sum(s.duration for s in sb.shots()) - 60) <= 0.6 and all(s.duration != 5.1 for s in sb.shots())


def test_too_few_shots_is_repaired(server, client):
    server.script(ok(plan(2, 30)), ok(plan(12, 5)))
    sb = LLMPlanner(client).plan("idea", 1).value
    assert len(sb.shots()) == 12
    assert "too few" in server.requests[1]["messages"][-1]["content"]


def test_bad_target_is_refused(client):
    with pytest.raises(ValueError, match="0..1440 minutes"):
        LLMPlanner(client).plan("idea", 1441)


def test_fit_durations_sums_and_bounds():
    out = fit_durations([1, 30, 5, 5], 40)
    assert sum(out) == pytest.approx(40, abs=0.01) and all(2 <= d <= 12.01 for d in out)


def _props(schema: dict, *path: str) -> dict:
    """The properties of the object at `path` in a JSON schema (following $ref and array items)."""
    defs = schema.get("$defs", {})

    def resolve(node: dict) -> dict:
        node = defs[node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else node
        return resolve(node["items"]) if node.get("type") == "array" else node

    node = resolve(schema)
    for key in path:
        node = resolve(node["properties"][key])
    return node["properties"]


def test_the_one_answer_plan_asks_for_and_keeps_lines_music_and_sounds(server, client):
    answer = plan(12, 5)
    answer["scenes"][0]["music"] = "slow solo cello, 60 bpm, lonely"
    answer["scenes"][0]["shots"][1]["dialogue"] = [
        {"character": "Ada", "line": "There you are.", "delivery": "whispered"},
        {"character": "Ben", "line": "Here I am.", "delivery": ""},
    ]
    answer["scenes"][0]["shots"][1]["sounds"] = "gulls, wind on the cliff"
    server.script(ok(answer))
    sb = LLMPlanner(client).plan("an old keeper and a gull", 1).value
    schema = server.requests[-1]["response_format"]["json_schema"]["schema"]
    assert set(_props(schema, "scenes", "shots", "dialogue")) == {"character", "line", "delivery"}
    assert "sounds" in _props(schema, "scenes", "shots") and "music" in _props(schema, "scenes")
    assert "2.5 words a second" in server.texts() and "in the story's language" in server.texts()
    shot = sb.shots()[1]
    assert [(ln.character, ln.line, ln.delivery) for ln in shot.dialogue] == [
        ("Ada", "There you are.", "whispered"),
        ("Ben", "Here I am.", ""),
    ]
    assert shot.subtitles() == ["There you are.", "Ben: Here I am."]  # Ben is not in the shot (nor the bible)
    assert shot.sounds == "gulls, wind on the cliff" and sb.scenes[0].music == "slow solo cello, 60 bpm, lonely"


def test_scene_by_scene_plans_carry_the_story_music_and_each_scene_lines(config):
    from agents.llm import LLMClient
    from tests.agents import longform
    from tests.agents.openai_server import FakeOpenAI

    with FakeOpenAI(longform.responder, max_output_tokens=4096, context_tokens=32768) as server:
        client = LLMClient(config.model_copy(update={"base_url": server.base_url, "max_concurrency": 4}))
        sb = LLMPlanner(client).plan("a keeper and a gull through a winter of storms", 3).value
    story = next(b for b in server.requests if longform.schema_name(b) == "StoryOut")
    assert "music" in _props(story["response_format"]["json_schema"]["schema"], "scenes")
    scene = next(b for b in server.requests if longform.schema_name(b) == "SceneShotsOut")
    shots = _props(scene["response_format"]["json_schema"]["schema"], "shots")
    assert "sounds" in shots and "dialogue" in shots
    assert [sc.music for sc in sb.scenes][:2] == ["", "slow cello"]
    assert all(sc.shots[1].dialogue[0].line == "Steady now." for sc in sb.scenes if len(sc.shots) > 1)
    assert any(s.sounds == "waves on the rocks" for s in sb.shots())
