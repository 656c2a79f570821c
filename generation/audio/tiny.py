"""Tiny random-weight audio pipelines built from the real diffusers classes and saved to a folder (tests, smoke
checks of the loading code; nothing is downloaded, the weights mean nothing). Configs follow diffusers' own fast
tests (tests/pipelines/stable_audio, audioldm2, ace_step); tokenizers are built in code."""

from __future__ import annotations

from pathlib import Path

import torch

from generation.tiny import tiny_t5, tiny_tokenizer


def build_stable_audio(folder: Path) -> Path:
    from diffusers import (
        AutoencoderOobleck,
        CosineDPMSolverMultistepScheduler,
        StableAudioDiTModel,
        StableAudioPipeline,
        StableAudioProjectionModel,
    )

    torch.manual_seed(0)
    transformer = StableAudioDiTModel(
        sample_size=4,
        in_channels=3,
        num_layers=2,
        attention_head_dim=4,
        num_key_value_attention_heads=2,
        out_channels=3,
        cross_attention_dim=4,
        time_proj_dim=8,
        global_states_input_dim=8,
        cross_attention_input_dim=4,
    )
    # the scheduler Stable Audio Open ships (its Brownian-tree noise comes from torchsde)
    scheduler = CosineDPMSolverMultistepScheduler(
        solver_order=2, prediction_type="v_prediction", sigma_data=1.0, sigma_schedule="exponential"
    )
    torch.manual_seed(0)
    vae = AutoencoderOobleck(
        encoder_hidden_size=6,
        downsampling_ratios=[1, 2],
        decoder_channels=3,
        decoder_input_channels=3,
        audio_channels=2,
        channel_multiples=[2, 4],
        sampling_rate=4,
    )
    tokenizer = tiny_tokenizer()
    tokenizer.model_max_length = 25
    torch.manual_seed(0)
    text_encoder = tiny_t5(len(tokenizer))
    torch.manual_seed(0)
    projection = StableAudioProjectionModel(
        text_encoder_dim=text_encoder.config.d_model, conditioning_dim=4, min_value=0, max_value=32
    )
    pipe = StableAudioPipeline(
        transformer=transformer,
        scheduler=scheduler,  # pyright: ignore[reportArgumentType] -- the released model ships this scheduler; diffusers annotates the EDM one
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        projection_model=projection,
    )
    pipe.save_pretrained(folder)
    return Path(folder)


def tiny_t5_tokenizer():
    """A T5Tokenizer (the class AudioLDM2 checks for) over the same small Unigram vocabulary as `tiny_tokenizer`."""
    import string

    from transformers import T5Tokenizer

    from generation.tiny import WORDS

    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -2.0)] + [("▁" + w, -5.0) for w in WORDS]
    vocab += [(c, -8.0) for c in string.ascii_lowercase + string.digits + ".,'!?-"]
    return T5Tokenizer(vocab=vocab, extra_ids=0, model_max_length=77)


def tiny_roberta_tokenizer():
    """A byte-level BPE tokenizer of letters and a few words (RoBERTa's special tokens), for CLAP's text branch."""
    import string

    from transformers import RobertaTokenizer

    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
    for c in "Ġ" + string.ascii_lowercase + string.digits + ".,'!?-":
        vocab.setdefault(c, len(vocab))
    for w in ("rain", "wind", "sea", "door", "crowd", "room", "storm", "steps"):
        vocab["Ġ" + w] = len(vocab)
    return RobertaTokenizer(vocab=vocab, merges=[], model_max_length=77)


