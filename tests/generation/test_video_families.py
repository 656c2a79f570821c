"""Wan 2.2 (two experts; TI2V 5B) and SkyReels-V2 diffusion forcing, on tiny random-weight pipelines saved to a folder
and loaded through the product's path; memory profiles (int8 on the CPU for real, what needs CUDA refused)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
import torch

from generation.base import RenderError, ShotRequest, clip_key
from generation.diffusers_backend import DiffusersBackend, window_count, windows
from generation.families import FAMILIES
from generation.memory import Memory, next_profile, profile_memory
from generation.pipelines import _PIPELINES
from generation.video_io import read_frames

pytestmark = pytest.mark.slow

SHOT = ShotRequest("s1", "a red cat dances in the rain", duration=1.0, width=32, height=32, fps=8, steps=2)


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and message
    return message


def warm_pipe(backend):
    return next(
        e.pipe for (model, options), e in _PIPELINES.items() if model == backend.model and options == backend.options
    )


def test_wan22_two_experts_both_denoise_and_the_row_follows_the_model_card(folders, tmp_path):
    backend = DiffusersBackend(folders("wan22"))
    fam = backend.family
    assert (fam.name, fam.steps, fam.guidance, dict(fam.extra_kwargs)) == (
        "Wan 2.2",
        40,
        4.0,
        {"guidance_scale_2": 3.0},
    )
    assert backend.resolve(ShotRequest("s", "sky", duration=5.0)).num_frames == 81  # 16 fps, 4k+1, up to 81
    clip = backend.render(SHOT.with_(steps=4), tmp_path / "w.mp4")
    assert (clip.num_frames, clip.width, clip.height) == (9, 32, 32)
    pipe = warm_pipe(backend)
    assert pipe.config.boundary_ratio == 0.875 and pipe.transformer_2 is not None
    assert (pipe.guidance_scale, pipe._guidance_scale_2) == (4.0, 3.0)  # the row's guidance for each expert
    calls = {"transformer": 0, "transformer_2": 0}
    for name in calls:
        getattr(pipe, name).register_forward_hook(lambda *a, n=name: calls.__setitem__(n, calls[n] + 1))
    backend.render(SHOT.with_(steps=4), tmp_path / "again.mp4")
    assert calls["transformer"] > 0 and calls["transformer_2"] > 0  # high-noise steps, then low-noise steps


def test_wan22_ti2v_5b_is_its_own_row_with_sizes_in_32s(folders, tmp_path):
    backend = DiffusersBackend(folders("wan22_5b"))
    fam = backend.family
    assert (fam.name, fam.fps, fam.width, fam.height, fam.max_frames) == ("Wan 2.2 TI2V 5B", 24, 1280, 704, 121)
    with pytest.raises(RenderError) as err:
        backend.resolve(SHOT.with_(width=48))
    assert one_line(err) == "Wan 2.2 TI2V 5B needs width and height divisible by 32; got 48x32"
    clip = backend.render(SHOT, tmp_path / "five.mp4")
    assert (clip.num_frames, clip.width, clip.height) == (9, 32, 32)
    assert DiffusersBackend(folders("wan")).family is FAMILIES["WanPipeline"]  # Wan 2.1 keeps its row


def test_skyreels_short_shot_is_one_window(folders, tmp_path):
    backend = DiffusersBackend(folders("skyreels_df"))
    fam = backend.family
    assert (fam.name, fam.window_frames, fam.max_frames) == ("SkyReels-V2", 97, 721)
    assert windows(fam, 9) == {"base_num_frames": 9}
    assert backend.render(SHOT, tmp_path / "short.mp4").num_frames == 9


def test_a_skyreels_shot_longer_than_its_window_renders_in_overlapping_windows(folders, tmp_path):
    """13 s at 8 fps = 105 frames > the model's 97: extended by diffusion forcing, not refused."""
    backend = DiffusersBackend(folders("skyreels_df"))
    fam = backend.family
    request = backend.resolve(SHOT.with_(duration=13.0))
    assert request.num_frames == 105 > fam.window_frames
    assert windows(fam, 105) == {"base_num_frames": 97, "overlap_history": 17, "addnoise_condition": 20.0}
    assert window_count(fam, 105) == 2
    steps = []
    clip = backend.render(request, tmp_path / "long.mp4", progress=lambda done, total: steps.append(done))
    assert len(steps) == 2 * request.steps  # every step of each of the two windows
    assert clip.num_frames == 105 and len(read_frames(clip.path)[0]) == 105
    with pytest.raises(RenderError) as err:  # the shot's own cap still holds
        backend.resolve(SHOT.with_(num_frames=725))
    assert one_line(err) == "SkyReels-V2 needs num_frames = 4k+1 up to 721; got 725"


