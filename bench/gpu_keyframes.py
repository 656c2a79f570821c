"""Seconds per shot for the image-first path, CHIEF against bare diffusers scripts, at full architecture size:

- a keyframe: SDXL base 1.0 (random weights) through `DiffusersImages`, from text and image-to-image from a
  reference, against `StableDiffusionXLPipeline` / `StableDiffusionXLImg2ImgPipeline` called directly;
- motion from it: Wan 2.1 VACE 1.3B (random weights) through `DiffusersBackend` (its VACE route: the keyframe as
  the first frame by mask, one reference image), against `WanVACEPipeline` called with the same inputs.

    .venv/bin/python bench/gpu_keyframes.py                  # needs a CUDA GPU (~30 GB) and ~25 GB disk
    .venv/bin/python bench/gpu_keyframes.py --tiny           # the tests' tiny FLUX and Wan VACE, any device

Nothing is downloaded: the pipelines are built from their published configs (below) with random weights, saved
once under --folder, then loaded by both sides. Random weights draw noise, but the arithmetic per step is the
real models', so the timings are. Both sides stay loaded and alternate (same seed, size, steps, inputs).
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

from bench.gpu_diffusers import WAN_1_3B, build_wan_1_3b, timed  # noqa: E402
from generation.base import ShotRequest  # noqa: E402
from generation.diffusers_backend import DiffusersBackend  # noqa: E402
from generation.images import DiffusersImages, ImageRequest  # noqa: E402
from generation.pipelines import pick_device  # noqa: E402

PROMPT = "an old lighthouse keeper in a yellow oilskin coat climbs a spiral stair, warm lamplight, wide shot"

# stabilityai/stable-diffusion-xl-base-1.0: unet/, vae/, text_encoder/ (CLIP ViT-L), text_encoder_2/ (OpenCLIP
# bigG with projection) and scheduler/ configs.
SDXL = {
    "unet": dict(
        sample_size=128,
        in_channels=4,
        out_channels=4,
        layers_per_block=2,
        block_out_channels=(320, 640, 1280),
        cross_attention_dim=2048,
        transformer_layers_per_block=(1, 2, 10),
        attention_head_dim=(5, 10, 20),
        use_linear_projection=True,
        addition_embed_type="text_time",
        addition_time_embed_dim=256,
        projection_class_embeddings_input_dim=2816,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
    ),
    "vae": dict(
        block_out_channels=(128, 256, 512, 512),
        layers_per_block=2,
        latent_channels=4,
        sample_size=1024,
        down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4,
        scaling_factor=0.13025,
        force_upcast=True,
    ),
    "text_encoder": dict(
        vocab_size=49408,
        hidden_size=768,
        intermediate_size=3072,
        num_hidden_layers=12,
        num_attention_heads=12,
        max_position_embeddings=77,
        hidden_act="quick_gelu",
        projection_dim=768,
    ),
    "text_encoder_2": dict(
        vocab_size=49408,
        hidden_size=1280,
        intermediate_size=5120,
        num_hidden_layers=32,
        num_attention_heads=20,
        max_position_embeddings=77,
        hidden_act="gelu",
        projection_dim=1280,
    ),
    "scheduler": dict(
        beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", timestep_spacing="leading", steps_offset=1
    ),
}
# Wan-AI/Wan2.1-VACE-1.3B-diffusers: the 1.3B transformer with a VACE block on every other layer.
VACE_LAYERS = list(range(0, 30, 2))


def _clip_tokenizer():
    from generation.tiny import tiny_tokenizer  # a real tokenizer class, tiny vocabulary

    tok = tiny_tokenizer()
    tok.model_max_length = 77
    return tok


def build_sdxl(folder: Path) -> Path:
    import torch
    from diffusers import AutoencoderKL, EulerDiscreteScheduler, StableDiffusionXLPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    where = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    with torch.device(where):
        unet = UNet2DConditionModel(**SDXL["unet"]).to(torch.bfloat16)
        vae = AutoencoderKL(**SDXL["vae"])
        te = CLIPTextModel(CLIPTextConfig(**SDXL["text_encoder"])).to(torch.bfloat16).eval()
        te2 = CLIPTextModelWithProjection(CLIPTextConfig(**SDXL["text_encoder_2"])).to(torch.bfloat16).eval()
    StableDiffusionXLPipeline(
        vae=vae,
        text_encoder=te,
        text_encoder_2=te2,
        tokenizer=_clip_tokenizer(),
        tokenizer_2=_clip_tokenizer(),
        unet=unet,
        scheduler=EulerDiscreteScheduler(**SDXL["scheduler"]),
    ).save_pretrained(folder)
    return folder


def build_vace_1_3b(folder: Path) -> Path:
    import torch
    from diffusers import AutoencoderKLWan, UniPCMultistepScheduler, WanVACEPipeline, WanVACETransformer3DModel
    from transformers import UMT5Config, UMT5EncoderModel

    from generation.tiny import tiny_tokenizer

    where = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    with torch.device(where):
        transformer = WanVACETransformer3DModel(
            **WAN_1_3B["transformer"], vace_layers=VACE_LAYERS, vace_in_channels=96
        ).to(torch.bfloat16)
        text_encoder = UMT5EncoderModel(UMT5Config(**WAN_1_3B["text_encoder"])).to(torch.bfloat16).eval()
        vae = AutoencoderKLWan(**WAN_1_3B["vae"])
    WanVACEPipeline(
        tokenizer=tiny_tokenizer(),
        text_encoder=text_encoder,
        transformer=transformer,
        vae=vae,
        scheduler=UniPCMultistepScheduler(**WAN_1_3B["scheduler"]),
    ).save_pretrained(folder)
    return folder


def bare(cls_name: str, folder: Path, device: str, dtype: str, fp32_vae: bool):
    """What a user's own script does: from_pretrained, .to(device)."""
    import diffusers
    import torch

    dtypes = {"default": getattr(torch, dtype), "vae": torch.float32} if fp32_vae else getattr(torch, dtype)
    pipe = getattr(diffusers, cls_name).from_pretrained(folder, dtype=dtypes).to(device)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def vace_inputs(keyframe, width: int, height: int, frames: int) -> dict:
    from PIL import Image

    grey = Image.new("RGB", (width, height), (128, 128, 128))
    return {
        "video": [keyframe.resize((width, height))] + [grey] * (frames - 1),
        "mask": [Image.new("L", (width, height), 0)] + [Image.new("L", (width, height), 255)] * (frames - 1),
    }


