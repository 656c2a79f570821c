"""Still images: character and location references, and one keyframe per shot.

Backends know nothing of projects: an `ImageRequest` in, one PNG out. `DiffusersImages` runs any text-to-image
family in `IMAGE_FAMILIES` (FLUX, SDXL, SD3, Qwen-Image), from a local folder or a cached hub id, kept warm like
the video pipelines (`generation.pipelines`). A request that carries reference images is rendered image-to-image
from them (the family's img2img pipeline, built from the same parts: no extra memory), so a keyframe keeps the
references' colours and rough shapes. Several references are laid side by side into one start image.
The animatic draws keyframes too (`generation.animatic_frames`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from .base import CancelToken, Progress, RenderError, file_sha256
from .pipelines import SHORT_DTYPE, PipelineModel, call_kwargs, derived, pipeline_errors, to_uint8, warm


@dataclass(frozen=True)
class ImageRequest:
    """Everything that determines a still's pixels (and the subject, for messages)."""

    subject: str  # "keyframe s3", "reference Keeper": named in progress and errors, not part of the key
    prompt: str
    negative_prompt: str = ""
    seed: int = 0
    width: int | None = None
    height: int | None = None
    steps: int | None = None
    guidance: float | None = None
    strength: float | None = None  # how far image-to-image moves from the references (0 none .. 1 all)
    caption: str = ""  # text an animatic draws on the panel (not used by diffusion)
    references: tuple[str, ...] = ()  # paths of the reference images that condition the still
    references_sha256: tuple[str, ...] = ()

    def with_(self, **changes) -> ImageRequest:
        return replace(self, **changes)

    def size(self) -> tuple[int, int]:
        """(width, height) of a request `resolve` has filled in."""
        if self.width is None or self.height is None:
            raise ValueError(f"{self.subject}: the request is not resolved (resolve fills its size)")
        return self.width, self.height

    def sampling(self) -> tuple[int, float]:
        """(steps, guidance) of a request a diffusion backend's `resolve` has filled in."""
        if self.steps is None or self.guidance is None:
            raise ValueError(f"{self.subject}: the request is not resolved (resolve fills its sampling)")
        return self.steps, self.guidance


@dataclass(frozen=True)
class ImageInfo:
    path: Path
    width: int
    height: int


