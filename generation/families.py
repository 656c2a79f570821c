"""What each diffusers video family needs, in one table keyed by pipeline class name.

The diffusers backend reads only this table: adding a family is adding a row, never a branch.
Values follow each pipeline's own defaults and checks in diffusers (`check_inputs`, `__call__`) and the
model cards. Some classes hold several models (WanPipeline: Wan 2.1, Wan 2.2 with two experts, Wan 2.2 TI2V 5B):
`VARIANTS` picks a row by what the folder's model_index.json sets, without loading weights.
"""

from __future__ import annotations

from dataclasses import dataclass

TIERS = ("draft", "final")


@dataclass(frozen=True)
class Cache:
    """One of diffusers' cache hooks, as data: `kind` names the config class (`FirstBlockCacheConfig`,
    `MagCacheConfig`, `TaylorSeerCacheConfig`), `params` its arguments. It skips work between steps, so it changes
    the picture: it is in the clip key and the label (`text`)."""

    kind: str  # "FirstBlockCacheConfig" | "MagCacheConfig" | "TaylorSeerCacheConfig"
    params: tuple[tuple[str, float | int], ...] = ()

    @property
    def text(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params)
        return f"{self.kind.removesuffix('Config')}({args})"


@dataclass(frozen=True)
class Draft:
    """A family's draft recipe, beside its final one (the row's steps and guidance): what a draft render changes.

    `lora`: the speed LoRA's default file per expert, as "hub id:path in the repo" (`transformer` first, then
    `transformer_2`), read from the Hugging Face cache (CHIEF_VIDEO_DRAFT_LORA overrides it); empty where the family
    ships none (then fewer steps, a smaller picture and the cache make the draft). `scale`: the draft's width and
    height over the final's (snapped to the family's size multiple). `keeps`: what a finalised shot keeps of its
    draft, said plainly."""

    steps: int
    guidance: float
    scale: float = 1.0
    lora: tuple[str, ...] = ()
    cache: Cache | None = None
    extra_kwargs: tuple[tuple[str, object], ...] = ()  # call arguments the draft sets over the row's
    vae_tiling: bool = True  # decode in tiles: less memory, seams blended (drafts only; the label says so)
    keeps: str = "the same seed, keyframe and take at the same size: a close composition, not the same pixels"


SMALLER = "a smaller picture: the same seed draws another composition; a keyframe keeps it"


@dataclass(frozen=True)
class Family:
    name: str  # shown to the user: "Wan", "LTX"
    frame_rule: tuple[int, int]  # frames = a*k + b (the VAE's temporal compression)
    fps: int
    width: int
    height: int
    size_multiple: int  # the pipeline rejects sizes that are not multiples of this
    max_frames: int
    steps: int
    guidance: float
    i2v_pipeline: str | None = None  # class name of the matching image-to-video pipeline
    i2v_shares_components: bool = False  # the I2V pipeline is built from the T2V pipeline's parts
    vace_pipeline: str | None = None  # a partner model's class that takes reference images (and a first frame by mask)
    call_kwargs: frozenset[str] = frozenset({"num_frames", "negative_prompt"})
    fps_kwarg: str | None = None  # the call argument that takes the frame rate, when there is one
    fp32_modules: tuple[str, ...] = ()  # components the model card loads in float32
    extra_kwargs: tuple[tuple[str, object], ...] = ()  # fixed call arguments the model card sets
    # Diffusion forcing: the model renders at most `window_frames` at once; a longer shot (up to max_frames) is
    # extended in windows that overlap by `overlap_frames`, with `addnoise` on the kept frames (the pipeline's own
    # overlap_history / addnoise_condition / base_num_frames).
    window_frames: int | None = None
    overlap_frames: int = 17
    addnoise: float = 20.0
    audio: bool = False  # the pipeline returns a sound track with the picture (LTX-2)
    when: tuple[str, ...] = ()  # model_index.json entries that must be set for this row (see VARIANTS)
    draft: Draft | None = None  # the draft tier's recipe (None: the family has no draft tier)
    cache: Cache | None = None  # the cache tuned for the final's steps (used on finals only with CHIEF_VIDEO_CACHE=all)
    lora: bool = True  # diffusers loads LoRAs into this pipeline's denoiser (`load_lora_weights`)


