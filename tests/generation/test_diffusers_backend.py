"""The diffusers backend, end to end on tiny random-weight pipelines loaded from a saved folder."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import numpy as np
import pytest
import torch
from PIL import Image

from generation import diffusers_backend
from generation.base import Backend, Cancelled, CancelToken, RenderError, ShotRequest, clip_key
from generation.diffusers_backend import DiffusersBackend
from generation.families import FAMILIES
from generation.video_io import probe, read_frames

pytestmark = pytest.mark.slow

# Tiny renders: 32x32, 1 s at 8 fps -> 9 frames under a 4k+1 or 8k+1 rule, 2 steps.
SHOT = ShotRequest("s1", "a red cat dances in the rain", duration=1.0, width=32, height=32, fps=8, steps=2)


@pytest.fixture(scope="session")
def rendered(folders, tmp_path_factory):
    """One render of SHOT per family: (backend, ClipInfo), shared by the assertions below."""
    root = tmp_path_factory.mktemp("clips")
    done = {}

    def get(family):
        if family not in done:
            backend = DiffusersBackend(folders(family))
            done[family] = backend, backend.render(SHOT, root / f"{family}.mp4")
        return done[family]

    return get


def frames(path):
    return np.stack(read_frames(path)[0]).astype(np.int16)


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and message
    return message


@pytest.mark.parametrize(
    "family, cls", [("wan", "WanPipeline"), ("cogvideox", "CogVideoXPipeline"), ("ltx", "LTXPipeline")]
)
def test_renders_the_frame_count_the_family_rule_gives_at_the_asked_size(rendered, family, cls):
    backend, clip = rendered(family)
    a, b = FAMILIES[cls].frame_rule
    assert backend.resolve(SHOT).num_frames == 9 and (9 - b) % a == 0
    assert (clip.num_frames, clip.width, clip.height, clip.fps) == (9, 32, 32, 8)
    assert len(read_frames(clip.path)[0]) == 9
    assert {k: probe(clip.path)[k] for k in ("width", "height")} == {"width": 32, "height": 32}


def test_resolve_fills_family_defaults_and_snaps_frames_to_the_rule(folders):
    ltx = DiffusersBackend(folders("ltx"))
    full = ltx.resolve(ShotRequest("s", "sky", duration=2.0))
    fam = FAMILIES["LTXPipeline"]
    assert (full.width, full.height, full.fps, full.steps, full.guidance) == (704, 480, 25, 50, 3.0)
    assert full.num_frames == 49  # 2 s at 25 fps = 50 -> nearest 8k+1
    assert ltx.resolve(full) == full  # resolving twice changes nothing
    assert ltx.resolve(ShotRequest("s", "sky", duration=60.0)).num_frames == fam.max_frames
    for duration in (0.3, 1.0, 2.7, 4.0):
        n = ltx.resolve(ShotRequest("s", "sky", duration=duration, fps=24)).num_frames
        assert (n - 1) % 8 == 0 and n <= fam.max_frames
    tuned = DiffusersBackend(folders("ltx"), steps=7, guidance=1.0)
    assert (tuned.resolve(SHOT).steps, tuned.resolve(SHOT.with_(steps=None)).steps) == (2, 7)
    assert tuned.resolve(SHOT).guidance == 1.0 and tuned.resolve(SHOT.with_(guidance=4.5)).guidance == 4.5


def test_same_seed_same_frames_and_another_seed_other_frames(rendered, tmp_path):
    backend, clip = rendered("wan")
    again = backend.render(SHOT, tmp_path / "again.mp4")
    other = backend.render(SHOT.with_(seed=1), tmp_path / "other.mp4")
    assert np.array_equal(frames(clip.path), frames(again.path))
    assert np.abs(frames(clip.path) - frames(other.path)).mean() > 0.5


def test_the_camera_move_reaches_the_model_in_words(rendered, tmp_path, monkeypatch):
    """A shot's camera move changes the clip (its key always held the move; now the model is told it too)."""
    backend, clip = rendered("wan")
    sent = []
    real = diffusers_backend.call_kwargs
    monkeypatch.setattr(diffusers_backend, "call_kwargs", lambda prompt, *a: sent.append(prompt) or real(prompt, *a))
    pan = backend.render(SHOT.with_(camera="pan_left"), tmp_path / "pan.mp4")
    assert sent == [f"{SHOT.prompt} Camera: the camera pans slowly to the left."]
    assert np.abs(frames(clip.path) - frames(pan.path)).mean() > 0.5


