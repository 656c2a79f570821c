"""Tiny random-weight diffusers pipelines built from the real classes and saved to a folder: for the test suite,
the benchmarks and smoke checks of the loading code (nothing is downloaded; the weights mean nothing).

Configs follow diffusers' own fast tests (tests/pipelines/wan/test_wan.py, cogvideo/test_cogvideox.py,
ltx/test_ltx.py); the text encoders are tiny T5/UMT5 models (dropout 0, eval mode) and the tokenizer is
a small Unigram vocabulary built in code with `tokenizers`, so nothing is downloaded.
"""

from __future__ import annotations

import string
from pathlib import Path

import torch

TEXT_DIM = 32
WORDS = (
    "a the and of in on at with to dance dancing monkey cat dog red blue green sky sea city night "
    "day rain sun light dark walks runs flies over under slow fast close wide shot camera"
).split()


def tiny_tokenizer():
    """A T5-style tokenizer (<pad>=0, </s>=1, <unk>=2, metaspace words, letter fallback)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -2.0)]
    vocab += [("▁" + w, -5.0) for w in WORDS]
    vocab += [(c, -8.0) for c in string.ascii_lowercase + string.digits + ".,'!?-"]
    tok = Tokenizer(models.Unigram(vocab, unk_id=2, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", model_max_length=512
    )


def _t5_config(cls, vocab_size: int):
    return cls(
        vocab_size=vocab_size,
        d_model=TEXT_DIM,
        d_kv=8,
        d_ff=37,
        num_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        dropout_rate=0.0,
    )


def tiny_t5(vocab_size: int):
    from transformers import T5Config, T5EncoderModel

    return T5EncoderModel(_t5_config(T5Config, vocab_size)).eval()


def tiny_umt5(vocab_size: int):
    from transformers import UMT5Config, UMT5EncoderModel

    return UMT5EncoderModel(_t5_config(UMT5Config, vocab_size)).eval()


def _wan_parts():
    """The tokenizer, VAE and text encoder every tiny Wan pipeline shares."""
    from diffusers import AutoencoderKLWan

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    vae = AutoencoderKLWan(
        base_dim=3, z_dim=16, dim_mult=[1, 1, 1, 1], num_res_blocks=1, temperal_downsample=[False, True, True]
    )
    torch.manual_seed(0)
    return tokenizer, vae, tiny_umt5(len(tokenizer))


def _wan_transformer(cls_name: str = "WanTransformer3DModel", channels: int = 16, seed: int = 0, head_dim: int = 12):
    import diffusers

    torch.manual_seed(seed)
    return getattr(diffusers, cls_name)(
        patch_size=(1, 2, 2),
        num_attention_heads=2,
        attention_head_dim=head_dim,
        in_channels=channels,
        out_channels=channels,
        text_dim=TEXT_DIM,
        freq_dim=256,
        ffn_dim=32,
        num_layers=2,
        cross_attn_norm=True,
        qk_norm="rms_norm_across_heads",
        rope_max_seq_len=32,
    )


def build_wan_lora(path: Path, *, seed: int = 0, head_dim: int = 12, rank: int = 4, targets=None) -> Path:
    """A LoRA for the tiny Wan transformer, made with peft (random, nonzero weights so it changes the picture) and
    saved the way diffusers saves one (`WanPipeline.save_lora_weights`). `head_dim` other than 12 makes one whose
    shapes do not fit; `targets` other layer names (peft's `target_modules`)."""
    from diffusers import WanPipeline
    from peft import LoraConfig
    from peft.utils import get_peft_model_state_dict

    transformer = _wan_transformer(seed=seed, head_dim=head_dim)
    torch.manual_seed(seed)
    targets = targets or ["to_q", "to_k", "to_v", "to_out.0"]
    transformer.add_adapter(LoraConfig(r=rank, lora_alpha=rank, target_modules=targets, init_lora_weights=False))
    with torch.no_grad():
        for name, p in transformer.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.5)  # peft's random init keeps B small; make the change plain in 2 steps
    path.parent.mkdir(parents=True, exist_ok=True)
    layers = get_peft_model_state_dict(transformer)
    WanPipeline.save_lora_weights(path.parent, transformer_lora_layers=layers, weight_name=path.name)  # pyright: ignore[reportArgumentType] -- diffusers annotates an invariant dict of Module | Tensor; it takes tensors
    return path


