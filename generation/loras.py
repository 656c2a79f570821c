"""LoRAs on a video model: whether one fits (before anything is written or rendered), and applying a shot's LoRAs.

Everything goes through diffusers' own LoRA loader (peft): the pipeline class's `lora_state_dict` reads a file and
converts the common key formats (diffusers/peft, the original Wan keys, musubi/kohya) to diffusers' names;
`fit` compares those names and shapes with the model's own denoiser weights, read from its safetensors headers (no
weights are loaded), so a LoRA made for another model is refused in one line. `activate` loads each LoRA a shot
needs once per warm pipeline (`load_lora_weights(..., adapter_name=...)`, `load_into_transformer_2=True` for Wan
2.2's second expert), turns on exactly those at their weights (`set_adapters`) and disables the rest, so a LoRA
acts only on the shots it concerns.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import RenderError

DENOISERS = ("transformer", "transformer_2", "unet")  # the parts a LoRA adapts (text-encoder LoRAs are not taken)
MAX_LORA_BYTES = 4 << 30  # a LoRA file larger than this is not one (Wan 2.2 Lightning: 1.2 GB per expert)
_HEADER_LIMIT = 100 << 20
_KEY = re.compile(r"^(?P<part>[a-z_0-9]+)\.(?P<module>.+)\.(?P<kind>lora_A\.weight|lora_B\.weight|lora_B\.bias)$")


@dataclass(frozen=True)
class LoraFit:
    """What a LoRA adapts: the layers it touches in one denoiser and its rank."""

    layers: int
    rank: int

    @property
    def text(self) -> str:
        return f"{self.layers} layers, rank {self.rank}"


def adapter_name(sha256: str) -> str:
    return f"chief_{sha256[:16]}"


def local_file(spec: str, what: str) -> Path:
    """A LoRA file: a path, or "hub id:path in the repo" read from the Hugging Face cache (never downloaded)."""
    path = Path(spec).expanduser()
    if path.is_file():
        return path
    if ":" in spec and not path.exists():
        repo, name = spec.split(":", 1)
        try:
            from huggingface_hub import hf_hub_download

            return Path(hf_hub_download(repo, name, local_files_only=True))
        except Exception:
            raise RenderError(
                f"{what} {name} of {repo} is not in the Hugging Face cache "
                f"(download it first: `hf download {repo} {name}`), or set CHIEF_VIDEO_DRAFT_LORA to a file"
            ) from None
    raise RenderError(f"{what} {spec} does not exist")


def _shapes(path: Path) -> dict[str, list[int]]:
    """{tensor name: shape} from a safetensors header."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise RenderError(f"{path.name} is not a safetensors file")
        (size,) = struct.unpack("<Q", head)
        if size > _HEADER_LIMIT:
            raise RenderError(f"{path.name}: safetensors header of {size} bytes is too large")
        try:
            header = json.loads(f.read(size))
        except ValueError:
            raise RenderError(f"{path.name} is not a safetensors file") from None
    return {k: v["shape"] for k, v in header.items() if k != "__metadata__" and isinstance(v, dict)}


def model_shapes(model_dir: Path, part: str) -> dict[str, list[int]]:
    """The weight shapes of one denoiser of a pipeline folder (every safetensors shard of it)."""
    out: dict[str, list[int]] = {}
    for f in sorted((model_dir / part).glob("*.safetensors")):
        out.update(_shapes(f))
    return out


def state_dict(class_name: str, path: Path) -> dict[str, Any]:
    """The LoRA's tensors under diffusers' names, converted by the pipeline class's own `lora_state_dict`."""
    import diffusers

    cls = getattr(diffusers, class_name)
    if not hasattr(cls, "lora_state_dict"):
        raise RenderError(f"{class_name} takes no LoRA in diffusers")
    if path.stat().st_size > MAX_LORA_BYTES:
        raise RenderError(f"{path.name} is {path.stat().st_size >> 20} MiB: too large for a LoRA")
    try:
        loaded = cls.lora_state_dict(str(path))
    except Exception as e:
        raise RenderError(f"{path.name} is not a LoRA diffusers can read ({type(e).__name__})") from None
    return loaded[0] if isinstance(loaded, tuple) else loaded


def fit(class_name: str, model_dir: Path, path: Path, parts: Sequence[str]) -> LoraFit:
    """Whether the LoRA at `path` fits the denoiser(s) `parts` of the pipeline in `model_dir`: every key names a
    layer of the model and every shape matches it; else one line saying what does not fit. Nothing is loaded but the
    LoRA's own tensors."""
    sd = state_dict(class_name, path)
    if not sd:
        raise RenderError(f"{path.name} holds no LoRA weights")
    name = path.name
    layers: set[str] = set()
    rank = 0
    for part in parts:
        shapes = model_shapes(model_dir, part)
        if not shapes:
            raise RenderError(f"the model has no {part} weights to check {name} against")
        for key, tensor in sd.items():
            m = _KEY.match(key)
            if m is None or m["part"] not in DENOISERS:
                raise RenderError(f"{name} does not fit the model: {key!r} names no layer of its denoiser")
            if m["part"] != "transformer" and m["part"] != part:
                raise RenderError(f"{name} does not fit the model: {key!r} is for {m['part']}, not {part}")
            base = shapes.get(f"{m['module']}.weight")
            if base is None:
                raise RenderError(f"{name} does not fit the model: it has no layer {m['module']}")
            shape = list(tensor.shape)
            if m["kind"] == "lora_A.weight":
                ok, want = len(shape) >= 2 and len(base) >= 2 and shape[1] == base[1], f"{base[1]} inputs"
                rank = max(rank, shape[0])
            elif m["kind"] == "lora_B.weight":
                ok, want = len(shape) >= 2 and shape[0] == base[0], f"{base[0]} outputs"
            else:
                ok, want = shape == [base[0]], f"{base[0]} outputs"
            if not ok:
                raise RenderError(f"{name} does not fit the model: {m['module']} has {want}, the LoRA {shape}")
            layers.add(m["module"])
    return LoraFit(layers=len(layers), rank=rank)


def denoisers(pipe) -> list[str]:
    """The parts of a loaded pipeline a LoRA can adapt."""
    return [p for p in DENOISERS if getattr(pipe, p, None) is not None]


def activate(pipe, loras: Sequence[tuple[str, str, float, str]]) -> None:
    """Make exactly `loras` — (file, sha256, weight, target: "all", "transformer" or "transformer_2") — act on the
    pipeline's next call: each is loaded once (kept on the warm pipeline, named by its hash), the shot's are set at
    their weights, and every part with none of them has its LoRAs disabled."""
    parts = denoisers(pipe)
    wanted: dict[str, list[tuple[str, float]]] = {p: [] for p in parts}
    for path, sha, weight, target in loras:
        for part in parts if target == "all" else [target]:
            if part not in parts:
                raise RenderError(f"this model has no {part} for the LoRA {Path(path).name}")
            name = adapter_name(sha)
            model = getattr(pipe, part)
            if name not in (getattr(model, "peft_config", None) or {}):
                extra = {"load_into_transformer_2": True} if part == "transformer_2" else {}
                pipe.load_lora_weights(path, adapter_name=name, **extra)
            wanted[part].append((name, weight))
    for part in parts:
        model = getattr(pipe, part)
        if not getattr(model, "peft_config", None):
            continue
        if wanted[part]:
            model.enable_lora()
            model.set_adapters([n for n, _ in wanted[part]], [w for _, w in wanted[part]])
        else:
            model.disable_lora()
