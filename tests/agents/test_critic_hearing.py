"""Critics hear the film: every part carries the transcript, cue sheet and measured mix of exactly its shots (as
text, counted in the part's size), and with `critic_audio` the part's own window of the mix as `input_audio`; a model
that refuses audio is asked once more without it, and is never sent audio again. Asserted from what a real local
server received, with a real WAV mix made here."""

from __future__ import annotations

import threading
import wave

import numpy as np
import pytest
from PIL import Image

from agents.base import FilmView, HeardLine, Hearing, SampledFrame, ShotSound, SoundFacts
from agents.critic import LLMCritic
from agents.llm import LLMClient
from agents.personas import builtin_personas
from agents.watch import timecode
from storage.schema import Character, Coverage, Line, Scene, Shot, Storyboard
from tests.agents import longform
from tests.agents.openai_server import AUDIO_REFUSALS, FakeOpenAI, decode_wav

SOURCE_RATE = 22050  # the test mix's rate: the critic resamples it to 16 kHz
SHOT_SECONDS = 5.0
MUSIC = "slow cello and a low drone, sparse piano, in D minor"


def board(scenes: int, per_scene: int) -> Storyboard:
    """Every shot has two lines (one of them by a speaker off screen every third shot) and a sound."""
    n, out = 0, []
    for s in range(scenes):
        shots = []
        for _ in range(per_scene):
            n += 1
            shots.append(
                Shot(
                    shot_id=f"sh{n:03d}",
                    prompt=f"shot {n}: the keeper on the rocks, waves, amber light",
                    duration=SHOT_SECONDS,
                    characters=["Keeper"] if n % 3 else ["Keeper", "Gull"],
                    dialogue=[
                        Line(
                            character="Keeper",
                            line=f"Keeper says line {n} about the tide and the long night ahead",
                            delivery="quietly",
                        ),
                        Line(character="Gull", line=f"Gull answers {n}", delivery="shrill"),
                    ],
                    sounds="waves on the rocks, wind in the rigging, gulls far off",
                )
            )
        out.append(Scene(scene_id=f"sc{s + 1:02d}", title=f"Scene {s + 1}", music=MUSIC, shots=shots))
    return Storyboard(
        title="The Keeper Hears",
        logline="A keeper and a gull",
        style_guide="teal",
        characters=[
            Character(name="Keeper", description="old man, yellow oilskin"),
            Character(name="Gull", description="a herring gull"),
        ],
        scenes=out,
    )


def level(n: int) -> float:
    """Shot n's level in the test mix (a constant per shot, so a window's first and last samples name its shots)."""
    return 0.05 + 0.3 * ((n * 7) % 11) / 10


def mix(path, b: Storyboard) -> str:
    """A WAV of the whole film at 22.05 kHz: each shot's window holds its own constant level."""
    chunks = [np.full(round((end - start) * SOURCE_RATE), level(i), np.float32) for i, (_s, start, end) in
              enumerate(b.timeline())]  # fmt: skip
    pcm = (np.concatenate(chunks) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SOURCE_RATE)
        w.writeframes(pcm.tobytes())
    return str(path)


def hearing(tmp_path, b: Storyboard, audio: bool = True) -> Hearing:
    shots = []
    for i, (shot, start, end) in enumerate(b.timeline()):
        lines = tuple(
            HeardLine(
                ln.character,
                ln.line,
                ln.delivery,
                round(start + 0.4 + 2.1 * k, 2),
                round(start + 2.0 + 2.1 * k, 2),
                ln.character not in shot.characters,
            )
            for k, ln in enumerate(shot.dialogue)
        )
        facts = SoundFacts(-20.0 - i % 5, 12.0 - i % 20, 0.2 * (i % 4), i == 7, 2.4)
        shots.append(ShotSound(shot.shot_id, start, end, lines, MUSIC, "temp score", shot.sounds, facts))
    return Hearing(
        tuple(shots),
        loudness_lufs=-14.3,
        true_peak_dbtp=-3.1,
        target_lufs=-14.0,
        label="Piper voices, temp score, temp effects",
        voice_pitch_hz={"Keeper": 97.6, "Gull": 101.0},
        audio=mix(tmp_path / "mix.wav", b) if audio else None,
    )


