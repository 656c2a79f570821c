"""Critics watch a long film like viewers: every shot, in order, in parts sized to what the endpoint takes, carrying a
running memory, ending with the film-level critique. Asserted from what the server received."""

from __future__ import annotations

import base64
import io
import json
import threading

import pytest
from PIL import Image

from agents.base import AgentError, FilmView, SampledFrame
from agents.critic import LLMCritic
from agents.llm import LLMClient
from agents.personas import builtin_personas
from storage.schema import Character, Scene, Shot, Storyboard
from tests.agents import longform
from tests.agents.openai_server import FakeOpenAI, ok

K = 3  # frames per shot


def long_board(scenes: int = 20, per_scene: int = 6) -> Storyboard:
    n = 0
    out = []
    for s in range(scenes):
        shots = []
        for _ in range(per_scene):
            n += 1
            shots.append(
                Shot(
                    shot_id=f"sh{n:03d}",
                    prompt=f"shot {n}: the keeper on the rocks, waves, amber light",
                    duration=5,
                    characters=["Ada"] if n == 8 else [],
                    narration="The sea kept time." if n % 10 == 0 else "",
                )
            )
        out.append(
            Scene(
                scene_id=f"sc{s + 1:02d}",
                title=f"Scene {s + 1}",
                purpose=f"beat {s + 1}",
                description=f"things happen in scene {s + 1}",
                shots=shots,
            )
        )
    return Storyboard(
        title="Long Keeper",
        logline="A keeper and the sea",
        style_guide="teal",
        characters=[Character(name="Ada", description="old woman, yellow coat")],
        scenes=out,
    )


def view(tmp_path, board: Storyboard, refs: bool = False, **kw) -> FilmView:
    frames = []
    for shot, start, end in board.timeline():
        for k in range(K):
            path = tmp_path / f"{shot.shot_id}_{k}.png"
            if not path.exists():
                Image.new("RGB", (32, 18), (80 * k, 40, 200)).save(path)
            frames.append(SampledFrame(shot.shot_id, k, start + (end - start) * k / K, str(path)))
    references = {}
    if refs:
        ref = tmp_path / "ada.png"
        Image.new("RGB", (20, 20), (200, 200, 0)).save(ref)
        references = {"Ada": [str(ref), str(ref), str(ref)]}
    return FilmView(
        board,
        frames,
        intent="a slow sea film",
        renderer_label="animatic (previz)",
        frames_per_shot=K,
        references=references,
        **kw,
    )


def client_on(server, config, **over) -> LLMClient:
    return LLMClient(config.model_copy(update={"base_url": server.base_url, "max_frames_per_call": 8, **over}))


