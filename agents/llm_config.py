"""LLMConfig: where and how CHIEF calls its LLM endpoint, and the limits it keeps to. Every setting has a
default and a description; SETTING_ENV names the environment variable proposed for each (error lines name it)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from agents.endpoint import public_url
from agents.json_answer import MAX_ANSWER_CHARS

ROLES = ("planner", "refiner", "critic")

# The environment variable proposed for each setting: error lines name the one to change.
SETTING_ENV = {
    "base_url": "CHIEF_LLM_BASE_URL",
    "api_key": "CHIEF_LLM_API_KEY",
    "timeout": "CHIEF_LLM_TIMEOUT",
    "max_retries": "CHIEF_LLM_MAX_RETRIES",
    "max_concurrency": "CHIEF_LLM_CONCURRENCY",
    "response_format": "CHIEF_LLM_RESPONSE_FORMAT",
    "max_output_tokens": "CHIEF_LLM_MAX_OUTPUT_TOKENS",
    "context_tokens": "CHIEF_LLM_CONTEXT_TOKENS",
    "max_images_per_request": "CHIEF_LLM_MAX_IMAGES",
    "stall_seconds": "CHIEF_LLM_STALL_SECONDS",
    "action_timeout": "CHIEF_LLM_ACTION_TIMEOUT",
    "max_answer_chars": "CHIEF_LLM_MAX_ANSWER_CHARS",
    "critic_audio": "CHIEF_LLM_CRITIC_AUDIO",
    "max_audio_seconds": "CHIEF_LLM_AUDIO_SECONDS",
    **{f"{r}_model": f"CHIEF_{r.upper()}_MODEL" for r in ROLES},
    **{f"{r}_max_tokens": f"CHIEF_{r.upper()}_MAX_TOKENS" for r in ROLES},
}


class LLMConfig(BaseModel):
    """Where and how to call the LLM. `api_key` is a SecretStr: it prints as '**********'."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = Field(default=None, description="None: the SDK default (api.openai.com)")
    api_key: SecretStr | None = None
    critic_model: str = "gpt-4o-mini"
    refiner_model: str = "gpt-4o-mini"
    planner_model: str = "gpt-4o-mini"
    timeout: float = Field(
        default=120.0, gt=0, description="seconds to the first answer token (to the whole answer when not streaming)"
    )
    stall_seconds: float = Field(
        default=30.0, gt=0, description="seconds without a new token before a streaming answer counts as stalled"
    )
    action_timeout: float | None = Field(
        default=1800.0,
        gt=0,
        description="seconds for one action (a plan, a critic's watch, a proposal: pass `LLMClient.deadline()` to each of its calls), every retry and repair included (None: no bound)",
    )
    max_retries: int = Field(
        default=3, ge=0, description="retries on 429/5xx/connection errors (and timeouts, see resend_timeouts)"
    )
    resend_timeouts: bool | None = Field(
        default=None,
        description="re-send a request that timed out or stalled; None: only to remote endpoints (a local server keeps generating the abandoned answer, so a re-send queues behind it)",
    )
    backoff: float = Field(
        default=1.0, ge=0, description="first retry delay in seconds; doubles each retry (a Retry-After header wins)"
    )
    max_backoff: float = Field(default=30.0, ge=0)
    max_concurrency: int = Field(
        default=8,
        ge=1,
        description="requests in flight at once, all roles together (lowered for a while after HTTP 429); covers the default 7-persona panel",
    )
    response_format: Literal["auto", "json_schema", "json_object", "text"] = Field(
        default="auto",
        description="auto: the strongest form the server accepts, remembered per endpoint and model; else always this one",
    )
    stream: bool = Field(
        default=True, description="stream answers (progress, stall detection, cancel that stops the server)"
    )
    max_output_tokens: int = Field(
        default=4000, ge=1, description="output tokens one answer may use: always sent; caps every role's budget"
    )
    planner_max_tokens: int | None = Field(
        default=None, ge=1, description="the planner's answer budget (None: max_output_tokens)"
    )
    refiner_max_tokens: int | None = Field(
        default=None, ge=1, description="the refiner's answer budget (None: max_output_tokens)"
    )
    critic_max_tokens: int | None = Field(default=3000, ge=1, description="one critique's answer budget")
    temperature: float | None = Field(
        default=None, ge=0, le=2, description="None: the server default (reasoning models reject others)"
    )
    context_tokens: int = Field(
        default=32768,
        ge=256,
        description="the endpoint's context (prompt + answer); a smaller size the server reports wins",
    )
    discover_limits: bool = Field(
        default=True, description="ask the server its context size (/v1/models, /props, Ollama /api/show)"
    )
    max_images_per_request: int = Field(
        default=8, ge=1, description="images in one request (vLLM --limit-mm-per-prompt, most local VLM servers)"
    )
    image_detail: Literal["low", "high", "auto"] = "low"
    image_tokens: int | None = Field(
        default=None,
        ge=1,
        description="prompt tokens one image counts for when sizing requests; None: OpenAI's figure for image_detail (local VLMs often use more: LLaVA 576)",
    )
    max_frames_per_call: int = Field(
        default=8, ge=1, description="frames one critic request carries; at most max_images_per_request"
    )
    max_image_side: int = Field(default=512, ge=32)
    critic_audio: bool = Field(
        default=False,
        description="critics also hear each part's sound as `input_audio` (16 kHz mono WAV); a model that refuses "
        "it hears the transcript and cue sheet only (remembered per endpoint and model)",
    )
    max_audio_seconds: float = Field(
        default=30.0, gt=0, le=300, description="seconds of audio one request carries (32 kB of WAV a second)"
    )
    max_answer_chars: int = Field(
        default=MAX_ANSWER_CHARS,
        ge=1000,
        description="longer answers are refused (and their stream closed) before parsing",
    )
    state_path: Path | None = Field(
        default=None,
        description="JSON file remembering what each endpoint+model accepts (the product: CHIEF_HOME/llm-endpoints.json); None: this process only",
    )

    def describe(self) -> str:
        """One line for headers and status bars (never the key)."""
        return (
            f"llm @ {public_url(self.base_url)} · critic {self.critic_model} · refiner {self.refiner_model} · "
            f"planner {self.planner_model}"
        )

    def max_tokens_for(self, role: str) -> int:
        """The answer budget of `role` ("critic teen_scroller" counts as critic), never over max_output_tokens."""
        kind = role.split()[0] if role.strip() else ""
        own = getattr(self, f"{kind}_max_tokens", None) if kind in ROLES else None
        return min(own or self.max_output_tokens, self.max_output_tokens)

    def image_cost(self) -> int:
        if self.image_tokens:
            return self.image_tokens
        if self.image_detail == "low":
            return 85
        return 85 + 170 * math.ceil(self.max_image_side / 512) ** 2  # OpenAI: 170 per 512-px tile


def env_name(setting: str) -> str:
    """The environment variable proposed for `setting` (error lines name it)."""
    return SETTING_ENV.get(setting, setting)
