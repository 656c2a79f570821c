"""The LLM server misbehaves: retries happen as configured (counted at the server), the user gets one clear
line naming the role and the model, and a failed action leaves the project exactly as it was."""

from __future__ import annotations

import re

import pytest

from agents.base import AgentError
from app.config import load_config
from app.studio import Studio
from storage.schema import DIMENSIONS
from tests.agents.openai_server import FakeOpenAI, Reply, error, ok
from tests.fault.conftest import assert_sound, board, chief, count, make_studio, snapshot

PANEL = ["film_critic"]


def critique_answer() -> dict:
    return {
        "overall": 6.0,
        "scores": {d: 6.0 for d in DIMENSIONS},
        "shot_notes": [{"shot_id": "s0", "note": "ok"}],
        "top_issues": [
            {"summary": "slow", "urgency": 3, "dimension": "pacing", "shot_ids": ["s1"], "suggestion": "cut to 0.5 s"}
        ],
        "keep_watching": True,
        "keep_watching_reason": "curious",
        "summary": "fine",
    }


def proposal_answer() -> dict:
    return {
        "summary": "brighter",
        "not_changed": [],
        "edits": [
            {
                "op": "set",
                "shot_id": "s1",
                "field": "prompt",
                "character": None,
                "old": None,
                "new": "shot 1: a lighthouse at dawn, bright sun",
                "rationale": "the note asks for it",
                "sources": [],
            }
        ],
    }


def llm_studio(home, server: FakeOpenAI, retries: int, timeout: float = 10.0) -> Studio:
    """A Studio whose agents come from the product's configuration (backoff shortened for the test)."""
    return Studio(
        load_config(
            {
                "home": home,
                "narration": False,
                "agents": "llm",
                "llm_base_url": server.base_url,
                "critic_model": "critic-x",
                "refiner_model": "refiner-y",
                "llm_max_retries": retries,
                "llm_timeout": timeout,
                "llm_backoff": 0.01,
            },
            environ={},
        )
    )


@pytest.fixture
def rendered(home):
    """A rendered 3-shot project with a one-persona panel and a note (ready to critique and refine)."""
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(3), panel=PANEL).project_id
    studio.render(pid)
    studio.add_note(pid, "make shot 1 brighter", "s1")
    return pid


def only_its_cost(home, before: dict, server) -> bool:
    """A failed action changed nothing but the version's agent cost: one row counting every request it sent."""
    after = snapshot(home)
    new = [r for r in after["agent_calls"] if r not in before["agent_calls"]]
    same = {k: v for k, v in after.items() if k != "agent_calls"} == {
        k: v for k, v in before.items() if k != "agent_calls"
    }
    return same and len(new) == 1 and new[0][4] == len(server.requests)


def test_timeout_to_a_local_server_is_not_resent(home, server, rendered):
    """A local server that never answers (and, like llama-cpp-python, keeps generating for a client that left):
    the request times out once and is not re-sent to queue behind the abandoned answer."""
    server.slots, server.ignore_disconnect = 1, True
    server.responder = lambda body: Reply(body=ok(critique_answer()).body, delay=3600)
    before = snapshot(home)
    with pytest.raises(AgentError) as exc:
        llm_studio(home, server, retries=3, timeout=0.5).critique(rendered)
    assert re.match(
        r"critic film_critic \(critic-x\) at http://127\.0\.0\.1:\d+/v1: no first token within 0\.5 s; not re-sent",
        str(exc.value),
    )
    assert exc.value.usage.calls == 1 and server.wait_for_requests(1)  # counted by the client, then seen by the server
    assert only_its_cost(home, before, server) and count(home, "critiques") == 0


def test_429_then_success(home, server, rendered):
    server.script(error(429, "rate limited", "rate_limit_error"), ok(critique_answer()))
    crits = llm_studio(home, server, retries=2).critique(rendered)
    assert len(server.requests) == 2
    assert [c.persona_id for c in crits] == PANEL and count(home, "critiques") == 1
    assert count(home, "agent_calls") == 1
    assert_sound(home, rendered)


def test_500_repeatedly_gives_up_after_configured_retries(home, server, rendered):
    server.responder = lambda body: error(500, "the model fell over", "server_error")
    before = snapshot(home)
    with pytest.raises(AgentError) as exc:
        llm_studio(home, server, retries=3).critique(rendered)
    assert len(server.requests) == 4
    msg = str(exc.value)
    assert re.match(
        r"critic film_critic \(critic-x\) at http://127\.0\.0\.1:\d+/v1: gave up after 4 tries: HTTP 500: "
        r"the model fell over; check the server's log",
        msg,
    )
    assert only_its_cost(home, before, server)


def test_one_failed_critic_saves_nothing_of_the_panel(home, server, rendered):
    """All or nothing: one persona fails, the other's critique is not saved either."""
    studio = make_studio(home)
    pid = rendered
    studio.set_panel(pid, ["film_critic", "teen_scroller"])
    studio.render(pid)  # the new version reuses every clip
    server.responder = lambda body: (
        ok(critique_answer()) if "Alain Roux" not in str(body["messages"][0]) else error(500, "boom", "server_error")
    )
    before = snapshot(home)
    with pytest.raises(AgentError, match="film_critic"):
        llm_studio(home, server, retries=0).critique(pid)
    # the failure stops the panel: the teen's request is sent or not, by how far it got when film_critic failed
    asked = [str(b["messages"][0]) for b in server.requests]
    assert any("Alain Roux" in a for a in asked) and len(asked) <= 2
    assert only_its_cost(home, before, server)


