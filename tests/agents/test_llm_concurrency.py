"""Requests in flight: the panel runs concurrently (as the Studio runs it), bounded per endpoint; HTTP 429 is
waited out as the server asks (Retry-After) and lowers the requests in flight, which then recover slowly."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from pydantic import BaseModel

from agents.base import AgentError
from agents.critic import LLMCritic
from agents.endpoint import AdaptiveLimit
from agents.llm import Deadline, LLMClient
from agents.personas import builtin_personas
from tests.agents.openai_server import Reply, ok, rate_limited
from tests.agents.test_critic import answer


class Answer(BaseModel):
    verdict: str


def panel(critic, personas, film):
    """The panel as the Studio runs it: one thread per persona, results in persona order."""
    with ThreadPoolExecutor(max_workers=len(personas)) as pool:
        return list(pool.map(lambda p: critic.critique(p, film), personas))


def test_panel_runs_concurrently_and_keeps_order(server, config, film):
    personas = list(builtin_personas().values())[:6]
    together = threading.Barrier(6, timeout=30)  # passes only if all six requests are in flight at once

    def respond(body):
        together.wait()
        return Reply(body=ok(answer(summary=body["messages"][0]["content"][:30])).body)

    server.responder = respond
    results = panel(LLMCritic(LLMClient(config)), personas, film)
    assert [r.value.persona_id for r in results] == [p.id for p in personas]
    assert all(p.name.split(",")[0] in r.value.summary for p, r in zip(personas, results))


def test_concurrency_is_bounded(server, config, film):
    personas = list(builtin_personas().values())[:6]
    pairs = threading.Barrier(2, timeout=30)  # two at a time do overlap ...
    server.responder = lambda body: (pairs.wait(), Reply(body=ok(answer()).body, delay=0.05))[1]
    panel(LLMCritic(LLMClient(config.model_copy(update={"max_concurrency": 2}))), personas, film)
    assert server.max_in_flight <= 2  # ... and never more


def test_retry_after_is_honoured(server, config):
    slept = []
    server.script(rate_limited(retry_after="7"), rate_limited(retry_after_ms="1500"), ok({"verdict": "fine"}))
    client = LLMClient(config.model_copy(update={"backoff": 0.01}), sleep=slept.append)
    assert client.structured("critic a", "m", [{"role": "user", "content": "x"}], Answer)[0].verdict == "fine"
    assert slept == [7.0, 1.5]


def test_a_retry_after_beyond_the_deadline_gives_up_at_once(server, client):
    server.script(rate_limited(retry_after="120"))
    with pytest.raises(
        AgentError,
        match=r"gave up after 1 try: HTTP 429: Rate limit reached for requests; the next try "
        r"\(120 s away\) would pass this action's deadline of 60 s",
    ):
        client.structured("critic a", "m", [{"role": "user", "content": "x"}], Answer, deadline=Deadline(60))
    assert len(server.requests) == 1


def test_429_lowers_the_requests_in_flight(server, config):
    """Eight callers at once, every first answer 429: the retries then run at most four at a time."""
    lock, seen = threading.Lock(), {"n": 0, "now": 0, "peak": 0}
    release = threading.Event()

    def respond(body):
        with lock:
            seen["n"] += 1
            if seen["n"] <= 8:
                return rate_limited(retry_after="0")
            seen["now"] += 1
            seen["peak"] = max(seen["peak"], seen["now"])
        release.wait(0.2)
        with lock:
            seen["now"] -= 1
        return ok({"verdict": "fine"})

    server.responder = respond
    client = LLMClient(config.model_copy(update={"max_concurrency": 8, "max_retries": 8}))
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(
            pool.map(
                lambda i: client.structured("critic a", "m", [{"role": "user", "content": str(i)}], Answer), range(8)
            )
        )
    assert seen["peak"] <= 4 and client.limit.limit <= 5


def test_adaptive_limit_halves_once_per_wave_and_recovers_one_step_at_a_time():
    limit = AdaptiveLimit(8)
    wave = [limit.acquire(lambda: False) for _ in range(3)]
    for epoch in wave:  # three 429s from requests sent together: one decrease
        limit.rate_limited(epoch)
        limit.release()
    assert limit.limit == 4
    limit.rate_limited(limit.acquire(lambda: False))  # a 429 from a request sent after the decrease
    limit.release()
    assert limit.limit == 2
    seen = []
    for _ in range(5):
        limit.succeeded()
        seen.append(limit.limit)
    assert seen == [2, 3, 3, 3, 4]  # `limit` successes in a row raise the limit by one


def test_a_waiting_caller_gives_up_when_told():
    limit = AdaptiveLimit(1)
    assert limit.acquire(lambda: False) == 0
    assert limit.acquire(lambda: True) is None  # full, and the caller was cancelled meanwhile
