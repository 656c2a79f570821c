"""Build the active backend and agents from the configuration, each labelled for the user."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.config import Config

if TYPE_CHECKING:
    from agents.base import Critic, Planner, Refiner
    from agents.llm import LLMClient
    from generation.base import Backend


@dataclass
class Agents:
    planner: Planner
    critic: Critic
    refiner: Refiner
    label: str  # shown in the CLI header and the UI status bar


def make_backend(config: Config) -> Backend:
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
        speed=video_speed(config),
        variant=config.video_variant or None,
    )


def video_speed(config: Config):
    """The video model's speed settings (cache, attention backend, compilation, the draft's LoRA files)."""
    from generation.speed import Speed

    files = tuple(f.strip() for f in config.video_draft_lora.split(",") if f.strip())
    return Speed(config.video_cache, config.video_attention, config.video_compile, files)


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
    """The LLM client's configuration; with CHIEF_LOCAL_LLM (and no endpoint), the address of the local model CHIEF
    runs itself."""
    local = local_llm(config)
    if local is None:
        return config.llm
    stem = local.name.removesuffix(".gguf")
    names = {f"{r}_model": getattr(config, f"{r}_model") or stem for r in ("critic", "refiner", "planner")}
    return config.llm.model_copy(update={"base_url": local.base_url, "context_tokens": local.n_ctx, **names})


LOCAL_CONTEXT = 8192  # the local server's context: its KV cache is allocated up front


def local_llm(config: Config):
    """The local model server (started on first use) when CHIEF_LOCAL_LLM is what the agents use, else None."""
    if not config.local_llm or config.llm_base_url or config.agent_mode != "llm":
        return None
    from agents.local_llm import server_for

    return server_for(config.local_llm, min(config.llm.context_tokens, LOCAL_CONTEXT), config.home / "logs")


def llm_offer(config: Config) -> str | None:
    """What the first run offers when no LLM is configured (None when one is): the three ways on, the mode now."""
    if config.agent_mode == "llm" or config.agents == "offline":
        return None
    from generation.hub import LLM_MODELS

    first = LLM_MODELS[0]
    return (
        f"no LLM found: pull a local model (`chief models pull --llm`: {first.about}, about {first.card_size_gb:g} "
        "GB; CHIEF then runs it itself), point to a server (`chief models` lists the ones on this machine), or use the"
        " embedded heuristic agents (in use now)"
    )


def llm_client(config: Config) -> LLMClient | None:
    """The openai-SDK client for the configured endpoint, or None when the agents are offline."""
    return _client(config) if config.agent_mode == "llm" else None


def _client(config: Config) -> LLMClient:
    from agents.llm import LLMClient

    local = local_llm(config)  # started before the client's first request
    return LLMClient(llm_config(config), start=local.ensure_started if local is not None else None)


def make_agents(config: Config) -> Agents:
    if config.agent_mode == "offline":
        from agents.offline import OfflineCritic, OfflinePlanner, OfflineRefiner

        return Agents(
            OfflinePlanner(), OfflineCritic(), OfflineRefiner(), "offline (embedded heuristic agents, no LLM)"
        )
    from agents.critic import LLMCritic
    from agents.planner import LLMPlanner
    from agents.refiner import LLMRefiner

    client = _client(config)
    critic = LLMCritic(client, video=config.llm_critic_video, video_seconds=config.llm_video_seconds)
    local = local_llm(config)
    label = f"llm: {local.label}" if local is not None else client.config.describe()
    return Agents(LLMPlanner(client), critic, LLMRefiner(client), label)
