"""A critic model that takes no images: noticed at its first refusal, then the panel reads the storyboard and a
measured description of each shot's frames, in a clearly labelled text-only mode, instead of failing."""

from __future__ import annotations

import threading

import pytest
from PIL import Image

from agents.base import FilmView, SampledFrame
from agents.critic import LLMCritic
from agents.llm import LLMClient
from agents.personas import builtin_personas
from tests.agents import longform
from tests.agents.openai_server import IMAGE_REFUSALS, FakeOpenAI
from tests.agents.test_critic_watch import long_board


def film(tmp_path, board) -> FilmView:
    frames = []
    for n, (shot, start, _end) in enumerate(board.timeline()):
        level = 20 if n % 2 else 230  # dark and bright shots, so the descriptions differ
        for k in range(3):
            path = tmp_path / f"{shot.shot_id}_{k}.png"
            Image.new("RGB", (64, 36), (level, level, level)).save(path)
            frames.append(SampledFrame(shot.shot_id, k, start + k, str(path)))
    return FilmView(board, frames, renderer_label="animatic (previz)", frames_per_shot=3)


def with_images(server) -> list[dict]:
    return [b for b in server.requests if FakeOpenAI.image_parts_of(b)]


@pytest.mark.parametrize("server_kind", sorted(IMAGE_REFUSALS))
def test_the_first_refusal_turns_the_critic_to_text(tmp_path, config, server_kind):
    board = long_board(scenes=2, per_scene=4)
    view = film(tmp_path, board)
    with FakeOpenAI(longform.responder, images_refused=server_kind) as server:
        critic = LLMCritic(LLMClient(config.model_copy(update={"base_url": server.base_url})))
        assert not critic.text_only
        res = critic.critique(builtin_personas()["film_critic"], view)
    assert len(with_images(server)) == 1  # one refusal, never retried
    assert critic.text_only and "text-only" in critic.mode
    text = longform.user_text(server.requests[-1])
    assert "You cannot see this film" in text and "what its frames show (measured, not seen):" in text
    dark, bright = text.split("[sh002]")[1].split("\n- [")[0], text.split("[sh001]")[1].split("\n- [")[0]
    assert "dark" in dark and "bright" in bright and "flashes not measured (only sampled frames)" in bright
    cov = res.coverage
    assert (cov.input, cov.seen, cov.shots, cov.frames_per_shot) == ("text", 8, 8, 0)
    assert cov.line().startswith("read 8/8 shots · TEXT ONLY")
    assert [n.shot_id for n in res.value.shot_notes] == [s.shot_id for s in board.shots()]


def test_a_panel_learns_it_once_and_later_critics_start_in_text(tmp_path, config):
    board = long_board(scenes=1, per_scene=4)
    view = film(tmp_path, board)
    with FakeOpenAI(longform.responder, images_refused="llama-server") as server:
        critic = LLMCritic(LLMClient(config.model_copy(update={"base_url": server.base_url})))
        personas = [builtin_personas()[p] for p in ("film_critic", "teen_scroller", "genre_fan")]
        done = []
        threads = [threading.Thread(target=lambda p=p: done.append(critic.critique(p, view))) for p in personas]
        [t.start() for t in threads]
        [t.join() for t in threads]
        refused = len(with_images(server))
        assert len(done) == 3 and all(r.coverage.input == "text" for r in done)
        assert 1 <= refused <= 3  # at most one refusal per critic that had started before the first one
        critic.critique(builtin_personas()["parent_with_kids"], view)
        assert len(with_images(server)) == refused  # a critic after that starts in text


def test_other_failures_are_not_taken_for_a_text_only_model(tmp_path, config):
    from agents.base import AgentError
    from tests.agents.openai_server import error

    board = long_board(scenes=1, per_scene=2)
    with FakeOpenAI(lambda body: error(400, "the model is busy thinking")) as server:
        critic = LLMCritic(LLMClient(config.model_copy(update={"base_url": server.base_url})))
        with pytest.raises(AgentError, match="the model is busy thinking"):
            critic.critique(builtin_personas()["film_critic"], film(tmp_path, board))
    assert not critic.text_only and len(server.requests) == 1
