"""Motion from an approved keyframe (the family's image-to-video pipeline) and Wan VACE with reference images, on
tiny random-weight pipelines loaded through the backend's own loading code; and the clip key's images."""

import hashlib
import json
import os
from dataclasses import asdict

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
from PIL import Image

from generation.base import RenderError, ShotRequest, clip_key
from generation.diffusers_backend import DiffusersBackend
from generation.video_io import read_frames

pytestmark = pytest.mark.slow

SHOT = ShotRequest("s1", "a red cat dances in the rain", duration=1.0, width=32, height=32, fps=8, steps=2)


@pytest.fixture
def stills(tmp_path):
    out = {}
    for name, value in (("black", 0), ("white", 255), ("grey", 128)):
        Image.fromarray(np.full((32, 32, 3), value, np.uint8)).save(tmp_path / f"{name}.png")
        out[name] = str(tmp_path / f"{name}.png")
    return out


def frames(path) -> np.ndarray:
    return np.stack(read_frames(path)[0]).astype(np.int16)


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and message
    return message


def test_a_keyframe_is_animated_by_the_image_to_video_pipeline_and_keys_the_clip(folders, stills, tmp_path):
    ltx = DiffusersBackend(folders("ltx"))
    clips = {}
    for name in ("black", "white"):
        request = ltx.resolve(SHOT.with_(keyframe=stills[name]))
        assert request.keyframe_sha256 and not request.route  # the family's own I2V pipeline
        clips[name] = ltx.render(request, tmp_path / f"{name}.mp4")
    text = ltx.render(SHOT, tmp_path / "text.mp4")
    assert np.abs(frames(clips["black"].path) - frames(clips["white"].path)).mean() > 1.0
    assert np.abs(frames(clips["black"].path) - frames(text.path)).mean() > 1.0
    keys = {clip_key(ltx, ltx.resolve(SHOT.with_(keyframe=stills[n]))) for n in ("black", "white")}
    assert len(keys) == 2 and clip_key(ltx, ltx.resolve(SHOT)) not in keys
    # The keyframe enters by its hash: the same image under another path keys the same clip.
    copy = tmp_path / "copy.png"
    copy.write_bytes(open(stills["white"], "rb").read())
    assert clip_key(ltx, ltx.resolve(SHOT.with_(keyframe=str(copy)))) in keys


LATER = ("tier", "scale", "loras", "lora_files", "cache", "attention")


def test_a_request_without_images_keeps_the_key_it_had_before_keyframes(folders):
    """Clips cached before keyframes existed stay valid: unset new fields are not part of the key."""
    wan = DiffusersBackend(folders("wan"))
    request = wan.resolve(SHOT)
    old = {
        k: v
        for k, v in asdict(request).items()
        if k not in ("shot_id", "init_image", "keyframe", "keyframe_sha256", "references", "references_sha256", "route")
        and k not in LATER  # the tiers' fields came later still: a final at the row's settings leaves them unset
    }
    blob = json.dumps(
        {"backend": "diffusers", "model": wan.model, "request": old, "v": 1}, sort_keys=True, separators=(",", ":")
    ).encode()
    assert clip_key(wan, request) == hashlib.sha256(blob).hexdigest()


def test_wan_vace_renders_with_reference_images(folders, stills, tmp_path, monkeypatch):
    from diffusers import WanVACEPipeline

    seen = []
    real = WanVACEPipeline.prepare_video_latents

    def spy(self, video, mask, reference_images=None, *args, **kwargs):
        seen.append([r.float().mean().item() for batch in reference_images or [] for r in batch if r is not None])
        return real(self, video, mask, reference_images, *args, **kwargs)

    monkeypatch.setattr(WanVACEPipeline, "prepare_video_latents", spy)

    backend = DiffusersBackend(folders("wan"), vace_model=folders("wan_vace"))
    assert backend.supports_references and backend.describe()["vace"] == "WanVACEPipeline"
    one = backend.resolve(SHOT.with_(references=(stills["white"],)))
    assert one.route == f"WanVACEPipeline:{folders('wan_vace')}" and len(one.references_sha256) == 1
    plain = backend.render(SHOT, tmp_path / "plain.mp4")  # no references: the text-to-video model
    with_one = backend.render(one, tmp_path / "one.mp4")
    with_two = backend.render(SHOT.with_(references=(stills["white"], stills["black"])), tmp_path / "two.mp4")
    assert with_one.num_frames == with_two.num_frames == plain.num_frames == 9
    assert seen == [[pytest.approx(1.0)], [pytest.approx(1.0), pytest.approx(-1.0)]]  # the pixels reach the model
    assert np.abs(frames(with_one.path) - frames(plain.path)).mean() > 0.5
    assert np.abs(frames(with_one.path) - frames(with_two.path)).mean() > 0.5
    keys = {clip_key(backend, backend.resolve(SHOT.with_(references=(stills[n],)))) for n in ("white", "black")}
    assert len(keys) == 2 and clip_key(backend, backend.resolve(SHOT)) not in keys


def test_wan_without_i2v_starts_from_a_keyframe_through_vace(folders, stills, tmp_path, monkeypatch):
    from diffusers import WanVACEPipeline

    first_frames = []
    real = WanVACEPipeline.preprocess_conditions

    def spy(self, video=None, mask=None, *args, **kwargs):
        first_frames.append(np.asarray(video[0]).mean())
        return real(self, video, mask, *args, **kwargs)

    monkeypatch.setattr(WanVACEPipeline, "preprocess_conditions", spy)

    backend = DiffusersBackend(folders("wan"), vace_model=folders("wan_vace"))
    assert backend.supports_continuity
    request = backend.resolve(SHOT.with_(keyframe=stills["white"]))
    assert request.route.startswith("WanVACEPipeline:")
    clip = backend.render(request, tmp_path / "k.mp4")
    assert clip.num_frames == 9 and first_frames == [255.0]


def test_reference_images_without_vace_and_a_wrong_vace_model_are_one_line(folders, stills):
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("wan")).resolve(SHOT.with_(references=(stills["white"],)))
    assert one_line(err) == (
        f"Wan model {folders('wan')} cannot use reference images: set CHIEF_VACE_MODEL to a WanVACEPipeline model"
    )
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("ltx")).resolve(SHOT.with_(references=(stills["white"],)))
    assert one_line(err).endswith("cannot use reference images: the family has no VACE pipeline")
    wrong = DiffusersBackend(folders("wan"), vace_model=folders("ltx"))
    with pytest.raises(RenderError) as err:
        wrong.resolve(SHOT.with_(references=(stills["white"],)))
    assert one_line(err) == f"VACE model {folders('ltx')} is LTXPipeline; Wan needs WanVACEPipeline"
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("wan_vace")).resolve(SHOT)
    assert "is a VACE pipeline (WanVACEPipeline); pass it as the VACE model" in one_line(err)
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("ltx")).resolve(SHOT.with_(keyframe=stills["grey"] + ".missing"))
    assert one_line(err).startswith("shot s1: keyframe ") and one_line(err).endswith("does not exist")
