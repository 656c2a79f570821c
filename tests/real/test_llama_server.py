"""Issue 18 against llama.cpp's own llama-server (SmolLM2-135M, no mmproj): it takes json_schema, reports its
context in /props, refuses images with HTTP 500, and streams usage. Runs when LLAMA_SERVER names a binary."""

from __future__ import annotations

import pytest
from PIL import Image

from agents.base import AgentError, AnswerTooLong, RequestTooLarge
from agents.llm import LLMClient, image_part
from tests.real.conftest import N_CTX
from tests.real.test_llama_cpp_python import MODEL, STORY, YES_NO, Story, YesNo, config

pytestmark = pytest.mark.slow


def test_json_schema_is_taken_at_once(llama_cpp_server, tmp_path):
    cfg = config(llama_cpp_server, tmp_path)
    value, usage = LLMClient(cfg).structured("critic a", MODEL, YES_NO, YesNo)
    assert value.answer in ("yes", "no") and usage.calls == 1
    assert not cfg.state_path.exists()  # nothing refused, nothing to remember


def test_the_context_comes_from_props_and_a_prompt_over_it_is_not_sent(llama_cpp_server, tmp_path):
    client = LLMClient(config(llama_cpp_server, tmp_path))
    assert client.context_tokens(MODEL) == (N_CTX, "reported by the server (/props n_ctx)")
    with pytest.raises(RequestTooLarge, match="the context is 2,048 \\(reported by the server") as e:
        client.structured("refiner", MODEL, [{"role": "user", "content": "lighthouse keeper " * 1500}], YesNo)
    assert e.value.usage.calls == 0


def test_images_refused_once(llama_cpp_server, tmp_path):
    frame = tmp_path / "frame.png"
    Image.new("RGB", (64, 36), (200, 120, 40)).save(frame)
    messages = [{"role": "user", "content": [{"type": "text", "text": "What colour is this?"}, image_part(str(frame))]}]
    with pytest.raises(AgentError, match="does not take images: HTTP 500: image input is not supported") as e:
        LLMClient(config(llama_cpp_server, tmp_path)).structured("critic a", MODEL, messages, YesNo)
    assert e.value.usage.calls == 1


def test_max_tokens_reaches_the_server_and_usage_streams_back(llama_cpp_server, tmp_path):
    client = LLMClient(config(llama_cpp_server, tmp_path, temperature=0.0))
    with pytest.raises(AnswerTooLong) as e:
        client.structured("planner", MODEL, STORY, Story, max_tokens=12, on_length="raise")
    assert e.value.usage.completion_tokens == 12 and e.value.usage.prompt_tokens > 0  # the server's own count
