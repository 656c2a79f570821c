"""Answers a model would give for a long film, built from what each request asks (tests of planning, watching and
refining at 10 minutes). They read the request the way a model would: the schema it names and its text."""

from __future__ import annotations

import json
import re

from storage.schema import DIMENSIONS
from tests.agents.openai_server import FakeOpenAI

WORDS = (
    "weathered",
    "lantern",
    "storm",
    "harbour",
    "gull",
    "rope",
    "tide",
    "amber",
    "mist",
    "slate",
    "cliff",
    "oilskin",
)


def schema_name(body: dict) -> str:
    fmt = body.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name", "")


def user_text(body: dict) -> str:
    out = []
    for m in body["messages"]:
        c = m.get("content")
        if m.get("role") == "user":
            out.append(c if isinstance(c, str) else "\n".join(p.get("text", "") for p in c if p.get("type") == "text"))
    return "\n".join(out)


def story(body: dict) -> dict:
    text = user_text(body)
    n = int(re.search(r"list of about (\d+) scenes", text).group(1))
    seconds = float(re.search(r"= (\d+) seconds", text).group(1))
    weights = [1.0 + 0.5 * (i % 3) for i in range(n)]  # uneven budgets, rescaled by the planner
    scenes = [
        {
            "title": f"Scene {i + 1}",
            "purpose": f"beat {i + 1}: the keeper {WORDS[i % len(WORDS)]}",
            "location": "Lighthouse" if i % 2 else "Harbour",
            "characters": ["Keeper"] if i % 3 else ["Keeper", "Gull"],
            "seconds": round(seconds * w / sum(weights), 1),
            "summary": f"The keeper faces the {WORDS[i % len(WORDS)]}.",
            "music": "slow cello" if i % 2 else "",
        }
        for i, w in enumerate(weights)
    ]
    return {
        "title": "The Keeper",
        "logline": "A lighthouse keeper and a gull weather a season of storms.",
        "style_guide": "painterly, teal and amber, 35mm, soft grain",
        "characters": [
            {"name": "Keeper", "description": "old man, grey beard, yellow oilskin coat"},
            {"name": "Gull", "description": "a one-legged herring gull with a torn wing"},
        ],
        "locations": [
            {"name": "Lighthouse", "description": "white tower on black rock, red lamp room"},
            {"name": "Harbour", "description": "slate quay, fishing boats, ropes and nets"},
        ],
        "scenes": scenes,
    }


def shots(body: dict, prompt_words: int = 60) -> dict:
    """The shots a scene request asks for (its count and seconds), each prompt about `prompt_words` words."""
    text = user_text(body)
    m = re.search(r"(\d+) shots \(between \d+ and \d+\) whose durations add up to (\d+) seconds", text)
    n, seconds = int(m.group(1)), float(m.group(2))
    scene = re.search(r"THIS SCENE, (\d+) of", text).group(1)
    out = []
    for i in range(n):
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(prompt_words))
        out.append(
            {
                "prompt": f"scene {scene} shot {i + 1}: the keeper, old man in a yellow oilskin coat, {words}",
                "duration": round(seconds / n * (1.1 if i % 2 else 0.9), 2),
                "camera": "static",
                "narration": "The sea kept its own time." if i == 0 else "",
                "dialogue": [{"character": "Keeper", "line": "Steady now.", "delivery": "whispered"}] if i == 1 else [],
                "sounds": "waves on the rocks" if i % 2 else "",
                "characters": ["Keeper", "Stranger"] if i % 2 else ["Keeper"],
            }
        )
    return {"shots": out}


SHOT_LINE = re.compile(r"^- \[([A-Za-z0-9_\-]+)\] \d\d:\d\d", re.M)


def watched(body: dict) -> list[str]:
    """The shot ids a critic request shows: the shots its storyboard part lists ('- [sh01] 00:00.0-...')."""
    return SHOT_LINE.findall(user_text(body))


def watch(body: dict, stop_at: str | None = None) -> dict:
    ids = watched(body)
    return {
        "shot_notes": [{"shot_id": s, "note": f"{s} holds"} for s in ids],
        "issues": [
            {
                "summary": "slow start",
                "urgency": 3,
                "dimension": "pacing",
                "shot_ids": ids[:1],
                "suggestion": "cut it shorter",
            }
        ],
        "memory": {"so_far": f"watched up to {ids[-1]}", "engagement": 6, "would_stop_at": stop_at},
    }


def critique(body: dict) -> dict:
    ids = watched(body)
    return {
        "overall": 6.5,
        "scores": {d: 6.0 for d in DIMENSIONS},
        "shot_notes": [{"shot_id": s, "note": f"{s} lands"} for s in ids],
        "top_issues": [
            {
                "summary": "the middle sags",
                "urgency": 4,
                "dimension": "pacing",
                "shot_ids": ids[-1:],
                "suggestion": "tighten the middle",
            }
        ],
        "keep_watching": True,
        "keep_watching_reason": "the gull",
        "summary": "Moody and slow, but it stays with me.",
    }


def responder(body: dict):
    """A model for every role of a long film."""
    from tests.agents.openai_server import error, ok

    name = schema_name(body)
    answers = {
        "StoryOut": story,
        "SceneShotsOut": shots,
        "WatchOut": watch,
        "CritiqueOut": critique,
        "ProposalOut": lambda b: {"summary": "tighter", "edits": [], "not_changed": []},
    }
    if name not in answers:
        return error(400, f"unexpected request for {name!r}")
    return ok(json.dumps(answers[name](body)))


def limited(answer=None, **kw) -> FakeOpenAI:
    """A server with a real endpoint's limits, answering with `answer` (default `responder`); its answers of
    thousands of tokens are streamed 64 characters a chunk, as a server batching its tokens sends them."""
    kw.setdefault("chunk_chars", 64)
    return FakeOpenAI(answer or responder, max_output_tokens=4096, context_tokens=32768, max_images=8, **kw)
