"""`chief doctor`: what this machine has for video generation, and what a model needs under each memory profile."""

from __future__ import annotations

import click
from pydantic import BaseModel

from app.cli.common import Ctx, command

GIB = 1 << 30


class Device(BaseModel):
    name: str  # "cpu", "cuda:0"
    kind: str  # the card's name, or the CPU's core count
    memory_bytes: int | None


class FamilyRow(BaseModel):
    name: str
    pipeline: str
    fps: int
    size: str
    max_frames: int
    available: bool  # the pipeline class is in the installed diffusers


class ProfileEstimate(BaseModel):
    weights_bytes: int
    peak_bytes: int
    fits: bool | None


class Estimate(BaseModel):
    model: str
    pipeline: str
    weights_bytes: int  # what the weight files hold (safetensors headers), at their stored dtypes
    peak_bytes: int  # the recommended profile's estimated peak (an estimate: docs/memory.md)
    profile: str | None  # the recommended profile: the fastest that fits; None when none fits or no --vram
    fits: bool | None
    vram_bytes: int | None
    profiles: dict[str, ProfileEstimate]
    method: str = (
        "estimate for a 5 s shot at the family's size: weights from safetensors headers; peak = resident weights "
        "+ activations + VAE decode (docs/memory.md)"
    )


class Recommendation(BaseModel):
    name: str
    repo_id: str
    family: str
    card_vram_gb: float  # the model card's figure, quoted
    profile: str  # a starting point for this much memory; `chief doctor --model` estimates it from the files
    tiers: dict[str, str]  # "final"/"draft" -> what each renders with (the family row's recipes)
    pull: list[str]  # the commands that fetch it (and its draft LoRA, when the family's draft uses one)
    basis: str = (
        "the largest catalogued model whose makers' model card gives a GPU memory within this one's; the profile "
        "is the largest named class within it; pull it and run `chief doctor --model HUB_ID` for the estimate"
    )


class Report(BaseModel):
    devices: list[Device]
    torch: str
    diffusers: str
    ffmpeg: str | None
    quantization: dict[str, bool]  # torchao, bitsandbytes, gguf: importable
    families: list[FamilyRow]
    estimate: Estimate | None = None
    recommended: Recommendation | None = None
    llm: str  # the agents' mode, and what to do when no LLM is configured
    speed: dict  # the speed settings (generation.speed.report)


def machine() -> tuple[list[Device], str, str, str | None]:
    import os

    import diffusers
    import torch

    devices = [Device(name="cpu", kind=f"{os.cpu_count()} cores", memory_bytes=_ram())]
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            devices.append(Device(name=f"cuda:{i}", kind=p.name, memory_bytes=p.total_memory))
    try:
        from generation.ffmpeg import ffmpeg_exe

        ffmpeg = ffmpeg_exe()
    except Exception:
        ffmpeg = None
    return devices, torch.__version__, diffusers.__version__, ffmpeg


def _ram() -> int | None:
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def families() -> list[FamilyRow]:
    import diffusers

    from generation.families import FAMILIES, VARIANTS

    rows = [(cls, f) for cls, f in FAMILIES.items()] + [(cls, f) for cls, fs in VARIANTS.items() for f in fs]
    return [
        FamilyRow(
            name=f.name,
            pipeline=cls,
            fps=f.fps,
            size=f"{f.width}x{f.height}",
            max_frames=f.max_frames,
            available=hasattr(diffusers, cls),
        )
        for cls, f in rows
    ]