def film(tmp_path, b: Storyboard, audio: bool = True) -> FilmView:
    frames = []
    for shot, start, end in b.timeline():
        path = tmp_path / f"{shot.shot_id}.png"
        Image.new("RGB", (32, 18), (40, 90, 160)).save(path)
        frames.append(SampledFrame(shot.shot_id, 0, (start + end) / 2, str(path)))
    return FilmView(
        b, frames, renderer_label="animatic (previz)", frames_per_shot=1, hearing=hearing(tmp_path, b, audio)
    )


def critic_on(server, config, **over) -> LLMCritic:
    return LLMCritic(LLMClient(config.model_copy(update={"base_url": server.base_url, **over})))


def by_persona(server, persona) -> list[dict]:
    return [b for b in server.requests if f"You are {persona.name}" in b["messages"][0]["content"]]


def transcript(view: FilmView, shot_id: str) -> list[str]:
    """How a shot's lines read in a request: time, speaker (off screen marked), delivery, words."""
    heard = view.hearing.of(shot_id) if view.hearing else None
    assert heard is not None and heard.lines
    return [
        f"{timecode(ln.start)}-{timecode(ln.end)} {ln.character}{' (off screen)' if ln.off_screen else ''}, "
        f'{ln.delivery}: "{ln.line}"'
        for ln in heard.lines
    ]


def panel(critic: LLMCritic, view: FilmView, personas: list) -> dict:
    results = {}

    def one(p):
        results[p.id] = critic.critique(p, view)

    threads = [threading.Thread(target=one, args=(p,)) for p in personas]
    [t.start() for t in threads]
    [t.join() for t in threads]
    return results


def test_every_request_carries_the_transcript_of_exactly_its_shots(tmp_path, config):
    b = board(scenes=4, per_scene=6)
    view = film(tmp_path, b)
    personas = [builtin_personas()[p] for p in ("film_critic", "teen_scroller")]
    with FakeOpenAI(longform.responder, max_images=8) as server:
        critic = critic_on(server, config, max_frames_per_call=8)
        results = panel(critic, view, personas)
    assert set(results) == {p.id for p in personas} and server.refusals == []
    ids = [s.shot_id for s in b.shots()]
    for p in personas:
        sent = by_persona(server, p)
        assert len(sent) == 3  # 8 pictures a request
        seen = []
        for body in sent:
            text = longform.user_text(body)
            watched = longform.watched(body)
            seen += watched
            for sid in ids:  # the lines of the shots it covers, with their times; no other shot's
                lines = transcript(view, sid)
                assert all((line in text) == (sid in watched) for line in lines), (sid, watched)
            assert "(off screen)" in text  # Gull is off screen in two of every three shots
            assert f"music: {MUSIC} (temp score)" in text and "sounds: waves on the rocks, wind in the rigging" in text
            assert text.count("the mix over this shot: ") == len(watched)
            for sid in watched:  # the facts measured over each shot
                i = ids.index(sid)
                over = 12.0 - i % 20  # below the music from shot 14 on
                assert (
                    f"the mix over this shot: {-20.0 - i % 5:.1f} LUFS; lines {abs(over):.1f} dB "
                    f"{'above' if over >= 0 else 'below'} the music while spoken; longest silence {0.2 * (i % 4):.1f} s; "
                    f"{'CLIPPED (samples at full scale)' if i == 7 else 'no clipping'}; 2.4 words a second"
                ) in text
            assert "The whole mix measures -14.3 LUFS integrated against a target of -14.0 (0.3 LU under)" in text
            assert "Keeper 98 Hz" in text and "Gull and Keeper are 0.6 semitones apart" in text
            assert FakeOpenAI.image_parts_of(body, "input_audio") == []  # audio input is off by default
        assert seen == ids
        cov = results[p.id].coverage
        assert (cov.hearing, cov.heard, cov.audio_seconds, cov.audio_refused) == ("text", 24, 0.0, False)
        assert "heard 24/24 shots: transcript and cue sheet" in cov.line()
    assert "hears" not in critic.mode


