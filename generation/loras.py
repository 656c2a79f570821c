"""LoRAs on a video model: whether one fits (before anything is written or rendered), and applying a shot's LoRAs.

Everything goes through diffusers' own LoRA loader (peft): the pipeline class's `lora_state_dict` reads a file and
converts the common key formats (diffusers/peft, the original Wan keys, musubi/kohya) to diffusers' names;
`fit` compares those names and shapes with the model's own denoiser weights, read from its safetensors headers (no
weights are loaded), so a LoRA made for another model is refused in one line; and it asks the LoRA to be whole
(`_whole`): every layer it adapts has both halves (A and B, of one rank), and what it adapts in one block it adapts
in every block of that kind the model has (a file holding half its tensors is refused, not half applied). `activate` loads each LoRA a shot
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


def check_file(path: Path) -> None:
    """Refuse (RenderError, one line) a file that is not a safetensors file a LoRA could be: over MAX_LORA_BYTES, a
    header that is not a JSON object of tensors, or a tensor whose bytes lie outside the file or overlap another's."""
    size = path.stat().st_size
    if size > MAX_LORA_BYTES:
        raise RenderError(f"{path.name} is {size >> 20} MiB: too large for a LoRA")
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise RenderError(f"{path.name} is not a safetensors file")
        (length,) = struct.unpack("<Q", head)
        if length > min(_HEADER_LIMIT, size - 8):
            raise RenderError(f"{path.name} is not a safetensors file (a header of {length} bytes)")
        try:
            header = json.loads(f.read(length))
        except ValueError:
            raise RenderError(f"{path.name} is not a safetensors file") from None
    if not isinstance(header, dict):
        raise RenderError(f"{path.name} is not a safetensors file")
    spans = []
    for name, t in header.items():
        if name == "__metadata__":
            continue
        offsets = t.get("data_offsets") if isinstance(t, dict) else None
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1] <= size - 8 - length
        ):
            raise RenderError(f"{path.name} is not a safetensors file (tensor {str(name)[:80]!r})")
        spans.append((offsets[0], offsets[1]))
    spans.sort()
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
        raise RenderError(f"{path.name} is not a safetensors file (its tensors overlap)")


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
        _whole(name, sd, shapes)
    return LoraFit(layers=len(layers), rank=rank)


def _whole(name: str, sd: dict[str, Any], shapes: dict[str, list[int]]) -> None:
    """Refuse (one line) a LoRA that is not whole against one denoiser's `shapes`: a layer with only one of its A and
    B matrices (or a bias without them), A and B of different ranks, or a module it adapts in some blocks of the model
    but not in others. A block is where a module's path first holds a number (`blocks.3`, `single_blocks.0`); what
    the LoRA adapts in a block of one family (`attn1.to_q`) it must adapt in every block of that family holding it."""
    halves: dict[str, dict[str, list[int]]] = {}
    for key, tensor in sd.items():
        m = _KEY.match(key)
        assert m is not None  # fit checked every key first
        halves.setdefault(m["module"], {})[m["kind"]] = list(tensor.shape)
    for module, got in sorted(halves.items()):
        a, b = got.get("lora_A.weight"), got.get("lora_B.weight")
        if a is None or b is None:
            have = " and ".join(k.split(".")[0] for k in sorted(got))
            raise RenderError(f"{name} is incomplete: {module} has only {have} (a LoRA layer needs lora_A and lora_B)")
        if len(b) < 2 or a[0] != b[1]:
            raise RenderError(f"{name} is inconsistent: {module} has lora_A of rank {a[0]} and lora_B {b}")
    claimed: dict[str, set[str]] = {}  # family -> the modules the LoRA adapts in its blocks
    for module in halves:
        split = _block(module)
        if split is not None:
            claimed.setdefault(split[0], set()).add(split[2])
    if not claimed:
        return
    for layer in sorted(k.removesuffix(".weight") for k in shapes if k.endswith(".weight")):
        split = _block(layer)
        if split is not None and split[2] in claimed.get(split[0], ()) and layer not in halves:
            raise RenderError(
                f"{name} is incomplete: it adapts {split[2]} in other {split[0]!r} blocks but not {layer} (the model "
                "has it there)"
            )


def _block(module: str) -> tuple[str, str, str] | None:
    """(family, index, the module inside the block) of a module path whose first numbered part is a block's index:
    "blocks.3.attn1.to_q" -> ("blocks", "3", "attn1.to_q"); None for a module outside numbered blocks."""
    parts = module.split(".")
    at = next((i for i, p in enumerate(parts) if p.isdigit()), None)
    if at is None or at == 0 or at == len(parts) - 1:
        return None
    return ".".join(parts[:at]), parts[at], ".".join(parts[at + 1 :])


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