def build_wan(folder: Path) -> Path:
    from diffusers import FlowMatchEulerDiscreteScheduler, WanPipeline

    tokenizer, vae, text_encoder = _wan_parts()
    transformer = _wan_transformer()
    pipe = WanPipeline(
        transformer=transformer,
        vae=vae,
        scheduler=FlowMatchEulerDiscreteScheduler(shift=7.0),
        text_encoder=text_encoder,
        tokenizer=tokenizer,  # pyright: ignore[reportArgumentType] -- diffusers annotates the AutoTokenizer factory; it takes any tokenizer
    )
    pipe.save_pretrained(folder)
    return folder


def build_wan22(folder: Path) -> Path:
    """Wan 2.2 A14B's shape: two experts (`transformer` above the boundary, `transformer_2` below) and the
    boundary ratio, as diffusers' tests/pipelines/wan/test_wan_22.py builds it."""
    from diffusers import UniPCMultistepScheduler, WanPipeline

    tokenizer, vae, text_encoder = _wan_parts()
    pipe = WanPipeline(
        transformer=_wan_transformer(seed=0),
        transformer_2=_wan_transformer(seed=1),  # another seed: the two experts differ, as trained ones do
        boundary_ratio=0.875,
        vae=vae,
        scheduler=UniPCMultistepScheduler(prediction_type="flow_prediction", use_flow_sigmas=True, flow_shift=3.0),  # pyright: ignore[reportArgumentType] -- diffusers names FlowMatchEuler; Wan 2.2 ships UniPC (its model_index)
        text_encoder=text_encoder,
        tokenizer=tokenizer,  # pyright: ignore[reportArgumentType] -- diffusers annotates the AutoTokenizer factory; it takes any tokenizer
    )
    pipe.save_pretrained(folder)
    return folder


def build_wan22_5b(folder: Path) -> Path:
    """Wan 2.2 TI2V 5B's shape: one transformer over the 48-channel, 16x VAE with expand_timesteps."""
    from diffusers import AutoencoderKLWan, UniPCMultistepScheduler, WanPipeline

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    vae = AutoencoderKLWan(
        base_dim=3,
        z_dim=48,
        in_channels=12,
        out_channels=12,
        is_residual=True,
        patch_size=2,
        latents_mean=[0.0] * 48,
        latents_std=[1.0] * 48,
        dim_mult=[1, 1, 1, 1],
        num_res_blocks=1,
        scale_factor_spatial=16,
        scale_factor_temporal=4,
        temperal_downsample=[False, True, True],
    )
    torch.manual_seed(0)
    text_encoder = tiny_umt5(len(tokenizer))
    pipe = WanPipeline(
        transformer=_wan_transformer(channels=48),
        transformer_2=None,
        boundary_ratio=None,
        expand_timesteps=True,
        vae=vae,
        scheduler=UniPCMultistepScheduler(prediction_type="flow_prediction", use_flow_sigmas=True, flow_shift=5.0),  # pyright: ignore[reportArgumentType] -- diffusers names FlowMatchEuler; Wan 2.2 ships UniPC (its model_index)
        text_encoder=text_encoder,
        tokenizer=tokenizer,  # pyright: ignore[reportArgumentType] -- diffusers annotates the AutoTokenizer factory; it takes any tokenizer
    )
    pipe.save_pretrained(folder)
    return folder


def build_skyreels_df(folder: Path) -> Path:
    """SkyReels-V2 diffusion forcing: the Wan parts with a SkyReels-V2 transformer (tests/pipelines/skyreels_v2)."""
    from diffusers import SkyReelsV2DiffusionForcingPipeline, UniPCMultistepScheduler

    tokenizer, vae, text_encoder = _wan_parts()
    pipe = SkyReelsV2DiffusionForcingPipeline(
        transformer=_wan_transformer("SkyReelsV2Transformer3DModel"),
        vae=vae,
        scheduler=UniPCMultistepScheduler(prediction_type="flow_prediction", use_flow_sigmas=True, flow_shift=8.0),
        text_encoder=text_encoder,
        tokenizer=tokenizer,  # pyright: ignore[reportArgumentType] -- diffusers annotates the AutoTokenizer factory; it takes any tokenizer
    )
    pipe.save_pretrained(folder)
    return folder


def tiny_cogvideox_vae():
    """The tiny CogVideoX VAE shared by the text- and image-to-video pipelines."""
    from diffusers import AutoencoderKLCogVideoX

    torch.manual_seed(0)
    return AutoencoderKLCogVideoX(
        in_channels=3,
        out_channels=3,
        down_block_types=("CogVideoXDownBlock3D",) * 4,  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        up_block_types=("CogVideoXUpBlock3D",) * 4,  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        block_out_channels=(8, 8, 8, 8),  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        latent_channels=4,
        layers_per_block=1,
        norm_num_groups=2,
        temporal_compression_ratio=4,
    )


