"""Render shots with any diffusers text-to-video pipeline, from a local folder or the HF cache.

Pipelines load on first render and stay warm (`generation.pipelines`), so one process loads each
(model, device, dtype, options) once across shots and iterations. Everything family-specific
(frame rule, sizes, defaults, image-to-video and VACE partners) comes from `families.FAMILIES`.

A request is rendered by one of three routes, chosen in `resolve`:
- text-to-video, the configured model;
- image-to-video, when the shot starts from an image (its approved keyframe, or the previous shot's last
  frame for continuity): the family's I2V pipeline, built from the same parts or loaded from `i2v_model`;
- VACE (`vace_model`, Wan): when the request carries the characters' reference images, or starts from an
  image and there is no I2V pipeline. The first frame is given as a one-frame video with a mask.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from .base import CancelToken, ClipInfo, Progress, RenderError, ShotRequest, file_sha256, frames_for, with_camera
from .families import FAMILIES, Family
from .pipelines import (
    _PIPELINES,
    SHORT_DTYPE,
    PipelineModel,
    call_kwargs,
    derived,
    pick_device,
    pipeline_class_name,
    pipeline_errors,
    to_uint8,
    warm,
)
from .video_io import write_video

__all__ = ["DiffusersBackend", "_PIPELINES", "family_of", "pick_device", "pipeline_class_name"]


def family_of(class_name: str, model: str) -> Family:
    """The family row for a text-to-video pipeline class; a one-line error for anything else."""
    if class_name in FAMILIES:
        return FAMILIES[class_name]
    if class_name in {f.i2v_pipeline for f in FAMILIES.values()}:
        raise RenderError(
            f"{model} is an image-to-video pipeline ({class_name}); "
            "pass it as the i2v model next to a text-to-video model"
        )
    if class_name in {f.vace_pipeline for f in FAMILIES.values()}:
        raise RenderError(
            f"{model} is a VACE pipeline ({class_name}); "
            "pass it as the VACE model (CHIEF_VACE_MODEL) next to a text-to-video model"
        )
    import diffusers

    cls = getattr(diffusers, class_name, None)
    if cls is not None and "num_frames" not in inspect.signature(cls.__call__).parameters:
        raise RenderError(f"{model} is an image pipeline ({class_name}), not text-to-video")
    raise RenderError(
        f"{model}: {class_name} is not a supported text-to-video pipeline (supported: {', '.join(FAMILIES)})"
    )


def _rule_text(rule: tuple[int, int]) -> str:
    a, b = rule
    return f"{a}k+{b}" if b else f"{a}k"


def _image_sha(path: str, sha: str | None, what: str) -> str:
    if not Path(path).is_file():
        raise RenderError(f"{what} {path} does not exist")
    return sha or file_sha256(Path(path))


class DiffusersBackend(PipelineModel):
    """Any diffusers text-to-video pipeline, with optional image-to-video and VACE partners."""

    name = "diffusers"

    def __init__(
        self,
        model: str,
        *,
        i2v_model: str | None = None,
        vace_model: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        cpu_offload: bool = False,
        vae_tiling: bool = False,
        vae_slicing: bool = False,
        steps: int | None = None,
        guidance: float | None = None,
    ) -> None:
        super().__init__(model, device, dtype, cpu_offload, vae_tiling, vae_slicing)
        self.i2v_model, self.vace_model = i2v_model, vace_model
        self.steps, self.guidance = steps, guidance

    # -- what the user is shown ------------------------------------------------------------

    @property
    def family(self) -> Family:
        return family_of(self.class_name, self.model)

    def _has_i2v(self, fam: Family) -> bool:
        return fam.i2v_pipeline is not None and (fam.i2v_shares_components or self.i2v_model is not None)

    def _has_vace(self, fam: Family) -> bool:
        return fam.vace_pipeline is not None and self.vace_model is not None

    @property
    def supports_continuity(self) -> bool:
        try:
            fam = self.family
        except RenderError:
            return False
        return self._has_i2v(fam) or self._has_vace(fam)

    @property
    def supports_references(self) -> bool:
        """Whether shots are conditioned on their characters' reference images (a VACE model is configured)."""
        try:
            return self._has_vace(self.family)
        except RenderError:
            return False

    def describe(self) -> dict:
        """Family, pipeline, device and dtype, for the status bar (raises RenderError for a bad model)."""
        fam = self.family
        return {
            "backend": self.name,
            "model": self.model,
            "pipeline": self.class_name,
            "family": fam.name,
            "device": self.device,
            "dtype": SHORT_DTYPE[self.dtype],
            "cpu_offload": self.cpu_offload,
            "i2v": (fam.i2v_pipeline if self._has_i2v(fam) else None),
            "vace": (fam.vace_pipeline if self._has_vace(fam) else None),
        }

    @property
    def label(self) -> str:
        try:
            pipeline = self.class_name
        except RenderError:
            pipeline = "model not found"
        offload = " · cpu offload" if self.cpu_offload else ""
        vace = f" · VACE {self.vace_model}" if self.vace_model else ""
        return f"diffusers · {pipeline} · {self.model}{vace} · {self.device} {SHORT_DTYPE[self.dtype]}{offload}"

    # -- the Backend protocol --------------------------------------------------------------

    def resolve(self, request: ShotRequest) -> ShotRequest:
        """Fill size, fps, frames, steps and guidance from the family; choose the route; reject what it cannot do."""
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
            raise RenderError(
                f"{fam.name} needs num_frames = {_rule_text(fam.frame_rule)} up to {fam.max_frames}; got {n}"
            )
        steps = request.steps or self.steps or fam.steps
        guidance = next(g for g in (request.guidance, self.guidance, fam.guidance) if g is not None)
        shot = f"shot {request.shot_id}:"
        init_sha = request.init_image_sha256
        if request.init_image is not None:
            init_sha = _image_sha(request.init_image, init_sha, f"{shot} conditioning image")
        key_sha = request.keyframe_sha256
        if request.keyframe is not None:
            key_sha = _image_sha(request.keyframe, key_sha, f"{shot} keyframe")
        refs = request.references_sha256 or tuple(
            _image_sha(p, None, f"{shot} reference image") for p in request.references
        )
        route = self._route(request, fam)
        return request.with_(
            width=width,
            height=height,
            fps=fps,
            num_frames=n,
            steps=steps,
            guidance=guidance,
            init_image_sha256=init_sha,
            keyframe_sha256=key_sha,
            references_sha256=refs,
            route=route,
        )

    def _route(self, request: ShotRequest, fam: Family) -> str:
        """ "" (text- or image-to-video with the family's own pipelines) or "<VACE class>:<model>"."""
        image = request.keyframe or request.init_image
        vace = ""
        if self._has_vace(fam) and (request.references or (image and not self._has_i2v(fam))):
            found = pipeline_class_name(self.vace_model)
            if found != fam.vace_pipeline:
                raise RenderError(f"VACE model {self.vace_model} is {found}; {fam.name} needs {fam.vace_pipeline}")
            vace = f"{found}:{self.vace_model}"
        if request.references and not vace:
            how = (
                f"set CHIEF_VACE_MODEL to a {fam.vace_pipeline} model"
                if fam.vace_pipeline
                else "the family has no VACE pipeline"
            )
            raise RenderError(f"{fam.name} model {self.model} cannot use reference images: {how}")
        if image and not vace:
            if not self._has_i2v(fam):
                hint = " (set i2v_model)" if fam.i2v_pipeline else ""
                raise RenderError(
                    f"{fam.name} model {self.model} cannot start from an image: no image-to-video pipeline{hint}"
                )
            found = fam.i2v_pipeline if fam.i2v_shares_components else pipeline_class_name(self.i2v_model)
            if found != fam.i2v_pipeline:
                raise RenderError(
                    f"i2v model {self.i2v_model} is {found}; {fam.name} continuity needs {fam.i2v_pipeline}"
                )
        return vace

    def render(
        self, request: ShotRequest, out: Path, progress: Progress | None = None, cancel: CancelToken | None = None
    ) -> ClipInfo:
        """Render one shot to `out` (mp4); deterministic for a given request."""
        req = self.resolve(request)
        fam = self.family
        if cancel is not None:
            cancel.raise_if_cancelled()
        kwargs = call_kwargs(
            with_camera(req.prompt, req.camera),
            req.width,
            req.height,
            req.steps,
            req.guidance,
            req.seed,
            progress,
            cancel,
        )
        if "num_frames" in fam.call_kwargs or req.route:
            kwargs["num_frames"] = req.num_frames
        if ("negative_prompt" in fam.call_kwargs or req.route) and req.negative_prompt:
            kwargs["negative_prompt"] = req.negative_prompt
        if fam.fps_kwarg and not req.route:
            kwargs[fam.fps_kwarg] = req.fps
        image = _rgb(req.keyframe or req.init_image) if (req.keyframe or req.init_image) else None
        if req.route:
            kwargs.update(_vace_inputs(req, image))
        elif image is not None:
            kwargs["image"] = image
        entry, pipe = self._pipeline(fam, req.route, image is not None)
        with (
            entry.lock,
            pipeline_errors(
                f"shot {req.shot_id}", fam.name, f"{req.width}x{req.height}, {req.num_frames} frames", self.device
            ),
        ):
            frames = pipe(**kwargs).frames[0]
        if cancel is not None:
            cancel.raise_if_cancelled()
        video = to_uint8(frames)
        n = write_video(video, Path(out), req.fps)
        return ClipInfo(path=Path(out), num_frames=n, fps=req.fps, width=video.shape[2], height=video.shape[1])

    # -- loading ---------------------------------------------------------------------------

    def _pipeline(self, fam: Family, route: str, image: bool):
        """The warm entry (for its lock) and the pipeline to call: VACE, text-to-video or image-to-video.

        An image-to-video pipeline is built from the warm parts when the family allows it (no
        extra memory), else loaded from `i2v_model`.
        """
        if route:
            entry = warm(self.vace_model, self.options, fam.fp32_modules)
            return entry, entry.pipe
        if image and not fam.i2v_shares_components:
            entry = warm(self.i2v_model, self.options, fam.fp32_modules)
            return entry, entry.pipe
        entry = warm(self.model, self.options, fam.fp32_modules)
        return entry, (derived(entry, fam.i2v_pipeline) if image else entry.pipe)


def _rgb(path: str):
    from PIL import Image

    with Image.open(path) as im:
        return im.convert("RGB")


def _vace_inputs(req: ShotRequest, first) -> dict[str, Any]:
    """VACE's inputs: the reference images, and the first frame as a one-frame video whose other frames are
    masked for generation (black = keep, white = generate, as the pipeline's documentation shows)."""
    from PIL import Image

    out: dict[str, Any] = {}
    if req.references:
        out["reference_images"] = [_rgb(p) for p in req.references]
    if first is not None:
        size = (req.width, req.height)
        grey = Image.new("RGB", size, (128, 128, 128))
        out["video"] = [first.resize(size)] + [grey] * (req.num_frames - 1)
        out["mask"] = [Image.new("L", size, 0)] + [Image.new("L", size, 255)] * (req.num_frames - 1)
    return out