def build_audioldm2(folder: Path) -> Path:
    from diffusers import (
        AudioLDM2Pipeline,
        AudioLDM2ProjectionModel,
        AudioLDM2UNet2DConditionModel,
        AutoencoderKL,
        DDIMScheduler,
    )
    from transformers import (
        ClapAudioConfig,
        ClapConfig,
        ClapFeatureExtractor,
        ClapModel,
        ClapTextConfig,
        GPT2Config,
        GPT2LMHeadModel,
        SpeechT5HifiGan,
        SpeechT5HifiGanConfig,
    )

    torch.manual_seed(0)
    unet = AudioLDM2UNet2DConditionModel(
        block_out_channels=(32, 64),  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        layers_per_block=2,
        sample_size=32,
        in_channels=4,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        cross_attention_dim=([None, 16, 32], [None, 16, 32]),  # pyright: ignore[reportArgumentType] -- AudioLDM2's UNet takes a list per block (diffusers' own test)
    )
    scheduler = DDIMScheduler(
        beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False, set_alpha_to_one=False
    )
    torch.manual_seed(0)
    vae = AutoencoderKL(
        block_out_channels=(32, 64),  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        in_channels=1,
        out_channels=1,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),  # pyright: ignore[reportArgumentType] -- diffusers writes tuple[int] for a tuple of any length
        latent_channels=4,
    )
    torch.manual_seed(0)
    text_config = ClapTextConfig(
        bos_token_id=0,
        eos_token_id=2,
        hidden_size=16,
        intermediate_size=37,
        layer_norm_eps=1e-05,
        num_attention_heads=2,
        num_hidden_layers=2,
        pad_token_id=1,
        vocab_size=1000,
        projection_dim=16,
    )
    audio_config = ClapAudioConfig(
        spec_size=64,
        window_size=4,
        num_mel_bins=64,
        layer_norm_eps=1e-05,
        depths=[2, 2],
        num_attention_heads=[2, 2],
        num_hidden_layers=2,
        hidden_size=192,
        projection_dim=16,
        patch_size=2,
        patch_stride=2,
        patch_embed_input_channels=4,
    )
    text_encoder = ClapModel(
        ClapConfig(text_config=text_config.to_dict(), audio_config=audio_config.to_dict(), projection_dim=16)
    ).eval()
    tokenizer_2 = tiny_t5_tokenizer()
    torch.manual_seed(0)
    text_encoder_2 = tiny_t5(len(tokenizer_2))
    torch.manual_seed(0)
    # diffusers 0.42 types the language model as GPT2LMHeadModel (a bare GPT2Model has no generation helpers)
    language_model = GPT2LMHeadModel(
        GPT2Config(n_embd=16, n_head=2, n_layer=2, vocab_size=1000, n_positions=99, eos_token_id=2)
    )
    language_model.config.max_new_tokens = 8
    torch.manual_seed(0)
    projection = AudioLDM2ProjectionModel(text_encoder_dim=16, text_encoder_1_dim=32, langauge_model_dim=16)
    vocoder = SpeechT5HifiGan(
        SpeechT5HifiGanConfig(
            model_in_dim=8,
            sampling_rate=16000,
            upsample_initial_channel=16,
            upsample_rates=[2, 2],
            upsample_kernel_sizes=[4, 4],
            resblock_kernel_sizes=[3, 7],
            resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5]],
            normalize_before=False,
        )
    )
    pipe = AudioLDM2Pipeline(
        vae=vae,
        text_encoder=text_encoder,
        text_encoder_2=text_encoder_2,
        projection_model=projection,
        language_model=language_model,
        tokenizer=tiny_roberta_tokenizer(),
        tokenizer_2=tokenizer_2,
        feature_extractor=ClapFeatureExtractor(hop_length=7900),
        unet=unet,
        scheduler=scheduler,  # pyright: ignore[reportArgumentType] -- diffusers annotates the KarrasDiffusionSchedulers enum, not a scheduler
        vocoder=vocoder,
    )
    pipe.save_pretrained(folder)
    return Path(folder)


def build_ace_step(folder: Path) -> Path:
    from diffusers import (
        AceStepConditionEncoder,
        AceStepPipeline,
        AceStepTransformer1DModel,
        AutoencoderOobleck,
        FlowMatchEulerDiscreteScheduler,
    )
    from transformers import Qwen3Config, Qwen3Model

    torch.manual_seed(0)
    transformer = AceStepTransformer1DModel(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        in_channels=24,
        audio_acoustic_hidden_dim=8,
        patch_size=2,
        rope_theta=10000.0,
        sliding_window=16,
    )
    tokenizer = tiny_tokenizer()  # ACE-Step's is Qwen3's; any fast tokenizer the text encoder's vocabulary fits
    torch.manual_seed(0)
    text_encoder = Qwen3Model(
        Qwen3Config(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            vocab_size=len(tokenizer),
            max_position_embeddings=256,
        )
    ).eval()
    torch.manual_seed(0)
    condition_encoder = AceStepConditionEncoder(
        hidden_size=32,
        intermediate_size=64,
        text_hidden_dim=32,
        timbre_hidden_dim=8,
        num_lyric_encoder_hidden_layers=2,
        num_timbre_encoder_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        rope_theta=10000.0,
        sliding_window=16,
    )
    torch.manual_seed(0)
    vae = AutoencoderOobleck(
        encoder_hidden_size=6,
        downsampling_ratios=[1, 2],
        decoder_channels=3,
        decoder_input_channels=8,
        audio_channels=2,
        channel_multiples=[2, 4],
        sampling_rate=4,
    )
    pipe = AceStepPipeline(
        transformer=transformer,
        condition_encoder=condition_encoder,
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        scheduler=FlowMatchEulerDiscreteScheduler(num_train_timesteps=1, shift=1.0),
    )
    pipe.save_pretrained(folder)
    return Path(folder)


BUILDERS = {"stable_audio": build_stable_audio, "audioldm2": build_audioldm2, "ace_step": build_ace_step}
