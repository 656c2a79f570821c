"""What the client learns from an endpoint, replayed against the local server as real servers behave (issue 18):
refusals read from the body and never retried, the accepted rung and image support remembered per endpoint and
model across processes, limits that do not fit raised as RequestTooLarge, the context size the server reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from agents.base import AgentError, RequestTooLarge
from agents.llm import LLMClient, estimate_tokens
from tests.agents.openai_server import IMAGE_REFUSALS, FakeOpenAI, error, ok

ROOT = Path(__file__).resolve().parents[2]


class Answer(BaseModel):
    verdict: str
    score: int = Field(ge=0, le=10)


GOOD = {"verdict": "fine", "score": 7}
TEXT = [{"role": "user", "content": "judge it"}]


def with_images(n: int) -> list[dict]:
    parts = [{"type": "text", "text": "judge these"}]
    parts += [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA", "detail": "low"}}] * n
    return [{"role": "user", "content": parts}]


def ask(client, messages=TEXT, role="critic teen", model="vision-model"):
    return client.structured(role, model, messages, Answer)


def formats(server) -> list:
    return [r.get("response_format", {}).get("type") for r in server.requests]


@pytest.fixture
def remembered(config, tmp_path):
    """A client that remembers what the endpoint accepts in a state file (as the product does in CHIEF_HOME)."""
    return config.model_copy(update={"state_path": tmp_path / "home" / "llm-endpoints.json"})


def test_json_schema_refused_with_500_falls_back_at_once_and_is_remembered_across_processes(server, remembered):
    server.refuse_formats = {"json_schema"}
    server.responder = lambda body: ok(GOOD)
    value, usage = ask(LLMClient(remembered))
    assert value.score == 7 and formats(server) == ["json_schema", "json_object"] and usage.calls == 2
    sent = server.requests[1]["messages"][-1]["content"]
    assert '"verdict"' in sent  # json_object mode carries the schema in the prompt
    saved = json.loads(remembered.state_path.read_text())
    assert saved["endpoint"] == server.base_url and saved["models"]["vision-model"]["response_format"] == "json_object"
    assert "SECRET" not in remembered.state_path.read_text()

    # A second command: a new process, the same home. It starts at the remembered rung.
    code = (
        "from agents.llm import LLMClient, LLMConfig\n"
        "from tests.agents.test_llm_endpoint import Answer, TEXT\n"
        f"c = LLMClient(LLMConfig(base_url={server.base_url!r}, state_path={str(remembered.state_path)!r}, max_retries=0))\n"
        "print(c.structured('critic teen', 'vision-model', TEXT, Answer)[0].score)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0 and out.stdout.strip() == "7", out.stderr
    assert formats(server)[2:] == ["json_object"]


def test_memory_of_another_endpoint_is_ignored_then_replaced(server, remembered):
    server.refuse_formats = {"json_schema"}
    server.responder = lambda body: ok(GOOD)
    ask(LLMClient(remembered))
    with FakeOpenAI(lambda body: ok(GOOD), refuse_formats={"json_schema", "json_object"}) as other:
        moved = remembered.model_copy(update={"base_url": other.base_url})
        ask(LLMClient(moved))
        assert formats(other) == ["json_schema", "json_object", None]  # a different server: no rung carried over
        saved = json.loads(remembered.state_path.read_text())
        assert saved["endpoint"] == other.base_url and saved["models"]["vision-model"]["response_format"] == "text"


def test_credentials_in_the_url_are_never_shown_or_stored(server, remembered):
    host = server.base_url.removeprefix("http://")
    cfg = remembered.model_copy(update={"base_url": f"http://proxyuser:sk-url-SECRET@{host}", "max_retries": 0})
    server.refuse_formats = {"json_schema", "json_object"}
    server.script(error(400, "bad request: sk-test-SECRET-1234 and sk-url-SECRET were sent"))
    with pytest.raises(AgentError) as e:
        ask(LLMClient(cfg))
    assert f"at http://{host}: HTTP 400: bad request: *** and *** were sent" in str(e.value)
    assert "SECRET" not in cfg.state_path.read_text() and "proxyuser" not in cfg.state_path.read_text()
    shown = cfg.model_copy(update={"base_url": f"http://proxyuser:sk-url-SECRET@{host}/v1?key=sk-q-SECRET"}).describe()
    assert f"llm @ http://{host}/v1 · critic" in shown and "SECRET" not in shown and "proxyuser" not in shown


def test_forced_mode_is_used_and_its_refusal_is_one_line(server, config):
    client = LLMClient(config.model_copy(update={"response_format": "json_object"}))
    server.script(ok(GOOD))
    ask(client)
    server.refuse_formats = {"json_object"}
    with pytest.raises(
        AgentError,
        match=r"the server refuses response_format json_object: 1 validation error: .*"
        r"'input': 'json_object'.*; set CHIEF_LLM_RESPONSE_FORMAT=auto$",
    ):
        ask(client)
    assert formats(server) == ["json_object", "json_object"]


@pytest.mark.parametrize("style", sorted(IMAGE_REFUSALS))
def test_image_refusal_is_not_retried_and_is_remembered(server, remembered, style):
    server.images_refused = style
    client = LLMClient(remembered.model_copy(update={"max_retries": 3}))
    with pytest.raises(AgentError) as e:
        ask(client, with_images(2))
    msg = str(e.value)
    assert f"this model does not take images: HTTP {IMAGE_REFUSALS[style][0]}: {IMAGE_REFUSALS[style][1]}" in msg
    assert "set CHIEF_CRITIC_MODEL to a vision model" in msg and str(remembered.state_path) in msg
    assert len(server.requests) == 1
    # The next call with images fails before sending anything; text still goes through.
    with pytest.raises(AgentError, match="does not take images"):
        ask(LLMClient(remembered), with_images(1))
    server.script(ok(GOOD))
    assert ask(client)[0].score == 7 and len(server.requests) == 2


def test_too_many_images_for_the_server_is_request_too_large_not_retried(server, config):
    server.max_images = 2
    with pytest.raises(RequestTooLarge) as e:
        ask(LLMClient(config.model_copy(update={"max_images_per_request": 8})), with_images(4))
    assert (e.value.limit, e.value.setting) == ("images", "max_images_per_request")
    assert "At most 2 image(s) may be provided in one request" in str(e.value) and "CHIEF_LLM_MAX_IMAGES=2" in str(
        e.value
    )
    assert len(server.requests) == 1


def test_more_images_than_the_setting_are_refused_before_sending(server, config):
    with pytest.raises(RequestTooLarge, match=r"5 images in one request, over max_images_per_request=4") as e:
        ask(LLMClient(config.model_copy(update={"max_images_per_request": 4})), with_images(5))
    assert e.value.limit == "images" and server.requests == []


def test_context_overflow_at_the_server_is_request_too_large_not_retried(server, config):
    server.context_tokens = 1000
    long = [{"role": "user", "content": "word " * 1000}]  # ~1250 tokens
    with pytest.raises(RequestTooLarge) as e:
        ask(LLMClient(config), long)
    assert (e.value.limit, e.value.setting, e.value.tokens) == ("context", "context_tokens", 1000)  # as stated
    assert "maximum context length is 1000 tokens" in str(e.value) and len(server.requests) == 1


def test_a_context_the_server_reports_bounds_max_tokens_and_refuses_what_cannot_fit(server, config):
    server.models = {"vision-model": {"max_model_len": 2000}}  # vLLM
    server.context_tokens = 2000
    server.script(ok(GOOD))
    client = LLMClient(config)
    assert client.context_tokens("vision-model") == (2000, "reported by the server (/models max_model_len)")
    prompt = [{"role": "user", "content": "judge it " * 300}]
    ask(client, prompt)  # asks for what is left, so the server accepts it
    assert server.max_tokens(0) == 2000 - FakeOpenAI.prompt_tokens(server.requests[0]) < 3000
    with pytest.raises(RequestTooLarge, match=r"the request is about [\d,]+ tokens; the context is 2,000 \(reported"):
        ask(client, [{"role": "user", "content": "judge it " * 1000}])
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "models, extra, expect",
    [
        (
            {"m": {"meta": {"n_ctx_train": 8192}}},
            {"props": {"default_generation_settings": {"n_ctx": 2048}}},
            (2048, "reported by the server (/props n_ctx)"),
        ),  # llama.cpp llama-server
        ({"m": {"meta": {"n_ctx_train": 4096}}}, {}, (4096, "reported by the server (/models meta.n_ctx_train)")),
        (
            {"m": {"owned_by": "library"}},
            {"ollama_show": {"parameters": 'stop "<|im_end|>"\nnum_ctx 6144'}},
            (6144, "reported by the server (ollama /api/show num_ctx)"),
        ),  # Ollama
        (
            {"m": {"owned_by": "library"}},
            {"ollama_show": {"parameters": ""}},
            (4096, "assumed: Ollama's default num_ctx (the model is not loaded and sets no num_ctx)"),
        ),  # said, not reported
        ({"m": {"max_model_len": 131072}}, {}, (32768, "the context_tokens setting")),  # the setting is the ceiling
        ({"m": {}}, {}, (32768, "the context_tokens setting")),  # llama-cpp-python: nothing reported
    ],
)
def test_context_discovery(server, config, models, extra, expect):
    server.models = models
    for name, value in extra.items():
        setattr(server, name, value)
    assert LLMClient(config).context_tokens("m") == expect


def test_stream_options_refused_is_dropped_and_remembered(server, remembered):
    server.reject_stream_options = True
    server.responder = lambda body: ok(GOOD, completion_tokens=3)
    value, usage = ask(LLMClient(remembered))
    assert value.score == 7 and "stream_options" not in server.requests[1] and len(server.requests) == 2
    assert usage.completion_tokens == -(-len(json.dumps(GOOD)) // 4)  # no usage chunk: counted from the stream
    ask(LLMClient(remembered))
    assert len(server.requests) == 3 and "stream_options" not in server.requests[2]


def test_server_reason_is_one_line_without_repeated_prefixes(server, config, caplog):
    body = "Traceback (most recent call last):\n  File x\nValueError: the model fell over\n"
    server.responder = lambda b: error(500, body, "internal_server_error")
    with caplog.at_level("WARNING", logger="agents.llm"), pytest.raises(AgentError) as e:
        ask(LLMClient(config.model_copy(update={"max_retries": 2})))
    msg = str(e.value)
    assert "\n" not in msg and "Error code" not in msg and msg.count("HTTP 500") == 1
    assert "ValueError: the model fell over" in msg and "gave up after 3 tries" in msg
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert len(retries) == 2 and all("\n" not in r and len(r) < 250 for r in retries)


def test_video_parts_pass_through_untouched(server, client):
    video = {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,AAAAIGZ0eXBpc29t"}}
    server.script(ok(GOOD))
    ask(client, [{"role": "user", "content": [{"type": "text", "text": "watch"}, video]}])
    assert server.video_parts(0) == [video]


def test_estimate_tokens_counts_text_images_and_video():
    msgs = [
        {"role": "system", "content": "x" * 400},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "y" * 40},
                *with_images(2)[0]["content"][1:],
                {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,AA"}},
            ],
        },
    ]
    assert estimate_tokens(msgs, image_tokens=85, video_tokens=1000) == 100 + 10 + 8 + 170 + 1000


def test_a_refusal_hidden_in_an_empty_stream_is_heard_without_streaming(server, config):
    """llama-cpp-python answers a streamed request it cannot serve with HTTP 200 and an empty stream."""
    server.images_refused, server.errors_in_stream = "llama-cpp-python", True
    with pytest.raises(
        AgentError, match=r'does not take images: HTTP 500: can only concatenate str \(not "list"\) to str'
    ) as e:
        ask(LLMClient(config.model_copy(update={"max_retries": 3})), with_images(1))
    assert e.value.usage.calls == 2 and [r.get("stream") for r in server.requests] == [True, None]
