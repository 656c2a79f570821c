"""What each diffusers video family needs, in one table keyed by pipeline class name.

The diffusers backend reads only this table: adding a family is adding a row, never a branch.
Values follow each pipeline's own defaults and checks in diffusers (`check_inputs`, `__call__`).
"""

from __future__ import annotations

from dataclasses import dataclass


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
    ),
}
