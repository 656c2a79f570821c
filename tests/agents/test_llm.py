"""The client wrapper against a real local OpenAI-compatible server: formats, fallbacks, repair, retries."""

from __future__ import annotations

import json
import socket
import time

import pytest
from pydantic import BaseModel, Field

from agents.base import AgentError
from agents.llm import LLMClient, LLMConfig, extract_json, strict_json_schema, subsample
from storage.schema import Proposal
from tests.agents.openai_server import Reply, error, ok


class Answer(BaseModel):
    verdict: str
    score: int = Field(ge=0, le=10)
    tags: list[str] = []


GOOD = {"verdict": "fine", "score": 7, "tags": ["a"]}
MSGS = [{"role": "user", "content": "judge it"}]


def ask(client, **kw):
    return client.structured("critic teen", "vision-model", MSGS, Answer, **kw)


def test_strict_schema_closes_objects_and_requires_every_property():
    s = strict_json_schema(Proposal)
    assert {"SetShot", "AddShot", "SetStory"} <= set(s["$defs"])  # the edit kinds of the union
    for edit in s["$defs"].values():
        assert edit["additionalProperties"] is False
        assert set(edit["required"]) == set(edit["properties"])  # fields with defaults too
    assert "default" not in set(_keys(s))  # a key of the schema (a description may say the word)
    assert s["additionalProperties"] is False


def _keys(node):
    if isinstance(node, dict):
        for k, v in node.items():
            yield k
            yield from _keys(v)
    elif isinstance(node, list):
        for v in node:
            yield from _keys(v)


def test_strict_schema_keeps_properties_named_like_keywords():
    class Tricky(BaseModel):
        title: str
        default: int = 0
        pattern: str = Field(default="", max_length=3)

    s = strict_json_schema(Tricky)
    assert list(s["properties"]) == s["required"] == ["title", "default", "pattern"]
    assert s["properties"]["pattern"] == {"type": "string"}


def test_strict_schema_refuses_open_mapping():
    class Open(BaseModel):
        scores: dict[str, float]

    with pytest.raises(ValueError, match="open mapping"):
        strict_json_schema(Open)


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "fine", "score": 7, "tags": []}',
        'Sure! Here is my answer:\n```json\n{"verdict": "fine", "score": 7, "tags": []}\n```\nHope it helps.',
        'My take {as promised}: {"verdict": "fine", "score": 7, "tags": []} -- done',
    ],
)
def test_extract_json(text):
    assert extract_json(text)["score"] == 7


def test_extract_json_reports_truncation():
    with pytest.raises(ValueError, match="cut off"):
        extract_json('{"verdict": "fine", "tags": {"a": 1')


def test_subsample_even_and_bounded():
    assert subsample(list(range(10)), 4) == [0, 3, 6, 9]
    assert subsample([1, 2], 4) == [1, 2]


def test_sends_strict_json_schema_and_records_usage(server, client):
    server.script(ok(GOOD, prompt_tokens=100, completion_tokens=20))
    value, usage = ask(client)
    assert value == Answer(**GOOD)
    rf = server.requests[0]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    assert rf["json_schema"]["schema"]["required"] == ["verdict", "score", "tags"]
    assert server.requests[0]["model"] == "vision-model"
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (1, 100, 20)
    assert usage.seconds >= 0
    assert server.headers[0]["authorization"] == "Bearer sk-test-SECRET-1234"


def test_falls_back_to_json_mode_then_text_and_remembers(server, client):
    server.script(
        error(400, "response_format json_schema is not supported by this server", param="response_format"),
        error(400, "Unknown response_format type 'json_object'"),
        ok("Here you go: " + json.dumps(GOOD)),
        ok(json.dumps(GOOD)),
    )
    value, usage = ask(client)
    assert value.score == 7 and usage.calls == 3
    assert [r.get("response_format", {}).get("type") for r in server.requests] == ["json_schema", "json_object", None]
    assert '"verdict"' in server.texts(2)  # text mode carries the schema in the prompt
    ask(client)  # the same model goes straight to text mode now
    assert "response_format" not in server.requests[3]


@pytest.mark.parametrize(
    "bad, expect",
    [
        ("this is not json at all", "no JSON object"),
        (json.dumps({"verdict": "fine"}), "score: Field required"),
        (json.dumps({"verdict": "fine", "score": "seven", "tags": []}), "score"),
        (json.dumps({"verdict": "fine", "score": 70, "tags": []}), "less than or equal to 10"),
        ('{"verdict": "fine", "score": 7, "ta', "cut off"),
    ],
)
def test_malformed_answer_is_repaired_once(server, client, bad, expect):
    finish = "length" if bad.endswith("ta") else "stop"
    server.script(ok(bad, finish_reason=finish), ok(GOOD))
    value, usage = ask(client)
    assert value.score == 7 and usage.calls == 2
    repair = server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": bad}
    assert expect in repair[-1]["content"]
    assert server.requests[1]["response_format"]["type"] == "json_schema"


def test_refusal_then_still_bad_raises_clear_error(server, client):
    server.script(ok(None, refusal="I can't help with that."), ok('{"verdict": 3}'))
    with pytest.raises(AgentError) as e:
        ask(client)
    msg = str(e.value)
    assert "critic teen" in msg and "vision-model" in msg and "Answer" in msg and "verdict" in msg
    assert "the model refused" in server.requests[1]["messages"][-1]["content"]
    assert "SECRET" not in msg


def test_truncated_twice_names_the_cut(server, client):
    server.script(ok('{"verdict": "a', finish_reason="length"), ok('{"verdict": "b', finish_reason="length"))
    with pytest.raises(AgentError, match="cut off at the token limit"):
        ask(client)
    assert "shorter" in server.requests[1]["messages"][-1]["content"]


