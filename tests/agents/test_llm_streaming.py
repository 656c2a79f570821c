"""Answers stream in: progress, the output budget on every request, stalls, cancel, deadlines, cut-off answers."""

from __future__ import annotations

import threading

import pytest
from pydantic import BaseModel

from agents.base import AgentError, AnswerTooLong, Cancelled
from agents.llm import Deadline, LLMClient
from storage.run import CancelToken
from tests.agents.openai_server import Reply, ok


class Notes(BaseModel):
    notes: list[str]


LONG = {"notes": [f"note number {i} about the pacing of the film" for i in range(40)]}  # ~480 tokens
MSGS = [{"role": "user", "content": "notes please"}]


def ask(client, role="critic teen", **kw):
    return client.structured(role, "vision-model", MSGS, Notes, **kw)


def test_streams_with_usage_and_reports_progress(server, client):
    server.script(ok(LONG, prompt_tokens=50, completion_tokens=480, token_delay=0.002))
    seen = []
    value, usage = ask(client, on_progress=seen.append)
    assert value == Notes(**LONG)
    body = server.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert (usage.prompt_tokens, usage.completion_tokens) == (50, 480)  # from the usage chunk
    assert seen[0].tokens == 1 and not seen[0].done  # the first token is reported at once
    assert seen[-1].done and seen[-1].tokens == 480 and seen[-1].role == "critic teen"
    assert [p.tokens for p in seen] == sorted(p.tokens for p in seen)


def test_not_streaming_when_off(server, config):
    server.script(ok(LONG))
    ask(LLMClient(config.model_copy(update={"stream": False})))
    assert "stream" not in server.requests[0]


@pytest.mark.parametrize(
    "role, expect", [("planner", 4000), ("refiner", 4000), ("critic teen", 3000), ("persona builder x", 4000)]
)
def test_the_output_budget_is_always_sent(server, client, role, expect):
    server.script(ok(LONG))
    ask(client, role=role)
    assert server.max_tokens(0) == expect


def test_budgets_are_settings_and_capped(server, config):
    cfg = config.model_copy(
        update={"max_output_tokens": 1000, "planner_max_tokens": 9000, "critic_max_tokens": 600, "temperature": 0.2}
    )
    server.script(ok(LONG), ok(LONG), ok(LONG))
    client = LLMClient(cfg)
    ask(client, role="planner")
    ask(client, role="critic x")
    ask(client, role="critic x", max_tokens=700)
    assert [server.max_tokens(i) for i in range(3)] == [1000, 600, 700]
    assert all(r["temperature"] == 0.2 for r in server.requests)


def test_cut_answer_raises_answer_too_long_when_the_caller_can_shrink(server, client):
    server.max_output_tokens = 100
    server.responder = lambda body: ok(LONG)
    with pytest.raises(AnswerTooLong, match=r"cut off at 100 output tokens, the server's own cap") as e:
        ask(client, on_length="raise")
    assert len(server.requests) == 1 and e.value.usage.calls == 1  # no repair prompt
    assert "set CHIEF_LLM_MAX_OUTPUT_TOKENS=100" in str(e.value)


def test_an_output_cap_the_server_revealed_sizes_the_next_requests(server, client):
    """The server cut at 100 when 3000 were asked: the real count is read from its usage, remembered, and the
    caller's next request (and the role budgets it sizes by) stay within it."""
    server.max_output_tokens = 100
    server.responder = lambda body: ok(LONG)
    with pytest.raises(AnswerTooLong):
        ask(client, on_length="raise")
    assert client.max_tokens_for("critic", "vision-model") == 100
    server.responder = lambda body: ok({"notes": ["short"]})
    value, _ = ask(client, on_length="raise")
    assert value.notes == ["short"] and server.max_tokens(-1) == 100


def test_our_own_cap_is_not_called_the_servers(server, client):
    server.responder = lambda body: ok(LONG)
    with pytest.raises(AnswerTooLong, match=r"cut off at 100 output tokens \(") as e:
        ask(client, on_length="raise", max_tokens=100)
    assert "raise CHIEF_CRITIC_MAX_TOKENS (now 100)" in str(e.value) and "server's own cap" not in str(e.value)


