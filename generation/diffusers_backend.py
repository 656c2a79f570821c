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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import loras as lora_io
from .base import CancelToken, ClipInfo, Progress, RenderError, ShotRequest, file_sha256, frames_for, with_camera
from .families import FAMILIES, TIERS, Draft, Family, family_for
from .ffmpeg import run_ffmpeg
from .memory import Memory
from .pipelines import (
    _PIPELINES,
    SHORT_DTYPE,
    PipelineModel,
    call_kwargs,
    derived,
    model_file,
    pick_device,
    pipeline_class_name,
    pipeline_errors,
    to_uint8,
    warm,
)
from .speed import Speed, cache_config
from .video_io import write_video

__all__ = ["DiffusersBackend", "_PIPELINES", "family_of", "pick_device", "pipeline_class_name"]


def family_of(class_name: str, model: str, index: dict | None = None) -> Family:
    """The family row for a text-to-video pipeline class (and its model_index.json, which picks a variant); a
    one-line error for anything else."""
    row = family_for(class_name, index or {})
    if row is not None:
        return row
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
        memory: Memory | None = None,
        speed: Speed | None = None,
        variant: str | None = None,
    ) -> None:
        super().__init__(model, device, dtype, cpu_offload, vae_tiling, vae_slicing, memory, variant)
        self.i2v_model, self.vace_model = i2v_model, vace_model
        self.steps, self.guidance = steps, guidance
        self.speed = speed or Speed()
        self.speed.check(self.device)
        self._hashes: dict[tuple[str, int, float], str] = {}  # a LoRA file's sha256 by (path, size, mtime)
        self._fits: dict[tuple[str, tuple[str, ...]], lora_io.LoraFit] = {}  # checked LoRAs by (sha256, parts)

    # -- what the user is shown ------------------------------------------------------------

    @property
    def family(self) -> Family:
        return family_of(self.class_name, self.model, self.index)

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

    @property
    def supports_loras(self) -> bool:
        """Whether shots take LoRAs (diffusers loads LoRAs into this family's denoiser)."""
        try:
            return self.family.lora
        except RenderError:
            return False

    def experts(self) -> tuple[str, ...]:
        """The denoisers a LoRA adapts, from model_index.json (Wan 2.2 A14B: transformer and transformer_2)."""
        return tuple(p for p in lora_io.DENOISERS if _is_part(self.index.get(p)))

    def check_lora(self, path: Path, parts: tuple[str, ...] | None = None) -> lora_io.LoraFit:
        """Whether the LoRA file fits this model's denoiser(s) (keys and shapes, from the safetensors headers; no
        model weights are loaded); a one-line RenderError when it does not. Remembered by the file's hash."""
        fam = self.family
        if not fam.lora:
            raise RenderError(f"{fam.name} takes no LoRA in diffusers")
        parts = parts or self.experts()[:1]
        key = (self._sha(path), parts)
        if key not in self._fits:
            folder = model_file(self.model, "model_index.json").parent
            self._fits[key] = lora_io.fit(self.class_name, folder, path, parts)
        return self._fits[key]

    def _sha(self, path: Path) -> str:
        st = path.stat()
        key = (str(path.resolve()), st.st_size, st.st_mtime)
        if key not in self._hashes:
            self._hashes[key] = file_sha256(path)
        return self._hashes[key]

    def _draft(self, fam: Family) -> Draft:
        if fam.draft is None:
            raise RenderError(f"{fam.name} has no draft tier")
        return fam.draft

    def draft_loras(self, fam: Family) -> list[tuple[str, str, float, str]]:
        """The draft tier's speed LoRA(s) — (file, sha256, weight, target) — from CHIEF_VIDEO_DRAFT_LORA or the row's
        default hub files, one per expert, each checked to fit its expert."""
        draft = self._draft(fam)
        specs = self.speed.draft_lora or draft.lora
        if not specs:
            return []
        experts = self.experts()
        if len(specs) != len(experts):
            raise RenderError(
                f"{fam.name} has {len(experts)} expert(s) ({', '.join(experts)}): "
                f"CHIEF_VIDEO_DRAFT_LORA needs {len(experts)} file(s), comma-separated; got {len(specs)}"
            )
        out = []
        for spec, part in zip(specs, experts):
            path = lora_io.local_file(spec, f"the {fam.name} draft's speed LoRA")
            self.check_lora(path, (part,))
            out.append((str(path), self._sha(path), 1.0, part))
        return out

    def tier_label(self, tier: str) -> str:
        """What a tier renders with, in words: 'draft: 4 steps, guidance 1.0, LoRA ×2, cache FirstBlockCache(...)'."""
        fam = self.family
        if tier == "final":
            steps = self.steps or fam.steps
            guidance = self.guidance if self.guidance is not None else fam.guidance
            cache = self.speed.cache_for("final", None, fam.cache)
            return f"final: {steps} steps, guidance {guidance:g}" + (f", cache {cache.text}" if cache else "")
        draft = self._draft(fam)
        parts = [f"draft: {draft.steps} steps, guidance {draft.guidance:g}"]
        if draft.scale != 1.0:
            parts.append(f"{draft.scale:g}x size")
        loras = self.speed.draft_lora or draft.lora
        parts.append(f"speed LoRA ×{len(loras)}" if loras else "no speed LoRA")
        cache = self.speed.cache_for("draft", draft.cache, fam.cache)
        if cache:
            parts.append(f"cache {cache.text}")
        if draft.vae_tiling:
            parts.append("VAE tiling")
        return ", ".join(parts)

    def describe(self) -> dict:
        """Family, pipeline, device and dtype, for the status bar (raises RenderError for a bad model)."""
        fam = self.family
        return {
            "backend": self.name,
            "model": self.model,
            "variant": self.variant,
            "pipeline": self.class_name,
            "family": fam.name,
            "device": self.device,
            "dtype": SHORT_DTYPE[self.dtype],
            "cpu_offload": self.cpu_offload,
            "profile": self.memory.profile,
            "quant": self.memory.quant,
            "offload": self.memory.offload,
            "i2v": (fam.i2v_pipeline if self._has_i2v(fam) else None),
            "vace": (fam.vace_pipeline if self._has_vace(fam) else None),
            "tiers": {t: self.tier_label(t) for t in TIERS if t == "final" or fam.draft is not None},
            "draft_keeps": fam.draft.keeps if fam.draft else None,
            "attention": self.speed.attention_for(self.device),
            "compile": self.speed.compiles(self.device),
            "cache": self.speed.cache,
        }

    @property
    def label(self) -> str:
        try:
            pipeline = self.class_name
        except RenderError:
            pipeline = "model not found"
        vace = f" · VACE {self.vace_model}" if self.vace_model else ""
        weights = f" · {self.variant} weights" if self.variant else ""
        memory = self.memory.label
        speed = self.speed.label(self.device)
        return (
            f"diffusers · {pipeline} · {self.model}{weights}{vace} · {self.device} {SHORT_DTYPE[self.dtype]} · "
            f"{memory} · {speed}"
        )

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
        if request.tier not in TIERS:
            raise RenderError(f"unknown tier {request.tier!r}; use draft or final")
        loras = self._creator_loras(request)
        if request.tier == "draft":  # the row's draft recipe: its steps, guidance, size and speed LoRA(s)
            draft = self._draft(fam)
            steps, guidance, scale = draft.steps, draft.guidance, draft.scale
            loras += [(sha, w, t) for _, sha, w, t in self.draft_loras(fam) if (sha, w, t) not in loras]
            cache = self.speed.cache_for("draft", draft.cache, fam.cache)
        else:
            steps = request.steps or self.steps or fam.steps
            guidance = next(g for g in (request.guidance, self.guidance, fam.guidance) if g is not None)
            scale, cache = 1.0, self.speed.cache_for("final", None, fam.cache)
        attention = self.speed.attention_for(self.device)
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
            scale=scale,
            loras=tuple(loras),
            cache=cache.text if cache else "",
            attention="" if attention == "native" else attention,
        )

    def _creator_loras(self, request: ShotRequest) -> list[tuple[str, float, str]]:
        """The request's own LoRAs (a creator's, for this shot), each checked to fit the model."""
        if request.loras and not self.family.lora:
            raise RenderError(f"{self.family.name} takes no LoRA in diffusers; remove the project's LoRAs")
        own = [entry for entry in request.loras if entry[2] == "all"]
        for path, (sha, _, _) in zip(request.lora_files, own):
            self.check_lora(Path(path))
            if self._sha(Path(path)) != sha:
                raise RenderError(f"LoRA {Path(path).name} does not match its hash {sha[:12]}…")
        return list(own)

    def _route(self, request: ShotRequest, fam: Family) -> str:
        """ "" (text- or image-to-video with the family's own pipelines) or "<VACE class>:<model>"."""
        image = request.keyframe or request.init_image
        vace = ""
        if (
            self.vace_model is not None
            and self._has_vace(fam)
            and (request.references or (image and not self._has_i2v(fam)))
        ):
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
            # _has_i2v: the model is unset only when the family builds image-to-video from the warm parts
            model = None if fam.i2v_shares_components else self.i2v_model
            found = fam.i2v_pipeline if model is None else pipeline_class_name(model)
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
        _, _, fps, frames = req.size()
        width, height = req.render_size(fam.size_multiple)
        steps, guidance = req.sampling()
        kwargs = call_kwargs(
            with_camera(req.prompt, req.camera), width, height, steps, guidance, req.seed, progress, cancel
        )
        if "num_frames" in fam.call_kwargs or req.route:
            kwargs["num_frames"] = frames
        if ("negative_prompt" in fam.call_kwargs or req.route) and req.negative_prompt:
            kwargs["negative_prompt"] = req.negative_prompt
        if fam.fps_kwarg and not req.route:
            kwargs[fam.fps_kwarg] = fps
        if not req.route:
            kwargs.update(fam.extra_kwargs)
            if req.tier == "draft":
                kwargs.update(self._draft(fam).extra_kwargs)
            kwargs.update(windows(fam, frames))
        start = req.keyframe or req.init_image
        image = _rgb(start) if start else None
        if req.route:
            kwargs.update(_vace_inputs(req, image, (width, height)))
        elif image is not None:
            kwargs["image"] = image
        entry, pipe = self._pipeline(fam, req.route, image is not None)
        # What this pipeline's __call__ takes (HunyuanVideo 1.5 has no guidance_scale or step callback: its guider
        # takes the guidance, and Stop acts between shots).
        accepted = inspect.signature(pipe.__call__).parameters
        kwargs = {k: v for k, v in kwargs.items() if k in accepted}
        size = f"{width}x{height}, {frames} frames"
        with entry.lock, pipeline_errors(f"shot {req.shot_id}", fam.name, size, self.device, self.memory):
            if "guidance_scale" not in accepted and getattr(pipe, "guider", None) is not None:
                pipe.guider = pipe.guider.new(guidance_scale=guidance)
            with self._speed(entry, pipe, req, fam):
                output = pipe(**kwargs)
        if cancel is not None:
            cancel.raise_if_cancelled()
        video = to_uint8(output.frames[0])
        n = write_video(video, Path(out), fps)
        audio = None
        if fam.audio and getattr(output, "audio", None) is not None:
            rate = int(pipe.vocoder.config.output_sampling_rate)
            audio = keep_audio(output.audio[0], rate, Path(out), n / fps)
        return ClipInfo(path=Path(out), num_frames=n, fps=fps, width=video.shape[2], height=video.shape[1], audio=audio)

    @contextmanager
    def _speed(self, entry, pipe, req: ShotRequest, fam: Family) -> Iterator[None]:
        """The shot's LoRAs, cache, attention backend and VAE tiling on the pipeline for one call; the cache and the
        draft's tiling are taken off after it, and LoRAs not the next shot's are disabled by the next call."""
        creator = [(f, sha, w, t) for f, (sha, w, t) in zip(req.lora_files, [x for x in req.loras if x[2] == "all"])]
        drafted = self.draft_loras(fam) if req.tier == "draft" else []
        lora_io.activate(pipe, creator + drafted)
        parts = [getattr(pipe, p) for p in lora_io.denoisers(pipe) if p != "unet"]
        if entry.attention != (req.attention or "native"):  # set only when it changes (diffusers logs each call)
            for model in parts:
                model.set_attention_backend(req.attention or "native")
            entry.attention = req.attention or "native"
        if self.speed.compiles(self.device) and not entry.compiled:
            for model in parts:
                model.compile_repeated_blocks(fullgraph=True)
            entry.compiled = True
        cached = []  # the parts whose cache is on, taken off after the call whatever happens
        tiling = req.tier == "draft" and self._draft(fam).vae_tiling and not self.memory.vae_tiling
        try:
            if req.cache:
                cache = next(
                    c for c in (fam.draft.cache if fam.draft else None, fam.cache) if c and c.text == req.cache
                )
                for model in parts:
                    model.enable_cache(cache_config(cache))
                    cached.append(model)
            if tiling:
                pipe.vae.enable_tiling()
            yield
        finally:
            for model in cached:
                model.disable_cache()
            if tiling:
                pipe.vae.disable_tiling()

    # -- loading ---------------------------------------------------------------------------

    def _pipeline(self, fam: Family, route: str, image: bool):
        """The warm entry (for its lock) and the pipeline to call: VACE, text-to-video or image-to-video.

        An image-to-video pipeline is built from the warm parts when the family allows it (no
        extra memory), else loaded from `i2v_model`.
        """
        if route:
            entry = warm(_required(self.vace_model, "vace_model"), self.options, fam.fp32_modules)
            return entry, entry.pipe
        if image and not fam.i2v_shares_components:
            entry = warm(_required(self.i2v_model, "i2v_model"), self.options, fam.fp32_modules)
            return entry, entry.pipe
        entry = warm(self.model, self.options, fam.fp32_modules)
        return entry, (
            derived(entry, _required(fam.i2v_pipeline, f"{fam.name}'s i2v pipeline")) if image else entry.pipe
        )


