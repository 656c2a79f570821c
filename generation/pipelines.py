"""Loading diffusers pipelines once per process, for video and image backends alike.

A pipeline is read from a local folder or the Hugging Face cache (never downloaded), put on the device, and
kept warm in a module-level cache keyed by (model, device, dtype, memory options). Pipelines built from a warm
pipeline's parts (image-to-video, image-to-image) are kept beside it. Each warm entry has a lock: one call at
a time per pipeline. Also here: the device/dtype choice, the step callback that reports progress and stops on
cancel, and the translation of pipeline failures into one-line `RenderError`s.
"""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import Cancelled, CancelToken, Progress, RenderError
from .memory import Memory, check, gguf_transformer, oom_advice, place, quantization_config

_DTYPES = {
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "fp16": "float16",
    "float16": "float16",
    "half": "float16",
    "fp32": "float32",
    "float32": "float32",
    "float": "float32",
}
SHORT_DTYPE = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


@dataclass
class Warm:
    """A loaded pipeline, the pipelines built from its parts (by class name), and a lock: one call at a time."""

    pipe: Any
    derived: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    compiled: bool = False  # its denoiser's repeated blocks are compiled (CHIEF_VIDEO_COMPILE)
    attention: str = "native"  # the attention backend its denoiser is set to


@dataclass(frozen=True)
class LoadOptions:
    """Where and how a pipeline is loaded; part of the warm cache's key."""

    device: str
    dtype: str
    memory: Memory = Memory()
    variant: str | None = (
        None  # the weights' file infix (model.fp16.safetensors): what `chief models pull --variant` fetched
    )

    @property
    def cpu_offload(self) -> bool:
        return self.memory.offload == "model"


class PipelineModel:
    """A diffusers model (a folder or a cached hub id) and where it loads; its pipeline class is read on first use
    (from model_index.json: no weights), and nothing loads until a render needs it."""

    def __init__(
        self,
        model: str,
        device: str | None = None,
        dtype: str | None = None,
        cpu_offload: bool = False,
        vae_tiling: bool = False,
        vae_slicing: bool = False,
        memory: Memory | None = None,
        variant: str | None = None,
    ) -> None:
        """`memory` (a profile, quantization, offload) wins over the three separate switches, which make a
        "custom" Memory of their own. `variant`: load the weights of that variant (diffusers' `variant`: a component
        without it keeps its plain weights)."""
        self.model = model
        device, dtype = pick_device(device, dtype)
        if memory is None:
            memory = Memory(offload="model" if cpu_offload else "none", vae_tiling=vae_tiling, vae_slicing=vae_slicing)
        if memory.offload == "model" and device == "cpu":
            raise RenderError("cpu_offload needs a GPU device; the device is cpu")
        check(memory, device)
        self.options = LoadOptions(device, dtype, memory, variant or None)
        self._index: dict | None = None

    @property
    def index(self) -> dict:
        """The model's model_index.json (read once, no weights)."""
        index = self._index
        if index is None:
            index = self._index = json.loads(model_file(self.model, "model_index.json").read_text())
        return index

    @property
    def class_name(self) -> str:
        return self.index["_class_name"]

    @property
    def memory(self) -> Memory:
        return self.options.memory

    @property
    def variant(self) -> str | None:
        return self.options.variant

    @property
    def device(self) -> str:
        return self.options.device

    @property
    def dtype(self) -> str:
        return self.options.dtype

    @property
    def cpu_offload(self) -> bool:
        return self.options.cpu_offload

    @property
    def vae_tiling(self) -> bool:
        return self.options.memory.vae_tiling

    @property
    def vae_slicing(self) -> bool:
        return self.options.memory.vae_slicing


_PIPELINES: dict[tuple, Warm] = {}
_LOAD_LOCK = threading.Lock()


def pick_device(device: str | None = None, dtype: str | None = None) -> tuple[str, str]:
    """(device, dtype name): CUDA bf16 (fp16 without bf16), MPS fp16, CPU fp32 unless overridden.

    Asking for a device that is not there is an error, never a silent fallback.
    """
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "mps" if _mps_available() else "cpu"
    kind = device.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise RenderError(f"device {device!r} asked for, but CUDA is not available to torch {torch.__version__}")
    if kind == "mps" and not _mps_available():
        raise RenderError(f"device {device!r} asked for, but MPS is not available")
    if kind not in ("cuda", "mps", "cpu"):
        raise RenderError(f"unknown device {device!r}; use cuda, mps or cpu")
    if dtype is None:
        if kind == "cuda":
            dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        else:
            dtype = "float16" if kind == "mps" else "float32"
    elif dtype.lower() in _DTYPES:
        dtype = _DTYPES[dtype.lower()]
    else:
        raise RenderError(f"unknown dtype {dtype!r}; use bf16, fp16 or fp32")
    if dtype == "bfloat16" and kind == "cuda" and not torch.cuda.is_bf16_supported():
        raise RenderError("bf16 is not supported on this GPU; use fp16")
    return device, dtype


def _mps_available() -> bool:
    import torch

    return torch.backends.mps.is_available()


def model_file(model: str, filename: str, *, kind: str = "model", folder: str = "diffusers pipeline") -> Path:
    """`filename` of a local model folder or a cached hub id (never downloaded); a one-line error naming the
    `kind` of model when it is not there."""
    path = Path(model).expanduser()
    if path.exists():
        if not (path / filename).is_file():
            raise RenderError(f"{model} is not a {folder} folder (no {filename})")
        return path / filename
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(model, filename, local_files_only=True))
    except Exception:
        raise RenderError(
            f"{kind} {model!r} not found: no such folder, and not in the Hugging Face cache "
            f"(download it first, e.g. `hf download {model}`)"
        ) from None