def estimate_for(model: str, vram_gib: float | None, dtype: str) -> Estimate:
    from pathlib import Path

    from generation.base import frames_for
    from generation.diffusers_backend import family_of
    from generation.memory import estimate
    from generation.pipelines import model_file

    index_file = model_file(model, "model_index.json")
    import json

    index = json.loads(index_file.read_text())
    fam = family_of(index["_class_name"], model, index)
    dtype_bytes = {"fp32": 4, "bf16": 2, "fp16": 2}[dtype]
    vram = None if vram_gib is None else int(vram_gib * GIB)
    frames = frames_for(5.0, fam.fps, fam.frame_rule, fam.max_frames)  # a 5 s shot (the default) at full size
    stored, per, recommended = estimate(Path(index_file).parent, dtype_bytes, vram, frames, fam.width, fam.height)
    chosen = per[recommended] if recommended else per["fits 8 GB"]
    return Estimate(
        model=model,
        pipeline=index["_class_name"],
        weights_bytes=stored,
        peak_bytes=chosen.peak_bytes,
        profile=recommended,
        fits=None if vram is None else recommended is not None,
        vram_bytes=vram,
        profiles={
            n: ProfileEstimate(weights_bytes=e.weights_bytes, peak_bytes=e.peak_bytes, fits=e.fits)
            for n, e in per.items()
        },
    )


def recommend(vram_bytes: int | None) -> Recommendation | None:
    """A family, a profile and its two tiers for a GPU of `vram_bytes` (None without a GPU or --vram)."""
    from generation.families import family_for
    from generation.hub import VIDEO_MODELS

    if vram_bytes is None:
        return None
    gb = vram_bytes / 1e9
    fitting = [m for m in VIDEO_MODELS if m.card_vram_gb is not None and m.card_vram_gb <= gb]
    if not fitting:
        return None
    m = max(fitting, key=lambda m: m.card_vram_gb or 0)
    row = family_for(m.pipeline, dict(m.index))
    if row is None:
        return None
    classes = [(48, "fastest"), (24, "fits 24 GB"), (12, "fits 12 GB"), (8, "fits 8 GB")]
    profile = next((name for size, name in classes if gb >= size), "fits 8 GB")
    tiers = {"final": f"{row.steps} steps, guidance {row.guidance:g}, {row.width}x{row.height}"}
    pull = [f"chief models pull {m.name}"]
    draft = row.draft  # the draft tier's recipe, where the family row has one
    if draft is not None:
        text = f"{draft.steps} steps, guidance {draft.guidance:g}"
        if draft.scale != 1.0:
            text += f", {draft.scale:g}x the size"
        loras = draft.lora
        if loras:
            text += ", speed LoRA " + " + ".join(lora.split(":", 1)[-1].rsplit("/", 1)[-1] for lora in loras)
            pull += [f"chief models pull {lora}" for lora in loras]
        tiers["draft"] = text
    return Recommendation(
        name=m.name,
        repo_id=m.repo_id,
        family=row.name,
        card_vram_gb=float(m.card_vram_gb or 0),
        profile=profile,
        tiers=tiers,
        pull=pull,
    )


def llm_line(c: Ctx) -> str:
    from app.config import load_config

    config = load_config({"home": c.home, **c.overrides})
    if config.agent_mode == "llm" and config.local_llm and not config.llm_base_url:
        from agents.local_llm import gguf_path

        try:
            where = gguf_path(config.local_llm)
        except Exception as e:
            return f"llm: {e}"
        return f"llm: local model {where.name} (CHIEF runs it with llama-cpp-python when the agents first need it)"
    if config.agent_mode == "llm":
        return config.llm.describe()
    from app.factory import llm_offer

    return llm_offer(config) or "offline (embedded heuristic agents, no LLM), as chosen"


def _gib(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / GIB:.1f} GiB" if n >= GIB // 10 else f"{n / (1 << 20):.2f} MiB"


