"""How a video pipeline fits the GPU: quantization, offloading, VAE tiling, and the named profiles that combine them.

Everything goes through diffusers' own machinery: `PipelineQuantizationConfig` with torchao (int8, fp8 weight-only)
or bitsandbytes (nf4) for the transformer(s), `GGUFQuantizationConfig` for a transformer read from a GGUF file,
`enable_group_offload` (block or leaf level, CUDA streams when there are) and `enable_model_cpu_offload`.
What needs CUDA is refused on another device in one line, before anything loads. int8 weight-only (torchao) runs on
the CPU too.

Also here: `estimate`, the memory a model needs under each profile, read from its config and safetensors headers
(no weights are loaded): the method is in docs/memory.md.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

from .base import RenderError

QUANTS = ("none", "int8", "fp8", "nf4", "gguf")
OFFLOADS = ("none", "model", "block", "leaf")  # model CPU offload; group offloading at block or leaf level
TRANSFORMERS = ("transformer", "transformer_2")  # what is quantized: the denoiser(s); text encoders and VAE are not


@dataclass(frozen=True)
class Memory:
    """One way of fitting a pipeline in memory; part of the warm pipeline's key."""

    quant: str = "none"
    offload: str = "none"
    vae_tiling: bool = False
    vae_slicing: bool = False
    profile: str = "custom"  # the named profile it came from, or "custom" (the separate settings)
    gguf_file: str | None = None  # the transformer's GGUF file, with quant "gguf"

    @property
    def label(self) -> str:
        """What the render says: 'profile fits 12 GB · int8 · offload model · VAE tiling'."""
        parts = [f"profile {self.profile}", self.quant if self.quant != "none" else "no quantization"]
        parts.append(f"offload {self.offload}" if self.offload != "none" else "no offload")
        if self.vae_tiling:
            parts.append("VAE tiling")
        if self.vae_slicing:
            parts.append("VAE slicing")
        return " · ".join(parts)


@dataclass(frozen=True)
class Profile:
    name: str
    quant: str
    offload: str
    vae_tiling: bool
    about: str
    factor: dict[str, float] = field(default_factory=dict)  # see estimate()


# From the most memory to the least. `fastest`: everything resident in the model's dtype. The others trade speed for
# memory in the order the diffusers memory guide gives: int8 weights, then model offload, then nf4 weights with group
# offloading at leaf level (the smallest resident set, streams overlap the transfers).
PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("fastest", "none", "none", False, "every part resident on the GPU in the model's dtype"),
        Profile("fits 24 GB", "int8", "none", True, "int8 weight-only transformer (torchao), VAE tiling"),
        Profile("fits 12 GB", "int8", "model", True, "int8 transformer, model CPU offload, VAE tiling"),
        Profile(
            "fits 8 GB", "nf4", "leaf", True, "nf4 transformer (bitsandbytes), leaf-level group offload, VAE tiling"
        ),
    )
}
PROFILE_NAMES = ("custom", *PROFILES)


def profile_memory(name: str, *, gguf_file: str | None = None) -> Memory:
    """The Memory of a named profile (names are case- and dash-insensitive: 'fits-8-gb' is 'fits 8 GB')."""
    wanted = _norm(name)
    for p in PROFILES.values():
        if _norm(p.name) == wanted:
            return Memory(p.quant, p.offload, p.vae_tiling, False, p.name, gguf_file)
    raise RenderError(f"unknown memory profile {name!r}; use one of: {', '.join(PROFILE_NAMES)}")


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def next_profile(current: str) -> str | None:
    """The profile that needs less memory than `current` (None: there is none smaller)."""
    names = list(PROFILES)
    if current not in names:
        return names[1]  # a custom setting that ran out: start from the first memory-saving profile
    i = names.index(current)
    return names[i + 1] if i + 1 < len(names) else None


def oom_advice(memory: Memory) -> str:
    nxt = next_profile(memory.profile)
    if nxt is None:
        return "already the smallest profile (fits 8 GB): try a smaller size or fewer frames"
    return f"try CHIEF_VIDEO_PROFILE='{nxt}' (now: {memory.profile})"


# -- what a machine can do -------------------------------------------------------------------