def test_a_pipeline_loads_once_per_process_and_stays_warm(rendered, folders, tmp_path, monkeypatch):
    rendered("cogvideox")
    from diffusers import DiffusionPipeline

    def no_reload(*args, **kwargs):
        raise AssertionError("the warm pipeline was loaded again")

    monkeypatch.setattr(DiffusionPipeline, "from_pretrained", no_reload)
    fresh = DiffusersBackend(folders("cogvideox"))  # a new backend object, same model and options
    assert fresh.render(SHOT, tmp_path / "warm.mp4").num_frames == 9


def test_progress_is_reported_once_per_step(rendered, tmp_path):
    backend, _ = rendered("ltx")
    calls = []
    backend.render(SHOT.with_(steps=3), tmp_path / "p.mp4", progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_cancel_stops_the_render_and_the_pipeline_stays_usable(rendered, tmp_path):
    backend, _ = rendered("wan")
    token, calls = CancelToken(), []

    def progress(done, total):
        calls.append(done)
        token.cancel()  # the Stop button, pressed during the first step

    with pytest.raises(Cancelled):
        backend.render(SHOT.with_(steps=4), tmp_path / "stopped.mp4", progress=progress, cancel=token)
    assert calls == [1] and not (tmp_path / "stopped.mp4").exists()
    with pytest.raises(Cancelled):  # cancelled before it starts: no work at all
        backend.render(SHOT, tmp_path / "stopped.mp4", cancel=token)
    assert backend.render(SHOT, tmp_path / "after.mp4", cancel=CancelToken()).num_frames == 9


def test_ltx_continuity_renders_from_an_init_image_and_depends_on_it(rendered, tmp_path):
    backend, t2v = rendered("ltx")
    assert backend.supports_continuity and backend.describe()["i2v"] == "LTXImageToVideoPipeline"
    clips = {}
    for name, value in (("black", 0), ("white", 255)):
        image = tmp_path / f"{name}.png"
        Image.fromarray(np.full((32, 32, 3), value, np.uint8)).save(image)
        request = backend.resolve(SHOT.with_(init_image=str(image)))
        assert request.init_image_sha256 and request.num_frames == 9
        clips[name] = backend.render(request, tmp_path / f"{name}.mp4")
        assert clips[name].num_frames == 9
    black, white = frames(clips["black"].path), frames(clips["white"].path)
    assert np.abs(black - white).mean() > 1.0
    assert np.abs(black - frames(t2v.path)).mean() > 1.0
    # The conditioning frame enters the clip key by its hash.
    keys = {clip_key(backend, backend.resolve(SHOT.with_(init_image=str(tmp_path / f"{n}.png")))) for n in clips}
    assert len(keys) == 2 and clip_key(backend, backend.resolve(SHOT)) not in keys


def test_cogvideox_continuity_goes_through_the_separate_i2v_model(rendered, folders, tmp_path):
    _, t2v = rendered("cogvideox")
    backend = DiffusersBackend(folders("cogvideox"), i2v_model=folders("cogvideox_i2v"))
    assert backend.supports_continuity and backend.describe()["i2v"] == "CogVideoXImageToVideoPipeline"
    clips = []
    for value in (0, 255):
        image = tmp_path / f"{value}.png"
        Image.fromarray(np.full((32, 32, 3), value, np.uint8)).save(image)
        clips.append(backend.render(SHOT.with_(init_image=str(image)), tmp_path / f"{value}.mp4"))
    assert [c.num_frames for c in clips] == [9, 9]
    assert np.abs(frames(clips[0].path) - frames(clips[1].path)).mean() > 1.0
    assert backend.render(SHOT, tmp_path / "t2v.mp4").num_frames == 9  # text-to-video still uses the T2V model


def test_without_an_i2v_pipeline_an_init_image_is_a_clear_error(folders, tmp_path):
    wan = DiffusersBackend(folders("wan"))
    assert not wan.supports_continuity
    image = tmp_path / "f.png"
    Image.fromarray(np.zeros((32, 32, 3), np.uint8)).save(image)
    with pytest.raises(RenderError) as err:
        wan.resolve(SHOT.with_(init_image=str(image)))
    assert "no image-to-video pipeline (set i2v_model)" in one_line(err)
    wrong = DiffusersBackend(folders("wan"), i2v_model=folders("ltx"))
    assert wrong.supports_continuity
    with pytest.raises(RenderError) as err:
        wrong.resolve(SHOT.with_(init_image=str(image)))
    assert "is LTXPipeline; Wan continuity needs WanImageToVideoPipeline" in one_line(err)


def test_errors_are_one_liners_naming_the_problem(folders, tmp_path):
    missing = DiffusersBackend(str(tmp_path / "no-such-model"))
    with pytest.raises(RenderError) as err:
        missing.resolve(SHOT)
    assert "not found" in one_line(err) and "no-such-model" in one_line(err)
    assert "model not found" in missing.label and not missing.supports_continuity
    with pytest.raises(RenderError) as err:
        DiffusersBackend("nobody/not-a-cached-model").resolve(SHOT)
    assert "not in the Hugging Face cache" in one_line(err)

    (tmp_path / "empty").mkdir()
    with pytest.raises(RenderError) as err:
        DiffusersBackend(str(tmp_path / "empty")).resolve(SHOT)
    assert "no model_index.json" in one_line(err)

    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("image")).resolve(SHOT)
    assert "is an image pipeline (DDPMPipeline), not text-to-video" in one_line(err)

    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("ltx")).resolve(SHOT.with_(width=500, height=300))
    assert one_line(err) == "LTX needs width and height divisible by 32; got 500x300"

    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("wan")).resolve(SHOT.with_(num_frames=10))
    assert one_line(err) == "Wan needs num_frames = 4k+1 up to 81; got 10"


