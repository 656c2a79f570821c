"""Planning a long film scene by scene against a server that enforces an output limit, a context and images
per request the way real endpoints do: the story, then every scene in parallel, each answer inside the budget."""

from __future__ import annotations

import json
import threading

import pytest

from agents.base import AgentError, Cancelled
from agents.llm import LLMClient
from agents.planner import LLMPlanner
from agents.story import fits_one_answer, parts_of, scene_budgets, scene_count, shots_per_answer
from storage.run import CancelToken, PlanProgress, RunContext
from storage.schema import Scope
from tests.agents import longform
from tests.agents.openai_server import FakeOpenAI, error, ok


def client_for(server, config, **over):
    return LLMClient(config.model_copy(update={"base_url": server.base_url, "max_concurrency": 8, **over}))


def cut_off(server) -> list[int]:
    """Indexes of requests whose answer the server would have cut (the answer is what the responder gave)."""
    return [
        i
        for i, body in enumerate(server.requests)
        if longform.schema_name(body) in ("StoryOut", "SceneShotsOut")
        and len(json.dumps(longform.responder(body).body["choices"][0]["message"]["content"])) / 4
        > min(server.max_output_tokens, body.get("max_tokens") or 10**9)
    ]


def test_ten_minutes_plan_scene_by_scene_within_every_limit(config):
    events = []
    with longform.limited() as server:
        result = LLMPlanner(client_for(server, config)).plan(
            "a keeper and a gull through a winter of storms", 10, RunContext(progress=events.append)
        )
    board = result.value
    assert board.duration() == pytest.approx(600, rel=0.01)
    assert abs(board.duration() - 600) < 0.5  # in fact to the rounding of each scene
    names = [longform.schema_name(b) for b in server.requests]
    assert names[0] == "StoryOut" and names.count("StoryOut") == 1
    n = scene_count(600, 4000)
    assert 15 <= n <= 20 and names.count("SceneShotsOut") == len(board.scenes) == n  # a call per scene: each fits
    assert all(b["max_tokens"] <= 4000 for b in server.requests) and cut_off(server) == []
    assert all(2 <= s.duration <= 12.01 for s in board.shots())
    assert len(board.shots()) == pytest.approx(120, abs=12)
    sc = board.scenes[3]
    assert (sc.scene_id, sc.purpose, sc.location) == ("sc04", "beat 4: the keeper harbour", "Lighthouse")
    assert {loc.name for loc in board.locations} == {"Lighthouse", "Harbour"}
    assert all(set(s.characters) <= {"Keeper", "Gull"} for s in board.shots())  # "Stranger" is not in the bible
    assert [s.shot_id for s in board.shots()][:2] == ["sh01", "sh02"] and len({s.seed for s in board.shots()}) == len(
        board.shots()
    )
    # each scene call knows the story: the bible, the scene's place in the plot and the scene before
    third = next(b for b in server.requests if f"THIS SCENE, 3 of {n}" in longform.user_text(b))
    text = longform.user_text(third)
    assert "yellow oilskin coat" in text and "<-- THIS SCENE" in text and "The scene before (Scene 2)" in text
    assert server.max_in_flight > 1  # scenes were written in parallel
    assert all(isinstance(e, PlanProgress) for e in events)
    done = [e for e in events if e.status == "done"]
    assert [e.scene for e in done][0] == "the story" and len(done) == n + 1 and done[-1].done == n + 1
    assert any(e.tokens for e in events)  # streamed tokens are reported
    assert result.usage.calls == n + 1


def test_a_short_film_is_one_answer(server, client):
    assert fits_one_answer(60, 4000) and not fits_one_answer(180, 4000)


def test_a_long_scene_is_split_into_parts_that_fit(config):
    assert parts_of(120, 6) == [30.0] * 4 and sum(parts_of(100, 7)) == pytest.approx(100)
    with longform.limited() as server:
        server.max_output_tokens = 1200
        client = client_for(server, config, planner_max_tokens=1200, max_output_tokens=1200)
        per = shots_per_answer(1200)
        board = LLMPlanner(client).plan("a keeper and a gull", 3).value
    assert board.duration() == pytest.approx(180, abs=0.5)
    asked = [
        len(json.loads(longform.responder(b).body["choices"][0]["message"]["content"])["shots"])
        for b in server.requests
        if longform.schema_name(b) == "SceneShotsOut"
    ]
    assert max(asked) <= per and cut_off(server) == []
    assert any("write part 2 of" in longform.user_text(b) for b in server.requests)
    part2 = next(b for b in server.requests if "write part 2 of" in longform.user_text(b))
    assert "The last shots written before this part" in longform.user_text(part2)


