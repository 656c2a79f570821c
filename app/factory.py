"""Build the active backend and agents from the configuration, each labelled for the user."""

from __future__ import annotations

from dataclasses import dataclass

from app.config import Config


@dataclass
class Agents:
    planner: object
    critic: object
    refiner: object
    label: str  # shown in the CLI header and the UI status bar


def make_backend(config: Config):
    if config.backend == "animatic":
        from generation.animatic import AnimaticBackend

        return AnimaticBackend()
    from generation.diffusers_backend import DiffusersBackend

    return DiffusersBackend(
        config.model,
        i2v_model=config.i2v_model or None,
        vace_model=config.vace_model or None,
        device=config.device or None,
        dtype=config.dtype or None,
        cpu_offload=config.cpu_offload,
        vae_tiling=config.vae_tiling,
        vae_slicing=config.vae_slicing,
        steps=config.steps,
        guidance=config.guidance,
        memory=video_memory(config),
    )


def video_memory(config: Config):
    """The video model's Memory: the named profile, or (`custom`) the separate quantization and offload settings."""
    from generation.memory import Memory, profile_memory

    gguf = config.video_gguf or None
    if config.video_profile != "custom":
        return profile_memory(config.video_profile, gguf_file=gguf)
    offload = "model" if config.cpu_offload else config.group_offload
    return Memory(config.video_quant, offload, config.vae_tiling, config.vae_slicing, "custom", gguf)


def make_images(config: Config):
    """The still-image backend for references and keyframes: the configured text-to-image model; else the drawn
    keyframes that go with the animatic; None with the diffusers video backend and no image model."""
    if config.image_model:
        from generation.images import DiffusersImages

        return DiffusersImages(
            config.image_model,
            device=config.device or None,
            dtype=config.dtype or None,
            cpu_offload=config.cpu_offload,
            vae_tiling=config.vae_tiling,
            vae_slicing=config.vae_slicing,
        )
    if config.backend == "animatic":
        from generation.animatic_frames import AnimaticImages

        return AnimaticImages()
    return None


def make_embedder(config: Config):
    """The image-embedding model that measures consistency, or None when none is configured."""
    if not config.embed_model:
        return None
    from generation.embeddings import ImageEmbedder
    from generation.pipelines import pick_device

    return ImageEmbedder(config.embed_model, device=pick_device(config.device or None)[0])


def llm_config(config: Config):
    from agents.llm import LLMConfig

    models = {
        f"{r}_model": getattr(config, f"{r}_model")
        for r in ("critic", "refiner", "planner")
        if getattr(config, f"{r}_model")
    }
    return LLMConfig(
        base_url=config.llm_base_url or None,
        api_key=config.api_key or None,
        timeout=config.llm_timeout,
        max_retries=config.llm_max_retries,
        backoff=config.llm_backoff,
        max_concurrency=config.llm_concurrency,
        response_format=config.llm_response_format,
        stream=config.llm_stream,
        max_output_tokens=config.llm_max_output_tokens,
        planner_max_tokens=config.planner_max_tokens,
        refiner_max_tokens=config.refiner_max_tokens,
        critic_max_tokens=config.critic_max_tokens,
        temperature=config.llm_temperature,
        context_tokens=config.llm_context_tokens,
        discover_limits=config.llm_discover_limits,
        max_images_per_request=config.llm_max_images,
        max_frames_per_call=config.llm_max_images,
        image_tokens=config.llm_image_tokens,
        stall_seconds=config.llm_stall_seconds,
        action_timeout=config.llm_action_timeout,
        resend_timeouts=config.llm_resend_timeouts,
        max_answer_chars=config.llm_max_answer_chars,
        image_detail=config.image_detail,
        state_path=config.home / "llm-endpoints.json",
        **models,
    )


def llm_client(config: Config):
    """The openai-SDK client for the configured endpoint, or None when the agents are offline."""
    if config.agent_mode != "llm":
        return None
    from agents.llm import LLMClient

    return LLMClient(llm_config(config))


def make_agents(config: Config) -> Agents:
    if config.agent_mode == "offline":
        from agents.offline import OfflineCritic, OfflinePlanner, OfflineRefiner

        return Agents(
            OfflinePlanner(), OfflineCritic(), OfflineRefiner(), "offline (embedded heuristic agents, no LLM)"
        )
    from agents.critic import LLMCritic
    from agents.planner import LLMPlanner
    from agents.refiner import LLMRefiner

    client = llm_client(config)
    critic = LLMCritic(client, video=config.llm_critic_video, video_seconds=config.llm_video_seconds)
    return Agents(LLMPlanner(client), critic, LLMRefiner(client), client.config.describe())