def backends() -> dict[str, bool]:
    """Which quantization libraries are importable (torchao: int8/fp8, bitsandbytes: nf4, gguf: GGUF files)."""
    return {name: importlib.util.find_spec(name) is not None for name in ("torchao", "bitsandbytes", "gguf")}


def check(memory: Memory, device: str) -> None:
    """Refuse, in one line and before loading, what this device or this install cannot do."""
    import torch

    cuda = device.split(":")[0] == "cuda"
    if memory.quant not in QUANTS:
        raise RenderError(f"unknown CHIEF_VIDEO_QUANT {memory.quant!r}; use one of: {', '.join(QUANTS)}")
    if memory.offload not in OFFLOADS:
        raise RenderError(f"unknown offload {memory.offload!r}; use one of: {', '.join(OFFLOADS)}")
    where = f"profile {memory.profile}: " if memory.profile != "custom" else ""
    if memory.offload != "none" and not cuda:
        what = "model CPU offload" if memory.offload == "model" else f"{memory.offload}-level group offloading"
        raise RenderError(f"{where}{what} moves weights between the CPU and a CUDA GPU; the device is {device}")
    if memory.quant == "fp8":
        if not cuda:
            raise RenderError(f"{where}fp8 weights need a CUDA GPU (compute capability 8.9+); the device is {device}")
        if torch.cuda.get_device_capability(torch.device(device)) < (8, 9):
            raise RenderError(f"{where}fp8 weights need compute capability 8.9+ (Ada, Hopper); use int8")
    if memory.quant == "nf4" and not cuda:
        raise RenderError(f"{where}nf4 weights (bitsandbytes) need a CUDA GPU; the device is {device}")
    library = {"int8": "torchao", "fp8": "torchao", "nf4": "bitsandbytes", "gguf": "gguf"}.get(memory.quant)
    if library and not backends()[library]:
        raise RenderError(f"{where}{memory.quant} weights need the {library} package (pip install {library})")
    if memory.quant == "gguf" and not (memory.gguf_file and Path(memory.gguf_file).is_file()):
        raise RenderError(
            f"CHIEF_VIDEO_QUANT=gguf needs CHIEF_VIDEO_GGUF, the transformer's .gguf file (got {memory.gguf_file!r})"
        )


def quantization_config(memory: Memory, components: list[str], dtype):
    """diffusers' PipelineQuantizationConfig for the transformer(s) in `components`; None for none and gguf."""
    if memory.quant in ("none", "gguf"):
        return None
    from diffusers import PipelineQuantizationConfig

    targets = [c for c in TRANSFORMERS if c in components]
    if not targets:
        raise RenderError(f"CHIEF_VIDEO_QUANT={memory.quant} quantizes the transformer; this pipeline has none")
    if memory.quant == "nf4":
        return PipelineQuantizationConfig(
            quant_backend="bitsandbytes_4bit",
            quant_kwargs={"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "bnb_4bit_compute_dtype": dtype},
            components_to_quantize=targets,
        )
    from diffusers import TorchAoConfig
    from torchao.quantization import Float8WeightOnlyConfig, Int8WeightOnlyConfig

    kind = Int8WeightOnlyConfig() if memory.quant == "int8" else Float8WeightOnlyConfig()
    return PipelineQuantizationConfig(quant_mapping={c: TorchAoConfig(kind) for c in targets})


def gguf_transformer(model: str, memory: Memory, index: dict, dtype):
    """The transformer read from a GGUF file (diffusers' from_single_file with GGUFQuantizationConfig), configured
    from the pipeline folder's own transformer config."""
    import diffusers
    from diffusers import GGUFQuantizationConfig

    cls = getattr(diffusers, index["transformer"][1])
    return cls.from_single_file(
        memory.gguf_file,
        quantization_config=GGUFQuantizationConfig(compute_dtype=dtype),
        config=model,
        subfolder="transformer",
        torch_dtype=dtype,
        local_files_only=True,
    )


def place(pipe, memory: Memory, device: str) -> None:
    """Put the loaded pipeline where the Memory says: resident, model offload or group offload (streams on CUDA)."""
    import torch

    if memory.offload == "model":
        pipe.enable_model_cpu_offload(device=device)
    elif memory.offload in ("block", "leaf"):
        streams = torch.cuda.is_available()
        pipe.enable_group_offload(
            onload_device=torch.device(device),
            offload_type=f"{memory.offload}_level",
            num_blocks_per_group=1 if memory.offload == "block" else None,
            use_stream=streams,
            record_stream=streams,
        )
    else:
        pipe.to(device)
    if memory.vae_tiling:
        pipe.vae.enable_tiling()
    if memory.vae_slicing:
        pipe.vae.enable_slicing()


# -- the estimate (no weights loaded) --------------------------------------------------------

_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}
_DTYPE_BYTES.update({"F8_E4M3": 1, "F8_E5M2": 1})
_HEADER_LIMIT = 100 << 20  # a safetensors header larger than this is not a model's