def test_ltx2_renders_the_picture_and_keeps_the_sound_it_made(folders, tmp_path):
    """LTX-2's video is rendered here; its sound is kept with the clip (a WAV and the clip's audio stream) for the
    sound pipeline to place."""
    import wave

    from generation.video_io import inspect

    backend = DiffusersBackend(folders("ltx2"))
    fam = backend.family
    assert (fam.name, fam.frame_rule, fam.size_multiple, fam.fps, fam.audio) == ("LTX-2", (8, 1), 32, 24, True)
    clip = backend.render(SHOT, tmp_path / "talk.mp4")
    assert (clip.num_frames, clip.width, clip.height) == (9, 32, 32)
    assert len(read_frames(clip.path)[0]) == 9
    facts = inspect(clip.path)
    assert facts["has_audio"] and facts["frames"] == 9
    with wave.open(str(clip.audio)) as w:
        assert (w.getframerate(), w.getnchannels()) == (16000, 2) and w.getnframes() > 0
    assert DiffusersBackend(folders("wan")).render(SHOT, tmp_path / "silent.mp4").audio is None


def test_hunyuan15_renders_through_the_product(folders, tmp_path):
    backend = DiffusersBackend(folders("hunyuan15"))
    fam = backend.family
    assert (fam.name, fam.fps, fam.max_frames, fam.size_multiple) == ("HunyuanVideo 1.5", 24, 121, 16)
    assert backend.resolve(ShotRequest("s", "sky", duration=5.0)).num_frames == 121
    clip = backend.render(SHOT, tmp_path / "hv.mp4")
    assert (clip.num_frames, clip.width, clip.height) == (9, 32, 32) and len(read_frames(clip.path)[0]) == 9
    # Its guidance reaches the guider (the pipeline's own guidance argument): 1.0 turns classifier-free guidance off.
    assert warm_pipe(backend).guider.guidance_scale == 6.0
    plain = backend.render(SHOT.with_(guidance=1.0), tmp_path / "plain.mp4")
    assert warm_pipe(backend).guider.guidance_scale == 1.0
    frames = [np.stack(read_frames(c.path)[0]).astype(np.int16) for c in (clip, plain)]
    assert np.abs(frames[0] - frames[1]).mean() > 0.5


def test_int8_runs_on_the_cpu_for_real_and_is_shown_and_keyed(folders, tmp_path):
    plain = DiffusersBackend(folders("wan"))
    int8 = DiffusersBackend(folders("wan"), memory=Memory(quant="int8"))
    assert "cpu fp32 · profile custom · int8 · no offload ·" in int8.label  # the speed settings follow
    assert int8.describe()["quant"] == "int8"
    clip = int8.render(SHOT, tmp_path / "q.mp4")
    assert clip.num_frames == 9 and len(read_frames(clip.path)[0]) == 9
    weight = warm_pipe(int8).transformer.blocks[0].ffn.net[0].proj.weight
    assert type(weight).__name__ == "Int8Tensor" and weight.qdata.dtype == torch.int8
    assert {type(p).__name__ for p in warm_pipe(int8).text_encoder.parameters()} == {"Parameter"}  # transformer only
    assert clip_key(int8, int8.resolve(SHOT)) != clip_key(plain, plain.resolve(SHOT))


@pytest.mark.parametrize(
    "memory, message",
    [
        (Memory(quant="fp8"), "fp8 weights need a CUDA GPU (compute capability 8.9+); the device is cpu"),
        (Memory(quant="nf4"), "nf4 weights (bitsandbytes) need a CUDA GPU; the device is cpu"),
        (
            Memory(offload="block"),
            "block-level group offloading moves weights between the CPU and a CUDA GPU; the device is cpu",
        ),
        (
            Memory(offload="leaf"),
            "leaf-level group offloading moves weights between the CPU and a CUDA GPU; the device is cpu",
        ),
        (
            profile_memory("fits 8 GB"),
            "profile fits 8 GB: leaf-level group offloading moves weights between the CPU and a CUDA GPU; the device is cpu",
        ),
        (profile_memory("fits-12-gb"), "cpu_offload needs a GPU device; the device is cpu"),
    ],
)
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusals on a machine without CUDA")
def test_what_needs_cuda_is_refused_on_the_cpu_in_one_line_before_loading(folders, memory, message):
    before = dict(_PIPELINES)
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("wan"), memory=memory)
    assert one_line(err) == message
    assert _PIPELINES == before