@command(project=False, name="doctor")
@click.option("--model", "model", help="A diffusers video model (a local folder or a cached hub id) to estimate.")
@click.option("--vram", type=click.FloatRange(0.5, 4096), help="GPU memory to fit, in GiB (default: the first GPU's).")
@click.option(
    "--dtype",
    type=click.Choice(["bf16", "fp16", "fp32"]),
    default="bf16",
    show_default=True,
    help="The dtype the model would run in.",
)
def doctor(c: Ctx, model, vram, dtype):
    """What this machine has for video (devices, memory, torch, diffusers, ffmpeg, families, quantization), and
    with --model, the memory the model needs under each profile, read from its files without loading the weights.

    The peak memory is an estimate (method: docs/memory.md); the weights figure is what the files hold."""
    from generation.memory import backends
    from generation.speed import report_line

    devices, torch_version, diffusers_version, ffmpeg = machine()
    if vram is None:
        gpu = next((d for d in devices if d.name.startswith("cuda")), None)
        vram = gpu.memory_bytes / GIB if gpu and gpu.memory_bytes else None
    report = Report(
        devices=devices,
        torch=torch_version,
        diffusers=diffusers_version,
        ffmpeg=ffmpeg,
        quantization=backends(),
        families=families(),
        estimate=estimate_for(model, vram, dtype) if model else None,
        recommended=recommend(int(vram * GIB) if vram else None),
        llm=llm_line(c),
        speed=speed_report(c, devices),
    )
    lines = [f"{d.name}: {d.kind}, {_gib(d.memory_bytes)}" for d in devices]
    if len(devices) == 1:
        lines.append("no CUDA GPU: fp8, nf4, model and group offloading are refused; int8 runs on the CPU")
    lines.append(f"torch {torch_version} · diffusers {diffusers_version} · ffmpeg {ffmpeg or 'not found'}")
    lines.append("quantization: " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in report.quantization.items()))
    lines.append(
        "families: " + ", ".join(f"{f.name}{'' if f.available else ' (not in diffusers)'}" for f in report.families)
    )
    r = report.recommended
    if r is not None and vram is not None:  # a recommendation is made for a GPU's memory
        lines.append(
            f"recommended for {_gib(int(vram * GIB))}: {r.family} ({r.repo_id}; its model card: {r.card_vram_gb:g} GB),"
            f" CHIEF_VIDEO_PROFILE='{r.profile}' to start"
        )
        lines += [f"  {tier}: {text}" for tier, text in r.tiers.items()]
        lines += [f"  {cmd}" for cmd in r.pull]
        lines.append(f"  then CHIEF_VIDEO_MODEL={r.repo_id}; `chief doctor --model {r.repo_id}` estimates its memory")
    elif vram is None:
        lines.append("no CUDA GPU: no video model recommended (the animatic backend renders previews on the CPU)")
    else:
        lines.append(f"no catalogued video model's card fits {_gib(int(vram * GIB))}")
    lines.append(f"agents: {report.llm}")
    lines.append(report_line(report.speed))
    e = report.estimate
    if e is not None:
        lines.append(f"{e.model} ({e.pipeline}): weights {_gib(e.weights_bytes)} in the files")
        for name, p in e.profiles.items():
            fit = "" if p.fits is None else (" fits" if p.fits else " does not fit")
            lines.append(f"  {name:<11} weights {_gib(p.weights_bytes)}, peak ≈ {_gib(p.peak_bytes)} (estimate){fit}")
        if e.vram_bytes is None:
            lines.append("no --vram and no GPU: no recommendation")
        elif e.profile:
            lines.append(f"recommended for {_gib(e.vram_bytes)}: CHIEF_VIDEO_PROFILE='{e.profile}'")
        else:
            lines.append(f"no profile fits {_gib(e.vram_bytes)} (estimate): use a smaller model or size")
    c.out(report, "\n".join(lines))


def speed_report(c: Ctx, devices: list[Device]) -> dict:
    """The video backend's speed settings on this machine's best device."""
    from app.config import load_config
    from app.factory import video_speed
    from generation.speed import report

    device = next((d.name for d in devices if d.name.startswith("cuda")), "cpu")
    return report(video_speed(load_config({"home": c.home, **c.overrides})), device)


COMMANDS = [doctor]
