"""The backend protocol: one plain request in, one clip file out.

Backends know nothing of projects or databases. The caller builds a `ShotRequest`, asks the
backend to `resolve` it (fill the family's defaults and frame rule), computes the clip key from
the resolved request, and only renders when no clip with that key exists.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from storage.fileio import file_sha256 as file_sha256  # one hasher for every layer
from storage.run import Cancelled as Cancelled  # the run contract (re-exported: one stop flag, one exception)
from storage.run import CancelToken as CancelToken

# progress(done_steps, total_steps) for the shot being rendered.
Progress = Callable[[int, int], None]


class RenderError(Exception):
    """A render failed in a way the user can act on (a one-line message)."""


@dataclass(frozen=True)
class ShotRequest:
    """Everything that determines a clip's pixels (and nothing else)."""

    shot_id: str
    prompt: str
    negative_prompt: str = ""
    seed: int = 0
    duration: float = 5.0
    camera: str = "static"
    width: int | None = None
    height: int | None = None
    fps: int | None = None
    num_frames: int | None = None  # set by Backend.resolve from duration, fps and the family's rule
    steps: int | None = None
    guidance: float | None = None
    caption: str = ""  # text an animatic draws on the frame (not used by diffusion)
    init_image: str | None = None  # path of the conditioning frame (continuity), if any
    init_image_sha256: str | None = None
    keyframe: str | None = None  # path of the approved keyframe the clip starts from (image-to-video), if any
    keyframe_sha256: str | None = None
    references: tuple[str, ...] = ()  # paths of the characters' reference images (Wan VACE), if any
    references_sha256: tuple[str, ...] = ()
    route: str = ""  # set by resolve when a partner model renders the request (e.g. "WanVACEPipeline:<model>")
    tier: str = "final"  # "draft" (the family's draft recipe) or "final"
    scale: float = 1.0  # set by resolve: the picture renders at width x height times this (a draft's smaller size)
    # LoRAs as (sha256, weight, target: "all" experts, "transformer" or "transformer_2"), their files beside them
    loras: tuple[tuple[str, float, str], ...] = ()
    lora_files: tuple[str, ...] = ()
    cache: str = ""  # set by resolve: the cache hook the denoiser runs with (`families.Cache.text`), "" none
    attention: str = ""  # set by resolve: the attention backend when it is not torch's native one

    def with_(self, **changes) -> ShotRequest:
        return replace(self, **changes)

    def size(self) -> tuple[int, int, int, int]:
        """(width, height, fps, num_frames) of a request `Backend.resolve` has filled in."""
        if self.width is None or self.height is None or self.fps is None or self.num_frames is None:
            raise ValueError(f"shot {self.shot_id}: the request is not resolved (Backend.resolve fills its size)")
        return self.width, self.height, self.fps, self.num_frames

    def render_size(self, multiple: int = 1) -> tuple[int, int]:
        """(width, height) the picture renders at: the resolved size times `scale`, snapped to `multiple`."""
        width, height, _, _ = self.size()
        if self.scale == 1.0:
            return width, height

        def snap(v: int) -> int:
            return max(multiple, round(v * self.scale / multiple) * multiple)

        return snap(width), snap(height)

    def sampling(self) -> tuple[int, float]:
        """(steps, guidance) of a request `Backend.resolve` has filled in."""
        if self.steps is None or self.guidance is None:
            raise ValueError(f"shot {self.shot_id}: the request is not resolved (Backend.resolve fills its sampling)")
        return self.steps, self.guidance


@dataclass(frozen=True)
class ClipInfo:
    path: Path
    num_frames: int
    fps: int
    width: int
    height: int
    audio: Path | None = None  # sound the model made with the picture (LTX-2), also the clip's audio stream