def pipeline_class_name(model: str) -> str:
    """The `_class_name` of a pipeline folder or a cached hub id, read without loading weights."""
    return json.loads(model_file(model, "model_index.json").read_text())["_class_name"]


def is_oom(e: BaseException) -> bool:
    import torch

    return isinstance(e, torch.OutOfMemoryError) or "out of memory" in str(e).lower()


def free_memory() -> None:
    """Release what a failed call left cached, so the warm pipeline can take the retry."""
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def warm(model: str, options: LoadOptions, fp32_modules: tuple[str, ...] = ()) -> Warm:
    """The cached pipeline for `model`, loading it once per process."""
    path = Path(model).expanduser()
    key = (str(path.resolve()) if path.exists() else model, options)
    with _LOAD_LOCK:
        if key not in _PIPELINES:
            _PIPELINES[key] = Warm(_load(model, options, fp32_modules))
        return _PIPELINES[key]


def derived(entry: Warm, class_name: str) -> Any:
    """A pipeline of class `class_name` built from the warm pipeline's parts (no extra memory), kept beside it."""
    with _LOAD_LOCK:
        if class_name not in entry.derived:
            import diffusers

            pipe = getattr(diffusers, class_name)(**entry.pipe.components)
            pipe.set_progress_bar_config(disable=True)
            entry.derived[class_name] = pipe
        return entry.derived[class_name]


def _load(model: str, options: LoadOptions, fp32_modules: tuple[str, ...]) -> Any:
    import torch
    from diffusers import DiffusionPipeline
    from diffusers.utils import logging as diffusers_logging

    diffusers_logging.disable_progress_bar()  # "Loading pipeline components": the caller reports progress itself
    base = getattr(torch, options.dtype)
    dtype: Any = base
    if fp32_modules and options.dtype != "float32":
        dtype = {"default": dtype, **{name: torch.float32 for name in fp32_modules}}
    memory = options.memory
    extra: dict[str, Any] = {}
    try:
        index = json.loads(model_file(model, "model_index.json").read_text())
        quant = quantization_config(memory, [k for k, v in index.items() if isinstance(v, list) and v[0]], base)
        if quant is not None:
            extra["quantization_config"] = quant
        if memory.quant == "gguf":
            extra["transformer"] = gguf_transformer(model, memory, index, base)
        if options.variant:
            extra["variant"] = options.variant
        pipe = DiffusionPipeline.from_pretrained(model, dtype=dtype, local_files_only=True, **extra)
        place(pipe, memory, options.device)
    except Exception as e:
        if is_oom(e):
            free_memory()
            raise RenderError(
                f"not enough memory to load {model} on {options.device} in {SHORT_DTYPE[options.dtype]} "
                f"({memory.label}); {oom_advice(memory)}"
            ) from e
        raise RenderError(f"could not load {model}: {first_line(e)}") from e
    pipe.set_progress_bar_config(disable=True)
    return pipe


def step_callback(progress: Progress | None, cancel: CancelToken | None, steps: int):
    """A `callback_on_step_end` that reports each step and stops at once when the user cancels."""

    def on_step(pipe, i, t, callback_kwargs):
        if progress is not None:
            progress(i + 1, getattr(pipe, "num_timesteps", None) or steps)
        if cancel is not None and cancel.cancelled:
            pipe._interrupt = True
            raise Cancelled("render cancelled")  # stop now: skip the remaining steps and the decode
        return {}

    return on_step


def call_kwargs(
    prompt: str,
    width: int,
    height: int,
    steps: int,
    guidance: float,
    seed: int,
    progress: Progress | None,
    cancel: CancelToken | None,
    guidance_kwarg: str = "guidance_scale",
) -> dict:
    """What every pipeline call takes: the prompt, size, steps and guidance, a seeded CPU generator (the same
    noise on any device), numpy output, and the step callback (progress and cancel)."""
    import torch

    return {
        "prompt": prompt,
        "width": width,
        "height": height,
        "num_inference_steps": steps,
        guidance_kwarg: guidance,
        "generator": torch.Generator("cpu").manual_seed(seed),
        "output_type": "np",
        "callback_on_step_end": step_callback(progress, cancel, steps),
    }


def to_uint8(pixels):
    """A pipeline's float output (0..1, maybe with NaNs from a broken step) as 8-bit pixels."""
    import numpy as np

    return (np.nan_to_num(np.asarray(pixels, dtype=np.float32)).clip(0.0, 1.0) * 255).round().astype(np.uint8)


@contextmanager
def pipeline_errors(what: str, family: str, size: str, device: str, memory: Memory | None = None) -> Iterator[None]:
    """A pipeline call's failure as one line: out of memory (with the profile to try next) or the first line of the
    error.

    `what` names the subject ("shot s1", "keyframe s1"), `size` what was asked ("832x480, 81 frames")."""
    try:
        yield
    except Cancelled:
        raise
    except Exception as e:
        if is_oom(e):
            free_memory()
            advice = oom_advice(memory or Memory())
            raise RenderError(f"{what}: out of memory at {size} on {device}; {advice}") from e
        raise RenderError(f"{what}: {family} render failed: {first_line(e)}") from e