def compare(chief, bare_call, shots: int) -> dict:
    """Warm both, then alternate `shots` timed runs (seed i) of each; medians and their ratio."""
    chief(0)
    bare_call(0)
    ours, theirs = [], []
    for i in range(1, shots + 1):
        ours.append(timed(lambda: chief(i)))
        theirs.append(timed(lambda: bare_call(i)))
    a, b = statistics.median(ours), statistics.median(theirs)
    return {
        "chief_s": round(a, 3),
        "bare_s": round(b, 3),
        "ratio_chief_over_bare": round(a / b, 3),
        "chief_runs": [round(s, 3) for s in ours],
        "bare_runs": [round(s, 3) for s in theirs],
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", type=Path, help="where the random-weight pipelines are saved (reused if present)")
    parser.add_argument("--tiny", action="store_true", help="the tests' tiny FLUX and Wan VACE: checks the script runs")
    parser.add_argument("--shots", type=int, default=3, help="timed runs per side, after one warm-up each")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    import torch
    from PIL import Image

    device, dtype = pick_device()
    if device != "cuda" and not args.tiny:
        sys.exit("bench/gpu_keyframes.py needs a CUDA GPU (use --tiny for a smoke run on this machine)")
    root = args.folder or Path(tempfile.gettempdir()) / ("chief-keyframes-tiny" if args.tiny else "chief-keyframes")
    if args.tiny:
        from generation.tiny import build_flux, build_wan, build_wan_vace

        builders = {"image": build_flux, "wan": build_wan, "vace": build_wan_vace}
        still = dict(width=32, height=32, steps=4)
        shot = dict(width=32, height=32, frames=9, steps=2)
    else:
        builders = {"image": build_sdxl, "wan": build_wan_1_3b, "vace": build_vace_1_3b}
        still = dict(width=1024, height=576, steps=30)
        shot = dict(width=832, height=480, frames=33, steps=20)
    for name, build in builders.items():
        if not (root / name / "model_index.json").exists():
            start = time.perf_counter()
            build(root / name)
            print(f"built {root / name} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    out = Path(tempfile.mkdtemp(prefix="chief-bench-"))

    images = DiffusersImages(str(root / "image"), device=device, dtype=dtype)
    family = images.family
    request = ImageRequest("keyframe bench", PROMPT, **still)
    images.render(request.with_(seed=99), out / "reference.png")
    with_ref = request.with_(references=(str(out / "reference.png"),))
    t2i = bare(images.class_name, root / "image", device, dtype, fp32_vae=False)
    i2i = bare(family.img2img_pipeline, root / "image", device, dtype, fp32_vae=False)
    reference = Image.open(out / "reference.png").convert("RGB")

    def bare_still(pipe, seed, **extra):  # a PNG written, as ours writes one
        pipe(
            prompt=PROMPT,
            width=still["width"],
            height=still["height"],
            num_inference_steps=still["steps"],
            **{family.guidance_kwarg: family.guidance},
            generator=torch.Generator("cpu").manual_seed(seed),
            **extra,
        ).images[0].save(out / f"bare{seed}.png")

    result = {
        "device": torch.cuda.get_device_name() if device == "cuda" else device,
        "dtype": dtype,
        "keyframe_model": "tiny FLUX (tests)" if args.tiny else "SDXL base 1.0 (random weights)",
        "keyframe": f"{still['width']}x{still['height']}, {still['steps']} steps",
    }
    result["keyframe_from_text"] = compare(
        lambda s: images.render(request.with_(seed=s), out / f"k{s}.png"), lambda s: bare_still(t2i, s), args.shots
    )
    result["keyframe_from_reference"] = compare(
        lambda s: images.render(with_ref.with_(seed=s), out / f"r{s}.png"),
        lambda s: bare_still(
            i2i, s, image=reference.resize((still["width"], still["height"])), strength=family.strength
        ),
        args.shots,
    )

    backend = DiffusersBackend(str(root / "wan"), vace_model=str(root / "vace"), device=device, dtype=dtype)
    keyframe = str(out / "k0.png")
    motion = ShotRequest(
        "bench",
        PROMPT,
        width=shot["width"],
        height=shot["height"],
        fps=16,
        num_frames=shot["frames"],
        steps=shot["steps"],
        guidance=5.0,
        keyframe=keyframe,
        references=(str(out / "reference.png"),),
    )
    vace = bare("WanVACEPipeline", root / "vace", device, dtype, fp32_vae=True)
    inputs = vace_inputs(Image.open(keyframe).convert("RGB"), shot["width"], shot["height"], shot["frames"])

    def bare_motion(seed):  # an mp4 written, as ours writes one
        from diffusers.utils import export_to_video

        frames = vace(
            prompt=PROMPT,
            width=shot["width"],
            height=shot["height"],
            num_frames=shot["frames"],
            num_inference_steps=shot["steps"],
            guidance_scale=5.0,
            reference_images=[reference],
            generator=torch.Generator("cpu").manual_seed(seed),
            output_type="np",
            **inputs,
        ).frames[0]
        export_to_video(list(frames), str(out / f"bare{seed}.mp4"), fps=16)

    result["motion_model"] = "tiny Wan VACE (tests)" if args.tiny else "Wan 2.1 VACE 1.3B (random weights)"
    result["motion"] = f"{shot['width']}x{shot['height']}, {shot['frames']} frames, {shot['steps']} steps"
    result["motion_from_keyframe_with_reference"] = compare(
        lambda s: backend.render(motion.with_(seed=s), out / f"m{s}.mp4"), bare_motion, args.shots
    )
    if torch.cuda.is_available():
        result["peak_gpu_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 1)
    print(
        json.dumps(result, indent=2) if args.json else "\n".join(f"{k:38} {v}" for k, v in result.items()), flush=True
    )
    return result


if __name__ == "__main__":
    main()