def safetensors_params(path: Path) -> dict[str, int]:
    """{dtype: parameter count} from a safetensors file's header (the first 8 bytes give its length)."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        if size > _HEADER_LIMIT:
            raise RenderError(f"{path}: safetensors header of {size} bytes is too large")
        header = json.loads(f.read(size))
    out: dict[str, int] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        n = 1
        for d in entry["shape"]:
            n *= d
        out[entry["dtype"]] = out.get(entry["dtype"], 0) + n
    return out


@dataclass
class Part:
    name: str
    params: int
    file_bytes: int  # as stored


def model_parts(model_dir: Path) -> list[Part]:
    """Every weight-carrying component of a pipeline folder, from its safetensors headers."""
    parts = []
    for sub in sorted(p for p in model_dir.iterdir() if p.is_dir()):
        files = sorted(sub.glob("*.safetensors"))
        if not files:
            continue
        params = file_bytes = 0
        for f in files:
            for dtype, n in safetensors_params(f).items():
                params += n
                file_bytes += n * _DTYPE_BYTES.get(dtype, 4)
        parts.append(Part(sub.name, params, file_bytes))
    return parts


_QUANT_BYTES = {"none": None, "int8": 1.0, "fp8": 1.0, "nf4": 0.5 + 0.0625, "gguf": 0.5625}  # nf4: 64-blocks scales


@dataclass(frozen=True)
class Estimate:
    profile: str
    weights_bytes: int  # all parts at the run dtype, transformers quantized (what the weights take in memory)
    peak_bytes: int  # GPU memory at the peak: an estimate (docs/memory.md)
    fits: bool | None  # None when no VRAM was given


def estimate(model_dir: Path, dtype_bytes: int, vram_bytes: int | None, frames: int, width: int, height: int):
    """(weights_bytes as stored, {profile: Estimate}, recommended profile or None) for a pipeline folder.

    The peak is an estimate: resident weights (per the profile's offload) + working memory of the denoiser's
    activations for one step + the VAE decode, as described in docs/memory.md.
    """
    parts = model_parts(model_dir)
    if not parts:
        raise RenderError(f"{model_dir}: no safetensors weights found")
    stored = sum(p.file_bytes for p in parts)
    # Working memory: latent tokens (8x spatial, 4x temporal compression, 2x2 patches) times a width of 4 KiB per
    # token per layer-activation set, and the VAE decode of the frames (fp32 activations of a few feature maps).
    tokens = max(1, (frames // 4 + 1) * (width // 16) * (height // 16))
    activations = tokens * 4096 * dtype_bytes * 8
    vae_full = frames * width * height * 3 * 4 * 32
    vae_tiled = min(vae_full, 16 * 256 * 256 * 3 * 4 * 32)
    out = {}
    for name, p in PROFILES.items():
        weights = 0
        biggest = 0
        for part in parts:
            per = _QUANT_BYTES[p.quant] if (p.quant != "none" and part.name in TRANSFORMERS) else dtype_bytes
            size = int(part.params * per)
            weights += size
            biggest = max(biggest, size)
        if p.offload == "none":
            resident = weights
        elif p.offload == "model":
            resident = biggest  # one component on the GPU at a time
        else:
            resident = biggest // 20  # group offload: about one block of the largest part (plus a prefetched one)
        peak = resident + activations + (vae_tiled if p.vae_tiling else vae_full)
        out[name] = Estimate(name, weights, peak, None if vram_bytes is None else peak <= vram_bytes)
    recommended = None
    if vram_bytes is not None:
        recommended = next((n for n, e in out.items() if e.fits), None)
    return stored, out, recommended
