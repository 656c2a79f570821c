"""Seconds per shot and peak GPU memory: DiffusersBackend against a bare diffusers script with the same settings,
per family and memory profile.

    .venv/bin/python bench/gpu_diffusers.py                    # Wan 2.1 T2V 1.3B, full size: a CUDA GPU (~35 GB)
    .venv/bin/python bench/gpu_diffusers.py --frames 81 --steps 50 --shots 3
    .venv/bin/python bench/gpu_diffusers.py --model /models/Wan2.2-T2V-A14B-Diffusers --profile all
    .venv/bin/python bench/gpu_diffusers.py --tiny --family all --profile all   # tiny pipelines, any device
    .venv/bin/python bench/gpu_diffusers.py --tiny --tiers --family wan,wan22,wan22_5b   # draft vs final work

`--model` takes any saved pipeline of a family in generation/families.py (Wan 2.2 two experts or TI2V 5B, LTX-2,
HunyuanVideo 1.5, SkyReels-V2 …); `--profile` one of the memory profiles (generation/memory.py), a list, or `all`.
On both sides a profile is the same diffusers calls, made by the product's own code (generation/memory.py:
`quantization_config`, `place`): PipelineQuantizationConfig for the transformer(s), enable_model_cpu_offload /
enable_group_offload, vae.enable_tiling. `--tiers` renders one shot at each tier through the product and counts
the denoiser's forward passes and passes x latent tokens with forward hooks (on a GPU it times them too). A profile this machine cannot run (CUDA only)
is reported as skipped with the reason. `--tiny` runs the tests' tiny pipelines (`--family`: wan, wan22,
wan22_5b, ltx2, hunyuan15, skyreels_df, or all) at 32x32: it checks the script, the timings mean nothing.

Nothing is downloaded: the pipeline is built from its published configs (written out below) with
random weights, saved once to --folder, then loaded by both sides. Random weights draw noise, but
the arithmetic per step is the real model's, so the timings are. Both pipelines stay loaded and
shots alternate between them (same seed, size, frames, steps, guidance), so drift hits both alike.
Prints load time, seconds per shot for each side and the ratio backend / bare (1.00 = no overhead).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generation.base import ShotRequest  # noqa: E402
from generation.diffusers_backend import DiffusersBackend, pick_device  # noqa: E402

PROMPT = "a red fox runs through fresh snow at dawn, wide shot, the camera tracks slowly"
NEGATIVE = "blurry, low quality, static"

# Wan-AI/Wan2.1-T2V-1.3B-Diffusers: transformer/config.json, vae/config.json (the class defaults),
# text_encoder/config.json (umt5-xxl encoder) and scheduler/scheduler_config.json.
WAN_1_3B = {
    "transformer": dict(
        patch_size=(1, 2, 2),
        num_attention_heads=12,
        attention_head_dim=128,
        in_channels=16,
        out_channels=16,
        text_dim=4096,
        freq_dim=256,
        ffn_dim=8960,
        num_layers=30,
        cross_attn_norm=True,
        qk_norm="rms_norm_across_heads",
        eps=1e-6,
        rope_max_seq_len=1024,
    ),
    "vae": dict(
        base_dim=96, z_dim=16, dim_mult=[1, 2, 4, 4], num_res_blocks=2, temperal_downsample=[False, True, True]
    ),
    "text_encoder": dict(
        vocab_size=256384,
        d_model=4096,
        d_kv=64,
        d_ff=10240,
        num_layers=24,
        num_heads=64,
        relative_attention_num_buckets=32,
        relative_attention_max_distance=128,
        feed_forward_proj="gated-gelu",
        dropout_rate=0.0,
        tie_word_embeddings=False,
    ),
    "scheduler": dict(
        prediction_type="flow_prediction", use_flow_sigmas=True, num_train_timesteps=1000, flow_shift=3.0
    ),
}


def build_wan_1_3b(folder: Path) -> Path:
    """Full-size Wan 2.1 1.3B with random weights (built on the GPU when there is one: init is fast)."""
    import torch
    from diffusers import AutoencoderKLWan, UniPCMultistepScheduler, WanPipeline, WanTransformer3DModel
    from transformers import UMT5Config, UMT5EncoderModel

    from generation.tiny import tiny_tokenizer  # a real tokenizer class, tiny vocab

    where = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    with torch.device(where):
        transformer = WanTransformer3DModel(**WAN_1_3B["transformer"]).to(torch.bfloat16)
        text_encoder = UMT5EncoderModel(UMT5Config(**WAN_1_3B["text_encoder"])).to(torch.bfloat16).eval()
        vae = AutoencoderKLWan(**WAN_1_3B["vae"])  # float32, as the model card loads it
    pipe = WanPipeline(
        tokenizer=tiny_tokenizer(),
        text_encoder=text_encoder,
        transformer=transformer,
        vae=vae,
        scheduler=UniPCMultistepScheduler(**WAN_1_3B["scheduler"]),
    )
    pipe.save_pretrained(folder)
    del pipe, transformer, text_encoder, vae
    if where == "cuda":
        torch.cuda.empty_cache()
    return folder


def bare_pipeline(folder: Path, device: str, dtype: str, profile: str):
    """What a user's own script does for the same profile: from_pretrained (quantized), then place it. The
    quantization config and the placement (offload, VAE tiling) are the product's own (`generation.memory`), so the
    two sides differ only by what CHIEF adds around the call."""
    import torch
    from diffusers import DiffusionPipeline

    from generation.memory import place, profile_memory, quantization_config

    memory = profile_memory(profile)
    index = json.loads((folder / "model_index.json").read_text())
    base = getattr(torch, dtype)
    extra = {}
    quant = quantization_config(memory, [k for k, v in index.items() if isinstance(v, list) and v[0]], base)
    if quant is not None:
        extra["quantization_config"] = quant
    torch_dtype = (
        {"default": base, "vae": torch.float32} if index["_class_name"].startswith(("Wan", "SkyReels")) else base
    )
    pipe = DiffusionPipeline.from_pretrained(folder, dtype=torch_dtype, **extra)
    place(pipe, memory, device)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def bare_shot(pipe, request: ShotRequest, family, seed: int, out: Path) -> None:
    """The same call CHIEF makes, written out: the family's frame-rate argument, extras and windows included."""
    import inspect

    import torch
    from diffusers.utils import export_to_video

    from generation.diffusers_backend import windows

    kwargs = dict(
        prompt=PROMPT,
        negative_prompt=NEGATIVE,
        height=request.height,
        width=request.width,
        num_frames=request.num_frames,
        num_inference_steps=request.steps,
        guidance_scale=request.guidance,
        generator=torch.Generator("cpu").manual_seed(seed),
        output_type="np",
        **dict(family.extra_kwargs),
        **windows(family, request.num_frames),
    )
    if family.fps_kwarg:
        kwargs[family.fps_kwarg] = request.fps
    accepted = inspect.signature(pipe.__call__).parameters
    frames = pipe(**{k: v for k, v in kwargs.items() if k in accepted}).frames[0]
    export_to_video(list(frames), str(out), fps=request.fps)