@runtime_checkable
class Backend(Protocol):
    # read-only: a backend may hold them as attributes or compute them (DiffusersBackend's label and continuity)
    @property
    def name(self) -> str: ...  # "animatic", "diffusers"

    @property
    def model(self) -> str: ...  # model id or folder; "" for the animatic

    @property
    def label(self) -> str: ...  # what the user is shown, e.g. "animatic (previz — not a model render)"

    @property
    def supports_continuity(self) -> bool: ...

    def resolve(self, request: ShotRequest) -> ShotRequest: ...

    def render(
        self, request: ShotRequest, out: Path, progress: Progress | None = None, cancel: CancelToken | None = None
    ) -> ClipInfo: ...


# Fields added after clips were first keyed: left out of the key while unset, so older keys stay valid.
_LATER_FIELDS = {
    "keyframe_sha256": None,
    "references_sha256": (),
    "route": "",
    "tier": "final",
    "scale": 1.0,
    "loras": (),
    "cache": "",
    "attention": "",
}


def clip_key(backend: Backend, request: ShotRequest) -> str:
    """Content key of a clip: a hash of the backend, model and the resolved request.

    Images (the conditioning frame, the keyframe, the references) and LoRAs enter by their hashes, never their
    paths. The tier and what it changes (steps, guidance, scale, LoRAs with their weights, cache, attention) are
    request fields, so drafts and finals are cached apart.
    """
    fields = asdict(request)
    for name in (
        "shot_id",
        "init_image",
        "keyframe",
        "references",
        "lora_files",
    ):  # two shots with identical settings share a clip
        fields.pop(name)
    for name, unset in _LATER_FIELDS.items():
        if fields[name] == unset:
            fields.pop(name)
    payload = {"backend": backend.name, "model": backend.model, "request": fields, "v": 1}
    quant = getattr(getattr(backend, "memory", None), "quant", "none")  # quantized weights draw other pixels
    if quant != "none":
        payload["quant"] = quant
    variant = getattr(backend, "variant", None)  # so do other weights of the same model (fp16 files: other numbers)
    if variant:
        payload["variant"] = variant
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def frames_for(duration: float, fps: int, rule: tuple[int, int] = (1, 0), max_frames: int | None = None) -> int:
    """Frame count for a duration under a family's rule `frames = a*k + b` (Wan (4, 1), LTX (8, 1))."""
    a, b = rule
    want = max(1, round(duration * fps))
    k = max(1, round((want - b) / a))
    n = a * k + b
    if max_frames is not None and n > max_frames:
        k = (max_frames - b) // a
        n = a * k + b
    return n


def compose_prompt(prompt: str, style_guide: str = "", characters: dict[str, str] | None = None) -> str:
    """The one place where the style guide and the character bible are folded into a shot prompt.

    `characters` maps the names appearing in this shot to their bible descriptions, so a character
    is described with the same words in every shot.
    """
    parts = [prompt.strip()]
    for name, description in (characters or {}).items():
        parts.append(f"{name}: {description.strip()}")
    if style_guide.strip():
        parts.append(f"Style: {style_guide.strip()}")
    return ". ".join(p.rstrip(". ") for p in parts if p) + "."


# How a text-to-video model is told a shot's camera move: in words, as these models are trained (Wan, LTX,
# CogVideoX and HunyuanVideo take camera motion from the prompt). "static" adds nothing.
CAMERA_WORDS = {
    "static": "",
    "pan_left": "the camera pans slowly to the left",
    "pan_right": "the camera pans slowly to the right",
    "tilt_up": "the camera tilts up",
    "tilt_down": "the camera tilts down",
    "zoom_in": "slow zoom in",
    "zoom_out": "slow zoom out",
    "dolly_in": "the camera dollies in",
    "handheld": "handheld camera, slight shake",
}


def with_camera(prompt: str, camera: str) -> str:
    """The prompt a video model gets for a shot with this camera move (the clip key already holds the move)."""
    words = CAMERA_WORDS.get(camera, "")
    return f"{prompt.rstrip()} Camera: {words}." if words else prompt