def test_cut_answer_is_repaired_for_callers_that_cannot_shrink(server, client):
    server.max_output_tokens = 100
    server.script(ok(LONG), ok({"notes": ["short"]}))
    value, _ = ask(client)
    assert value.notes == ["short"] and "shorter" in server.requests[1]["messages"][-1]["content"]


def test_a_stalled_stream_is_closed_and_not_resent_to_a_local_server(server, config):
    server.script(ok(LONG, stall_after=5), ok(LONG))
    with pytest.raises(
        AgentError, match=r"the answer stalled \(no token for 0.3 s\); not re-sent .* CHIEF_LLM_STALL_SECONDS"
    ) as e:
        ask(LLMClient(config.model_copy(update={"stall_seconds": 0.3})))
    assert e.value.usage.calls == 1 and len(server.requests) == 1
    assert server.wait_for(lambda: server.disconnects == 1)  # the stalled connection was closed, not left open


def test_a_stalled_stream_is_resent_when_asked(server, config):
    server.script(ok(LONG, stall_after=5), ok(LONG))
    value, usage = ask(LLMClient(config.model_copy(update={"stall_seconds": 0.3, "resend_timeouts": True})))
    assert value == Notes(**LONG) and usage.calls == 2


def test_cancel_closes_the_connection_and_the_server_stops(server, client):
    server.script(ok(LONG, token_delay=0.02))  # ~10 s of tokens if nobody stopped it
    cancel = CancelToken()

    def progress(p):
        if p.tokens >= 3:
            cancel.cancel()

    with pytest.raises(Cancelled, match="cancelled; the connection was closed"):
        ask(client, on_progress=progress, cancel=cancel)
    assert server.wait_for(lambda: server.disconnects == 1)  # it noticed on its next token and stopped
    assert server.generated_for_nobody == 0


def test_cancel_while_waiting_for_a_non_streamed_answer(server, config):
    server.script(Reply(body=ok(LONG).body, delay=3600))
    stop = CancelToken()
    server.responder = None
    client = LLMClient(config.model_copy(update={"stream": False}))
    threading.Thread(target=lambda: server.wait_for_requests(1) and stop.cancel(), daemon=True).start()
    with pytest.raises(Cancelled) as e:
        ask(client, cancel=stop)
    assert e.value.usage.calls == 1


def test_cancel_during_a_retry_wait(server, config):
    server.script(Reply(body={"error": {"message": "busy"}}, status=429, headers={"retry-after": "3600"}))
    stop = CancelToken()
    threading.Thread(target=lambda: server.wait_for_requests(1) and stop.cancel(), daemon=True).start()
    with pytest.raises(Cancelled):
        ask(LLMClient(config.model_copy(update={"action_timeout": None})), cancel=stop)
    assert len(server.requests) == 1


def test_the_action_deadline_closes_the_request(server, config):
    server.script(Reply(body=ok(LONG).body, delay=3600))
    with pytest.raises(
        AgentError,
        match=r"this action's deadline of 0.3 s passed; the connection was closed; raise CHIEF_LLM_ACTION_TIMEOUT",
    ):
        ask(LLMClient(config.model_copy(update={"action_timeout": 0.3, "timeout": 100})))


def test_a_shared_deadline_that_has_passed_sends_nothing(server, client):
    with pytest.raises(AgentError, match="deadline of 0 s passed"):
        ask(client, deadline=Deadline(0))
    assert server.requests == []


def test_an_answer_over_the_size_cap_is_cut_off(server, config):
    server.script(ok({"notes": ["x" * 5000]}))
    with pytest.raises(AgentError, match=r"the answer passed 2,000 characters"):
        ask(LLMClient(config.model_copy(update={"max_answer_chars": 2000})))


def test_a_stream_that_ends_early_is_retried(server, config):
    server.script(ok(LONG, drop_after=5), ok(LONG))  # the server died mid-answer: no finish_reason, no [DONE]
    value, usage = ask(LLMClient(config))
    assert value == Notes(**LONG) and usage.calls == 2 and len(server.requests) == 2
