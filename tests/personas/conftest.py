"""Persona test fixtures: a comments file written here, a local OpenAI server (the network guard: tests/conftest.py)."""

from __future__ import annotations

import json

import pytest

# One viewer's comments (JSONL): titles, ratings on a 1..5 scale, and things that identify people.
VIEWER = [
    {
        "text": "Gorgeous cinematography, the colours and lighting in every shot are stunning!",
        "title": "Blade Runner 2049",
        "rating": 4.5,
        "author": "Kate Winters",
    },
    {"text": "So slow and boring, it drags for two hours. Way too long.", "title": "The Irishman", "rating": 1.5},
    {"text": "Loved the characters and the emotional ending, I cried. cc @katew_99", "title": "Coco", "rating": 5},
    {"text": "Too dark, I couldn't see anything in the night scenes. Awful.", "title": "Night Show", "rating": 1},
    {"text": "The flashing lights gave me a headache, terrible editing", "title": "Enter the Void", "rating": 0.5},
    {
        "text": "Beautiful animation and a great story, watched it with subtitles. Kate Winters",
        "title": "Your Name",
        "rating": 5,
    },
    {
        "text": "Confusing plot, I could not follow what happened. More at https://blog.example.com/kate",
        "title": "Tenet",
        "rating": 2,
    },
    {"text": "Amazing action scenes and a fast pace, the visuals are gorgeous!", "title": "Fury Road", "rating": 4.5},
]


@pytest.fixture
def viewer_file(tmp_path):
    path = tmp_path / "kate.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in VIEWER) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def client(server):
    from agents.llm import LLMClient, LLMConfig

    return LLMClient(
        LLMConfig(
            base_url=server.base_url,
            api_key="sk-test-1234",
            critic_model="persona-model",
            timeout=5,
            max_retries=0,
            backoff=0.01,
        )
    )