def pictures_by_label(body: dict) -> list[tuple[str, dict]]:
    """(label, the picture after it) for every shot picture a request carried."""
    parts = [p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"]]
    return [
        (a["text"], b)
        for a, b in zip(parts, parts[1:])
        if a.get("type") == "text" and a["text"].startswith("[shot ") and b.get("type") == "image_url"
    ]


def test_every_critic_sees_every_shot_of_ten_minutes_within_the_limits(tmp_path, config):
    board = long_board()
    film = view(tmp_path, board, refs=True)
    panel = [builtin_personas()[p] for p in ("film_critic", "teen_scroller")]
    with FakeOpenAI(longform.responder, max_output_tokens=4096, max_images=8, context_tokens=32768) as server:
        critic = LLMCritic(client_on(server, config))
        results = {}

        def one(p):
            results[p.id] = critic.critique(p, film)

        threads = [threading.Thread(target=one, args=(p,)) for p in panel]
        [t.start() for t in threads]
        [t.join() for t in threads]
    assert set(results) == {"film_critic", "teen_scroller"}
    for persona in panel:
        sent = [b for b in server.requests if f"You are {persona.name}" in b["messages"][0]["content"]]
        assert all(len(FakeOpenAI.image_parts_of(b)) <= 8 for b in sent)
        seen = [label.split()[1] for b in sent for label, _ in pictures_by_label(b)]
        assert seen == [s.shot_id for s in board.shots()]  # every shot, once, in film order
        # each picture holds the shot's 3 frames (stacked: three times as tall as one 16:9 frame is wide)
        picture = pictures_by_label(sent[0])[0][1]["image_url"]["url"].split(",", 1)[1]
        w, h = Image.open(io.BytesIO(base64.b64decode(picture))).size
        assert h > 1.4 * w
        assert all("· 3 frames, top to bottom]" in label for b in sent for label, _ in pictures_by_label(b))
        assert [longform.schema_name(b) for b in sent] == ["WatchOut"] * (len(sent) - 1) + ["CritiqueOut"]
        # the running memory goes from each part to the next
        for prev, nxt in zip(sent, sent[1:]):
            last = longform.watched(prev)[-1]
            assert f"What you remember of the parts before: watched up to {last}" in longform.user_text(nxt)
        # Ada's references come once, with the part where she first appears (sh008)
        refs = [b for b in sent if "[reference · Ada]" in longform.user_text(b)]
        assert len(refs) == 1 and "[sh008]" in longform.user_text(refs[0])
        res = results[persona.id]
        c, cov = res.value, res.coverage
        assert [n.shot_id for n in c.shot_notes] == [s.shot_id for s in board.shots()]
        assert c.top_issues[0].summary == "the middle sags" and c.keep_watching
        assert (cov.input, cov.shots, cov.seen, cov.frames_per_shot, cov.min_frames) == ("frames", 120, 120, 3, 3)
        assert cov.chunks == len(sent) == res.usage.calls and cov.unseen == []
        assert cov.prompt_tokens == res.usage.prompt_tokens > 0
        assert len(sent) == 16  # 8 pictures a request: 120 shots and Ada's 2 references
    assert "watched 120/120 shots · 3 frames each" in results["film_critic"].coverage.line()


def test_parts_are_windows_that_name_their_scenes(tmp_path, config):
    board = long_board(scenes=4, per_scene=3)
    with FakeOpenAI(longform.responder, max_images=8) as server:
        LLMCritic(client_on(server, config)).critique(builtin_personas()["film_critic"], view(tmp_path, board))
    assert [len(longform.watched(b)) for b in server.requests] == [8, 4]
    second = longform.user_text(server.requests[1])
    assert 'Scene "Scene 3", continued' in second and 'Scene "Scene 4" (beat 4): things happen in scene 4' in second
    assert "This is part 2 of 2." in second and "things happen in scene 2" not in second


def test_a_scene_watched_alone_knows_the_story_so_far(tmp_path, config):
    board = long_board(scenes=4, per_scene=3)
    part = board.restricted([s.shot_id for s in board.scenes[2].shots])
    whole = view(tmp_path, board)
    scoped = FilmView(
        part,
        [f for f in whole.frames if f.shot_id in {s.shot_id for s in part.shots()}],
        intent=whole.intent,
        renderer_label=whole.renderer_label,
        story=board,
        frames_per_shot=K,
    )
    with FakeOpenAI(longform.responder, max_images=8) as server:
        res = LLMCritic(client_on(server, config)).critique(builtin_personas()["film_critic"], scoped)
    text = longform.user_text(server.requests[0])
    assert "The story so far, before what you watch:" in text and "things happen in scene 2" in text
    assert "things happen in scene 4" not in text and "[sh004]" not in text  # only the scene's own shots
    assert (
        "[shot sh007 · 00:30.0-00:35.0 · 3 frames" in [label for label, _ in pictures_by_label(server.requests[0])][0]
    )
    assert res.coverage.shots == 3 and [n.shot_id for n in res.value.shot_notes] == ["sh007", "sh008", "sh009"]


def test_an_answer_cut_off_splits_the_part(tmp_path, config):
    """Notes longer than the answer budget was sized for: the server cuts the answer; the part is watched again in
    halves (asking for less), never repaired."""
    board = long_board(scenes=1, per_scene=6)

    def verbose(body):
        answer = json.loads(longform.responder(body).body["choices"][0]["message"]["content"])
        answer["shot_notes"] = [{"shot_id": s, "note": "long words " * 200} for s in longform.watched(body)]
        return ok(json.dumps(answer))

    with FakeOpenAI(verbose, max_output_tokens=4096) as server:
        res = LLMCritic(client_on(server, config)).critique(builtin_personas()["film_critic"], view(tmp_path, board))
    sizes = [len(longform.watched(b)) for b in server.requests]
    assert sizes == [6, 3, 3]  # 6 notes of ~550 tokens did not fit 3000: half the shots, twice
    assert server.max_tokens(0) == 3000
    assert not any(m["role"] == "assistant" for b in server.requests for m in b["messages"])
    assert [n.shot_id for n in res.value.shot_notes] == [s.shot_id for s in board.shots()]
    assert res.coverage.chunks == 2


def test_too_many_images_gets_one_smaller_retry(tmp_path, config):
    board = long_board(scenes=2, per_scene=8)
    with FakeOpenAI(longform.responder, max_images=5) as server:  # the server takes fewer than the setting says
        res = LLMCritic(client_on(server, config)).critique(builtin_personas()["film_critic"], view(tmp_path, board))
    counts = [len(FakeOpenAI.image_parts_of(b)) for b in server.requests]
    assert counts[0] == 8 and all(c <= 4 for c in counts[1:])  # refused once, then half as many from then on
    assert res.coverage.seen == 16


def test_a_smaller_request_refused_too_is_one_line_naming_the_setting(tmp_path, config):
    board = long_board(scenes=1, per_scene=8)
    with FakeOpenAI(longform.responder, max_images=2) as server:
        with pytest.raises(AgentError, match="CHIEF_LLM_MAX_IMAGES=2") as e:
            LLMCritic(client_on(server, config)).critique(builtin_personas()["film_critic"], view(tmp_path, board))
    assert "\n" not in str(e.value) and len(server.requests) == 2


def test_too_long_a_context_gets_one_smaller_retry(tmp_path, config):
    board = long_board(scenes=1, per_scene=8)
    with FakeOpenAI(longform.responder, context_tokens=3400) as server:  # the setting says 32k
        res = LLMCritic(client_on(server, config, critic_max_tokens=2000)).critique(
            builtin_personas()["film_critic"], view(tmp_path, board)
        )
    sizes = [len(longform.watched(b)) for b in server.requests]
    assert sizes[0] == 8 and max(sizes[1:]) <= 4 and sum(sizes[1:]) == 8  # refused once, then half the size
    assert res.coverage.seen == 8


def test_the_context_a_refusal_states_plans_every_later_request(tmp_path, config):
    """The server's refusal names its context (3400 tokens, where the setting says 32k): the retry and the next
    critic's requests are planned to it, so no later request is refused."""
    board = long_board(scenes=1, per_scene=8)
    with FakeOpenAI(longform.responder, context_tokens=3400) as server:
        client = client_on(server, config, critic_max_tokens=2000)
        critic = LLMCritic(client)
        critic.critique(builtin_personas()["film_critic"], view(tmp_path, board))
        assert client.context_tokens(critic.model) == (3400, "stated by the server when it refused a request")
        first = len(server.requests)
        res = critic.critique(builtin_personas()["teen_scroller"], view(tmp_path, board))
    later = server.requests[1:]
    assert all(FakeOpenAI.prompt_tokens(b) + b["max_tokens"] <= 3400 for b in later)
    assert sum(len(longform.watched(b)) for b in server.requests[first:]) == 8 and res.coverage.seen == 8


def test_video_input_sends_each_part_as_one_clip(tmp_path, config):
    board = long_board(scenes=3, per_scene=4)
    clip = tmp_path / "part.mp4"
    clip.write_bytes(b"\x00\x00\x00\x18ftypmp42 not really a film")
    joined = []

    def join(ids):
        joined.append(ids)
        return str(clip)

    film = view(tmp_path, board, join_clips=join, clips={s.shot_id: str(clip) for s in board.shots()})
    with FakeOpenAI(longform.responder) as server:
        critic = LLMCritic(client_on(server, config), video=True, video_seconds=40)
        res = critic.critique(builtin_personas()["film_critic"], film)
    assert [len(ids) for ids in joined] == [8, 4]  # 40 s of clip a request: scenes 1-2, then scene 3
    for body in server.requests:
        assert len(FakeOpenAI.image_parts_of(body, "video_url")) == 1 and not FakeOpenAI.image_parts_of(body)
    url = FakeOpenAI.image_parts_of(server.requests[0], "video_url")[0]["video_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]) == clip.read_bytes()
    assert res.coverage.input == "video" and res.coverage.seen == 12 and critic.mode == "llm:vision-model (video)"