def test_with_audio_each_part_carries_its_own_window_of_the_mix(tmp_path, config):
    b = board(scenes=3, per_scene=6)  # 90 s
    view = film(tmp_path, b)
    spans = {s.shot_id: (a, e) for s, a, e in b.timeline()}
    index = {s.shot_id: i for i, s in enumerate(b.shots())}
    persona = builtin_personas()["film_critic"]
    with FakeOpenAI(longform.responder, max_images=8, max_audio_seconds=20) as server:
        critic = critic_on(server, config, max_frames_per_call=8, critic_audio=True, max_audio_seconds=20)
        assert "hears the sound" in critic.mode
        res = critic.critique(persona, view)
    assert server.refusals == []
    sent = server.requests
    assert len(sent) == 5  # 20 s of sound a request: 4 shots of 5 s
    for body in sent:
        watched = longform.watched(body)
        (part,) = FakeOpenAI.image_parts_of(body, "input_audio")
        assert part["input_audio"]["format"] == "wav"
        pcm, rate, channels = decode_wav(part)
        start, end = spans[watched[0]][0], spans[watched[-1]][1]
        assert (rate, channels) == (16000, 1)
        assert len(pcm) == round((end - start) * 16000)  # the part's window, to the sample
        # its first and last 0.1 s are its first and last shot's sound (each shot has its own level)
        assert abs(float(np.median(pcm[200:1600])) - level(index[watched[0]])) < 0.01
        assert abs(float(np.median(pcm[-1600:-200])) - level(index[watched[-1]])) < 0.01
        label = f"[sound of shots {watched[0]}-{watched[-1]} · {timecode(start)}-{timecode(end)} · {end - start:.1f} s]"
        assert label in longform.user_text(body)
        assert "The sound of this part follows as audio" in longform.user_text(body)
    cov = res.coverage
    assert (cov.hearing, cov.heard, cov.audio_seconds, cov.audio_refused) == ("audio", 18, 90.0, False)
    assert "heard 18/18 shots: audio, 90 s + transcript and cue sheet" in cov.line()
    assert [n.shot_id for n in res.value.shot_notes] == [s.shot_id for s in b.shots()]


def test_a_film_without_a_mix_file_is_heard_as_text_even_with_audio_on(tmp_path, config):
    b = board(scenes=1, per_scene=4)
    with FakeOpenAI(longform.responder) as server:
        res = critic_on(server, config, critic_audio=True).critique(
            builtin_personas()["film_critic"], film(tmp_path, b, audio=False)
        )
    assert all(not FakeOpenAI.image_parts_of(body, "input_audio") for body in server.requests)
    assert (res.coverage.hearing, res.coverage.audio_seconds) == ("text", 0.0)


def test_a_silent_film_is_said_to_be_silent(tmp_path, config):
    b = board(scenes=1, per_scene=2)
    view = film(tmp_path, b)
    silent = FilmView(b, view.frames, renderer_label="animatic (previz)")
    with FakeOpenAI(longform.responder) as server:
        res = critic_on(server, config, critic_audio=True).critique(builtin_personas()["film_critic"], silent)
    text = longform.user_text(server.requests[0])
    assert "you hear nothing of this film" in text and 'line: Keeper, quietly: "Keeper says line 1' in text
    assert res.coverage.hearing == "none" and "heard nothing: the film has no sound" in res.coverage.line()