def _required(value: str | None, what: str) -> str:
    """A model or pipeline `_route` has already checked is set (it routes nothing else here)."""
    if value is None:
        raise RenderError(f"no {what} set")
    return value


def _is_part(value: object) -> bool:
    """A model_index.json entry that names a loaded part (["diffusers", "WanTransformer3DModel"]), not [null, null]."""
    return isinstance(value, list) and bool(value) and value[0] is not None


def windows(fam: Family, frames: int) -> dict[str, Any]:
    """Diffusion forcing's arguments: the model's window (`base_num_frames`) and, for a shot longer than it, the
    overlap and the noise added to the kept frames, so the pipeline extends the shot window by window."""
    if fam.window_frames is None:
        return {}
    out: dict[str, Any] = {"base_num_frames": min(frames, fam.window_frames)}
    if frames > fam.window_frames:
        out.update(overlap_history=fam.overlap_frames, addnoise_condition=fam.addnoise)
    return out


def window_count(fam: Family, frames: int) -> int:
    """How many windows the pipeline renders for `frames` (its own arithmetic, in latent frames)."""
    if fam.window_frames is None or frames <= fam.window_frames:
        return 1
    a = fam.frame_rule[0]
    latent, base, overlap = (frames - 1) // a + 1, (fam.window_frames - 1) // a + 1, (fam.overlap_frames - 1) // a + 1
    return 1 + (latent - base - 1) // (base - overlap) + 1