def test_garbage_is_repaired_once_then_fails(home, server, rendered):
    server.responder = lambda body: ok("Sure! Here are my thoughts: the film is nice.")
    before = snapshot(home)
    with pytest.raises(AgentError) as exc:
        llm_studio(home, server, retries=3).refine(rendered)
    assert len(server.requests) == 2  # the answer and one repair; garbage is not retried
    assert re.match(r"refiner \(refiner-y\) at \S+: no valid ProposalOut after one repair", str(exc.value))
    assert only_its_cost(home, before, server) and count(home, "proposals") == 0


def test_garbage_then_repaired(home, server, rendered):
    server.script(ok("{not json"), ok(proposal_answer()))
    info = llm_studio(home, server, retries=0).refine(rendered)
    assert len(server.requests) == 2 and len(info.proposal.edits) == 1 and count(home, "proposals") == 1


def test_cli_prints_one_clear_line(home, server, rendered):
    server.responder = lambda body: error(503, "overloaded", "server_error")
    before = snapshot(home)
    res = chief(
        home,
        "critique",
        rendered,
        CHIEF_AGENTS="llm",
        CHIEF_LLM_BASE_URL=server.base_url,
        CHIEF_CRITIC_MODEL="critic-x",
        CHIEF_LLM_MAX_RETRIES="0",
    )
    assert res.returncode == 1, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and re.match(
        r"error: critic film_critic \(critic-x\) at http://127\.0\.0\.1:\d+/v1: gave up after "
        r"1 try: HTTP 503: overloaded;",
        lines[0],
    )
    assert "Traceback" not in res.stderr and len(server.requests) == 1
    assert only_its_cost(home, before, server)


def test_json_schema_refused_with_http_500_falls_back(home, server, rendered):
    """llama-cpp-python answers response_format json_schema with HTTP 500 (a validation error): the critic falls
    back to json_object at once instead of retrying the same request."""
    server.refuse_formats = {"json_schema"}
    server.responder = lambda body: ok(critique_answer())
    crits = llm_studio(home, server, retries=3).critique(rendered)
    assert [r.get("response_format", {}).get("type") for r in server.requests] == ["json_schema", "json_object"]
    assert [c.persona_id for c in crits] == PANEL and count(home, "critiques") == 1


@pytest.mark.parametrize("style", ["llama-server", "llama-cpp-python", "vllm"])
def test_a_model_refusing_images_is_asked_once_then_reads_the_film(home, server, rendered, style):
    """A text-only model answers image parts with an error: that request is never retried; the critic reads the
    storyboard and a measured description of each shot's frames instead, labelled text-only (issue 15)."""
    server.images_refused = style
    server.responder = lambda body: ok(critique_answer())
    crits = llm_studio(home, server, retries=3).critique(rendered)
    assert [len(FakeOpenAI.image_parts_of(r)) > 0 for r in server.requests] == [True, False]
    assert "text-only" in crits[0].mode and crits[0].coverage.input == "text"
    assert crits[0].usage.calls == 2 and count(home, "critiques") == 1  # the refused request is counted too
    assert_sound(home, rendered)


def test_runaway_answer_is_capped_and_asked_again_for_less(home, server, rendered):
    """The output cap reaches the server; an answer cut there is asked again about fewer shots (never repaired),
    down to one shot, then reported in one line naming the setting."""
    server.max_output_tokens = 40
    server.responder = lambda body: ok(critique_answer())
    before = snapshot(home)
    with pytest.raises(AgentError, match="CHIEF_CRITIC_MAX_TOKENS") as exc:
        llm_studio(home, server, retries=3).critique(rendered)
    # the critic's budget, then the cap the server revealed (it cut at 40 what was asked 3000)
    assert [r["max_tokens"] for r in server.requests] == [3000, 40]
    shots = [len(re.findall(r"^- \[s\d\] ", server.texts(i), re.M)) for i in range(len(server.requests))]
    assert shots == [3, 1] and "\n" not in str(exc.value)
    assert not any(m["role"] == "assistant" for r in server.requests for m in r["messages"])
    assert only_its_cost(home, before, server)


def test_cli_image_refusal_is_one_line(home, server, rendered):
    """Through the CLI: one short warning line, then the critiques, labelled text-only."""
    server.images_refused = "llama-server"
    server.responder = lambda body: ok(critique_answer())
    res = chief(
        home,
        "critique",
        rendered,
        CHIEF_AGENTS="llm",
        CHIEF_LLM_BASE_URL=server.base_url,
        CHIEF_CRITIC_MODEL="critic-x",
    )
    assert res.returncode == 0, res.stderr
    warnings = [line for line in res.stderr.strip().splitlines() if "critic-x" in line]
    assert len(warnings) == 1 and "takes no images; reading the film as text" in warnings[0], res.stderr
    assert "read 3/3 shots · TEXT ONLY" in res.stdout and "text-only" in res.stdout
    assert [len(FakeOpenAI.image_parts_of(r)) > 0 for r in server.requests] == [True, False]