@pytest.mark.parametrize("server_kind", sorted(AUDIO_REFUSALS))
def test_a_server_refusing_audio_gets_one_fallback_remembered(tmp_path, config, server_kind):
    b = board(scenes=2, per_scene=6)  # 60 s: 3 parts of 20 s
    view = film(tmp_path, b)
    state = tmp_path / "llm-endpoints.json"
    first, second, third = (builtin_personas()[p] for p in ("film_critic", "teen_scroller", "genre_fan"))
    over = {"critic_audio": True, "max_audio_seconds": 20, "max_frames_per_call": 8, "state_path": state}
    with FakeOpenAI(longform.responder, audio_refused=server_kind, max_images=8) as server:
        critic = critic_on(server, config, **over)
        res = critic.critique(first, view)
        sent = by_persona(server, first)
        with_audio = [body for body in sent if FakeOpenAI.image_parts_of(body, "input_audio")]
        assert len(with_audio) == 1 and len(server.refusals) == 1  # refused once, never sent again
        assert longform.watched(sent[0]) == longform.watched(sent[1])  # the same part, asked again as words
        assert len(sent) == 4 and all(FakeOpenAI.image_parts_of(body) for body in sent)  # still sees the frames
        cov = res.coverage
        assert (cov.hearing, cov.audio_refused, cov.audio_seconds) == ("text", True, 0.0)
        assert "heard 12/12 shots: transcript and cue sheet (the model refused audio)" in cov.line()
        assert "refuses audio" in critic.mode
        # the next critic (and the next part) does not try audio again: the endpoint memory says so
        critic.critique(second, view)
        assert not any(FakeOpenAI.image_parts_of(body, "input_audio") for body in by_persona(server, second))
        # nor does a new process on the same endpoint (the memory is kept in the data folder)
        later = critic_on(server, config, **over)
        assert later.audio_refused and later.critique(third, view).coverage.audio_refused
        assert not any(FakeOpenAI.image_parts_of(body, "input_audio") for body in by_persona(server, third))
        assert len(server.refusals) == 1


def test_any_http_400_naming_audio_is_a_refusal_of_audio(tmp_path, config):
    """A server whose words are not known yet: an HTTP 400 that names audio, for a request that carried some."""
    from tests.agents.openai_server import error

    def model(body):
        if FakeOpenAI.image_parts_of(body, "input_audio"):
            return error(400, "Audio content is not allowed for this deployment")
        return longform.responder(body)

    b = board(scenes=1, per_scene=4)
    with FakeOpenAI(model) as server:
        critic = critic_on(server, config, critic_audio=True, max_audio_seconds=20)
        res = critic.critique(builtin_personas()["film_critic"], film(tmp_path, b))
    assert [bool(FakeOpenAI.image_parts_of(body, "input_audio")) for body in server.requests] == [True, False]
    assert res.coverage.audio_refused and critic.audio_refused


def test_a_server_that_takes_no_content_parts_is_refused_once_for_images_and_sound(tmp_path, config):
    """llama-cpp-python without a vision handler refuses any list content: one refusal teaches both."""
    b = board(scenes=1, per_scene=4)
    with FakeOpenAI(longform.responder, images_refused="llama-cpp-python") as server:
        critic = critic_on(server, config, critic_audio=True, max_audio_seconds=20)
        res = critic.critique(builtin_personas()["film_critic"], film(tmp_path, b))
    assert len(server.refusals) == 1
    assert all(isinstance(m["content"], str) for body in server.requests[1:] for m in body["messages"])
    assert (res.coverage.input, res.coverage.hearing, res.coverage.audio_refused) == ("text", "text", True)
    assert critic.text_only and critic.audio_refused


def test_other_failures_are_not_taken_for_a_refusal_of_audio(tmp_path, config):
    from agents.base import AgentError
    from tests.agents.openai_server import error

    b = board(scenes=1, per_scene=2)
    with FakeOpenAI(lambda body: error(400, "the model is busy thinking")) as server:
        critic = critic_on(server, config, critic_audio=True)
        with pytest.raises(AgentError, match="the model is busy thinking"):
            critic.critique(builtin_personas()["film_critic"], film(tmp_path, b))
    assert not critic.audio_refused and len(server.requests) == 1