def build_cogvideox(folder: Path) -> Path:
    from diffusers import CogVideoXPipeline, CogVideoXTransformer3DModel, DDIMScheduler

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    transformer = CogVideoXTransformer3DModel(
        num_attention_heads=4,
        attention_head_dim=8,
        in_channels=4,
        out_channels=4,
        time_embed_dim=2,
        text_embed_dim=TEXT_DIM,
        num_layers=1,
        sample_width=4,
        sample_height=4,
        sample_frames=9,
        patch_size=2,
        temporal_compression_ratio=4,
        max_text_seq_length=226,  # the pipeline's default prompt length
    )
    vae = tiny_cogvideox_vae()
    torch.manual_seed(0)
    text_encoder = tiny_t5(len(tokenizer))
    pipe = CogVideoXPipeline(
        transformer=transformer,
        vae=vae,
        scheduler=DDIMScheduler(),  # pyright: ignore[reportArgumentType] -- diffusers names the CogVideoX schedulers; DDIM is the tiny one
        text_encoder=text_encoder,
        tokenizer=tokenizer,  # pyright: ignore[reportArgumentType] -- diffusers names T5Tokenizer; the tiny fast tokenizer has its interface
    )
    pipe.save_pretrained(folder)
    return folder


def build_cogvideox_i2v(folder: Path) -> Path:
    """CogVideoX image-to-video: a separate model (a transformer that also reads the image latents)."""
    from diffusers import CogVideoXImageToVideoPipeline, CogVideoXTransformer3DModel, DDIMScheduler

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    transformer = CogVideoXTransformer3DModel(  # learned positions: sample_* must match the 32x32 renders
        num_attention_heads=2,
        attention_head_dim=16,
        in_channels=8,
        out_channels=4,
        time_embed_dim=2,
        text_embed_dim=TEXT_DIM,
        num_layers=1,
        sample_width=4,
        sample_height=4,
        sample_frames=9,
        patch_size=2,
        temporal_compression_ratio=4,
        max_text_seq_length=226,
        use_rotary_positional_embeddings=True,
        use_learned_positional_embeddings=True,
    )
    vae = tiny_cogvideox_vae()
    torch.manual_seed(0)
    text_encoder = tiny_t5(len(tokenizer))
    pipe = CogVideoXImageToVideoPipeline(
        transformer=transformer,
        vae=vae,
        scheduler=DDIMScheduler(),  # pyright: ignore[reportArgumentType] -- diffusers names the CogVideoX schedulers; DDIM is the tiny one
        text_encoder=text_encoder,
        tokenizer=tokenizer,  # pyright: ignore[reportArgumentType] -- diffusers names T5Tokenizer; the tiny fast tokenizer has its interface
    )
    pipe.save_pretrained(folder)
    return folder


def build_ltx(folder: Path) -> Path:
    from diffusers import (
        AutoencoderKLLTXVideo,
        FlowMatchEulerDiscreteScheduler,
        LTXPipeline,
        LTXVideoTransformer3DModel,
    )

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    transformer = LTXVideoTransformer3DModel(
        in_channels=8,
        out_channels=8,
        patch_size=1,
        patch_size_t=1,
        num_attention_heads=4,
        attention_head_dim=8,
        cross_attention_dim=32,
        num_layers=1,
        caption_channels=TEXT_DIM,
    )
    torch.manual_seed(0)
    scaling = (True, True, False, False)
    vae = AutoencoderKLLTXVideo(  # every decoder_* argument too, or the decoder is full size
        latent_channels=8,
        block_out_channels=(8, 8, 8, 8),
        decoder_block_out_channels=(8, 8, 8, 8),
        layers_per_block=(1, 1, 1, 1, 1),
        decoder_layers_per_block=(1, 1, 1, 1, 1),
        spatio_temporal_scaling=scaling,
        decoder_spatio_temporal_scaling=scaling,
        decoder_inject_noise=(False,) * 5,
        upsample_residual=(False,) * 4,
        upsample_factor=(1,) * 4,
        patch_size=1,
        patch_size_t=1,
        encoder_causal=True,
        decoder_causal=False,
    )
    torch.manual_seed(0)
    text_encoder = tiny_t5(len(tokenizer))
    pipe = LTXPipeline(
        transformer=transformer,
        vae=vae,
        scheduler=FlowMatchEulerDiscreteScheduler(),
        text_encoder=text_encoder,
        tokenizer=tokenizer,
    )
    pipe.save_pretrained(folder)
    return folder


