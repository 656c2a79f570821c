"""Consistency measured with a tiny random-weight CLIP image encoder (loaded by the product), the table without
an embedding model, and critics receiving the character references (an LLM critic against a local server)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from app.errors import StudioError
from tests.agents.openai_server import FakeOpenAI, ok
from tests.conftest import tiny_board


def _board():
    """The Keeper is in s2, s3 and s4."""
    board = tiny_board(4)
    board.scenes[1].shots[0].characters = ["Keeper"]
    return board


BOARD = _board()


@pytest.fixture(scope="module")
def clip(tiny_models):
    return tiny_models("clip_vision")


def noise(path, seed: int):
    Image.fromarray(np.random.default_rng(seed).integers(0, 255, (36, 64, 3), dtype=np.uint8)).save(path)
    return path


def staged(st, tmp_path):
    """The Keeper's reference is image A; s2 and s4 show A, s3 shows B."""
    pid = st.create_from_storyboard(BOARD).project_id
    a, b = noise(tmp_path / "a.png", 1), noise(tmp_path / "b.png", 2)
    st.add_reference(pid, "Keeper", a)
    for shot, img in (("s2", a), ("s3", b), ("s4", a)):
        st.set_keyframe(pid, shot, img)
    return pid


def test_without_an_embedding_model_the_table_says_so_and_shows_no_number(studio, tmp_path):
    pid = staged(studio, tmp_path)
    report = studio.consistency(pid)
    assert not report.measured and report.model == ""
    assert report.note.startswith("not measured: no image-embedding model. Set CHIEF_EMBED_MODEL")
    (keeper,) = report.characters
    assert [(a.shot_id, a.source) for a in keeper.appearances] == [
        ("s2", "keyframe"),
        ("s3", "keyframe"),
        ("s4", "keyframe"),
    ]
    assert all(a.to_reference is None and a.to_others is None for a in keeper.appearances)
    assert keeper.mean_to_reference is None and keeper.mean_to_others is None


def test_the_table_measures_each_appearance_and_lists_the_worst_first(make_studio, clip, tmp_path):
    st = make_studio(embed_model=clip)
    pid = staged(st, tmp_path)
    report = st.consistency(pid)
    assert report.measured and report.model == f"CLIPVisionModelWithProjection · {clip}"
    assert "whole-frame" in report.method
    (keeper,) = report.characters
    rows = {a.shot_id: a for a in keeper.appearances}
    assert keeper.appearances[0].shot_id == "s3"  # the odd one out comes first
    assert rows["s2"].to_reference == pytest.approx(1.0, abs=1e-4) == rows["s4"].to_reference
    assert rows["s3"].to_reference < 0.999
    assert rows["s2"].to_others == pytest.approx((1.0 + rows["s3"].to_reference) / 2, abs=1e-3)
    with pytest.raises(StudioError, match="has no render"):
        st.consistency(pid, source="clips")
    st.render(pid)
    after = st.consistency(pid)
    assert {a.source for a in after.characters[0].appearances} == {"clip"}
    assert all(-1 <= a.to_reference <= 1 for a in after.characters[0].appearances)


def test_a_missing_embedding_model_is_one_line(make_studio, tmp_path):
    st = make_studio(embed_model=str(tmp_path / "no-clip"))
    pid = st.create_from_storyboard(BOARD).project_id
    with pytest.raises(StudioError, match=r"^CHIEF_EMBED_MODEL: embedding model '.*no-clip' not found") as err:
        st.consistency(pid)
    assert "\n" not in str(err.value)


def test_critics_see_the_character_references_beside_the_frames(make_studio, tmp_path):
    answer = {
        "overall": 6.0,
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
        "shot_notes": [],
        "top_issues": [],
        "keep_watching": True,
        "keep_watching_reason": "fine",
        "summary": "fine",
    }
    with FakeOpenAI(lambda body: ok(answer)) as server:
        st = make_studio(
            llm_base_url=server.base_url, api_key="sk-test", critic_model="vision-model", llm_max_retries=0
        )
        pid = st.create_from_storyboard(BOARD, panel=["film_critic"]).project_id
        st.add_reference(pid, "Keeper", noise(tmp_path / "a.png", 1))
        st.render(pid)
        st.critique(pid)
        st.render_keyframes(pid)
        st.screen_keyframes(pid)
    film, stills = (r["messages"][1]["content"] for r in server.requests)
    for content in (film, stills):
        labels = [p["text"] for p in content if p["type"] == "text"]
        assert "[reference · Keeper]" in labels
        at = labels.index("[reference · Keeper]")
        assert "Reference images of the characters follow (Keeper)" in labels[at - 1]
        kinds = [p["type"] for p in content]
        assert kinds[kinds.index("image_url") - 1] == "text" and kinds[-1] == "image_url"
    assert "keyframe screening: one still per shot" in json.dumps(stills)
    assert sum(p["type"] == "image_url" for p in stills) == 4 + 1  # one still per shot, one reference
