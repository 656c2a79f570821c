"""What real servers do that the OpenAI API does not say, emulated and enforced by the test server: llama-cpp-python
refuses content parts (HTTP 500 on a list, even of text), cuts a running stream when another request arrives
(`interrupt_requests`), and some servers answer a streamed request with one JSON body."""

from __future__ import annotations

import threading

import pytest
from pydantic import BaseModel

from agents.base import AgentError
from agents.llm import LLMClient
from tests.agents.openai_server import FakeOpenAI, ok


class Notes(BaseModel):
    notes: list[str]


ANSWER = {"notes": [f"note {i} about the pacing of the film" for i in range(12)]}  # ~120 tokens


def ask(client, messages=None, model="vision-model"):
    messages = messages or [{"role": "user", "content": "notes please"}]
    return client.structured("critic teen", model, messages, Notes)


def client_on(server, config, tmp_path=None, **update):
    state = {"state_path": tmp_path / "endpoints.json"} if tmp_path else {}
    return LLMClient(config.model_copy(update={"base_url": server.base_url, **state, **update}))


# ---------------------------------------------------------------- 1. text as a string


def test_text_parts_reach_the_server_as_one_string(config):
    parts = [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]
    with FakeOpenAI(lambda body: ok(ANSWER), list_content_refused=True) as server:
        value, usage = ask(client_on(server, config), [{"role": "user", "content": parts}])
    assert value.notes == ANSWER["notes"] and usage.calls == 1
    assert server.requests[0]["messages"][0]["content"] == "first\n\nsecond"


def test_a_list_refusal_is_read_from_its_body_and_never_retried(config):
    """A part the server cannot take (a video here) on llama-cpp-python: HTTP 500 "can only concatenate str (not
    "list") to str" is a refusal, remembered, not a server error to retry until CHIEF_LLM_MAX_RETRIES."""
    video = {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,AAAA"}}
    with FakeOpenAI(lambda body: ok(ANSWER), list_content_refused=True) as server:
        client = client_on(server, config)
        with pytest.raises(AgentError, match="does not take images") as e:
            ask(client, [{"role": "user", "content": [{"type": "text", "text": "watch"}, video]}])
        assert len(server.requests) == 1 and "raise CHIEF_LLM_MAX_RETRIES" not in str(e.value)
        assert client.memory.get("vision-model")["images"] is False


# ---------------------------------------------------------------- 2. a server that cuts streams for new requests


def parallel(client, n: int) -> tuple[list, list]:
    values, errors = [], []

    def one() -> None:
        try:
            values.append(ask(client)[0])
        except AgentError as e:
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(n)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    return values, errors


def test_streams_cut_for_a_sibling_turn_the_endpoint_to_one_request_at_a_time(config, tmp_path):
    with FakeOpenAI(lambda body: ok(ANSWER, token_delay=0.01), interrupt_requests=True) as server:
        client = client_on(server, config, tmp_path, max_retries=1)
        values, errors = parallel(client, 4)
        assert not errors and len(values) == 4
        assert 1 <= server.interrupted <= 4  # each request sent together cut once at most, then sent in turn
        assert client.memory.get("*")["interrupts"] is True
        cut_before = server.interrupted
        values, errors = parallel(client_on(server, config, tmp_path, max_retries=0), 4)  # a new client, same home
        assert not errors and server.interrupted == cut_before  # takes turns from its first request


def test_a_get_during_a_stream_does_not_cut_it_once_turns_are_known(config, tmp_path):
    """llama-cpp-python cuts a stream for GET /v1/models too: the context probe takes its turn."""
    with FakeOpenAI(lambda body: ok(ANSWER, token_delay=0.02), interrupt_requests=True) as server:
        server.models = {"vision-model": {"max_model_len": 8192}}
        client = client_on(server, config, tmp_path, discover_limits=True)
        client.memory.remember("*", interrupts=True)
        client = client_on(server, config, tmp_path, discover_limits=True)
        other = client_on(server, config, tmp_path, discover_limits=True, critic_model="other-model")
        t = threading.Thread(target=lambda: ask(client))
        t.start()
        server.wait_for(lambda: server.in_flight == 1)
        assert other.context_tokens("other-model")[0] > 0
        t.join()
        assert server.interrupted == 0


# ---------------------------------------------------------------- 5. one JSON body for a streamed request


def test_a_json_body_for_a_stream_is_the_answer_and_is_remembered(config, tmp_path):
    with FakeOpenAI(lambda body: ok(ANSWER), stream_as_json=True) as server:
        client = client_on(server, config, tmp_path)
        value, usage = ask(client)
        assert value.notes == ANSWER["notes"] and usage.calls == 1 and len(server.requests) == 1
        ask(client_on(server, config, tmp_path))
        assert len(server.requests) == 2 and "stream" not in server.requests[1]
