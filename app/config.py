"""Configuration: flags, then environment variables, then a chief.toml, then defaults (the first wins).

`Config` is a pydantic-settings class: each field is typed, bounded and described once, and the table in
docs/settings.md is generated from it (`python -m app.config > docs/settings.md`). A bad value is one
line naming where it came from: `CHIEF_FRAMES_PER_SHOT: must be at least 1 (got 0)`.

Whatever is active is reported by `Config.describe()` and shown to the user (CLI header, UI status
bar): never a silent downgrade. Credentials (the API key, the web app's password) are read from the
environment or flags only, held in memory only, and never written to the database, an archive or a
log, nor printed.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from copy import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin
from urllib.parse import urlsplit, urlunsplit

from pydantic import AliasChoices, Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from storage.schema import Limits

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

    from agents.llm_config import LLMConfig

TOML_NAME = "chief.toml"
ENV_PREFIX = "CHIEF_"


def default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "chief"


def _secret(description: str) -> dict:
    """A credential: environment or flags only (refused in chief.toml), never in a repr."""
    return {"description": description, "repr": False, "json_schema_extra": {"secret": True}}


def _limit(name: str) -> Any:
    """A storyboard cap as a setting: the default, bounds and reason of storage.schema.Limits (a FieldInfo standing
    in for the value, typed as pydantic types `Field`)."""
    return copy(Limits.model_fields[name])


class Config(BaseSettings):
    """Everything CHIEF can be told. Variables are CHIEF_ + the name in capitals unless a field names its own."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_ignore_empty=True, frozen=True, extra="forbid", validate_by_name=True
    )
    _notes: tuple[str, ...] = PrivateAttr(default=())

    home: Path = Field(
        default_factory=default_home,
        description=(
            "Data folder: `chief.db` (SQLite, WAL) and `media/` (content-addressed files); its `chief.toml` is read "
            "when the working folder has none. Default `$XDG_DATA_HOME/chief`, else `~/.local/share/chief`."
        ),
    )
    backend: Literal["animatic", "diffusers"] = Field(
        "animatic",
        validation_alias="CHIEF_VIDEO_BACKEND",
        description=("Video backend: `animatic` (a labelled previz drawn on the CPU, no weights) or `diffusers`."),
    )
    model: str = Field(
        "",
        validation_alias="CHIEF_VIDEO_MODEL",
        description=("Diffusers text-to-video model: a local folder or a cached hub id (required with `diffusers`)."),
    )
    i2v_model: str = Field(
        "",
        validation_alias="CHIEF_VIDEO_I2V_MODEL",
        description=(
            "Optional image-to-video model for shot continuity (LTX needs none: its I2V pipeline shares the weights)."
        ),
    )
    vace_model: str = Field(
        "",
        description=(
            "Optional Wan VACE model (`WanVACEPipeline`) next to a Wan text-to-video model: shots are conditioned on their "
            "characters' reference images, and start from their keyframes when there is no image-to-video model."
        ),
    )
    image_model: str = Field(
        "",
        description=(
            "Diffusers text-to-image model for reference images and keyframes (FLUX, SDXL, SD3, Qwen-Image): a local "
            "folder or a cached hub id. Empty: drawn keyframes with the animatic backend; none with `diffusers`."
        ),
    )
    embed_model: str = Field(
        "",
        description=(
            "Image-embedding model (CLIP, SigLIP or DINOv2: a transformers folder or a cached hub id) that measures "
            "how consistent characters look; empty: the consistency table says it is not measured."
        ),
    )
    device: str = Field("", description="`cuda`, `cuda:N`, `mps` or `cpu`; empty: the best available.")
    dtype: str = Field("", description="Weights dtype: `bf16`, `fp16` or `fp32`; empty: the device's best.")
    cpu_offload: bool = Field(
        False, description=("Keep model parts on the GPU only while they run: less GPU memory, slower (needs a GPU).")
    )
    vae_tiling: bool = Field(False, description="Decode frames tile by tile: less memory for large frames.")
    vae_slicing: bool = Field(False, description="Decode a batch one video at a time: less memory for batches.")
    video_profile: Literal["custom", "fastest", "fits 24 GB", "fits 12 GB", "fits 8 GB"] = Field(
        "custom",
        description=(
            "Memory profile of the diffusers video model (see docs/memory.md and `chief doctor`): `fastest`, "
            "`fits 24 GB` (int8 transformer, VAE tiling), `fits 12 GB` (+ model CPU offload), `fits 8 GB` (nf4, "
            "leaf-level group offload); `custom`: the separate quantization and offload settings."
        ),
    )
    video_quant: Literal["none", "int8", "fp8", "nf4", "gguf"] = Field(
        "none",
        description=(
            "Transformer weights with the `custom` profile: `int8` (torchao, runs on the CPU too), `fp8` (torchao, "
            "CUDA 8.9+), `nf4` (bitsandbytes, CUDA), `gguf` (the file in CHIEF_VIDEO_GGUF)."
        ),
    )
    group_offload: Literal["none", "block", "leaf"] = Field(
        "none",
        description="Group offloading with the `custom` profile (CUDA; streams overlap the transfers): block or leaf.",
    )
    video_gguf: str = Field("", description="The transformer's .gguf file, with CHIEF_VIDEO_QUANT=gguf.")
    video_variant: str = Field(
        "",
        pattern=r"^([A-Za-z0-9][A-Za-z0-9_-]{0,31})?$",
        description=(
            "The weights variant the video model loads (the file infix, e.g. fp16: what `chief models pull "
            "--variant` fetched); empty: its plain weights. In the render label and the clip key."
        ),
    )
    steps: int | None = Field(None, ge=1, le=1000, description="Denoising steps; empty: the model family's default.")
    guidance: float | None = Field(
        None, ge=0, le=100, description=("Classifier-free guidance scale; empty: the model family's default.")
    )
    video_draft_lora: str = Field(
        "",
        description=(
            "The draft tier's speed LoRA: a .safetensors file, or two comma-separated for a two-expert model (Wan 2.2 "
            "A14B: high noise, then low noise); empty: the model family's default file from the Hugging Face cache."
        ),
    )
    video_cache: Literal["off", "draft", "all"] = Field(
        "draft",
        description=(
            "diffusers' cache hook of the model family (First Block Cache; it skips work between steps and changes "
            "the picture): on drafts only, on finals too (`all`), or `off`. In the clip key and the render label."
        ),
    )
    video_attention: Literal["auto", "native", "flash", "sage"] = Field(
        "auto",
        description=(
            "Attention backend of the video model: `auto` takes flash, then sage where installed on CUDA, else "
            "torch's native one. In the clip key when it is not native."
        ),
    )
    video_compile: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Regional compilation of the video model's repeated blocks (`auto`: on CUDA only; CUDA needed).",
    )
    llm_base_url: str = Field(
        "",
        description=(
            "OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, ...); empty: api.openai.com when a key is set."
        ),
    )
    api_key: str = Field(
        "",
        validation_alias=AliasChoices("CHIEF_LLM_API_KEY", "OPENAI_API_KEY"),
        **_secret("API key for the LLM endpoint; environment or flags only, never stored or shown."),
    )
    local_llm: str = Field(
        "",
        description=(
            "A GGUF language model CHIEF runs itself (llama-cpp-python's server on a free 127.0.0.1 port, started on "
            "first use, stopped on exit): a file, or ORG/NAME/FILE.gguf as `chief models pull --llm` prints it. Used "
            "when no llm_base_url is set; the agents are then labelled as this local model."
        ),
    )
    critic_model: str = Field("", description="Model the critics use; empty: the LLM client's default.")
    refiner_model: str = Field("", description="Model the refiner uses; empty: the LLM client's default.")
    planner_model: str = Field("", description="Model the planner uses; empty: the LLM client's default.")
    agents: Literal["", "llm", "offline"] = Field(
        "", description=("`llm` or `offline`; empty: `llm` when an endpoint or a key is set, else `offline`.")
    )
    discovery_ports: str = Field(
        "",
        description=(
            "Loopback ports the Settings screen probes for OpenAI-compatible model servers, comma-separated (at most "
            "16); empty: Ollama 11434, LM Studio 1234, llama.cpp 8080 and vLLM 8000. Only 127.0.0.1 is ever probed."
        ),
    )
    seed_policy: Literal["random", "fixed"] = Field(
        "random",
        description=(
            "Seed of a shot added in the web app's storyboard: `random` (a fresh one, so duplicates differ) or `fixed` "
            "(0). A shot keeps its seed afterwards, so an unchanged shot always renders the same clip."
        ),
    )
    narration: bool = Field(True, description="Synthesise the narration (Piper, offline); `0` to skip it.")
    music_model: str = Field(
        "", description="Diffusers music model (ACE-Step, Stable Audio): a local folder; empty: the temp score."
    )
    effects_model: str = Field(
        "", description="Diffusers effects model (Stable Audio, AudioLDM2): a local folder; empty: the temp effects."
    )
    speech_base_url: str = Field(
        "",
        description=(
            "OpenAI-compatible speech endpoint for voices (`http://host/v1`: lines go to `…/v1/audio/speech`); a query "
            "string on it is sent as the query of every request, `user:password@` as HTTP Basic auth; neither is ever "
            "shown. Empty: Piper only."
        ),
    )
    speech_api_key: str = Field(
        "", **_secret("API key for the speech endpoint, sent only to it; environment or flags only, never stored.")
    )
    speech_model: str = Field("tts-1", description="The speech endpoint's model.")
    sound_cache: Path | None = Field(
        None,
        description=(
            "Folder of voiced lines, music cues and effects, shared by every project (content-addressed: a changed "
            "line is voiced again, nothing else); empty: `cache/sound` in the data folder."
        ),
    )
    frames_per_shot: int = Field(3, ge=1, le=24, description="Frames each critic sees of every shot.")
    llm_timeout: float = Field(
        120.0,
        gt=0,
        le=3600,
        description=("Seconds to the first answer token (to the whole answer when not streaming)."),
    )
    llm_max_retries: int = Field(
        3, ge=0, le=10, description="Retries on rate limits, server errors and lost connections."
    )
    llm_backoff: float = Field(
        1.0,
        ge=0,
        le=60,
        description=("First retry delay in seconds; doubles each retry (a server's Retry-After wins)."),
    )
    llm_concurrency: int = Field(
        8,
        ge=1,
        le=64,
        description=(
            "LLM requests in flight at once, all roles together (covers the default 7-persona panel; lowered for a "
            "while after HTTP 429)."
        ),
    )
    llm_response_format: Literal["auto", "json_schema", "json_object", "text"] = Field(
        "auto",
        description=(
            "Structured output: `auto` tries json_schema, then json_object, then plain text, and remembers per endpoint "
            "and model what the server accepts; or force one."
        ),
    )
    llm_stream: bool = Field(
        True, description="Stream answers: progress, stall detection, and a Stop that stops the server."
    )
    llm_max_output_tokens: int = Field(
        4000,
        ge=64,
        le=200_000,
        description=("Output tokens one answer may use (always sent to the server; caps every role's budget)."),
    )
    planner_max_tokens: int | None = Field(
        None, ge=64, le=200_000, description=("The planner's answer budget; empty: `llm_max_output_tokens`.")
    )
    refiner_max_tokens: int | None = Field(
        None, ge=64, le=200_000, description=("The refiner's answer budget; empty: `llm_max_output_tokens`.")
    )
    critic_max_tokens: int | None = Field(3000, ge=64, le=200_000, description="One critique's answer budget.")
    llm_temperature: float | None = Field(
        None,
        ge=0,
        le=2,
        description=("Sampling temperature; empty: the server's default (reasoning models refuse any other)."),
    )
    llm_context_tokens: int = Field(
        32768,
        ge=256,
        le=10_000_000,
        description=("The endpoint's context (prompt + answer) in tokens; a smaller size the server reports wins."),
    )
    llm_discover_limits: bool = Field(
        True, description=("Ask the server its context size (`/v1/models`, llama.cpp `/props`, Ollama `/api/show`).")
    )
    llm_max_images: int = Field(
        8,
        ge=1,
        le=256,
        description=("Images in one request (vLLM `--limit-mm-per-prompt`, most local VLM servers take a few)."),
    )
    llm_image_tokens: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description=(
            "Prompt tokens one image counts for when sizing requests; empty: OpenAI's figure for the image detail."
        ),
    )
    llm_stall_seconds: float = Field(
        30.0, gt=0, le=3600, description=("Seconds without a new token before a streaming answer counts as stalled.")
    )
    llm_action_timeout: float = Field(
        1800.0,
        gt=0,
        le=86_400,
        description=(
            "Seconds one agent action may take: a whole plan, one critic watching the film (every part), one proposal; "
            "every request, retry and repair included. 30 minutes lets a 10-minute film's critic watch its ~15 parts "
            "on a slow local model; a hung server fails sooner (no first token in `llm_timeout`, re-sent once at most)."
        ),
    )
    llm_resend_timeouts: bool | None = Field(
        None,
        description=(
            "Re-send a request that timed out; empty: only to remote endpoints (a local server keeps generating the "
            "abandoned answer, so a re-send would queue behind it)."
        ),
    )
    llm_max_answer_chars: int = Field(
        1_000_000,
        ge=1000,
        le=100_000_000,
        description=("Longer answers are refused (and their stream closed) before parsing."),
    )
    image_detail: Literal["low", "high", "auto"] = Field("low", description="Detail the LLM is asked to see frames at.")
    llm_critic_video: bool = Field(
        False,
        description=(
            "Critics watch each part of the film as one short clip (`video_url`; vLLM serving Qwen2.5-VL or Qwen3-VL "
            "takes them) instead of frames; frames are the default, since every OpenAI-compatible vision model takes "
            "images."
        ),
    )
    llm_video_seconds: float = Field(
        30.0, gt=0, le=600, description=("With `llm_critic_video`: the longest clip one critic request carries.")
    )
    llm_critic_audio: bool = Field(
        False,
        description=(
            "Critics also hear each part of the film: its sound goes with the request as `input_audio` (16 kHz mono "
            "WAV, base64; GPT-4o audio, Qwen2.5-Omni/Qwen3-Omni behind vLLM take it). Every critic already gets each "
            "shot's transcript, cue sheet and measured mix as text; a model that refuses audio falls back to that, "
            "once, remembered per endpoint and model."
        ),
    )
    llm_audio_seconds: float = Field(
        30.0,
        gt=0,
        le=300,
        description=(
            "With `llm_critic_audio`: the longest sound one critic request carries (32 kB of WAV a second, 43 kB in "
            "base64); parts are sized to it."
        ),
    )
    max_shots: int = _limit("max_shots")
    max_film_minutes: float = _limit("max_film_minutes")
    max_shot_seconds: float = _limit("max_shot_seconds")
    max_shot_lines: int = _limit("max_shot_lines")
    max_fps: int = _limit("max_fps")
    max_frame_side: int = _limit("max_frame_side")
    auth: str = Field(
        "",
        **_secret(
            "`user:password` for `chief serve` (required when binding anything but 127.0.0.1); environment or flags only."
        ),
    )
    allowed_hosts: str = Field(
        "",
        description=(
            "More names the web app answers to (comma-separated), besides IP addresses and `localhost`: this machine's "
            "name on your network, or a reverse proxy's. A request naming any other host is refused (DNS rebinding)."
        ),
    )
    web_archive_mb: int = Field(
        512,
        ge=1,
        le=65536,
        description=(
            "The largest archive (.chief.zip) the web app's Import takes, in MB; bigger ones: `chief import`. With the "
            "track and picture caps it sets the largest upload the web app accepts (larger bodies are refused before "
            "they are read)."
        ),
    )
    ray_address: str = Field(
        "", description=("Run `chief serve` on a Ray cluster: `local`, `auto`, `HOST:6379` or `ray://HOST:10001`.")
    )
    queue_running: int = Field(
        0,
        ge=0,
        le=256,
        description=(
            "How many renders, takes, keyframes and references of `chief serve` run at once (the GPU lane), all "
            "accounts together; 0: as many as the video backend renders at once (1 on one device, one per "
            "render worker on Ray)."
        ),
    )
    web_sessions: int = Field(
        300,
        ge=10,
        le=100_000,
        description=(
            "How many page and API sessions the web server keeps state for (Gradio's `state_session_capacity`; "
            "~1.9 MB a page): past it the least recently used is dropped, and a closed page's state goes a minute "
            "after its last event. 300 holds a class of 30 with ten tabs each."
        ),
    )
    queue_cpu_running: int = Field(
        4,
        ge=1,
        le=256,
        description=(
            "How many plans and critiques of `chief serve --users` run at once, all accounts together: they wait in "
            "a lane of their own, never behind the class's renders."
        ),
    )
    queue_per_user: int = Field(
        1,
        ge=0,
        le=256,
        description="How many of one account's queued jobs run at once (more wait their turn); 0: no limit of its own.",
    )
    quota_disk_mb: float = Field(
        0,
        ge=0,
        description=(
            "Disk quota per account in MB: the media its projects use (a file shared by two accounts counts for "
            "each) and their exports and hand-offs; at or over it, renders, takes, keyframes, references, forks, "
            "exports and imports are refused. 0: none."
        ),
    )
    quota_renders_per_hour: int = Field(
        0, ge=0, description="Renders and takes jobs one account may start in an hour on `chief serve`. 0: no limit."
    )
    quota_jobs: int = Field(
        0, ge=0, description="Jobs one account may have queued or running at once on `chief serve`. 0: no limit."
    )

    @field_validator("home")
    @classmethod
    def _expand(cls, home: Path) -> Path:
        return home.expanduser().absolute()  # ffmpeg runs in other folders: a relative home would break it

    @field_validator("llm_base_url", "speech_base_url")
    @classmethod
    def _http(cls, url: str) -> str:
        if url and urlsplit(url).scheme not in ("http", "https"):
            raise ValueError("must start with http:// or https://")
        return url

    @field_validator("discovery_ports")
    @classmethod
    def _ports(cls, text: str) -> str:
        parts = [p.strip() for p in text.split(",")] if text.strip() else []
        if len(parts) > 16 or not all(p.isdigit() and 0 < int(p) < 65536 for p in parts):
            raise ValueError("must be up to 16 port numbers (1-65535) separated by commas, e.g. 11434,8080")
        return ",".join(str(int(p)) for p in parts)

    @model_validator(mode="after")
    def _model_for_diffusers(self) -> Config:
        if self.backend == "diffusers" and not self.model:
            raise ValueError(
                "CHIEF_VIDEO_BACKEND=diffusers needs CHIEF_VIDEO_MODEL (a local folder or a cached hub id)"
            )
        return self

    @classmethod
    def settings_customise_sources(
        cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Flags, then the environment, then chief.toml. `load_config` supplies the last two; without it,
        `Config(...)` reads os.environ and no file."""
        env, toml = _SOURCES.get() or (_Environment(settings_cls, os.environ), None)
        return tuple(source for source in (init_settings, env, toml) if source is not None)

    def __repr_args__(self):
        for name, value in super().__repr_args__():
            yield name, redact_url(value) if name in URL_SETTINGS else value

    @property
    def notes(self) -> tuple[str, ...]:
        """What loading decided that the user must be told (a key withheld from a file's endpoint)."""
        return self._notes

    @property
    def llm(self) -> LLMConfig:
        """The LLM client's configuration, from the settings `LLM_SETTINGS` names (state kept in the data folder)."""
        from agents.llm_config import LLMConfig

        values = {field: getattr(self, name) for field, name in LLM_SETTINGS.items()}
        return LLMConfig(**{k: v for k, v in values.items() if v != ""}, state_path=self.home / "llm-endpoints.json")

    @property
    def agent_mode(self) -> str:
        if self.agents:
            return self.agents
        return "llm" if self.llm_base_url or self.api_key or self.local_llm else "offline"

    @property
    def limits(self) -> Limits:
        return Limits(**{name: getattr(self, name) for name in Limits.model_fields})

    @property
    def db_path(self) -> Path:
        return self.home / "chief.db"

    @property
    def media_root(self) -> Path:
        return self.home / "media"

    @property
    def sound_dir(self) -> Path:
        return self.sound_cache or self.home / "cache" / "sound"

    def describe(self) -> dict:
        """What is active, for the user's eyes (never a credential)."""
        mode = self.agent_mode
        return {
            "home": str(self.home),
            "backend": self.backend,
            "model": self.model or ("(none: animatic previz)" if self.backend == "animatic" else "(not set)"),
            "agents": mode if mode == "llm" else "offline (embedded heuristic agents, no LLM)",
            "llm_endpoint": redact_url(self.llm_base_url) or ("api.openai.com" if mode == "llm" else ""),
            "critic_model": self.critic_model if mode == "llm" else "",
            "refiner_model": self.refiner_model if mode == "llm" else "",
            "planner_model": self.planner_model if mode == "llm" else "",
            "image_model": self.image_model
            or ("(none: drawn animatic keyframes)" if self.backend == "animatic" else "(not set)"),
            "embed_model": self.embed_model or "(not set: consistency is not measured)",
        }


# Endpoints whose key is a credential: (what, endpoint setting, key setting). A key from the environment goes only
# to the endpoint from the environment (or the default): a chief.toml naming the endpoint gets no key (load_config).
KEYED_ENDPOINTS = (("LLM", "llm_base_url", "api_key"), ("speech", "speech_base_url", "speech_api_key"))
URL_SETTINGS = frozenset(endpoint for _, endpoint, _ in KEYED_ENDPOINTS)  # shown without credentials (redact_url)

# (environment source, chief.toml source or None) for the Config being built by load_config.
_SOURCES: ContextVar[tuple[PydanticBaseSettingsSource, PydanticBaseSettingsSource | None] | None] = ContextVar(
    "chief_config_sources", default=None
)

# The LLM client's settings (agents.llm_config.LLMConfig) and the settings they are read from: the one place a
# setting reaches the client. An empty value leaves the client's default (None for the endpoint and the key).
LLM_SETTINGS: dict[str, str] = {
    "base_url": "llm_base_url",
    "api_key": "api_key",
    "critic_model": "critic_model",
    "refiner_model": "refiner_model",
    "planner_model": "planner_model",
    "timeout": "llm_timeout",
    "stall_seconds": "llm_stall_seconds",
    "action_timeout": "llm_action_timeout",
    "max_retries": "llm_max_retries",
    "resend_timeouts": "llm_resend_timeouts",
    "backoff": "llm_backoff",
    "max_concurrency": "llm_concurrency",
    "response_format": "llm_response_format",
    "stream": "llm_stream",
    "max_output_tokens": "llm_max_output_tokens",
    "planner_max_tokens": "planner_max_tokens",
    "refiner_max_tokens": "refiner_max_tokens",
    "critic_max_tokens": "critic_max_tokens",
    "temperature": "llm_temperature",
    "context_tokens": "llm_context_tokens",
    "discover_limits": "llm_discover_limits",
    "max_images_per_request": "llm_max_images",
    "max_frames_per_call": "llm_max_images",
    "image_tokens": "llm_image_tokens",
    "image_detail": "image_detail",
    "max_answer_chars": "llm_max_answer_chars",
    "critic_audio": "llm_critic_audio",
    "max_audio_seconds": "llm_audio_seconds",
}


class _Environment(InitSettingsSource):
    """The environment variables of every setting, read from `environ` (load_config's; tests pass {} to ignore
    os.environ): a setting's first variable that is set and not empty wins (names are matched in any case)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        lowered = {k.lower(): v for k, v in environ.items()}
        self.variables: dict[str, str] = {}  # setting -> the variable it was read from
        self.values: dict[str, str] = {}  # setting -> its text
        values = self.values
        for name in settings_cls.model_fields:
            for variable in env_names(name):
                if lowered.get(variable.lower()):
                    self.variables[name], values[name] = variable, lowered[variable.lower()]
                    break
        super().__init__(settings_cls, values)


def redact_url(url: str) -> str:
    """`url` without credentials: no user:password@, no query string."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def env_names(name: str) -> tuple[str, ...]:
    """The environment variables a setting is read from, in order."""
    alias = Config.model_fields[name].validation_alias
    if alias is None:
        return (f"{ENV_PREFIX}{name.upper()}",)
    choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
    return tuple(c for c in choices if isinstance(c, str))  # an AliasPath reads into a value, it names no variable


def _is_secret(name: str) -> bool:
    return bool((Config.model_fields[name].json_schema_extra or {}).get("secret"))


def _keyed(values: Mapping[str, Any]) -> dict[str, Any]:
    """Setting names to the keys Config validates (a renamed setting is validated by its variable)."""
    return {
        (env_names(k)[0] if k in Config.model_fields and Config.model_fields[k].validation_alias else k): v
        for k, v in values.items()
    }


def _setting_of(key: str) -> str:
    return next((name for name in Config.model_fields if key == name or key in env_names(name)), key)


def _toml_source(path: Path) -> TomlConfigSettingsSource:
    """A chief.toml as a settings source; credentials, `home` and unknown keys are refused with one line."""
    try:
        source = TomlConfigSettingsSource(Config, toml_file=path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{path}: {e}") from None
    for key in source.toml_data:
        if key not in Config.model_fields:
            raise ValueError(f"{path}: unknown setting {key!r} (see docs/settings.md)")
        if _is_secret(key):
            raise ValueError(f"{path}: {key} is a credential; set {' or '.join(env_names(key))}, not a file")
        if key == "home":
            raise ValueError(f"{path}: home cannot be set in {TOML_NAME}; set CHIEF_HOME or --home")
    return source


def _problem(error: ErrorDetails) -> str:
    """One validation problem in words, without echoing a credential."""
    kind, ctx, name = error["type"], error.get("ctx") or {}, _setting_of(str(error["loc"][0])) if error["loc"] else ""
    bounds = {
        "greater_than_equal": "at least {ge}",
        "less_than_equal": "at most {le}",
        "greater_than": "more than {gt}",
        "less_than": "less than {lt}",
    }
    if kind in bounds:
        text = "must be " + bounds[kind].format(**{k: f"{v:g}" for k, v in ctx.items()})
    elif kind == "literal_error":
        choices = get_args(Config.model_fields[name].annotation)
        text = "must be " + " or ".join(c for c in choices if c) + (", or empty" if "" in choices else "")
    elif kind == "bool_parsing":
        text = "must be true or false (1/0, yes/no, on/off)"
    elif kind in ("int_parsing", "int_from_float"):
        text = "must be a whole number"
    elif kind == "float_parsing":
        text = "must be a number"
    elif kind == "extra_forbidden":
        return "unknown setting"
    elif kind == "value_error":
        text = str(ctx.get("error", error["msg"]))
    else:
        text = error["msg"]
    if not name or _is_secret(name):
        return text
    shown = redact_url(error["input"]) if name in URL_SETTINGS and isinstance(error["input"], str) else error["input"]
    return f"{text} (got {shown if isinstance(shown, str) and shown.strip() else repr(shown)})"


def _one_line(
    e: ValidationError,
    flags: Mapping[str, Any],
    env: Mapping[str, str],
    toml: Mapping[str, Any],
    toml_path: Path | None,
) -> str:
    """The first problem, named as the user wrote it: the flag, the variable or the file and key."""
    error = e.errors()[0]
    more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
    if not error["loc"]:  # a rule across settings: its message names them
        return f"{_problem(error)}{more}"
    key = str(error["loc"][0])
    name = _setting_of(key)
    if name in flags:
        where = name
    elif name in env:
        where = env[name]
    elif name in toml:
        where = f"{toml_path}: {name}"
    else:
        where = env_names(name)[0] if name in Config.model_fields else key
    return f"{where}: {_problem(error)}{more}"


def load_config(overrides: dict | None = None, environ: dict | None = None) -> Config:
    """Flags (`overrides`, by setting name; None means not given) > `environ` (default os.environ) >
    chief.toml (the working folder's, else the data folder's) > defaults. Raises ValueError (one line).

    A key from the environment belongs to the endpoint from the environment (or the default): when a chief.toml
    names the endpoint (the LLM's or the speech one, `KEYED_ENDPOINTS`), the key is not given to it (a file can
    never hold a key), and `Config.notes` says so."""
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    env = _Environment(Config, os.environ if environ is None else environ)
    env_values = env.values
    home = Path(flags.get("home") or env_values.get("home") or default_home()).expanduser()
    toml_path = next((p for p in (Path.cwd() / TOML_NAME, home / TOML_NAME) if p.is_file()), None)
    toml = _toml_source(toml_path) if toml_path else None
    toml_values = toml.toml_data if toml else {}
    notes: list[str] = []
    for what, endpoint, key in KEYED_ENDPOINTS:
        endpoint_from_file = endpoint in toml_values and not {endpoint} & (flags.keys() | env_values.keys())
        if endpoint_from_file and key in env_values and key not in flags:
            flags[key] = ""
            notes.append(
                f"the {what} endpoint comes from {toml_path}, so the key from {env.variables[key]} is not sent to it; "
                f"set {env_names(endpoint)[0]} with the key to use them together"
            )
    token = _SOURCES.set((env, toml))
    try:
        config = Config(**_keyed(flags))
    except ValidationError as e:
        raise ValueError(_one_line(e, flags, env.variables, toml_values, toml_path)) from None
    finally:
        _SOURCES.reset(token)
    config._notes = tuple(notes)
    return config


def with_overrides(cfg: Config, **changes) -> Config:
    """A copy of `cfg` with `changes` (by setting name), validated; nothing is read from the environment."""
    try:
        return Config.model_validate(_keyed({**dict(cfg), **changes}))
    except ValidationError as e:
        raise ValueError(_one_line(e, changes, {}, {}, None)) from None


def settings_table() -> str:
    """docs/settings.md: one row per setting, generated from `Config` (`python -m app.config`)."""
    rows = [
        "# Settings",
        "",
        "Generated from `app/config.py` by `python -m app.config > docs/settings.md`; do not edit by hand.",
        "Flags win over environment variables, which win over `chief.toml` (the working folder's, else the",
        "data folder's), which wins over the defaults. Booleans take `1/0`, `true/false`, `yes/no`, `on/off`.",
        "A key from the environment is sent only to the endpoint from the environment (or the default): a",
        "`chief.toml` that names `llm_base_url` (or `speech_base_url`) gets no key, and the command says so.",
        "",
        "| setting | env variable | toml key | type | default | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for name, field in Config.model_fields.items():
        variables = " or ".join(f"`{v}`" for v in env_names(name))
        toml_key = "refused" if _is_secret(name) or name == "home" else f"`{name}`"
        default = "(see meaning)" if field.default_factory else _shown(field.default)
        rows.append(f"| `{name}` | {variables} | {toml_key} | {_type_name(field)} | {default} | {field.description} |")
    return "\n".join(rows) + "\n"


def _shown(value: Any) -> str:
    if value in ("", None):
        return "(empty)"
    return f"`{str(value).lower() if isinstance(value, bool) else value}`"


def _type_name(field) -> str:
    annotation = field.annotation
    optional = type(None) in get_args(annotation)
    if optional:
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    if get_origin(annotation) is Literal:
        text = " \\| ".join(f"`{v}`" if v else "(empty)" for v in get_args(annotation))
    else:
        text = {Path: "path", str: "text", bool: "boolean", int: "integer", float: "number"}[annotation]
    limits = [
        f"{sign} {getattr(m, attr):g}"
        for m in field.metadata
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"))
        if getattr(m, attr, None) is not None
    ]
    if limits:
        text += f" ({', '.join(limits)})"
    return text + (", or empty" if optional else "")


if __name__ == "__main__":
    print(settings_table(), end="")