def build_ltx2(folder: Path) -> Path:
    """LTX-2 (picture and sound): configs from diffusers' tests/pipelines/ltx2/testing_utils.py, with a tiny Gemma 3
    built from its config (32 wide: the connectors' 4 heads x 8) and the code-built tokenizer as a Gemma tokenizer."""
    from diffusers import (
        AutoencoderKLLTX2Audio,
        AutoencoderKLLTX2Video,
        FlowMatchEulerDiscreteScheduler,
        LTX2Pipeline,
        LTX2VideoTransformer3DModel,
    )
    from diffusers.pipelines.ltx2 import LTX2TextConnectors
    from diffusers.pipelines.ltx2.vocoder import LTX2Vocoder
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, GemmaTokenizer

    base = tiny_tokenizer()
    tokenizer = GemmaTokenizer(
        tokenizer_object=base.backend_tokenizer,
        pad_token="<pad>",
        eos_token="</s>",
        bos_token="</s>",
        unk_token="<unk>",
        model_max_length=1024,
    )
    torch.manual_seed(0)
    text = dict(
        vocab_size=len(base),
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        sliding_window=16,
        max_position_embeddings=1024,
    )
    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=8)
    text_encoder = Gemma3ForConditionalGeneration(
        Gemma3Config(text_config=text, vision_config={**vision, "patch_size": 4}, mm_tokens_per_image=1)
    ).eval()
    width, layers = text["hidden_size"], text["num_hidden_layers"]
    torch.manual_seed(0)
    transformer = LTX2VideoTransformer3DModel(
        in_channels=4,
        out_channels=4,
        patch_size=1,
        patch_size_t=1,
        num_attention_heads=2,
        attention_head_dim=8,
        cross_attention_dim=16,
        audio_in_channels=4,
        audio_out_channels=4,
        audio_num_attention_heads=2,
        audio_attention_head_dim=4,
        audio_cross_attention_dim=8,
        num_layers=2,
        qk_norm="rms_norm_across_heads",
        caption_channels=width,
        rope_double_precision=False,
        rope_type="split",
    )
    torch.manual_seed(0)
    connectors = LTX2TextConnectors(
        caption_channels=width,
        text_proj_in_factor=layers + 1,
        video_connector_num_attention_heads=4,
        video_connector_attention_head_dim=8,
        video_connector_num_layers=1,
        video_connector_num_learnable_registers=None,
        audio_connector_num_attention_heads=4,
        audio_connector_attention_head_dim=8,
        audio_connector_num_layers=1,
        audio_connector_num_learnable_registers=None,
        connector_rope_base_seq_len=32,
        rope_theta=10000.0,
        rope_double_precision=False,
        causal_temporal_positioning=False,
        rope_type="split",
    )
    torch.manual_seed(0)
    vae = AutoencoderKLLTX2Video(
        in_channels=3,
        out_channels=3,
        latent_channels=4,
        block_out_channels=(8,),
        decoder_block_out_channels=(8,),
        layers_per_block=(1,),
        decoder_layers_per_block=(1, 1),
        spatio_temporal_scaling=(True,),
        decoder_spatio_temporal_scaling=(True,),
        decoder_inject_noise=(False, False),
        downsample_type=("spatial",),
        upsample_residual=(False,),
        upsample_factor=(1,),
        timestep_conditioning=False,
        patch_size=1,
        patch_size_t=1,
        encoder_causal=True,
        decoder_causal=False,
    )
    torch.manual_seed(0)
    audio_vae = AutoencoderKLLTX2Audio(
        base_channels=4,
        output_channels=2,
        ch_mult=(1,),
        num_res_blocks=1,
        attn_resolutions=None,
        in_channels=2,
        resolution=32,
        latent_channels=2,
        norm_type="pixel",
        causality_axis="height",
        dropout=0.0,
        mid_block_add_attention=False,
        sample_rate=16000,
        mel_hop_length=160,
        is_causal=True,
        mel_bins=8,
    )
    torch.manual_seed(0)
    vocoder = LTX2Vocoder(
        in_channels=2 * 8,  # the audio VAE's output channels x mel bins
        hidden_channels=32,
        out_channels=2,
        # x160 as the audio VAE's mel hop (the released vocoder's too), so the sound lasts as long as the clip
        upsample_kernel_sizes=[20, 8, 8],
        upsample_factors=[10, 4, 4],
        resnet_kernel_sizes=[3],
        resnet_dilations=[[1, 3, 5]],
        leaky_relu_negative_slope=0.1,
        output_sampling_rate=16000,
    )
    LTX2Pipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=vae,
        audio_vae=audio_vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        connectors=connectors,
        transformer=transformer,
        vocoder=vocoder,
    ).save_pretrained(folder)
    return folder