# Cache hooks as the rows use them. First Block Cache needs no calibration (MagCache needs per-model ratios that
# diffusers ships for Flux only, so no row uses it yet); 0.05 is diffusers' default threshold, 0.1 a draft's.
FIRST_BLOCK = Cache("FirstBlockCacheConfig", (("threshold", 0.05),))
FIRST_BLOCK_DRAFT = Cache("FirstBlockCacheConfig", (("threshold", 0.1),))

# LightX2V's step- and CFG-distilled LoRA for Wan 2.1 T2V 14B (4 steps, no CFG; the 1.3B model needs its own file,
# set through CHIEF_VIDEO_DRAFT_LORA: a LoRA whose shapes do not fit is refused in one line).
WAN21_LIGHTX2V = "Kijai/WanVideo_comfy:Wan21_T2V_14B_lightx2v_cfg_step_distill_lora_rank32.safetensors"
# Wan2.2-Lightning (LightX2V): 4 steps, no CFG, one LoRA per expert (high noise, low noise).
WAN22_LIGHTNING = tuple(
    f"lightx2v/Wan2.2-Lightning:Wan2.2-T2V-A14B-4steps-lora-rank64-Seko-V1.1/{expert}_noise_model.safetensors"
    for expert in ("high", "low")
)

FAMILIES: dict[str, Family] = {
    "WanPipeline": Family(
        "Wan",
        (4, 1),
        fps=16,
        width=832,
        height=480,
        size_multiple=16,
        max_frames=81,
        steps=50,
        guidance=5.0,
        i2v_pipeline="WanImageToVideoPipeline",
        vace_pipeline="WanVACEPipeline",
        fp32_modules=("vae",),
        draft=Draft(4, 1.0, lora=(WAN21_LIGHTX2V,)),
        cache=FIRST_BLOCK,
    ),
    "LTXPipeline": Family(
        "LTX",
        (8, 1),
        fps=25,
        width=704,
        height=480,
        size_multiple=32,
        max_frames=257,
        steps=50,
        guidance=3.0,
        i2v_pipeline="LTXImageToVideoPipeline",
        i2v_shares_components=True,
        fps_kwarg="frame_rate",
        draft=Draft(12, 3.0, scale=0.5, cache=FIRST_BLOCK_DRAFT, keeps=SMALLER),
        cache=FIRST_BLOCK,
    ),
    # CogVideoX 1.0 (2B/5B): 49 frames at 8 fps. 1.5 pads latent frames itself, so 4k+1 stays valid.
    "CogVideoXPipeline": Family(
        "CogVideoX",
        (4, 1),
        fps=8,
        width=720,
        height=480,
        size_multiple=16,
        max_frames=49,
        steps=50,
        guidance=6.0,
        i2v_pipeline="CogVideoXImageToVideoPipeline",
        # CogVideoX 1.0 draws only its own size (learned position embeddings): a draft keeps the size
        draft=Draft(12, 6.0, cache=FIRST_BLOCK_DRAFT, keeps="the same seed, keyframe and take at the same size"),
        cache=FIRST_BLOCK,
    ),
    # HunyuanVideo's guidance_scale is embedded guidance; it has no negative prompt without true CFG.
    "HunyuanVideoPipeline": Family(
        "HunyuanVideo",
        (4, 1),
        fps=24,
        width=848,
        height=480,
        size_multiple=16,
        max_frames=129,
        steps=50,
        guidance=6.0,
        i2v_pipeline="HunyuanVideoImageToVideoPipeline",
        call_kwargs=frozenset({"num_frames"}),
        draft=Draft(12, 6.0, scale=0.5, cache=FIRST_BLOCK_DRAFT, keeps=SMALLER),
        cache=FIRST_BLOCK,
    ),
    "AnimateDiffPipeline": Family(
        "AnimateDiff",
        (1, 0),
        fps=8,
        width=512,
        height=512,
        size_multiple=8,
        max_frames=16,
        steps=25,
        guidance=7.5,
        draft=Draft(8, 7.5, scale=0.75, keeps=SMALLER),
    ),
}