def test_an_answer_cut_off_at_the_limit_asks_for_less(config):
    """The model writes longer prompts than planned: the server cuts the answer; the part is split, not repaired."""

    def wordy(body):
        if longform.schema_name(body) == "SceneShotsOut":
            return ok(json.dumps(longform.shots(body, prompt_words=200)))  # ~330 tokens a shot, not ~160
        return longform.responder(body)

    with FakeOpenAI(wordy, max_output_tokens=2500) as server:
        board = LLMPlanner(client_for(server, config, max_output_tokens=2500)).plan("a keeper", 2).value
    assert board.duration() == pytest.approx(120, abs=0.5)
    scene_calls = [b for b in server.requests if longform.schema_name(b) == "SceneShotsOut"]
    assert len(scene_calls) > len(board.scenes)  # some scenes were asked for again, in smaller parts
    assert not any(m.get("role") == "assistant" for b in scene_calls for m in b["messages"])  # no repair prompt


def test_a_failed_scene_is_retried_alone(config):
    calls = {"bad": 0}
    lock = threading.Lock()

    def flaky(body):
        if longform.schema_name(body) == "SceneShotsOut" and "THIS SCENE, 2 of" in longform.user_text(body):
            with lock:
                calls["bad"] += 1
                if calls["bad"] <= 2:  # the answer and its repair: not JSON
                    return ok("I would rather not.")
        return longform.responder(body)

    with FakeOpenAI(flaky) as server:
        board = LLMPlanner(client_for(server, config)).plan("a keeper", 2).value
    per_scene = [longform.user_text(b).count("THIS SCENE, 2 of") for b in server.requests]
    assert sum(per_scene) == 3  # answer + repair failed, then the scene alone again
    assert [longform.schema_name(b) for b in server.requests].count("StoryOut") == 1
    assert sum("THIS SCENE, 1 of" in longform.user_text(b) for b in server.requests) == 1
    assert len(board.scenes) == 4


def test_a_scene_that_fails_twice_fails_the_plan_in_one_line(config):
    def broken(body):
        if "THIS SCENE, 3 of" in longform.user_text(body):
            return error(400, "the model is unhappy")
        return longform.responder(body)

    with FakeOpenAI(broken) as server:
        with pytest.raises(AgentError, match=r"scene 3 of 4 \(“Scene 3”\) failed twice: .*the model is unhappy") as e:
            LLMPlanner(client_for(server, config)).plan("a keeper", 2)
    assert "\n" not in str(e.value)


def test_cancel_stops_every_scene(config):
    cancel = CancelToken()

    def slow(body):
        if longform.schema_name(body) == "SceneShotsOut":
            cancel.cancel()
            return ok(json.dumps(longform.shots(body)), delay=5)
        return longform.responder(body)

    with FakeOpenAI(slow) as server:
        with pytest.raises(Cancelled):
            LLMPlanner(client_for(server, config)).plan("a keeper", 3, RunContext(cancel=cancel))


def test_scene_budgets_sum_exactly():
    out = scene_budgets([10, 30, 33.3, 1], 600)
    assert sum(out) == pytest.approx(600, abs=0.001) and min(out) >= 2


def test_at_a_small_output_cap_scenes_stay_small_enough_to_refine(config):
    """At a 1024-token output cap the story's scene list fits one scene (the issue: a 10-minute film planned as one
    120-shot scene that no 8k-context refiner can take). The plan has as many scenes as the refiner's context
    needs, and the refiner can take each of them whole."""
    from agents.refiner import LLMRefiner
    from agents.story import refinable_shots

    with FakeOpenAI(longform.responder, max_output_tokens=1024, context_tokens=8192) as server:
        client = client_for(server, config, max_output_tokens=1024, context_tokens=8192)
        board = LLMPlanner(client).plan("a keeper and a gull through a winter of storms", 10).value
        refiner = LLMRefiner(client)
        for sc in board.scenes:
            refiner.fitting(board, [], [], Scope(scenes=[sc.scene_id]))  # raises when a scene cannot be refined
    most = refinable_shots(8192 - 1024)
    assert scene_count(600, 1024) == 1 and len(board.scenes) >= 120 / most
    assert max(len(sc.shots) for sc in board.scenes) <= 1.5 * most
    assert board.duration() == pytest.approx(600, abs=0.5)
