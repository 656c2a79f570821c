"""Tiny Stable Audio, AudioLDM2 and ACE-Step pipelines, built from the real classes, saved, loaded through the
product's own loader (`generation.audio.families.generate` → `generation.pipelines.warm`), making sound of the
length asked."""

import json

import numpy as np
import pytest

from generation.audio.families import AUDIO_FAMILIES, generate
from generation.base import Cancelled, CancelToken, RenderError
from generation.pipelines import PipelineModel

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "name, cls, seconds",
    [
        ("stable_audio", "StableAudioPipeline", 1.5),
        ("audioldm2", "AudioLDM2Pipeline", 0.064),
        ("ace_step", "AceStepPipeline", 3.0),
    ],
)
def test_a_tiny_pipeline_loads_and_makes_the_length_asked(audio_folders, name, cls, seconds):
    folder = audio_folders(name)
    model = PipelineModel(folder, device="cpu")
    assert model.class_name == cls and cls in AUDIO_FAMILIES
    made = generate(model, "rain on a tin roof", seconds, seed=3, steps=2)
    sound = made.sound
    assert sound.label.startswith(AUDIO_FAMILIES[cls].name)
    assert len(sound.samples) == round(seconds * sound.rate) and sound.seconds == pytest.approx(seconds)
    assert made.pipeline_seconds >= 0.9 * seconds  # the pipeline made it, not padding
    assert np.isfinite(sound.samples).all() and np.abs(sound.samples).max() > 0
    again = generate(model, "rain on a tin roof", seconds, seed=3, steps=2).sound
    assert np.array_equal(again.samples, sound.samples)  # seeded


def test_longer_than_the_model_makes_is_refused_in_one_line(audio_folders):
    model = PipelineModel(audio_folders("stable_audio"), device="cpu")
    with pytest.raises(RenderError, match=r"makes at most 2 s at a time; 5 s asked"):
        generate(model, "wind", 5.0, seed=0, steps=2)


def test_a_stopped_generation_raises_cancelled(audio_folders):
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(Cancelled):
        generate(PipelineModel(audio_folders("ace_step"), device="cpu"), "calm piano", 2.0, 0, steps=2, cancel=cancel)


def test_a_video_pipeline_is_not_an_audio_family(tmp_path):
    (tmp_path / "model_index.json").write_text(json.dumps({"_class_name": "WanPipeline"}))
    with pytest.raises(RenderError, match="WanPipeline is not an audio family"):
        generate(PipelineModel(str(tmp_path), device="cpu"), "x", 1.0, 0)
