"""Render shots with any diffusers text-to-video pipeline, from a local folder or the HF cache.

Pipelines load on first render and stay warm in a module-level cache, so one process loads each
(model, device, dtype, options) once across shots and iterations. Everything family-specific
(frame rule, sizes, defaults, image-to-video partner) comes from `families.FAMILIES`.
"""

from __future__ import annotations

import gc
import inspect
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .base import Cancelled, CancelToken, ClipInfo, Progress, RenderError, ShotRequest, file_sha256, frames_for
from .families import FAMILIES, Family
from .video_io import write_video

_DTYPES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16", "float16": "float16",
           "half": "float16", "fp32": "float32", "float32": "float32", "float": "float32"}
_SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


@dataclass
class _Warm:
    """A loaded pipeline, its lazily built image-to-video sibling, and a lock: one render at a time."""

    pipe: Any
    i2v: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)


_PIPELINES: dict[tuple, _Warm] = {}
_LOAD_LOCK = threading.Lock()


def clear_pipelines() -> None:
    """Drop every warm pipeline (frees GPU memory when switching models)."""
    with _LOAD_LOCK:
        _PIPELINES.clear()
    _free_memory()


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


def pipeline_class_name(model: str) -> str:
    """The `_class_name` of a pipeline folder or a cached hub id, read without loading weights."""
    path = Path(model).expanduser()
    if path.exists():
        index = path / "model_index.json"
        if not index.is_file():
            raise RenderError(f"{model} is not a diffusers pipeline folder (no model_index.json)")
    else:
        try:
            from huggingface_hub import hf_hub_download

            index = Path(hf_hub_download(model, "model_index.json", local_files_only=True))
        except Exception:
            raise RenderError(f"model {model!r} not found: no such folder, and not in the Hugging Face cache "
                              f"(download it first, e.g. `hf download {model}`)") from None
    return json.loads(index.read_text())["_class_name"]


def family_of(class_name: str, model: str) -> Family:
    """The family row for a text-to-video pipeline class; a one-line error for anything else."""
    if class_name in FAMILIES:
        return FAMILIES[class_name]
    if class_name in {f.i2v_pipeline for f in FAMILIES.values()}:
        raise RenderError(f"{model} is an image-to-video pipeline ({class_name}); "
                          "pass it as the i2v model next to a text-to-video model")
    import diffusers

    cls = getattr(diffusers, class_name, None)
    if cls is not None and "num_frames" not in inspect.signature(cls.__call__).parameters:
        raise RenderError(f"{model} is an image pipeline ({class_name}), not text-to-video")
    raise RenderError(f"{model}: {class_name} is not a supported text-to-video pipeline "
                      f"(supported: {', '.join(FAMILIES)})")


def _rule_text(rule: tuple[int, int]) -> str:
    a, b = rule
    return f"{a}k+{b}" if b else f"{a}k"


def _is_oom(e: BaseException) -> bool:
    import torch

    return isinstance(e, torch.OutOfMemoryError) or "out of memory" in str(e).lower()


def _free_memory() -> None:
    """Release what a failed call left cached, so the warm pipeline can take the retry."""
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