@runtime_checkable
class ImageBackend(Protocol):
    # read-only: a backend may hold them as attributes or compute them (DiffusersImages' label)
    @property
    def name(self) -> str: ...  # "animatic", "diffusers"

    @property
    def model(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def supports_references(self) -> bool: ...  # whether reference images condition a still

    def resolve(self, request: ImageRequest) -> ImageRequest: ...

    def render(
        self, request: ImageRequest, out: Path, progress: Progress | None = None, cancel: CancelToken | None = None
    ) -> ImageInfo: ...


def image_key(backend: ImageBackend, request: ImageRequest) -> str:
    """Content key of a still: the backend, model and resolved request; references enter by their hashes."""
    fields = asdict(request)
    for name in ("subject", "references"):
        fields.pop(name)
    payload = {"backend": backend.name, "model": backend.model, "request": fields, "v": 1}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class ImageFamily:
    name: str  # shown to the user
    width: int
    height: int
    size_multiple: int  # the VAE's scale (times the patch size where latents are packed)
    steps: int
    guidance: float
    img2img_pipeline: str  # built from the text-to-image pipeline's parts
    strength: float = 0.75
    negative_prompt: bool = True  # FLUX has none without true CFG
    guidance_kwarg: str = "guidance_scale"  # Qwen-Image's classifier-free guidance is `true_cfg_scale`
    fp32_modules: tuple[str, ...] = ()


# Defaults from each pipeline's `__call__` and model card.
IMAGE_FAMILIES: dict[str, ImageFamily] = {
    "FluxPipeline": ImageFamily(
        "FLUX", 1024, 1024, 16, steps=28, guidance=3.5, img2img_pipeline="FluxImg2ImgPipeline", negative_prompt=False
    ),
    "StableDiffusionXLPipeline": ImageFamily(
        "SDXL", 1024, 1024, 8, steps=30, guidance=5.0, img2img_pipeline="StableDiffusionXLImg2ImgPipeline"
    ),
    "StableDiffusion3Pipeline": ImageFamily(
        "SD3", 1024, 1024, 16, steps=28, guidance=7.0, img2img_pipeline="StableDiffusion3Img2ImgPipeline"
    ),
    "QwenImagePipeline": ImageFamily(
        "Qwen-Image",
        1328,
        1328,
        16,
        steps=50,
        guidance=4.0,
        img2img_pipeline="QwenImageImg2ImgPipeline",
        guidance_kwarg="true_cfg_scale",
    ),
}


def image_family_of(class_name: str, model: str) -> ImageFamily:
    """The family row for a text-to-image pipeline class; a one-line error for anything else."""
    if class_name in IMAGE_FAMILIES:
        return IMAGE_FAMILIES[class_name]
    if class_name in {f.img2img_pipeline for f in IMAGE_FAMILIES.values()}:
        raise RenderError(
            f"{model} is an image-to-image pipeline ({class_name}); "
            "CHIEF_IMAGE_MODEL takes the text-to-image model (its image-to-image twin is built from it)"
        )
    raise RenderError(
        f"{model}: {class_name} is not a supported text-to-image pipeline (supported: {', '.join(IMAGE_FAMILIES)})"
    )


def snap(value: int, multiple: int) -> int:
    """`value` rounded down to a multiple (at least one multiple)."""
    return max(multiple, value - value % multiple)


def collage(paths: tuple[str, ...], width: int, height: int):
    """The references side by side, each fitted into its share of a `width` x `height` grey canvas."""
    from PIL import Image

    canvas = Image.new("RGB", (width, height), (128, 128, 128))
    cell = width // len(paths)
    for i, path in enumerate(paths):
        with Image.open(path) as im:
            im = im.convert("RGB")
            im.thumbnail((cell, height))
            canvas.paste(im, (i * cell + (cell - im.width) // 2, (height - im.height) // 2))
    return canvas


class DiffusersImages(PipelineModel):
    """Any diffusers text-to-image pipeline in IMAGE_FAMILIES; image-to-image from references."""

    name = "diffusers"
    supports_references = True

    @property
    def family(self) -> ImageFamily:
        return image_family_of(self.class_name, self.model)

    @property
    def label(self) -> str:
        try:
            pipeline = self.class_name
        except RenderError:
            pipeline = "model not found"
        return f"diffusers images · {pipeline} · {self.model} · {self.device} {SHORT_DTYPE[self.dtype]}"

    def resolve(self, request: ImageRequest) -> ImageRequest:
        """Fill size, steps, guidance and strength from the family; sizes snap down to the family's multiple."""
        fam = self.family
        width = snap(request.width or fam.width, fam.size_multiple)
        height = snap(request.height or fam.height, fam.size_multiple)
        refs = request.references_sha256
        for path in request.references if not refs else ():
            if not Path(path).is_file():
                raise RenderError(f"{request.subject}: reference image {path} does not exist")
        refs = refs or tuple(file_sha256(Path(p)) for p in request.references)
        strength = (request.strength if request.strength is not None else fam.strength) if refs else None
        return request.with_(
            width=width,
            height=height,
            steps=request.steps or fam.steps,
            guidance=request.guidance if request.guidance is not None else fam.guidance,
            strength=strength,
            references_sha256=refs,
        )

    def render(
        self, request: ImageRequest, out: Path, progress: Progress | None = None, cancel: CancelToken | None = None
    ) -> ImageInfo:
        """Render one still to `out` (PNG); deterministic for a given request."""
        from PIL import Image

        req = self.resolve(request)
        fam = self.family
        if cancel is not None:
            cancel.raise_if_cancelled()
        width, height = req.size()
        steps, guidance = req.sampling()
        kwargs = call_kwargs(req.prompt, width, height, steps, guidance, req.seed, progress, cancel, fam.guidance_kwarg)
        if fam.negative_prompt and req.negative_prompt:
            kwargs["negative_prompt"] = req.negative_prompt
        entry = warm(self.model, self.options, fam.fp32_modules)
        pipe = entry.pipe
        if req.references:
            kwargs.update(image=collage(req.references, width, height), strength=req.strength)
            pipe = derived(entry, fam.img2img_pipeline)
        with entry.lock, pipeline_errors(req.subject, fam.name, f"{width}x{height}", self.device):
            image = pipe(**kwargs).images[0]
        if cancel is not None:
            cancel.raise_if_cancelled()
        pixels = to_uint8(image)
        Image.fromarray(pixels).save(out, format="PNG")
        return ImageInfo(path=Path(out), width=pixels.shape[1], height=pixels.shape[0])