def timed(fn) -> float:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start


TINY = ("wan", "wan22", "wan22_5b", "ltx2", "hunyuan15", "skyreels_df")


@contextmanager
def transformer_work(pipe):
    """Counts what the denoiser(s) do during a call, by forward hooks: passes, and passes x latent tokens (each
    pass's hidden states over the input channels and the patch volume; packed [batch, tokens, channels] as is)."""
    import math

    counts = {"passes": 0, "tokens": 0}
    handles = []
    for part in ("transformer", "transformer_2"):
        model = getattr(pipe, part, None)
        if model is None:
            continue
        cfg = model.config
        size = cfg.get("patch_size") or 1
        patch = math.prod(size) if isinstance(size, (list, tuple)) else size * size * (cfg.get("patch_size_t") or 1)

        def hook(module, args, kwargs, output, patch=patch, channels=cfg.get("in_channels") or 1):
            h = kwargs.get("hidden_states", args[0] if args else None)
            counts["passes"] += 1
            if h.ndim == 3:
                counts["tokens"] += h.shape[0] * h.shape[1]
            else:
                counts["tokens"] += h.numel() // channels // patch

        handles.append(model.register_forward_hook(hook, with_kwargs=True))
    try:
        yield counts
    finally:
        for handle in handles:
            handle.remove()


