"""Audio model families through diffusers, in one table keyed by pipeline class name, and the one function that
loads any of them from a local folder (or the Hugging Face cache, never downloaded) and makes a sound.

Loading goes through `generation.pipelines.warm` (the same warm cache, device and dtype rules as the video
families); the family row says what the pipeline's call takes. The sound comes back at the model's own rate,
cut or padded to exactly the seconds asked (a pipeline rounds the length to its latent frames), and labelled
with the family's name: a model's sound is never shown as anything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from generation.base import Cancelled, CancelToken, RenderError
from generation.pipelines import PipelineModel, first_line, free_memory, is_oom, warm

from .pcm import Sound


@dataclass(frozen=True)
class AudioFamily:
    name: str  # shown to the user
    roles: tuple[str, ...]  # "music", "effects"
    length_kwarg: str  # the call argument that takes the length in seconds
    max_seconds: float  # the family's own limit; a model's may be lower (`model_max_seconds`)
    steps: int
    guidance: float
    rate_from: str  # where the output rate is: "vae.sampling_rate" or "vocoder.config.sampling_rate"
    step_callback: str = "legacy"  # "legacy": callback(step, t, latents); "on_step_end": callback_on_step_end
    extra: tuple[tuple[str, object], ...] = ()  # fixed call arguments


AUDIO_FAMILIES: dict[str, AudioFamily] = {
    "StableAudioPipeline": AudioFamily(
        "Stable Audio", ("effects", "music"), "audio_end_in_s", 47.0, 100, 7.0, "vae.sampling_rate"
    ),
    "AudioLDM2Pipeline": AudioFamily(
        "AudioLDM2", ("effects",), "audio_length_in_s", 30.0, 200, 3.5, "vocoder.config.sampling_rate"
    ),
    "AceStepPipeline": AudioFamily(
        "ACE-Step",
        ("music",),
        "audio_duration",
        240.0,
        8,
        7.0,
        "vae.config.sampling_rate",
        step_callback="on_step_end",
        extra=(("lyrics", "[instrumental]"),),
    ),
}


@dataclass(frozen=True)
class Made:
    """The sound at exactly the seconds asked, and how many seconds the pipeline itself made (before the cut)."""

    sound: Sound
    pipeline_seconds: float


def family_of(model: PipelineModel) -> AudioFamily:
    try:
        return AUDIO_FAMILIES[model.class_name]
    except KeyError:
        known = ", ".join(AUDIO_FAMILIES)
        raise RenderError(f"{model.model}: {model.class_name} is not an audio family CHIEF knows ({known})") from None


def generate(
    model: PipelineModel,
    prompt: str,
    seconds: float,
    seed: int,
    steps: int | None = None,
    cancel: CancelToken | None = None,
) -> Made:
    """`seconds` of sound for `prompt` from the model (float32 at the model's rate, mono `(n,)` or stereo `(n, 2)`
    as the model makes it, labelled by family).

    A pipeline rounds the length to its latent frames; one that makes less than 90% of what was asked is an
    error, never padded with silence."""
    samples, rate = _call(model, prompt, seconds, seed, steps, cancel)
    made = len(samples) / rate
    n = round(seconds * rate)
    if len(samples) < 0.9 * n:
        raise RenderError(f"{family_of(model).name} made {made:g} s of the {seconds:g} s asked")
    samples = np.pad(samples[:n], [(0, max(0, n - len(samples)))] + [(0, 0)] * (samples.ndim - 1))
    return Made(Sound(samples.astype(np.float32), rate, label(model)), made)


def _call(
    model: PipelineModel, prompt: str, seconds: float, seed: int, steps: int | None, cancel: CancelToken | None
) -> tuple[np.ndarray, int]:
    """One pipeline call for `seconds` (at most what the model makes at once): (mono samples as made, rate)."""
    family = family_of(model)
    import torch

    entry = warm(model.model, model.options)
    pipe = entry.pipe
    most = model_max_seconds(pipe, family)
    if not 0 < seconds <= most:
        raise RenderError(f"{label(model)} makes at most {most:g} s at a time; {seconds:g} s asked")
    kwargs = {
        "prompt": prompt,
        family.length_kwarg: seconds,
        "num_inference_steps": steps or family.steps,
        "guidance_scale": family.guidance,
        "generator": torch.Generator("cpu").manual_seed(seed),
        **dict(family.extra),
    }
    if family.step_callback == "legacy":
        kwargs["callback"] = _legacy_callback(cancel)
    else:
        kwargs["callback_on_step_end"] = _on_step_end(cancel)
    try:
        with entry.lock, torch.inference_mode():
            audio = pipe(**kwargs).audios
    except Cancelled:
        raise
    except Exception as e:
        if is_oom(e):
            free_memory()
            raise RenderError(f"{family.name}: out of memory making {seconds:g} s on {model.device}") from e
        raise RenderError(f"{family.name} failed: {first_line(e)}") from e
    rate = int(_attr(pipe, family.rate_from))
    samples = np.asarray(audio[0].float().cpu() if hasattr(audio[0], "cpu") else audio[0], dtype=np.float32)
    if samples.ndim == 2:  # (channels, n): one channel as mono, a stereo model's two kept as (n, 2)
        samples = samples[0] if len(samples) == 1 else np.ascontiguousarray(samples.T[:, :2])
    return np.nan_to_num(samples).astype(np.float32), rate


def label(model: PipelineModel) -> str:
    """What the model's sound is shown as: the family and the model folder's name ("Stable Audio (sao-1.0)")."""
    return f"{family_of(model).name} ({Path(model.model.rstrip('/')).name})"


def check_role(model: PipelineModel, role: str) -> AudioFamily:
    """The model's family, when it makes `role` ("music", "effects"); else a one-line error naming the families
    that do."""
    family = family_of(model)
    if role not in family.roles:
        able = " or ".join(f.name for f in AUDIO_FAMILIES.values() if role in f.roles)
        raise RenderError(f"{label(model)} makes {' and '.join(family.roles)}, not {role} (use {able})")
    return family


CROSSFADE = 1.0  # seconds two pieces of a long sound overlap (at most a quarter of what one call makes)


def make(
    model: PipelineModel,
    prompt: str,
    seconds: float,
    seed: int,
    steps: int | None = None,
    cancel: CancelToken | None = None,
) -> Sound:
    """`seconds` of sound at the mix's rate (48 kHz; stereo `(n, 2)` when the model makes two channels, which the
    mix keeps), labelled with the model (`label`): calls of the whole length
    or, when that is more than the model makes at once, of the most it makes (each its own seed: `seed`,
    `seed + 1`, ...), joined by equal-power crossfades until the length is reached. A pipeline rounds each call to
    its latent frames, so a piece is laid by the length it has, not the length asked; the end is cut to `seconds`."""
    from .pcm import RATE, resample

    ask = min(seconds, model_max_seconds(warm(model.model, model.options).pipe, family_of(model)))
    fade = round(min(CROSSFADE, ask / 4) * RATE)
    n = round(seconds * RATE)
    out = None
    k = 0
    while out is None or len(out) < n:
        samples, rate = _call(model, prompt, ask, seed + k, steps, cancel)
        piece = resample(samples, rate, RATE)
        if len(piece) <= 2 * fade:
            raise RenderError(f"{label(model)} made {len(samples) / rate:g} s of the {ask:g} s asked")
        if out is not None:
            t = np.linspace(0.0, np.pi / 2, fade, dtype=np.float32).reshape(-1, *[1] * (piece.ndim - 1))
            joined = out[-fade:] * np.cos(t) + piece[:fade] * np.sin(t)
            out = np.concatenate([out[:-fade], joined, piece[fade:]])
        else:
            out = piece
        k += 1
    return Sound(out[:n].astype(np.float32), RATE, label(model))


def model_max_seconds(pipe, family: AudioFamily) -> float:
    """The longest sound one call makes: Stable Audio's is its transformer's sample size in VAE hops."""
    if family.length_kwarg == "audio_end_in_s":
        return min(
            family.max_seconds, pipe.transformer.config.sample_size * pipe.vae.hop_length / pipe.vae.sampling_rate
        )
    return family.max_seconds


def _attr(obj, dotted: str):
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _legacy_callback(cancel: CancelToken | None):
    def on_step(step, timestep, latents):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("sound generation cancelled")

    return on_step


def _on_step_end(cancel: CancelToken | None):
    def on_step(pipe, i, t, callback_kwargs):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("sound generation cancelled")
        return {}

    return on_step