def test_retries_429_and_500_with_backoff(server, config):
    slept = []
    client = LLMClient(config, sleep=slept.append)
    server.script(error(429, "slow down", "rate_limit_error"), error(500, "boom", "server_error"), ok(GOOD))
    value, usage = ask(client)
    assert value.score == 7 and len(server.requests) == 3 and usage.calls == 3
    assert len(slept) == 2 and slept[1] > slept[0] * 1.2  # exponential, with jitter


def test_timeout_to_a_local_server_is_not_resent(server, config):
    """A local server keeps generating an abandoned answer: a re-send would queue behind it."""
    client = LLMClient(config.model_copy(update={"timeout": 0.3}))
    server.script(Reply(body=None, delay=3600), ok(GOOD))
    with pytest.raises(AgentError, match=r"no first token within 0.3 s; not re-sent") as e:
        ask(client)
    assert e.value.usage.calls == 1 and server.wait_for_requests(1)


def test_timeouts_resent_when_asked(server, config):
    client = LLMClient(config.model_copy(update={"timeout": 0.3, "resend_timeouts": True}))
    server.script(Reply(body=None, delay=3600), ok(GOOD))
    value, usage = ask(client)
    assert value.score == 7 and usage.calls == 2 and len(server.requests) == 2


def test_a_server_that_times_out_twice_is_not_asked_a_third_time(server, config):
    """A hung server fails in two timeouts, not in max_retries of them (a hung endpoint took 8-16 minutes)."""
    client = LLMClient(config.model_copy(update={"timeout": 0.3, "resend_timeouts": True, "max_retries": 5}))
    server.script(Reply(body=None, delay=3600), Reply(body=None, delay=3600), ok(GOOD))
    with pytest.raises(
        AgentError, match=r"no first token within 0.3 s, twice; not re-sent again; raise CHIEF_LLM_TIMEOUT"
    ):
        ask(client)
    assert server.wait_for_requests(2) and len(server.requests) == 2


def test_one_deadline_bounds_every_call_of_an_action(server, config):
    """A plan's scenes, a critic's parts: the calls of one action share its deadline. The second call is never
    answered, so only a deadline ends it: the action's, begun before the first call, cuts it about a second after it
    starts; a deadline of its own would wait its full 2 s. No race with the machine's load: the first call is answered
    at once, and a second of slack separates the two outcomes."""
    client = LLMClient(config.model_copy(update={"action_timeout": 2.0}))
    server.script(ok(GOOD), ok(GOOD), Reply(body=None, delay=3600))
    ask(client)  # the first call also asks the server its context size
    deadline = client.deadline()
    assert ask(client, deadline=deadline)[0].score == 7
    while deadline.remaining() > 1.0:  # the action's own work between its calls
        time.sleep(0.05)
    began = time.monotonic()
    with pytest.raises(AgentError, match=r"this action's deadline of 2 s passed"):
        ask(client, deadline=deadline)
    assert deadline.expired and time.monotonic() - began < 2.0


def test_gives_up_after_max_retries(server, config):
    client = LLMClient(config.model_copy(update={"max_retries": 1}), sleep=lambda s: None)
    server.script(error(503, "overloaded", "server_error"), error(503, "overloaded", "server_error"), ok(GOOD))
    with pytest.raises(
        AgentError,
        match=r"critic teen \(vision-model\) at http://127.0.0.1:\d+/v1: gave up after 2 tries: HTTP 503: overloaded",
    ):
        ask(client)
    assert len(server.requests) == 2


def test_auth_error_is_one_clear_line_without_the_key(server, client):
    server.script(error(401, "Incorrect API key provided: sk-test-SECRET-1234", "invalid_request_error"))
    with pytest.raises(AgentError) as e:
        ask(client)
    assert "HTTP 401" in str(e.value) and "SECRET" not in str(e.value) and "***" in str(e.value)
    assert len(server.requests) == 1  # no retry on 4xx


def test_api_key_never_in_repr_or_dump(config, client):
    for text in (repr(config), str(config), repr(client), config.describe(), config.model_dump_json()):
        assert "SECRET" not in text


def test_local_server_needs_no_key(server):
    client = LLMClient(LLMConfig(base_url=server.base_url, max_retries=0))
    server.script(ok(GOOD))
    assert ask(client)[0].score == 7


def test_network_guard_forbids_remote_hosts():
    with pytest.raises(ConnectionRefusedError, match="tests may not reach"):
        socket.create_connection(("203.0.113.7", 443), timeout=1)
    with pytest.raises(ConnectionRefusedError, match="tests may not reach"):
        socket.getaddrinfo("api.openai.com", 443)
    s = socket.socket()
    with pytest.raises(ConnectionRefusedError, match="tests may not connect"):
        s.connect(("198.51.100.1", 80))
    s.close()
    client = LLMClient(LLMConfig(api_key="sk-test-SECRET-1234", max_retries=0, timeout=2))
    with pytest.raises(AgentError, match="could not connect: tests may not reach 'api.openai.com'"):
        ask(client)


def test_no_key_and_no_endpoint_is_a_clear_error():
    with pytest.raises(AgentError, match="no API key"):
        ask(LLMClient(LLMConfig(max_retries=0)))


def test_retry_log_lines_never_carry_the_key(server, config, caplog):
    client = LLMClient(config, sleep=lambda s: None)
    server.script(error(429, "key sk-test-SECRET-1234 is over quota", "rate_limit_error"), ok(GOOD))
    with caplog.at_level("DEBUG", logger="agents.llm"):
        ask(client)
    assert "HTTP 429" in caplog.text and "SECRET" not in caplog.text
