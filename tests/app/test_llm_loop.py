"""The loop in LLM mode, through the Studio, against a real local OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest

from app.studio import StudioError
from tests.agents.openai_server import FakeOpenAI, error, ok

PLAN = {
    "title": "The Keeper",
    "logline": "A keeper guides a whale home.",
    "style_guide": "painterly, teal and amber",
    "characters": [{"name": "Keeper", "description": "old man, yellow oilskin coat"}],
    "scenes": [
        {
            "title": "Night",
            "description": "",
            "music": "",
            "shots": [
                {
                    "prompt": "A lighthouse in a storm",
                    "duration": 5,
                    "camera": "static",
                    "narration": "It was a dark night.",
                    "dialogue": [],
                    "sounds": "",
                    "characters": [],
                },
                {
                    "prompt": "The keeper lights the lamp",
                    "duration": 5,
                    "camera": "zoom_in",
                    "narration": "",
                    "dialogue": [],
                    "sounds": "",
                    "characters": ["Keeper"],
                },
                {
                    "prompt": "A whale surfaces in the beam",
                    "duration": 5,
                    "camera": "pan_left",
                    "narration": "",
                    "dialogue": [],
                    "sounds": "",
                    "characters": [],
                },
            ],
        }
    ],
}


def critique_for(body: dict) -> dict:
    text = json.dumps(body["messages"])
    shots = sorted(set(__import__("re").findall(r"\bsh0\d\b", text)))
    return {
        "overall": 6.5,
        "scores": {
            d: 6.0
            for d in (
                "story_clarity",
                "visual_quality",
                "character_consistency",
                "pacing",
                "emotional_impact",
                "intent_faithfulness",
            )
        },
        "shot_notes": [{"shot_id": shots[0], "note": "too dark"}],
        "top_issues": [
            {
                "summary": "the storm is not scary",
                "urgency": 4,
                "dimension": "emotional_impact",
                "shot_ids": [shots[0]],
                "suggestion": "bigger waves",
            }
        ],
        "keep_watching": True,
        "keep_watching_reason": "I want to see the whale",
        "summary": "Moody, but murky.",
    }


def responder(body: dict):
    model = body["model"]
    if model == "planner-model":
        return ok(PLAN)
    if model == "vision-model":
        return ok(critique_for(body), delay=0.05)
    note_id = next(iter(__import__("re").findall(r"\bn_[0-9a-f]{8}\b", json.dumps(body["messages"]))), None)
    return ok(
        {
            "summary": "scarier storm",
            "not_changed": [],
            "edits": [
                {
                    "op": "set",
                    "shot_id": "sh01",
                    "field": "prompt",
                    "character": None,
                    "old": None,
                    "new": "A lighthouse in a violent storm, huge black waves",
                    "rationale": "the creator asked for it",
                    "sources": [note_id] if note_id else [],
                }
            ],
        }
    )


@pytest.fixture
def llm_studio(make_studio):
    with FakeOpenAI(responder) as server:
        st = make_studio(
            llm_base_url=server.base_url,
            api_key="sk-test-NEVER-STORED",
            critic_model="vision-model",
            refiner_model="refiner-model",
            planner_model="planner-model",
            llm_max_retries=1,
        )
        st.server = server
        yield st


def test_llm_loop_records_usage_and_never_stores_the_key(llm_studio):
    st = llm_studio
    assert st.status().agents.startswith("llm @ http://127.0.0.1")
    v = st.create_project("A keeper guides a whale home", minutes=0.25)
    pid = v.project_id
    assert [s.shot_id for s in v.storyboard.shots()] == ["sh01", "sh02", "sh03"]
    st.render(pid)
    crits = st.critique(pid)
    assert len(crits) == len(v.panel) and all(c.mode == "llm:vision-model" for c in crits)
    sent = [r for r in st.server.requests if r["model"] == "vision-model"]
    assert all(
        any(p.get("type") == "image_url" for m in r["messages"] if isinstance(m["content"], list) for p in m["content"])
        for r in sent
    )
    note = st.add_note(pid, "Make the storm scarier", shot_id="sh01")
    prop = st.refine(pid)
    assert prop.proposal.edits[0].sources == [note.id]
    assert prop.proposal.edits[0].old == "A lighthouse in a storm"  # filled in from the real storyboard
    res = st.accept(pid)
    r2 = st.render(pid, res.version.number)
    assert (r2.rendered, r2.reused) == (1, 2)

    usage = st.usage(pid, 1)
    assert usage.roles["critic"].calls == len(v.panel) and usage.roles["refiner"].calls == 1
    assert usage.total.prompt_tokens > 0
    assert st.usage(pid, 1).total.calls == len(v.panel) + 1 + 1  # planner usage lives on v1 too
    blob = st.config.db_path.read_bytes() + b"".join(p.read_bytes() for p in st.config.home.rglob("*.db-wal"))
    assert b"sk-test-NEVER-STORED" not in blob


def test_failed_llm_critique_leaves_the_project_unchanged(make_studio):
    with FakeOpenAI(lambda body: error(500, "boom")) as server:
        st = make_studio(llm_base_url=server.base_url, api_key="sk-x", critic_model="vision-model", llm_max_retries=1)
        from tests.conftest import tiny_board

        pid = st.create_from_storyboard(tiny_board(2)).project_id
        st.render(pid)
        from agents.base import AgentError

        with pytest.raises((AgentError, StudioError), match="vision-model"):
            st.critique(pid)
        assert st.critiques(pid) == []
        # nothing saved but what it cost: every request the server got is counted; a sibling critic stopped by the
        # failure may count one request it was sending when the connection closed, which the server may never read
        calls, got = st.usage(pid).total.calls, len(server.requests)
        assert 0 < got <= calls <= got + len(st.personas_of(st.version(pid)))