def tier_work(folder: Path, family: str, device: str, dtype: str, draft_lora: tuple[str, ...]) -> dict:
    """One shot at each tier through the product (DiffusersBackend.render) with the denoiser's work counted."""
    from generation.base import RenderError
    from generation.pipelines import _PIPELINES
    from generation.speed import Speed

    row: dict = {"model": f"tiny {family} (tests)"}
    backend = DiffusersBackend(str(folder), device=device, dtype=dtype, speed=Speed(draft_lora=draft_lora))
    out = Path(tempfile.mkdtemp(prefix="chief-tiers-"))
    shot = ShotRequest("bench", PROMPT, negative_prompt=NEGATIVE, width=32, height=32, fps=8, duration=1.0)
    for tier in ("draft", "final"):
        try:
            request = backend.resolve(shot.with_(tier=tier))
        except RenderError as e:
            row[tier] = f"skipped: {e}"
            continue
        try:
            backend.render(request, out / f"{tier}-warm.mp4")  # loads the pipeline (and the draft's LoRA)
            pipe = next(e.pipe for (m, o), e in _PIPELINES.items() if m == str(folder) and o == backend.options)
            with transformer_work(pipe) as counts:
                seconds = timed(lambda: backend.render(request, out / f"{tier}.mp4"))
        except RenderError as e:
            row[tier] = f"failed: {e}"
            continue
        row[tier] = {
            "recipe": backend.tier_label(tier),
            "passes": counts["passes"],
            "tokens": counts["tokens"],
            "s_per_shot": round(seconds, 3),
        }
    if isinstance(row.get("draft"), dict) and isinstance(row.get("final"), dict):
        row["draft_over_final_work"] = round(row["draft"]["tokens"] / row["final"]["tokens"], 4)
    _PIPELINES.clear()
    return row


