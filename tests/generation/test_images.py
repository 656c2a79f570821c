"""Still images (references, keyframes) with a tiny random-weight FLUX pipeline loaded from a saved folder, and the
animatic's drawn stills."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
from PIL import Image

from generation import pipelines
from generation.animatic import keyframe_view
from generation.animatic_frames import KEYFRAME_LABEL, AnimaticImages
from generation.base import Cancelled, CancelToken, RenderError
from generation.images import IMAGE_FAMILIES, DiffusersImages, ImageBackend, ImageRequest, image_key

pytestmark = pytest.mark.slow

STILL = ImageRequest("keyframe s1", "a red cat on the sea at night", width=32, height=48, steps=2)


@pytest.fixture
def flux(folders):
    return folders("flux")


def pixels(path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.int16)


def solid(path, value) -> str:
    Image.fromarray(np.full((24, 24, 3), value, np.uint8)).save(path)
    return str(path)


def ramp(path, flip: bool) -> str:
    """A textured image (a constant one is all the same to a VAE that normalises over the whole image)."""
    x = np.linspace(0, 255, 48, dtype=np.uint8)[:: -1 if flip else 1]
    Image.fromarray(np.stack([np.tile(x, (32, 1))] * 3, axis=-1)).save(path)
    return str(path)


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and message
    return message


def test_flux_renders_a_png_at_the_asked_size_deterministically_per_seed(flux, tmp_path):
    images = DiffusersImages(flux)
    assert isinstance(images, ImageBackend) and images.family is IMAGE_FAMILIES["FluxPipeline"]
    first = images.render(STILL, tmp_path / "a.png")
    assert (first.width, first.height) == (32, 48) and Image.open(first.path).format == "PNG"
    again = images.render(STILL, tmp_path / "b.png")
    other = images.render(STILL.with_(seed=7), tmp_path / "c.png")
    assert np.array_equal(pixels(first.path), pixels(again.path))
    assert np.abs(pixels(first.path) - pixels(other.path)).mean() > 0.5
    resolved = images.resolve(STILL.with_(width=40, height=None))
    assert (resolved.width, resolved.height, resolved.guidance) == (
        32,
        1024,
        3.5,
    )  # snapped down to 16s; FLUX's defaults


def test_references_condition_the_still_image_to_image(flux, tmp_path):
    images = DiffusersImages(flux)
    still = STILL.with_(steps=4)  # strength 0.75 of 4 steps: 3 denoising steps from the reference
    plain = images.render(still, tmp_path / "plain.png")
    refs = {
        flip: images.render(still.with_(references=(ramp(tmp_path / f"{flip}.png", flip),)), tmp_path / f"r{flip}.png")
        for flip in (False, True)
    }
    one, other = pixels(refs[False].path), pixels(refs[True].path)
    assert np.abs(one - other).mean() > 1  # what the reference shows changes the still
    assert np.abs(one - pixels(plain.path)).mean() > 1
    assert "FluxImg2ImgPipeline" in pipelines.warm(flux, images.options).derived
    resolved = images.resolve(STILL.with_(references=(str(tmp_path / "True.png"),)))
    assert resolved.strength == 0.75 and len(resolved.references_sha256) == 1
    keys = {
        image_key(images, images.resolve(STILL.with_(references=(str(tmp_path / f"{f}.png"),)))) for f in (False, True)
    }
    assert len(keys) == 2 and image_key(images, images.resolve(STILL)) not in keys


def test_progress_per_step_and_cancel(flux, tmp_path):
    images = DiffusersImages(flux)
    calls = []
    images.render(STILL.with_(steps=3), tmp_path / "p.png", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    token = CancelToken()

    def stop(done, total):
        token.cancel()

    with pytest.raises(Cancelled):
        images.render(STILL.with_(steps=3), tmp_path / "x.png", progress=stop, cancel=token)
    assert not (tmp_path / "x.png").exists()


def test_a_missing_or_wrong_image_model_is_one_line(folders, tmp_path):
    with pytest.raises(RenderError) as err:
        DiffusersImages(str(tmp_path / "nothing-here")).resolve(STILL)
    assert "not found" in one_line(err) and "nothing-here" in one_line(err)
    with pytest.raises(RenderError) as err:
        DiffusersImages(folders("wan")).resolve(STILL)
    assert one_line(err).endswith(
        "WanPipeline is not a supported text-to-image pipeline "
        "(supported: FluxPipeline, StableDiffusionXLPipeline, StableDiffusion3Pipeline, "
        "QwenImagePipeline)"
    )


def test_the_animatic_draws_labelled_seed_variations_carrying_the_references(tmp_path):
    art = AnimaticImages()
    a = pixels(art.render(STILL.with_(width=160, height=90), tmp_path / "a.png").path)
    b = pixels(art.render(STILL.with_(width=160, height=90, seed=5), tmp_path / "b.png").path)
    assert a.shape == (90, 160, 3) and np.abs(a - b).mean() > 3  # a re-roll is a new composition
    ref = solid(tmp_path / "ref.png", (255, 0, 255))
    c = pixels(art.render(STILL.with_(width=160, height=90, references=(ref,)), tmp_path / "c.png").path)
    magenta = (c[..., 0] > 240) & (c[..., 1] < 15) & (c[..., 2] > 240)
    assert magenta.sum() > 100 and not ((a[..., 0] > 240) & (a[..., 1] < 15) & (a[..., 2] > 240)).any()
    assert art.resolve(STILL.with_(references=(ref,))).references_sha256  # references enter the key
    assert KEYFRAME_LABEL.startswith("ANIMATIC")


def test_keyframe_view_starts_on_the_keyframe_and_moves_from_it():
    still = np.random.default_rng(0).integers(0, 255, (60, 80, 3), dtype=np.uint8)
    assert np.abs(keyframe_view(still, "pan_left", 0.0, 80, 60, 1) - still).mean() < 1
    assert np.abs(keyframe_view(still, "pan_left", 1.0, 80, 60, 1) - still).mean() > 20
