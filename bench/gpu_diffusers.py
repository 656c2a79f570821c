"""Seconds per shot: DiffusersBackend against a bare diffusers script, Wan 2.1 T2V 1.3B at full size.

    .venv/bin/python bench/gpu_diffusers.py                    # needs a CUDA GPU (~35 GB) and ~20 GB disk
    .venv/bin/python bench/gpu_diffusers.py --frames 81 --steps 50 --shots 3
    .venv/bin/python bench/gpu_diffusers.py --tiny             # the tests' tiny Wan, any device: a smoke run

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


def bare_pipeline(folder: Path, device: str, dtype: str):
    """What a user's own script does: from_pretrained, .to(device)."""
    import torch
    from diffusers import WanPipeline

    pipe = WanPipeline.from_pretrained(folder, dtype={"default": getattr(torch, dtype), "vae": torch.float32})
    pipe.to(device)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def bare_shot(pipe, args, seed: int, out: Path) -> None:
    import torch
    from diffusers.utils import export_to_video

    frames = pipe(
        prompt=PROMPT,
        negative_prompt=NEGATIVE,
        height=args.height,
        width=args.width,
        num_frames=args.frames,
        num_inference_steps=args.steps,
        guidance_scale=args.guidance,
        generator=torch.Generator("cpu").manual_seed(seed),
        output_type="np",
    ).frames[0]
    export_to_video(list(frames), str(out), fps=16)


def timed(fn) -> float:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", type=Path, help="where the random-weight pipeline is saved (reused if present)")
    parser.add_argument("--tiny", action="store_true", help="the tests' tiny Wan at 32x32: checks the script runs")
    parser.add_argument("--width", type=int, default=832)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--frames", type=int, default=33)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--guidance", type=float, default=5.0)
    parser.add_argument("--shots", type=int, default=3, help="timed shots per side, after one warm-up each")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.tiny:
        args.width = args.height = 32
        args.frames, args.steps = 9, 2

    import torch

    device, dtype = pick_device()
    if device != "cuda" and not args.tiny:
        sys.exit("bench/gpu_diffusers.py needs a CUDA GPU (use --tiny for a smoke run on this machine)")
    folder = args.folder or Path(tempfile.gettempdir()) / (
        "chief-wan-tiny" if args.tiny else "chief-wan2.1-1.3b-random"
    )
    if not (folder / "model_index.json").exists():
        start = time.perf_counter()
        if args.tiny:
            from generation.tiny import build_wan

            build_wan(folder)
        else:
            build_wan_1_3b(folder)
        print(f"built and saved {folder} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    out = Path(tempfile.mkdtemp(prefix="chief-bench-"))

    backend = DiffusersBackend(str(folder), device=device, dtype=dtype)
    request = ShotRequest(
        "bench",
        PROMPT,
        negative_prompt=NEGATIVE,
        width=args.width,
        height=args.height,
        fps=16,
        num_frames=args.frames,
        steps=args.steps,
        guidance=args.guidance,
    )
    load_backend = timed(lambda: backend.render(request, out / "warmup-backend.mp4"))  # load + first shot
    holder = {}
    load_bare = timed(lambda: holder.setdefault("pipe", bare_pipeline(folder, device, dtype)))
    bare_shot(holder["pipe"], args, 0, out / "warmup-bare.mp4")

    backend_s, bare_s = [], []
    for i in range(args.shots):
        seed = 1 + i
        backend_s.append(timed(lambda: backend.render(request.with_(seed=seed), out / f"backend{i}.mp4")))
        bare_s.append(timed(lambda: bare_shot(holder["pipe"], args, seed, out / f"bare{i}.mp4")))

    result = {
        "device": torch.cuda.get_device_name() if device == "cuda" else device,
        "dtype": dtype,
        "model": "tiny Wan (tests)" if args.tiny else "Wan 2.1 T2V 1.3B (random weights)",
        "shot": f"{args.width}x{args.height}, {args.frames} frames, {args.steps} steps, cfg {args.guidance}",
        "backend_first_shot_with_load_s": round(load_backend, 2),
        "bare_load_s": round(load_bare, 2),
        "backend_s_per_shot": round(statistics.median(backend_s), 3),
        "bare_s_per_shot": round(statistics.median(bare_s), 3),
        "ratio_backend_over_bare": round(statistics.median(backend_s) / statistics.median(bare_s), 3),
        "backend_runs": [round(s, 3) for s in backend_s],
        "bare_runs": [round(s, 3) for s in bare_s],
    }
    if torch.cuda.is_available():
        result["peak_gpu_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 1)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:32} {value}")
    return result


if __name__ == "__main__":
    main()