def keep_audio(audio, rate: int, out: Path, seconds: float) -> Path:
    """The sound a pipeline returned with the picture (LTX-2): written as a WAV beside the clip and muxed into it
    as its audio stream (AAC, padded or cut to the picture's length). What the film does with it belongs to the
    sound pipeline."""
    import wave

    import numpy as np

    samples = np.asarray(audio.float().cpu() if hasattr(audio, "float") else audio, dtype=np.float32)
    samples = np.nan_to_num(samples).clip(-1.0, 1.0)
    if samples.ndim == 1:
        samples = samples[None]
    wav = out.with_suffix(".wav")
    with wave.open(str(wav), "wb") as w:  # 16-bit PCM, channels interleaved
        w.setnchannels(samples.shape[0])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((samples.T * 32767).astype("<i2").tobytes())
    muxed = out.with_suffix(".audio.mp4")
    run_ffmpeg(
        ["-y", "-i", str(out), "-i", str(wav), "-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "aac"]
        + ["-af", "apad", "-t", f"{seconds:.6f}", str(muxed)]
    )
    muxed.replace(out)
    return wav


def _rgb(path: str):
    from PIL import Image

    with Image.open(path) as im:
        return im.convert("RGB")


def _vace_inputs(req: ShotRequest, first, size: tuple[int, int]) -> dict[str, Any]:
    """VACE's inputs: the reference images, and the first frame as a one-frame video whose other frames are
    masked for generation (black = keep, white = generate, as the pipeline's documentation shows)."""
    from PIL import Image

    out: dict[str, Any] = {}
    if req.references:
        out["reference_images"] = [_rgb(p) for p in req.references]
    if first is not None:
        frames = req.size()[3]  # at the size the picture renders (a draft's may be smaller)
        grey = Image.new("RGB", size, (128, 128, 128))
        out["video"] = [first.resize(size)] + [grey] * (frames - 1)
        out["mask"] = [Image.new("L", size, 0)] + [Image.new("L", size, 255)] * (frames - 1)
    return out