def build_hunyuan15(folder: Path) -> Path:
    """HunyuanVideo 1.5: configs from diffusers' tests/pipelines/hunyuan_video1_5; the Qwen2.5-VL text model and a
    ByT5 T5 encoder built from configs, the code-built tokenizer as a Qwen2 tokenizer with a small chat template."""
    from diffusers import (
        AutoencoderKLHunyuanVideo15,
        FlowMatchEulerDiscreteScheduler,
        HunyuanVideo15Pipeline,
        HunyuanVideo15Transformer3DModel,
    )
    from diffusers.guiders import ClassifierFreeGuidance
    from transformers import (
        ByT5Tokenizer,
        Qwen2_5_VLTextConfig,
        Qwen2_5_VLTextModel,
        Qwen2Tokenizer,
        T5Config,
        T5EncoderModel,
    )

    base = tiny_tokenizer()
    tokenizer = Qwen2Tokenizer(
        tokenizer_object=base.backend_tokenizer,
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
        model_max_length=2048,
    )
    tokenizer.chat_template = (
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    torch.manual_seed(0)
    transformer = HunyuanVideo15Transformer3DModel(
        in_channels=9,
        out_channels=4,
        num_attention_heads=2,
        attention_head_dim=8,
        num_layers=1,
        num_refiner_layers=1,
        mlp_ratio=2.0,
        patch_size=1,
        patch_size_t=1,
        text_embed_dim=16,
        text_embed_2_dim=32,
        image_embed_dim=12,
        rope_axes_dim=(2, 2, 4),
        target_size=16,
        task_type="t2v",
    )
    torch.manual_seed(0)
    vae = AutoencoderKLHunyuanVideo15(
        in_channels=3,
        out_channels=3,
        latent_channels=4,
        block_out_channels=(16, 16),  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        layers_per_block=1,
        spatial_compression_ratio=4,
        temporal_compression_ratio=2,
        downsample_match_channel=False,
        upsample_match_channel=False,
    )
    torch.manual_seed(0)
    qwen = Qwen2_5_VLTextConfig(
        vocab_size=len(base),
        hidden_size=16,
        intermediate_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        rope_parameters={
            "mrope_section": [1, 1, 2],
            "rope_type": "default",
            "type": "default",
            "rope_theta": 1000000.0,
        },
        bos_token_id=1,
        eos_token_id=1,
        pad_token_id=0,
    )
    text_encoder = Qwen2_5_VLTextModel(qwen).eval()
    torch.manual_seed(0)
    byt5 = T5Config(
        vocab_size=384,  # ByT5's bytes and specials
        d_model=32,
        d_kv=8,
        d_ff=37,
        num_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        dropout_rate=0.0,
    )
    HunyuanVideo15Pipeline(
        transformer=transformer.eval(),
        vae=vae.eval(),
        scheduler=FlowMatchEulerDiscreteScheduler(shift=7.0),
        text_encoder=text_encoder,
        text_encoder_2=T5EncoderModel(byt5).eval(),
        tokenizer=tokenizer,
        tokenizer_2=ByT5Tokenizer(),
        guider=ClassifierFreeGuidance(guidance_scale=6.0),
    ).save_pretrained(folder)
    return folder


def build_image_pipeline(folder: Path) -> Path:
    """A tiny unconditional image pipeline (DDPM): a real diffusers folder that is not video."""
    from diffusers import DDPMPipeline, DDPMScheduler, UNet2DModel

    torch.manual_seed(0)
    unet = UNet2DModel(
        sample_size=8,
        in_channels=3,
        out_channels=3,
        block_out_channels=(4, 8),
        layers_per_block=1,
        norm_num_groups=2,
        down_block_types=("DownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "UpBlock2D"),
    )
    DDPMPipeline(unet=unet, scheduler=DDPMScheduler()).save_pretrained(folder)
    return folder


def build_wan_vace(folder: Path) -> Path:
    """Wan VACE (reference images, first frame by mask): the tiny Wan parts with a VACE transformer."""
    from diffusers import FlowMatchEulerDiscreteScheduler, WanVACEPipeline, WanVACETransformer3DModel

    tokenizer, vae, text_encoder = _wan_parts()
    torch.manual_seed(0)
    transformer = WanVACETransformer3DModel(  # vace_in_channels: 2 x z_dim video latents + 8 x 8 mask channels
        patch_size=(1, 2, 2),
        num_attention_heads=2,
        attention_head_dim=12,
        in_channels=16,
        out_channels=16,
        text_dim=TEXT_DIM,
        freq_dim=256,
        ffn_dim=32,
        num_layers=2,
        cross_attn_norm=True,
        qk_norm="rms_norm_across_heads",
        rope_max_seq_len=32,
        vace_layers=[0],
        vace_in_channels=96,
    )
    pipe = WanVACEPipeline(
        transformer=transformer,
        vae=vae,
        scheduler=FlowMatchEulerDiscreteScheduler(shift=7.0),
        text_encoder=text_encoder,
        tokenizer=tokenizer,  # pyright: ignore[reportArgumentType] -- diffusers annotates the AutoTokenizer factory; it takes any tokenizer
    )
    pipe.save_pretrained(folder)
    return folder


def build_flux(folder: Path) -> Path:
    """FLUX text-to-image (configs from diffusers' tests/pipelines/flux): a CLIP and a T5 text encoder."""
    from diffusers import AutoencoderKL, FlowMatchEulerDiscreteScheduler, FluxPipeline, FluxTransformer2DModel
    from transformers import CLIPTextConfig, CLIPTextModel

    tokenizer = tiny_tokenizer()
    clip_tokenizer = tiny_tokenizer()
    clip_tokenizer.model_max_length = 77  # CLIP's position embeddings
    torch.manual_seed(0)
    clip = CLIPTextModel(
        CLIPTextConfig(
            vocab_size=len(clip_tokenizer),
            hidden_size=TEXT_DIM,
            intermediate_size=37,
            num_attention_heads=4,
            num_hidden_layers=2,
            max_position_embeddings=77,
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=0,
            projection_dim=TEXT_DIM,
        )
    ).eval()
    torch.manual_seed(0)
    t5 = tiny_t5(len(tokenizer))
    torch.manual_seed(0)
    transformer = FluxTransformer2DModel(
        patch_size=1,
        in_channels=4,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=TEXT_DIM,
        pooled_projection_dim=TEXT_DIM,
        axes_dims_rope=(4, 4, 8),
    )
    torch.manual_seed(0)
    vae = AutoencoderKL(
        sample_size=32,
        in_channels=3,
        out_channels=3,
        block_out_channels=(4,),
        layers_per_block=1,
        latent_channels=1,
        norm_num_groups=1,
        use_quant_conv=False,
        use_post_quant_conv=False,
        shift_factor=0.0609,
        scaling_factor=1.5035,
    )
    FluxPipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        text_encoder=clip,
        tokenizer=clip_tokenizer,  # pyright: ignore[reportArgumentType] -- diffusers names CLIPTokenizer; the tiny fast tokenizer has its interface
        text_encoder_2=t5,
        tokenizer_2=tokenizer,
        transformer=transformer,
        vae=vae,
    ).save_pretrained(folder)
    return folder


def build_clip_vision(folder: Path) -> Path:
    """A tiny CLIP image encoder with its projection, and its image processor: an embedding model."""
    from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModelWithProjection

    torch.manual_seed(0)
    CLIPVisionModelWithProjection(
        CLIPVisionConfig(
            hidden_size=32,
            intermediate_size=37,
            num_attention_heads=4,
            num_hidden_layers=2,
            image_size=32,
            patch_size=4,
            projection_dim=16,
        )
    ).save_pretrained(folder)
    CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


BUILDERS = {
    "wan": build_wan,
    "wan22": build_wan22,
    "wan22_5b": build_wan22_5b,
    "skyreels_df": build_skyreels_df,
    "ltx2": build_ltx2,
    "hunyuan15": build_hunyuan15,
    "cogvideox": build_cogvideox,
    "cogvideox_i2v": build_cogvideox_i2v,
    "ltx": build_ltx,
    "image": build_image_pipeline,
    "wan_vace": build_wan_vace,
    "flux": build_flux,
    "clip_vision": build_clip_vision,
}