# Rows that share a class with FAMILIES' row, chosen by model_index.json (the first row whose `when` keys are all
# set). Wan 2.2 A14B: two experts, `transformer` for the high-noise steps and `transformer_2` below
# `boundary_ratio` (the pipeline switches by itself); guidance 4.0 / 3.0 per expert, 40 steps (model card).
# Wan 2.2 TI2V 5B: `expand_timesteps`, a 16x VAE with 2x2 patches (sizes in 32s), 24 fps, 121 frames, 1280x704.
VARIANTS: dict[str, tuple[Family, ...]] = {
    "WanPipeline": (
        Family(
            "Wan 2.2",
            (4, 1),
            fps=16,
            width=832,
            height=480,
            size_multiple=16,
            max_frames=81,
            steps=40,
            guidance=4.0,
            i2v_pipeline="WanImageToVideoPipeline",
            fp32_modules=("vae",),
            extra_kwargs=(("guidance_scale_2", 3.0),),
            when=("transformer_2", "boundary_ratio"),
            draft=Draft(4, 1.0, lora=WAN22_LIGHTNING, extra_kwargs=(("guidance_scale_2", 1.0),)),
            cache=FIRST_BLOCK,
        ),
        Family(
            "Wan 2.2 TI2V 5B",
            (4, 1),
            fps=24,
            width=1280,
            height=704,
            size_multiple=32,
            max_frames=121,
            steps=50,
            guidance=5.0,
            i2v_pipeline="WanImageToVideoPipeline",
            i2v_shares_components=True,
            fp32_modules=("vae",),
            when=("expand_timesteps",),
            draft=Draft(12, 5.0, scale=0.5, cache=FIRST_BLOCK_DRAFT, keeps=SMALLER),
            cache=FIRST_BLOCK,
        ),
    ),
}

FAMILIES.update(
    {
        # LTX-2: picture and sound in one model. Video is rendered here; the sound track it returns is kept with
        # the clip (ClipInfo.audio, and the clip's audio stream). 8k+1 frames, sizes in 32s, 24 fps, 30 steps,
        # guidance 3.0 (LTX2Pipeline.__call__); up to 20 s (its max_seconds).
        "LTX2Pipeline": Family(
            "LTX-2",
            (8, 1),
            fps=24,
            width=768,
            height=512,
            size_multiple=32,
            max_frames=481,
            steps=30,
            guidance=3.0,
            i2v_pipeline="LTX2ImageToVideoPipeline",
            i2v_shares_components=True,
            fps_kwarg="frame_rate",
            audio=True,
            # the distilled LoRA Lightricks ships with LTX-2 (8 steps, no CFG)
            draft=Draft(8, 1.0, lora=("Lightricks/LTX-2:ltx-2-19b-distilled-lora-384.safetensors",)),
        ),
        # HunyuanVideo 1.5 (480p): 121 frames at 24 fps, 4k+1, sizes in 16s. Guidance goes to the pipeline's guider
        # (its __call__ has no guidance_scale), and it takes no step callback: progress and Stop act between shots.
        "HunyuanVideo15Pipeline": Family(
            "HunyuanVideo 1.5",
            (4, 1),
            fps=24,
            width=848,
            height=480,
            size_multiple=16,
            max_frames=121,
            steps=50,
            guidance=6.0,
            i2v_pipeline="HunyuanVideo15ImageToVideoPipeline",
            # no cache: diffusers' hooks do not know HunyuanVideo 1.5's blocks (TransformerBlockRegistry)
            draft=Draft(12, 6.0, scale=0.5, keeps=SMALLER),
        ),
        # SkyReels-V2 diffusion forcing (540P): 97 frames at once at 24 fps, 960x544; a longer shot, up to 30 s,
        # is extended in windows of 97 overlapping by 17 with addnoise 20 (the pipeline's recommended long-video settings).
        "SkyReelsV2DiffusionForcingPipeline": Family(
            "SkyReels-V2",
            (4, 1),
            fps=24,
            width=960,
            height=544,
            size_multiple=16,
            max_frames=721,
            steps=50,
            guidance=6.0,
            fps_kwarg="fps",
            window_frames=97,
            # no cache: diffusers' hooks do not know SkyReels-V2's blocks (TransformerBlockRegistry)
            draft=Draft(12, 6.0, scale=0.5, keeps=SMALLER),
        ),
    }
)


def _is_set(value: object) -> bool:
    return value not in (None, False, [None, None], [])


def family_for(class_name: str, index: dict) -> Family | None:
    """The row for a pipeline class and its model_index.json (a variant when its keys are set); None if unknown."""
    for row in VARIANTS.get(class_name, ()):
        if all(_is_set(index.get(key)) for key in row.when):
            return row
    return FAMILIES.get(class_name)