def test_profiles_go_from_most_memory_to_least():
    assert [next_profile(n) for n in ("custom", "fastest", "fits 24 GB", "fits 12 GB", "fits 8 GB")] == [
        "fits 24 GB",
        "fits 24 GB",
        "fits 12 GB",
        "fits 8 GB",
        None,
    ]
    with pytest.raises(RenderError) as err:
        profile_memory("fits 4 GB")
    assert "unknown memory profile" in one_line(err)


def test_an_int8_render_through_the_studio_makes_a_clip_and_records_int8(folders, tmp_path):
    """CHIEF_VIDEO_QUANT=int8 from the environment, through the product's config, factory and render."""
    from app.config import load_config
    from app.studio import Studio
    from storage.schema import Scene, Shot, Storyboard

    env = {
        "CHIEF_VIDEO_BACKEND": "diffusers",
        "CHIEF_VIDEO_MODEL": folders("wan"),
        "CHIEF_VIDEO_QUANT": "int8",
        "CHIEF_STEPS": "2",
        "CHIEF_NARRATION": "0",
    }
    st = Studio(load_config({"home": tmp_path / "home"}, environ=env))
    assert "profile custom · int8 · no offload · attention native" in st.status().backend_label
    shots = [Shot(shot_id="s1", prompt="a red cat", duration=1.0, seed=1)]
    board = Storyboard(title="int8", scenes=[Scene(scene_id="a", shots=shots)], fps=8, width=32, height=32)
    pid = st.create_from_storyboard(board).project_id
    render = st.render(pid)
    assert render.rendered == 1 and "· int8 ·" in render.label
    assert len(read_frames(st.film_path(render))[0]) == 9
    st.db.close()


def test_an_ltx2_shot_s_own_sound_is_on_the_films_effects_stem(folders, tmp_path):
    """Through a Studio render (the product's loader, a tiny random-weight LTX-2 on the CPU): the shots have no line,
    cue or sounds, yet the film has sound, the clips' own, each under its shot on the effects stem, and the render
    reports the loudness the film has."""
    from app.config import load_config
    from app.studio import Studio
    from generation.audio.loudness import measure
    from generation.audio.pcm import RATE, decode, rms_db
    from tests.conftest import tiny_board

    board = tiny_board(2).model_copy(update={"width": 32, "height": 32, "fps": 8})
    settings = {"narration": False, "agents": "offline", "backend": "diffusers", "model": folders("ltx2"), "steps": 2}
    settings["sound_cache"] = str(tmp_path / "sound")
    st = Studio(load_config({"home": tmp_path / "home", **settings}, environ={}))
    try:
        r = st.render(st.create_from_storyboard(board).project_id)
        assert r.audio is not None and r.audio.label == "the clips' own sound", r.audio
        effects = decode(st.ctx.media.path(r.media["effects"], "wav"), RATE)
        dialogue = decode(st.ctx.media.path(r.media["dialogue"], "wav"), RATE)
        ends = [0.0]
        for shot in r.shots:
            ends.append(ends[-1] + shot.num_frames / shot.fps)
        level = [rms_db(effects[round((a + 0.1) * RATE) : round((b - 0.1) * RATE)]) for a, b in zip(ends, ends[1:])]
        film = measure(st.film_path(r))
        print(f"effects stem under s1, s2: {level[0]:.1f}, {level[1]:.1f} dBFS; {r.audio.describe()}; film {film}")
        assert min(level) > -60 and rms_db(dialogue) < -80  # each shot's own sound all along it; nothing said
        # the random weights' sound is peaky noise: AAC took it 5 dB over the mix's peak, so the film was cut again
        # lower; what the render reports is what the film measures
        assert film.true_peak_dbtp <= -1.0 and r.audio.true_peak_dbtp == film.true_peak_dbtp
        assert r.audio.loudness_lufs == film.integrated_lufs
    finally:
        st.db.close()