@pytest.mark.parametrize("audio,context", [(False, 6000), (True, 16000)])
def test_ten_minutes_with_lines_in_every_shot_stays_within_the_limits(tmp_path, config, audio, context):
    """120 shots of 5 s, two lines in each: parts are sized with what is heard counted (the text, and the sound's
    tokens, seconds and bytes), so the server never has to refuse a request and no answer budget is squeezed. (Without
    the heard text counted, parts at 6,000 tokens hold 12 shots and leave the answer 1,966 tokens; without the
    sound's seconds, parts hold more than 30 s and lose the rest of their sound.)"""
    b = board(scenes=20, per_scene=6)
    view = film(tmp_path, b, audio=audio)
    limits = {"context_tokens": context, "max_images": 16, "max_output_tokens": 2000}
    if audio:
        limits |= {"max_audio_seconds": 30, "max_audio_bytes": 30 * 32000 + 44}
    personas = [builtin_personas()[p] for p in ("film_critic", "teen_scroller")]
    with FakeOpenAI(longform.responder, **limits) as server:
        critic = critic_on(
            server,
            config,
            context_tokens=context,
            critic_max_tokens=2000,
            max_images_per_request=16,
            max_frames_per_call=16,
            critic_audio=audio,
            max_audio_seconds=30,
        )
        results = panel(critic, view, personas)
    assert server.refusals == []  # nothing had to be retried smaller
    for body in server.requests:
        asked = body.get("max_tokens") or body.get("max_completion_tokens")
        assert FakeOpenAI.prompt_tokens(body) + asked <= context
        assert asked == 2000  # the whole answer budget: no part so large that the answer had to be squeezed
    for p in personas:
        sent = by_persona(server, p)
        assert [sid for body in sent for sid in longform.watched(body)] == [s.shot_id for s in b.shots()]
        cov = results[p.id].coverage
        assert cov.heard == 120 and cov.seen == 120
        assert cov.hearing == ("audio" if audio else "text")
        if audio:
            assert cov.audio_seconds == pytest.approx(600.0) and len(sent) == 20  # 30 s a request
            assert all(len(FakeOpenAI.image_parts_of(body, "input_audio")) == 1 for body in sent)


def test_older_coverage_rows_load_and_say_nothing_of_hearing():
    old = Coverage.model_validate({"input": "frames", "shots": 3, "seen": 3, "frames_per_shot": 2})
    assert (old.hearing, old.heard, old.audio_seconds, old.audio_refused) == ("", 0, 0.0, False)
    assert "heard" not in old.line()


def test_a_scoped_screening_hears_only_its_shots(tmp_path, config):
    b = board(scenes=3, per_scene=4)
    whole = film(tmp_path, b)
    scene = Storyboard(**{**b.model_dump(), "scenes": [b.scenes[1].model_dump()]})
    view = FilmView(
        scene,
        [f for f in whole.frames if f.shot_id in {s.shot_id for s in scene.shots()}],
        story=b,
        frames_per_shot=1,
        hearing=whole.hearing,  # the whole film's hearing: the critic takes its watched shots' part
    )
    with FakeOpenAI(longform.responder) as server:
        res = critic_on(server, config, critic_audio=True, max_audio_seconds=20).critique(
            builtin_personas()["film_critic"], view
        )
    (body,) = server.requests
    text = longform.user_text(body)
    for shot in b.shots():
        assert (transcript(whole, shot.shot_id)[0] in text) == (shot in scene.shots())
    pcm, rate, _ = decode_wav(FakeOpenAI.image_parts_of(body, "input_audio")[0])
    assert len(pcm) == 20 * rate and abs(float(np.median(pcm[200:1600])) - level(4)) < 0.01  # sh005 starts at 20 s
    assert (res.coverage.heard, res.coverage.shots, res.coverage.audio_seconds) == (4, 4, 20.0)


def test_the_sound_rubric_is_given_when_scores_have_sound():
    from prompts import render

    persona = builtin_personas()["film_critic"]
    common = {"persona": persona, "tastes": "", "weights": ""}
    with_sound = render("critic_system.j2", dimensions=[("pacing", "rhythm"), ("sound", "what you hear")], **common)
    without = render("critic_system.j2", dimensions=[("pacing", "rhythm")], **common)
    assert "For sound, judge what you hear" in with_sound and "- sound: what you hear" in with_sound
    assert "For sound" not in without


def test_the_cli_and_the_web_say_what_was_heard_and_how():
    """Both show Coverage.line(): the CLI's critique lines and the web's critic cards (escaped)."""
    from types import SimpleNamespace

    from app.ui.scenes import coverage_html
    from storage.schema import Scope

    heard = Coverage(input="frames", shots=3, seen=3, frames_per_shot=2, hearing="audio", heard=3, audio_seconds=15.0)
    assert "heard 3/3 shots: audio, 15 s + transcript and cue sheet" in coverage_html(
        SimpleNamespace(coverage=heard, scope=Scope())
    )
    refused = heard.model_copy(update={"hearing": "text", "audio_seconds": 0.0, "audio_refused": True})
    assert "heard 3/3 shots: transcript and cue sheet (the model refused audio)" in refused.line()