def run_one(folder: Path, label: str, profile: str, args, device: str, dtype: str) -> dict:
    """One family under one profile: CHIEF's backend and the bare script, shots alternating, peak memory each."""
    import torch

    from generation.base import RenderError
    from generation.memory import profile_memory
    from generation.pipelines import free_memory

    row = {"model": label, "profile": profile}
    try:
        backend = DiffusersBackend(str(folder), device=device, dtype=dtype, memory=profile_memory(profile))
    except RenderError as e:
        return {**row, "skipped": str(e)}
    fam = backend.family
    request = backend.resolve(
        ShotRequest(
            "bench",
            PROMPT,
            negative_prompt=NEGATIVE,
            width=args.width or fam.width,
            height=args.height or fam.height,
            fps=fam.fps,
            num_frames=args.frames,
            steps=args.steps,
            guidance=args.guidance,
        )
    )
    out = Path(tempfile.mkdtemp(prefix="chief-bench-"))
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    load_backend = timed(lambda: backend.render(request, out / "warmup-backend.mp4"))  # load + first shot
    backend_s = [
        timed(lambda i=i: backend.render(request.with_(seed=1 + i), out / f"b{i}.mp4")) for i in range(args.shots)
    ]
    backend_peak = torch.cuda.max_memory_allocated() if cuda else None
    from generation.pipelines import _PIPELINES

    _PIPELINES.clear()  # one side's weights at a time, so each peak is its own
    free_memory()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    holder = {}
    load_bare = timed(lambda: holder.setdefault("pipe", bare_pipeline(folder, device, dtype, profile)))
    bare_shot(holder["pipe"], request, fam, 0, out / "warmup-bare.mp4")
    bare_s = [
        timed(lambda i=i: bare_shot(holder["pipe"], request, fam, 1 + i, out / f"r{i}.mp4")) for i in range(args.shots)
    ]
    bare_peak = torch.cuda.max_memory_allocated() if cuda else None
    holder.clear()
    free_memory()
    return {
        **row,
        "family": fam.name,
        "shot": f"{request.width}x{request.height}, {request.num_frames} frames, {request.steps} steps",
        "backend_first_shot_with_load_s": round(load_backend, 2),
        "bare_load_s": round(load_bare, 2),
        "backend_s_per_shot": round(statistics.median(backend_s), 3),
        "bare_s_per_shot": round(statistics.median(bare_s), 3),
        "ratio_backend_over_bare": round(statistics.median(backend_s) / statistics.median(bare_s), 3),
        "backend_peak_gib": None if backend_peak is None else round(backend_peak / 2**30, 2),
        "bare_peak_gib": None if bare_peak is None else round(bare_peak / 2**30, 2),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", type=Path, help="where the random-weight Wan 2.1 1.3B is saved (reused if there)")
    parser.add_argument("--model", type=Path, help="a saved pipeline folder of any family instead")
    parser.add_argument(
        "--tiny", action="store_true", help="the tests' tiny pipelines at 32x32: checks the script runs"
    )
    parser.add_argument("--family", default="wan", help=f"with --tiny: one of {', '.join(TINY)}, a list, or all")
    parser.add_argument("--profile", default="fastest", help="memory profile(s): a comma list, or all")
    parser.add_argument("--width", type=int, default=None, help="default: the family's")
    parser.add_argument("--height", type=int, default=None)
    parser.add_argument("--frames", type=int, default=33)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--guidance", type=float, default=5.0)
    parser.add_argument("--shots", type=int, default=3, help="timed shots per side, after one warm-up each")
    parser.add_argument(
        "--tiers",
        action="store_true",
        help="with --tiny: transformer passes and passes x tokens per shot, draft vs final, through the product",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from generation.memory import PROFILES

    profiles = list(PROFILES) if args.profile == "all" else args.profile.split(",")
    if args.tiny:
        args.width = args.height = 32
        args.frames, args.steps, args.shots = 9, 2, min(args.shots, 2)

    import torch

    device, dtype = pick_device()
    if device != "cuda" and not args.tiny:
        sys.exit("bench/gpu_diffusers.py needs a CUDA GPU (use --tiny for a smoke run on this machine)")
    models: list[tuple[Path, str]] = []
    if args.tiny:
        from generation.tiny import BUILDERS

        for name in TINY if args.family == "all" else args.family.split(","):
            folder = Path(tempfile.gettempdir()) / f"chief-bench-tiny-{name}"
            if not (folder / "model_index.json").exists():
                BUILDERS[name](folder)
            models.append((folder, f"tiny {name} (tests)"))
    elif args.model:
        models.append((args.model, str(args.model)))
    else:
        folder = args.folder or Path(tempfile.gettempdir()) / "chief-wan2.1-1.3b-random"
        if not (folder / "model_index.json").exists():
            start = time.perf_counter()
            build_wan_1_3b(folder)
            print(f"built and saved {folder} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        models.append((folder, "Wan 2.1 T2V 1.3B (random weights)"))

    if args.tiers:
        if not args.tiny:
            sys.exit("--tiers counts the tiny pipelines' work (add --tiny); on a GPU, time tiers with --model")
        from generation.tiny import build_wan_lora

        rows = []
        for (folder, _), name in zip(models, TINY if args.family == "all" else args.family.split(",")):
            # the tiny Wan transformers take a tiny speed LoRA (one per expert); other families' draft LoRAs have
            # no tiny builder here, so they are reported as skipped with the reason
            experts = 2 if name == "wan22" else 1
            loras = (
                tuple(
                    str(build_wan_lora(folder.with_name(f"{folder.name}-loras") / f"speed{i}.safetensors", seed=7 + i))
                    for i in range(experts)
                )
                if name in ("wan", "wan22")
                else ()
            )
            rows.append(tier_work(folder, name, device, dtype, loras))
    else:
        rows = [run_one(folder, label, p, args, device, dtype) for folder, label in models for p in profiles]
    result = {
        "device": torch.cuda.get_device_name() if device == "cuda" else device,
        "dtype": dtype,
        "runs": rows,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"device {result['device']} · {dtype}")
        for row in rows:
            print(" · ".join(f"{k} {v}" for k, v in row.items()))
    return result


if __name__ == "__main__":
    main()
