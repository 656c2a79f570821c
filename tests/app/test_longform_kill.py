"""`kill -9` in the middle of a scene-by-scene plan and of a critique watched in parts: nothing is half-written, and
the action runs again from the start."""

from __future__ import annotations

import json
import os
import signal

import pytest

from tests.agents import longform
from tests.agents.openai_server import FakeOpenAI
from tests.fault.conftest import assert_sound, board, chief, count, make_studio, popen_chief, wait_for


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def kill9(proc) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


def llm_env(server, **more) -> dict:
    return {
        "CHIEF_AGENTS": "llm",
        "CHIEF_LLM_BASE_URL": server.base_url,
        "CHIEF_LLM_TIMEOUT": "60",
        "CHIEF_PLANNER_MODEL": "planner-model",
        "CHIEF_CRITIC_MODEL": "vision-model",
        **more,
    }


def test_kill_during_a_scene_by_scene_plan(home):
    def slow_scenes(body):
        reply = longform.responder(body)
        if longform.schema_name(body) == "SceneShotsOut" and "THIS SCENE, 1 of" not in longform.user_text(body):
            reply.delay = 30  # scene 1 is written; the others are being written when the process dies
        return reply

    with FakeOpenAI(slow_scenes) as server:
        proc = popen_chief(home, "new", "a keeper and a gull", "--minutes", "5", "--json", **llm_env(server))
        # scene 1 answered and several others being written: both seen before the kill (on a loaded machine the
        # others can be in flight before scene 1 is even sent)
        wait_for(
            lambda: server.in_flight >= 3 and any("THIS SCENE, 1 of" in longform.user_text(b) for b in server.requests),
            what="scene 1 written and several scenes being written",
            proc=proc,
        )
        kill9(proc)
        assert count(home, "projects") == 0 and count(home, "versions") == 0 and count(home, "agent_calls") == 0

        server.responder = longform.responder
        res = chief(home, "new", "a keeper and a gull", "--minutes", "5", "--json", **llm_env(server))
    assert res.returncode == 0, res.stderr
    made = json.loads(res.stdout)
    assert count(home, "projects") == 1 and abs(made["version"]["storyboard"]["scenes"][0]["shots"][0]["duration"]) > 0
    assert_sound(home, made["project"])


def test_kill_during_a_critique_watched_in_parts(home):
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(12), panel=["film_critic", "teen_scroller"]).project_id
    studio.render(pid)
    studio.db.close()

    def slow_later_parts(body):
        reply = longform.responder(body)
        if "This is part 3 of" in longform.user_text(body):
            reply.delay = 30
        return reply

    with FakeOpenAI(slow_later_parts) as server:
        env = llm_env(server, CHIEF_LLM_MAX_IMAGES="2")  # 12 shots, 2 a request: 6 parts per critic
        proc = popen_chief(home, "critique", pid, "--json", **env)
        wait_for(
            lambda: sum("This is part 3 of 6" in longform.user_text(b) for b in list(server.requests)) >= 2,
            what="both critics in their third part",
            proc=proc,
        )
        kill9(proc)
        assert count(home, "critiques") == 0 and count(home, "agent_calls") == 0
        assert_sound(home, pid)

        server.responder = longform.responder
        res = chief(home, "critique", pid, "--json", **env)
    assert res.returncode == 0, res.stderr
    crits = json.loads(res.stdout)["critiques"]
    assert sorted(c["persona_id"] for c in crits) == ["film_critic", "teen_scroller"]
    assert all(c["coverage"]["chunks"] == 6 and c["coverage"]["seen"] == 12 for c in crits)
    assert count(home, "critiques") == 2
    assert_sound(home, pid)
