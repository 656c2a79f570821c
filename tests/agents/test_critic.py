"""LLMCritic: what the server sees (persona, storyboard, labelled frames), the typed result (concurrency: test_llm_concurrency.py)."""

from __future__ import annotations

import base64
import io
import json

from PIL import Image

from agents.critic import LLMCritic
from agents.personas import builtin_personas
from storage.schema import DIMENSIONS, Critique
from tests.agents.openai_server import ok


def answer(**over):
    a = {
        "overall": 6.5,
        "scores": {d: 6.0 for d in DIMENSIONS},
        "shot_notes": [{"shot_id": "sh01", "note": "slow open, lowkey"}, {"shot_id": "sh99", "note": "invented"}],
        "top_issues": [
            {
                "summary": "minor",
                "urgency": 2,
                "dimension": "visual_quality",
                "shot_ids": ["sh03"],
                "suggestion": "brighter",
            },
            {
                "summary": "boring start",
                "urgency": 5,
                "dimension": "pacing",
                "shot_ids": ["sh01", "sh42"],
                "suggestion": "cut to 2 s",
            },
        ],
        "keep_watching": False,
        "keep_watching_reason": "swiped at 0:03",
        "summary": "mid tbh",
    }
    a.update(over)
    return a


def test_critique_request_and_result(server, client, film):
    persona = builtin_personas()["teen_scroller"]
    server.script(ok(answer()))
    result = LLMCritic(client).critique(persona, film)

    c = result.value
    assert isinstance(c, Critique) and c.persona_id == "teen_scroller"
    assert set(c.scores.model_dump()) == set(DIMENSIONS)
    assert [n.shot_id for n in c.shot_notes] == ["sh01"]  # the invented shot id is dropped
    assert [i.urgency for i in c.top_issues] == [5, 2]  # most urgent first
    assert c.top_issues[0].shot_ids == ["sh01"]
    assert result.model == "vision-model" and result.usage.calls == 1

    body = server.requests[0]
    assert body["model"] == "vision-model"
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert "scores" in schema["required"]
    text = server.texts()
    assert persona.who.split(".")[0] in text and persona.voice.split(",")[0] in text
    assert "pacing 2" in text  # the weights
    assert "animatic (previz)" in text and "do not mark it down" in text
    assert "[sh02]" in text and "Ada climbs the spiral stairs" in text and "The storm came at dusk." in text
    assert "a quiet film about patience" in text
    assert 'line: "There you are."' in text  # a shot's lines, as the storyboard holds them
    images = server.image_parts()
    assert len(images) == 3  # every shot, each one picture of its 2 frames in order
    url = images[0]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,") and images[0]["image_url"]["detail"] == "low"
    img = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert img.format == "JPEG" and max(img.size) <= 64
    assert img.size[1] > img.size[0]  # two 16:9 frames stacked: taller than wide
    top, bottom = img.getpixel((img.size[0] // 2, 5)), img.getpixel((img.size[0] // 2, img.size[1] - 5))
    assert bottom[0] > top[0] + 25  # the first frame above the second (their red differs by 40)
    labels = [
        p["text"] for p in body["messages"][1]["content"] if p["type"] == "text" and p["text"].startswith("[shot")
    ]
    assert labels == [
        "[shot sh01 · 00:00.0-00:04.0 · 2 frames, top to bottom]",
        "[shot sh02 · 00:04.0-00:09.0 · 2 frames, top to bottom]",
        "[shot sh03 · 00:09.0-00:15.0 · 2 frames, top to bottom]",
    ]
    cov = result.coverage
    assert (cov.input, cov.shots, cov.seen, cov.chunks, cov.requests, cov.unseen) == ("frames", 3, 3, 1, 1, [])


def test_scores_out_of_range_are_repaired(server, client, film):
    persona = builtin_personas()["film_critic"]
    server.script(ok(answer(scores={d: 60 for d in DIMENSIONS})), ok(answer()))
    c = LLMCritic(client).critique(persona, film).value
    assert c.scores.pacing == 6.0
    assert "scores.pacing" in server.requests[1]["messages"][-1]["content"]
    assert json.loads(server.requests[1]["messages"][-2]["content"])["scores"]["pacing"] == 60