class DiffusersBackend:
    """Any diffusers text-to-video pipeline, with optional image-to-video continuity."""

    name = "diffusers"

    def __init__(self, model: str, *, i2v_model: str | None = None, device: str | None = None,
                 dtype: str | None = None, cpu_offload: bool = False, vae_tiling: bool = False,
                 vae_slicing: bool = False, steps: int | None = None, guidance: float | None = None) -> None:
        self.model = model
        self.i2v_model = i2v_model
        self.device, self.dtype = pick_device(device, dtype)
        if cpu_offload and self.device == "cpu":
            raise RenderError("cpu_offload needs a GPU device; the device is cpu")
        self.cpu_offload, self.vae_tiling, self.vae_slicing = cpu_offload, vae_tiling, vae_slicing
        self.steps, self.guidance = steps, guidance
        self._class_name: str | None = None

    # -- what the user is shown ------------------------------------------------------------

    @property
    def class_name(self) -> str:
        if self._class_name is None:
            self._class_name = pipeline_class_name(self.model)
        return self._class_name

    @property
    def family(self) -> Family:
        return family_of(self.class_name, self.model)

    @property
    def supports_continuity(self) -> bool:
        try:
            fam = self.family
        except RenderError:
            return False
        return fam.i2v_pipeline is not None and (fam.i2v_shares_components or self.i2v_model is not None)

    def describe(self) -> dict:
        """Family, pipeline, device and dtype, for the status bar (raises RenderError for a bad model)."""
        fam = self.family
        return {"backend": self.name, "model": self.model, "pipeline": self.class_name, "family": fam.name,
                "device": self.device, "dtype": _SHORT[self.dtype], "cpu_offload": self.cpu_offload,
                "i2v": (fam.i2v_pipeline if self.supports_continuity else None)}

    @property
    def label(self) -> str:
        try:
            pipeline = self.class_name
        except RenderError:
            pipeline = "model not found"
        offload = " · cpu offload" if self.cpu_offload else ""
        return f"diffusers · {pipeline} · {self.model} · {self.device} {_SHORT[self.dtype]}{offload}"

    # -- the Backend protocol --------------------------------------------------------------

    def resolve(self, request: ShotRequest) -> ShotRequest:
        """Fill size, fps, frames, steps and guidance from the family; reject what it cannot do."""
        fam = self.family
        width, height = request.width or fam.width, request.height or fam.height
        m = fam.size_multiple
        if width % m or height % m:
            raise RenderError(f"{fam.name} needs width and height divisible by {m}; got {width}x{height}")
        fps = request.fps or fam.fps
        a, b = fam.frame_rule
        n = request.num_frames
        if n is None:
            n = frames_for(request.duration, fps, fam.frame_rule, fam.max_frames)
        elif n < 1 or (n - b) % a or n > fam.max_frames:
            raise RenderError(f"{fam.name} needs num_frames = {_rule_text(fam.frame_rule)} "
                              f"up to {fam.max_frames}; got {n}")
        steps = request.steps or self.steps or fam.steps
        guidance = next(g for g in (request.guidance, self.guidance, fam.guidance) if g is not None)
        sha = request.init_image_sha256
        if request.init_image is not None:
            if not self.supports_continuity:
                hint = " (set i2v_model)" if fam.i2v_pipeline else ""
                raise RenderError(f"{fam.name} model {self.model} cannot start from an image: "
                                  f"no image-to-video pipeline{hint}")
            found = fam.i2v_pipeline if fam.i2v_shares_components else pipeline_class_name(self.i2v_model)
            if found != fam.i2v_pipeline:
                raise RenderError(f"i2v model {self.i2v_model} is {found}; {fam.name} continuity needs "
                                  f"{fam.i2v_pipeline}")
            if not Path(request.init_image).is_file():
                raise RenderError(f"shot {request.shot_id}: conditioning image {request.init_image} does not exist")
            sha = sha or file_sha256(Path(request.init_image))
        return request.with_(width=width, height=height, fps=fps, num_frames=n, steps=steps,
                             guidance=guidance, init_image_sha256=sha)

    def render(self, request: ShotRequest, out: Path, progress: Progress | None = None,
               cancel: CancelToken | None = None) -> ClipInfo:
        """Render one shot to `out` (mp4); deterministic for a given request."""
        import torch

        req = self.resolve(request)
        fam = self.family
        if cancel is not None:
            cancel.raise_if_cancelled()
        kwargs: dict[str, Any] = {
            "prompt": req.prompt, "width": req.width, "height": req.height,
            "num_inference_steps": req.steps, "guidance_scale": req.guidance,
            "generator": torch.Generator("cpu").manual_seed(req.seed), "output_type": "np",
        }
        if "num_frames" in fam.call_kwargs:
            kwargs["num_frames"] = req.num_frames
        if "negative_prompt" in fam.call_kwargs and req.negative_prompt:
            kwargs["negative_prompt"] = req.negative_prompt
        if fam.fps_kwarg:
            kwargs[fam.fps_kwarg] = req.fps

        def on_step(pipe, i, t, callback_kwargs):
            if progress is not None:
                progress(i + 1, getattr(pipe, "num_timesteps", None) or req.steps)
            if cancel is not None and cancel.cancelled:
                pipe._interrupt = True
                raise Cancelled("render cancelled")  # stop now: skip the remaining steps and the decode
            return {}

        kwargs["callback_on_step_end"] = on_step
        if req.init_image is not None:
            from PIL import Image

            kwargs["image"] = Image.open(req.init_image).convert("RGB")
        warm, pipe = self._pipeline(fam, image=req.init_image is not None)
        with warm.lock:
            try:
                frames = pipe(**kwargs).frames[0]
            except Cancelled:
                raise
            except Exception as e:
                if _is_oom(e):
                    _free_memory()
                    raise RenderError(
                        f"shot {req.shot_id}: out of memory at {req.width}x{req.height}, {req.num_frames} frames "
                        f"on {self.device}; try a smaller size, fewer frames, cpu offload or VAE tiling") from e
                raise RenderError(f"shot {req.shot_id}: {fam.name} render failed: {_first_line(e)}") from e
        if cancel is not None:
            cancel.raise_if_cancelled()
        video = np.nan_to_num(np.asarray(frames, dtype=np.float32)).clip(0.0, 1.0)
        video = (video * 255).round().astype(np.uint8)
        n = write_video(video, Path(out), req.fps)
        return ClipInfo(path=Path(out), num_frames=n, fps=req.fps, width=video.shape[2], height=video.shape[1])

    # -- loading ---------------------------------------------------------------------------

    def _key(self, model: str) -> tuple:
        path = Path(model).expanduser()
        where = str(path.resolve()) if path.exists() else model
        return (where, self.device, self.dtype, self.cpu_offload, self.vae_tiling, self.vae_slicing)

    def _warm(self, model: str, fam: Family) -> _Warm:
        """The cached pipeline for `model`, loading it once per process."""
        key = self._key(model)
        with _LOAD_LOCK:
            if key not in _PIPELINES:
                _PIPELINES[key] = _Warm(self._load(model, fam))
            return _PIPELINES[key]

    def _load(self, model: str, fam: Family) -> Any:
        import torch
        from diffusers import DiffusionPipeline

        dtype: Any = getattr(torch, self.dtype)
        if fam.fp32_modules and self.dtype != "float32":
            dtype = {"default": dtype, **{name: torch.float32 for name in fam.fp32_modules}}
        try:
            pipe = DiffusionPipeline.from_pretrained(model, dtype=dtype, local_files_only=True)
            if self.cpu_offload:
                pipe.enable_model_cpu_offload(device=self.device)
            else:
                pipe.to(self.device)
        except Exception as e:
            if _is_oom(e):
                _free_memory()
                raise RenderError(f"not enough memory to load {model} on {self.device} in {_SHORT[self.dtype]}; "
                                  "try cpu offload") from e
            raise RenderError(f"could not load {model}: {_first_line(e)}") from e
        if self.vae_tiling:
            pipe.vae.enable_tiling()
        if self.vae_slicing:
            pipe.vae.enable_slicing()
        pipe.set_progress_bar_config(disable=True)
        return pipe

    def _pipeline(self, fam: Family, image: bool) -> tuple[_Warm, Any]:
        """The warm entry (for its lock) and the pipeline to call: text-to-video or image-to-video.

        An image-to-video pipeline is built from the warm parts when the family allows it (no
        extra memory), else loaded from `i2v_model`.
        """
        if image and not fam.i2v_shares_components:
            warm = self._warm(self.i2v_model, fam)
            return warm, warm.pipe
        warm = self._warm(self.model, fam)
        if not image:
            return warm, warm.pipe
        with _LOAD_LOCK:
            if warm.i2v is None:
                import diffusers

                warm.i2v = getattr(diffusers, fam.i2v_pipeline)(**warm.pipe.components)
                warm.i2v.set_progress_bar_config(disable=True)
        return warm, warm.i2v