def test_backend_failures_become_render_errors_and_a_retry_works(rendered, tmp_path):
    backend, _ = rendered("cogvideox")

    def oom(done, total):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB\nmore detail")

    with pytest.raises(RenderError) as err:
        backend.render(SHOT, tmp_path / "x.mp4", progress=oom)
    assert one_line(err) == (
        "shot s1: out of memory at 32x32, 9 frames on cpu; try CHIEF_VIDEO_PROFILE='fits 24 GB' (now: custom)"
    )

    def boom(done, total):
        raise ValueError("bad latent shape\nTraceback noise")

    with pytest.raises(RenderError) as err:
        backend.render(SHOT, tmp_path / "x.mp4", progress=boom)
    assert one_line(err) == "shot s1: CogVideoX render failed: ValueError: bad latent shape"
    assert backend.render(SHOT, tmp_path / "retry.mp4").num_frames == 9


def test_label_and_describe_show_pipeline_device_and_dtype(folders):
    backend = DiffusersBackend(folders("wan"))
    assert isinstance(backend, Backend) and backend.name == "diffusers" and backend.model == folders("wan")
    assert backend.label == (
        f"diffusers · WanPipeline · {folders('wan')} · cpu fp32 · profile custom · no quantization · no offload"
        " · attention native · not compiled · cache on drafts"
    )
    assert backend.describe() == {
        "backend": "diffusers",
        "model": folders("wan"),
        "variant": None,
        "pipeline": "WanPipeline",
        "family": "Wan",
        "device": "cpu",
        "dtype": "fp32",
        "cpu_offload": False,
        "profile": "custom",
        "quant": "none",
        "offload": "none",
        "i2v": None,
        "vace": None,
        "tiers": {
            "draft": "draft: 4 steps, guidance 1, speed LoRA ×1, VAE tiling",
            "final": "final: 50 steps, guidance 5",
        },
        "draft_keeps": "the same seed, keyframe and take at the same size: a close composition, not the same pixels",
        "attention": "native",
        "compile": False,
        "cache": "draft",
    }


def test_a_weights_variant_is_in_the_label_the_warm_key_and_the_clip_key(folders):
    """`CHIEF_VIDEO_VARIANT` (what `chief models pull --variant` fetched; its load: tests/generation/test_hub_pull.py)."""
    plain, fp16 = DiffusersBackend(folders("wan")), DiffusersBackend(folders("wan"), variant="fp16")
    assert f"{folders('wan')} · fp16 weights · cpu" in fp16.label and "weights" not in plain.label
    assert fp16.describe()["variant"] == "fp16" and fp16.options != plain.options  # a warm pipeline of its own
    req = plain.resolve(SHOT)
    assert clip_key(fp16, req) != clip_key(plain, req)  # other weights, other numbers: cached apart
    assert clip_key(DiffusersBackend(folders("wan"), variant=""), req) == clip_key(plain, req)  # unset: keys as before


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_asking_for_cuda_without_cuda_is_an_error_not_a_silent_cpu_run(folders):
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("wan"), device="cuda")
    assert "CUDA is not available" in one_line(err)
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("wan"), dtype="int3")
    assert "unknown dtype" in one_line(err)
    assert " · cpu bf16 · " in DiffusersBackend(folders("wan"), dtype="bf16").label


def test_no_pipeline_is_loaded_at_import_or_construction(folders):
    before = dict(diffusers_backend._PIPELINES)
    DiffusersBackend(folders("ltx"), vae_tiling=True).resolve(SHOT)
    assert diffusers_backend._PIPELINES == before
