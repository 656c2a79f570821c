"""Fixtures for the agent tests: a local OpenAI server, a client on it, a tiny film. (The network guard is in tests/conftest.py.)"""

from __future__ import annotations

import os

import pytest
from PIL import Image

from agents.base import FilmView, SampledFrame
from storage.schema import Character, Scene, Shot, Storyboard

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


@pytest.fixture
def config(server):
    from agents.llm import LLMConfig

    return LLMConfig(
        base_url=server.base_url,
        api_key="sk-test-SECRET-1234",
        critic_model="vision-model",
        refiner_model="refiner-model",
        planner_model="planner-model",
        timeout=5,
        max_retries=2,
        backoff=0.01,
        max_concurrency=6,
        max_frames_per_call=4,
        max_image_side=64,
    )


@pytest.fixture
def client(config):
    from agents.llm import LLMClient

    return LLMClient(config)


@pytest.fixture
def storyboard() -> Storyboard:
    return Storyboard(
        title="The Lighthouse Keeper",
        logline="An old keeper and a lost seabird wait out a storm.",
        style_guide="muted blues, 35mm, soft light",
        characters=[Character(name="Ada", description="an old woman in a yellow raincoat, grey braid")],
        scenes=[
            Scene(
                scene_id="sc01",
                title="Storm",
                shots=[
                    Shot(
                        shot_id="sh01",
                        prompt="a lighthouse on a cliff in a storm",
                        duration=4,
                        camera="zoom_in",
                        narration="The storm came at dusk.",
                    ),
                    Shot(
                        shot_id="sh02",
                        prompt="Ada climbs the spiral stairs",
                        duration=5,
                        characters=["Ada"],
                        locked=True,
                    ),
                ],
            ),
            Scene(
                scene_id="sc02",
                title="Dawn",
                shots=[
                    Shot(
                        shot_id="sh03",
                        prompt="a seabird lands on the lamp rail at dawn",
                        duration=6,
                        dialogue="There you are.",
                    ),
                ],
            ),
        ],
    )


@pytest.fixture
def film(tmp_path, storyboard) -> FilmView:
    frames = []
    for shot, start, end in storyboard.timeline():
        for k in range(2):
            path = tmp_path / f"{shot.shot_id}_{k}.png"
            Image.new("RGB", (160, 90), (40 * k + 20, 60, 120)).save(path)
            frames.append(SampledFrame(shot.shot_id, k, start + (end - start) * (k + 0.5) / 2, str(path)))
    return FilmView(storyboard, frames, intent="a quiet film about patience", renderer_label="animatic (previz)")
