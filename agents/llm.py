"""The openai SDK wrapper every LLM role uses: structured outputs with fallbacks, one repair, retries, usage.

Works with any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio, llama.cpp).
Structured output is asked for in the strongest form the server accepts (json_schema strict → json_object
→ plain text with JSON extraction), remembered per endpoint and model; the answer streams in (progress,
stall detection, cancel), is validated with pydantic, repaired once, or an error names the role, the model,
the endpoint, the server's own reason and what to change. The API key never appears in a repr, a log line,
an error or the endpoint memory file. See docs/llm-servers.md for what each server supports.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import logging
import math
import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Sequence, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from agents.base import AgentError, AnswerTooLong, Cancelled, RequestTooLarge
from agents.endpoint import EndpointMemory, classify, discover_context, is_local, public_url, retry_after, server_reason, shared_limit
from agents.json_answer import MAX_ANSWER_CHARS, extract_json, scan_json, strict_json_schema, validation_problems
from agents.streaming import AnswerOverCap, Cancel, Deadline, Guard, Progress, http_client, is_cancelled, read_stream
from prompts import render
from storage.schema import Usage

__all__ = ["AnswerTooLong", "Cancelled", "Deadline", "LLMClient", "LLMConfig", "Progress", "RequestTooLarge",
           "estimate_tokens", "extract_json", "image_part", "scan_json", "strict_json_schema", "subsample",
           "validation_problems", "video_part"]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
Mode = Literal["json_schema", "json_object", "text"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "text")
ROLES = ("planner", "refiner", "critic")

# The environment variable proposed for each setting: error lines name the one to change.
SETTING_ENV = {
    "base_url": "CHIEF_LLM_BASE_URL", "api_key": "CHIEF_LLM_API_KEY", "timeout": "CHIEF_LLM_TIMEOUT",
    "max_retries": "CHIEF_LLM_MAX_RETRIES", "max_concurrency": "CHIEF_LLM_CONCURRENCY",
    "response_format": "CHIEF_LLM_RESPONSE_FORMAT", "max_output_tokens": "CHIEF_LLM_MAX_OUTPUT_TOKENS",
    "context_tokens": "CHIEF_LLM_CONTEXT_TOKENS", "max_images_per_request": "CHIEF_LLM_MAX_IMAGES",
    "stall_seconds": "CHIEF_LLM_STALL_SECONDS", "action_timeout": "CHIEF_LLM_ACTION_TIMEOUT",
    "max_answer_chars": "CHIEF_LLM_MAX_ANSWER_CHARS",
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
    timeout: float = Field(default=120.0, gt=0, description="seconds to the first answer token (to the whole answer when not streaming)")
    stall_seconds: float = Field(default=30.0, gt=0, description="seconds without a new token before a streaming answer counts as stalled")
    action_timeout: float | None = Field(default=600.0, gt=0, description="seconds for one structured() call, every retry and repair included (None: no bound)")
    max_retries: int = Field(default=3, ge=0, description="retries on 429/5xx/connection errors (and timeouts, see resend_timeouts)")
    resend_timeouts: bool | None = Field(default=None, description="re-send a request that timed out or stalled; None: only to remote endpoints (a local server keeps generating the abandoned answer, so a re-send queues behind it)")
    backoff: float = Field(default=1.0, ge=0, description="first retry delay in seconds; doubles each retry (a Retry-After header wins)")
    max_backoff: float = Field(default=30.0, ge=0)
    max_concurrency: int = Field(default=8, ge=1, description="requests in flight at once, all roles together (lowered for a while after HTTP 429); covers the default 7-persona panel")
    response_format: Literal["auto", "json_schema", "json_object", "text"] = Field(default="auto", description="auto: the strongest form the server accepts, remembered per endpoint and model; else always this one")
    stream: bool = Field(default=True, description="stream answers (progress, stall detection, cancel that stops the server)")
    max_output_tokens: int = Field(default=4000, ge=1, description="output tokens one answer may use: always sent; caps every role's budget")
    planner_max_tokens: int | None = Field(default=None, ge=1, description="the planner's answer budget (None: max_output_tokens)")
    refiner_max_tokens: int | None = Field(default=None, ge=1, description="the refiner's answer budget (None: max_output_tokens)")
    critic_max_tokens: int | None = Field(default=3000, ge=1, description="one critique's answer budget")
    temperature: float | None = Field(default=None, ge=0, le=2, description="None: the server default (reasoning models reject others)")
    context_tokens: int = Field(default=32768, ge=256, description="the endpoint's context (prompt + answer); a smaller size the server reports wins")
    discover_limits: bool = Field(default=True, description="ask the server its context size (/v1/models, /props, Ollama /api/show)")
    max_images_per_request: int = Field(default=8, ge=1, description="images in one request (vLLM --limit-mm-per-prompt, most local VLM servers)")
    image_detail: Literal["low", "high", "auto"] = "low"
    image_tokens: int | None = Field(default=None, ge=1, description="prompt tokens one image counts for when sizing requests; None: OpenAI's figure for image_detail (local VLMs often use more: LLaVA 576)")
    max_frames_per_call: int = Field(default=8, ge=1, description="frames one critic request carries; at most max_images_per_request")
    max_image_side: int = Field(default=512, ge=32)
    max_answer_chars: int = Field(default=MAX_ANSWER_CHARS, ge=1000, description="longer answers are refused (and their stream closed) before parsing")
    state_path: Path | None = Field(default=None, description="JSON file remembering what each endpoint+model accepts (the product: CHIEF_HOME/llm-endpoints.json); None: this process only")

    def describe(self) -> str:
        """One line for headers and status bars (never the key)."""
        return (f"llm @ {public_url(self.base_url)} · critic {self.critic_model} · refiner {self.refiner_model} · "
                f"planner {self.planner_model}")

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


def _env(setting: str) -> str:
    return SETTING_ENV.get(setting, setting)


# ---------------------------------------------------------------- content parts and their cost

def image_part(path: str, detail: str = "low", max_side: int = 512, quality: int = 85) -> dict[str, Any]:
    """An `image_url` content part: the image resized to `max_side` and sent as a base64 JPEG data URL."""
    st = os.stat(path)
    data = _jpeg_base64(str(path), st.st_mtime_ns, st.st_size, max_side, quality)
    return {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}", "detail": detail}}


@functools.lru_cache(maxsize=512)
def _jpeg_base64(path: str, _mtime_ns: int, _size: int, max_side: int, quality: int) -> str:
    """Encoded once per file version: every critic of a panel sees the same frames."""
    from PIL import Image

    with Image.open(path) as im:
        im = im.convert("RGB")
        im.thumbnail((max_side, max_side))
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=quality)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def video_part(path: str) -> dict[str, Any]:
    """A `video_url` content part with the MP4 inline (vLLM serving Qwen2.5-VL/Qwen3-VL takes these)."""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return {"type": "video_url", "video_url": {"url": f"data:video/mp4;base64,{data}"}}


def subsample(items: Sequence[R], k: int) -> list[R]:
    """At most `k` items, evenly spread, first and last kept."""
    n = len(items)
    if n <= k:
        return list(items)
    if k == 1:
        return [items[0]]
    return [items[round(i * (n - 1) / (k - 1))] for i in range(k)]


def _parts(messages: list[dict], kind: str) -> int:
    return sum(1 for m in messages if isinstance(m.get("content"), list) for p in m["content"] if p.get("type") == kind)


def estimate_tokens(messages: list[dict], *, image_tokens: int = 85, video_tokens: int = 2048) -> int:
    """Prompt tokens, roughly: text characters / 4, 4 per message, and a fixed cost per image and per video."""
    chars = 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(p.get("text", "")) for p in content if p.get("type") == "text")
    return math.ceil(chars / 4) + 4 * len(messages) + image_tokens * _parts(messages, "image_url") + video_tokens * _parts(messages, "video_url")


# ---------------------------------------------------------------- client

@dataclass
class _Answer:
    content: str | None
    refusal: str | None
    finish_reason: str | None


@dataclass
class _Call:
    """One structured() call: who asks, and what bounds it."""

    role: str
    model: str
    max_tokens: int
    deadline: Deadline
    cancel: Cancel
    on_progress: Callable[[Progress], None] | None
    usage: list[Usage] = field(default_factory=list)
    last_progress: float = 0.0


class _FormatRefused(Exception):
    pass


class _Interrupted(Exception):
    """The Guard closed the connection; args[0] is why."""


class LLMClient:
    """One OpenAI-compatible endpoint, shared by all roles: bounded concurrency, retries, usage per call."""

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] | None = None):
        self.config = config
        self.endpoint = public_url(config.base_url)
        self.memory = EndpointMemory(config.state_path, self.endpoint)
        self.limit = shared_limit(self.endpoint, config.max_concurrency)
        self._sleep = sleep  # tests pass one that records; None waits, waking for a cancel
        self._local = bool(config.base_url) and is_local(config.base_url)
        self._token_field = "max_completion_tokens" if self.endpoint.startswith("https://api.openai.com") else "max_tokens"
        self._contexts: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()
        self._sdk = None
        self._httpx = None
        key = config.api_key.get_secret_value() if config.api_key else ""
        self._secrets = [s for s in (key, urlsplit(config.base_url or "").password or "") if len(s) >= 4]

    def __repr__(self) -> str:
        return f"LLMClient({self.config.describe()})"

    @property
    def sdk(self):
        """The openai.OpenAI client, built on first use (the SDK's own retries off: ours are counted)."""
        with self._lock:
            return self._sdk or self._build_sdk()

    def _build_sdk(self):
        import httpx2
        import openai

        key = self.config.api_key.get_secret_value() if self.config.api_key else None
        if not key and self.config.base_url:
            key = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) ignore the key
        if not key:
            raise AgentError("no API key: set CHIEF_LLM_API_KEY or OPENAI_API_KEY, or CHIEF_LLM_BASE_URL for a local server")
        # The Guard enforces timeout and stall_seconds; httpx's own read timeout is only a backstop.
        backstop = httpx2.Timeout(self.config.timeout + self.config.stall_seconds + 5, connect=min(self.config.timeout, 30.0))
        self._httpx = http_client(backstop)
        self._sdk = openai.OpenAI(api_key=key, base_url=self.config.base_url, timeout=backstop, max_retries=0, http_client=self._httpx)
        return self._sdk

    def _scrub(self, text: str) -> str:
        """Text without the API key or a password written into the endpoint URL."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    # -- limits callers size their requests by

    def max_tokens_for(self, role: str) -> int:
        return self.config.max_tokens_for(role)

    def estimate_tokens(self, messages: list[dict]) -> int:
        """Prompt tokens of `messages`, roughly, with images at the configured detail's cost."""
        return estimate_tokens(messages, image_tokens=self.config.image_cost())

    def context_tokens(self, model: str) -> tuple[int, str]:
        """(tokens, where that figure comes from): the context_tokens setting, or less if the server says so."""
        with self._lock:
            if model in self._contexts:
                return self._contexts[model]
        ctx, source = self.config.context_tokens, "the context_tokens setting"
        if self.config.discover_limits and self.config.base_url:
            try:
                found, where = discover_context(self._get_json, self._post_json, self.config.base_url, model)
            except Exception as e:  # noqa: BLE001 - a server that says nothing: keep the setting
                found, where = None, ""
                log.debug("context size of %s not discovered: %s", model, self._scrub(str(e)))
            if found and found < ctx:
                ctx, source = found, f"reported by the server ({where})"
        with self._lock:
            self._contexts[model] = (ctx, source)
        return ctx, source

    def _get_json(self, url: str) -> Any:
        return self._http("GET", url, None)

    def _post_json(self, url: str, body: dict) -> Any:
        return self._http("POST", url, body)

    def _http(self, method: str, url: str, body: dict | None) -> Any:
        sdk = self.sdk  # a path on the endpoint's own host: its key may go along
        headers = {"Authorization": f"Bearer {sdk.api_key}"}
        resp = self._httpx.request(method, url, json=body, headers=headers, timeout=min(5.0, self.config.timeout))
        resp.raise_for_status()
        return resp.json()

    # -- structured output

    def structured(
        self,
        role: str,
        model: str,
        messages: list[dict],
        result_type: type[T],
        *,
        check: Callable[[T], list[str]] | None = None,
        on_length: Literal["repair", "raise"] = "repair",
        max_tokens: int | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: Cancel = None,
        deadline: Deadline | None = None,
    ) -> tuple[T, Usage]:
        """Ask `model` for a `result_type`; validate (and `check` for semantic problems), repair once, or raise.

        on_length="raise": an answer cut off at the output limit raises AnswerTooLong instead of a repair (for
        callers that can ask for less). `max_tokens` overrides the role's budget. `cancel` (an Event or a
        callable) closes the connection. `deadline` bounds this call; pass one Deadline to several calls to bound
        an action. Raises AgentError (AnswerTooLong, RequestTooLarge, Cancelled) with one line.
        """
        schema = strict_json_schema(result_type)
        name = re.sub(r"[^A-Za-z0-9_-]", "_", result_type.__name__)[:64]
        budget = min(max_tokens or self.max_tokens_for(role), self.config.max_output_tokens)
        call = _Call(role, model, budget, deadline or Deadline(self.config.action_timeout), cancel, on_progress)
        try:
            mode, answer = self._ask(call, messages, schema, name)
            value, problem = self._parse(answer, result_type, check)
            if problem is None:
                return value, sum(call.usage, Usage())
            self._too_long(call, answer, problem, on_length)
            log.info("%s (%s): repairing: %s", role, model, problem[:200])
            repair = messages + self._repair_messages(answer, problem, schema if mode != "json_schema" else None)
            answer = self._ask_mode(call, repair, schema, name, mode)
            value, problem = self._parse(answer, result_type, check)
            if problem is None:
                return value, sum(call.usage, Usage())
            self._too_long(call, answer, problem, on_length)
            raise AgentError(self._line(call, f"no valid {result_type.__name__} after one repair: {problem[:500]}"))
        except AgentError as e:
            e.usage = sum(call.usage, Usage())  # what the failed call cost (requests sent: usage.calls)
            raise
        except Exception as e:  # anything unexpected: still one clear line
            err = AgentError(self._line(call, f"{type(e).__name__}: {e}"))
            err.usage = sum(call.usage, Usage())
            raise err from None

    def _too_long(self, call: _Call, answer: _Answer, problem: str, on_length: str) -> None:
        if answer.finish_reason == "length" and on_length == "raise":
            raise AnswerTooLong(self._line(call, f"the answer was cut off at {call.max_tokens} output tokens ({problem})",
                                           "ask for less (a smaller chunk)"))

    def _line(self, call: _Call, what: str, hint: str = "") -> str:
        """role (model) at endpoint: what happened; what to change — on one line, without the key."""
        text = f"{call.role} ({call.model}) at {self.endpoint}: {what}" + (f"; {hint}" if hint else "")
        return self._scrub(" ".join(text.split()))

    def _ask(self, call: _Call, messages: list[dict], schema: dict, name: str) -> tuple[Mode, _Answer]:
        """Try the strongest response_format this endpoint accepts for the model, remembering refusals."""
        forced = self.config.response_format
        first = forced if forced != "auto" else self.memory.get(call.model).get("response_format", "json_schema")
        modes = MODES[MODES.index(first):] if first in MODES else MODES
        for mode in modes if forced == "auto" else (forced,):
            try:
                return mode, self._ask_mode(call, messages, schema, name, mode)
            except _FormatRefused as e:
                if forced != "auto":
                    raise AgentError(self._line(call, f"the server refuses response_format {mode}: {e}",
                                                f"set {_env('response_format')}=auto")) from None
                following = MODES[MODES.index(mode) + 1]
                log.warning("%s (%s): the server refuses response_format %s (%s); using %s from now on",
                            call.role, call.model, mode, str(e)[:120], following)
                self.memory.remember(call.model, response_format=following)
                self._progress(call, 0, time.monotonic(), note=f"server refuses {mode}: using {following}")
        raise AssertionError("unreachable: text mode sends no response_format")

    def _ask_mode(self, call: _Call, messages: list[dict], schema: dict, name: str, mode: Mode) -> _Answer:
        if mode != "json_schema":
            messages = messages + [{"role": "system", "content": render("json_instructions.j2", schema=json.dumps(schema, separators=(",", ":")))}]
        fmt = {"json_schema": {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}},
               "json_object": {"type": "json_object"}}.get(mode)
        return self._request(call, messages, fmt)

    # -- one request, retried

    def _request(self, call: _Call, messages: list[dict], response_format: dict | None) -> _Answer:
        facts = self.memory.get(call.model)
        images = _parts(messages, "image_url")
        if images and facts.get("images") is False:
            raise AgentError(self._line(call, f"this model does not take images (the server said: {facts.get('images_reason', '?')})",
                                        self._vision_hint(call)))
        if images > self.config.max_images_per_request:
            raise RequestTooLarge(self._line(call, f"{images} images in one request, over max_images_per_request={self.config.max_images_per_request}",
                                             "send fewer frames per request"), limit="images", setting="max_images_per_request")
        kwargs: dict[str, Any] = {"model": call.model, "messages": messages, self._token_field: self._fit(call, messages)}
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self.config.temperature is not None:
            kwargs["temperature"] = self.config.temperature
        if self.config.stream:
            kwargs["stream"] = True
            if facts.get("stream_options", True):
                kwargs["stream_options"] = {"include_usage": True}
        attempt = 0
        while True:
            outcome = self._attempt(call, kwargs, images > 0)
            if isinstance(outcome, _Answer):
                return outcome
            if outcome is None:  # changed the request (stream_options refused): send it again at once
                continue
            what, wait = outcome
            tries = f"{attempt + 1} {'try' if attempt == 0 else 'tries'}"
            if attempt >= self.config.max_retries:
                raise AgentError(self._line(call, f"gave up after {tries}: {what}", self._retry_hint(what)))
            delay = wait if wait is not None else min(self.config.max_backoff, self.config.backoff * 2**attempt) * (0.75 + random.random() / 2)
            if delay >= call.deadline.remaining():
                raise AgentError(self._line(call, f"gave up after {tries}: {what}; the next try ({delay:.0f} s away) would pass "
                                                  f"this action's deadline of {call.deadline.seconds:g} s", f"raise {_env('action_timeout')}"))
            log.warning("%s (%s): %s; retry %d/%d in %.1f s", call.role, call.model, what[:120], attempt + 1, self.config.max_retries, delay)
            self._progress(call, 0, time.monotonic(), note=f"retry {attempt + 1}/{self.config.max_retries} in {delay:.1f} s: {what[:80]}")
            self._pause(delay, call)
            attempt += 1

    def _fit(self, call: _Call, messages: list[dict]) -> int:
        """The max_tokens to send: the call's budget, less if the prompt leaves less room in the context."""
        ctx, source = self.context_tokens(call.model)
        prompt = self.estimate_tokens(messages)
        room = ctx - prompt
        if room < min(call.max_tokens, 256):
            raise RequestTooLarge(self._line(call, f"the request is about {prompt:,} tokens; the context is {ctx:,} ({source}), "
                                                   f"leaving {max(room, 0):,} for the answer",
                                             f"send less (a smaller chunk) or use a larger context ({_env('context_tokens')}, or the server's)"),
                                  limit="context", setting="context_tokens")
        if room < call.max_tokens:
            log.warning("%s (%s): the prompt (about %d tokens) leaves %d of the %d-token context (%s) for the answer",
                        call.role, call.model, prompt, room, ctx, source)
            return room
        return call.max_tokens

    def _attempt(self, call: _Call, kwargs: dict, has_images: bool) -> _Answer | tuple[str, float | None] | None:
        """Send once. The answer; or (what failed, Retry-After) when a retry may help; or None to re-send now."""
        import openai

        self._check_alive(call)
        epoch = self.limit.acquire(stop=lambda: is_cancelled(call.cancel) or call.deadline.expired)
        if epoch is None:
            self._check_alive(call)
        t0 = time.monotonic()
        try:
            answer = self._send(call, kwargs, t0)
        except _Interrupted as e:
            call.usage.append(Usage(calls=1, seconds=round(time.monotonic() - t0, 3)))
            return self._interrupted(call, str(e))
        except AnswerOverCap as e:
            raise AgentError(self._line(call, f"the answer passed {self.config.max_answer_chars:,} characters ({e}); the connection was closed",
                                        f"lower the output budget ({_env('max_output_tokens')})")) from None
        except openai.APIError as e:
            call.usage.append(Usage(calls=1, seconds=round(time.monotonic() - t0, 3)))
            return self._failed(call, e, kwargs, has_images, epoch)
        finally:
            if epoch is not None:
                self.limit.release()
        self.limit.succeeded()
        return answer

    def _check_alive(self, call: _Call) -> None:
        if is_cancelled(call.cancel):
            raise Cancelled(self._line(call, "cancelled"))
        if call.deadline.expired:
            raise AgentError(self._line(call, f"this action's deadline of {call.deadline.seconds:g} s passed", f"raise {_env('action_timeout')}"))

    def _interrupted(self, call: _Call, reason: str) -> tuple[str, None]:
        if reason == "cancelled":
            raise Cancelled(self._line(call, "cancelled; the connection was closed"))
        if reason == "deadline":
            raise AgentError(self._line(call, f"this action's deadline of {call.deadline.seconds:g} s passed; the connection was closed",
                                        f"raise {_env('action_timeout')}"))
        if reason == "stalled":
            what, setting = f"the answer stalled (no token for {self.config.stall_seconds:g} s)", "stall_seconds"
        else:
            what = f"no answer within {self.config.timeout:g} s" if not self.config.stream else f"no first token within {self.config.timeout:g} s"
            setting = "timeout"
        resend = self.config.resend_timeouts if self.config.resend_timeouts is not None else not self._local
        if not resend:
            raise AgentError(self._line(call, f"{what}; not re-sent (a local server keeps generating an abandoned answer)",
                                        f"raise {_env(setting)}, or ask for less ({_env('max_output_tokens')})"))
        return what, None

    def _failed(self, call: _Call, e: Exception, kwargs: dict, has_images: bool, epoch: int | None) -> tuple[str, float | None] | None:
        import openai

        if isinstance(e, openai.APITimeoutError):  # httpx's backstop fired before the Guard did
            return self._interrupted(call, "timeout")
        kind, limit = classify(e, has_images=has_images)
        reason = self._scrub(server_reason(e))
        status = getattr(e, "status_code", None)
        http = f"HTTP {status}: " if status else ""
        if kind == "format" and "response_format" in kwargs:
            raise _FormatRefused(reason)
        if kind == "stream_options" and "stream_options" in kwargs:
            log.warning("%s (%s): the server refuses stream_options (%s); streaming without usage", call.role, call.model, reason[:120])
            self.memory.remember(call.model, stream_options=False)
            del kwargs["stream_options"]
            return None
        if kind == "images_unsupported":
            self.memory.remember(call.model, images=False, images_reason=reason[:200])
            raise AgentError(self._line(call, f"this model does not take images: {http}{reason}", self._vision_hint(call)))
        if kind == "too_many_images":
            raise RequestTooLarge(self._line(call, f"too many images for the server: {http}{reason}",
                                             f"set {_env('max_images_per_request')}={limit}"), limit="images", setting="max_images_per_request")
        if kind == "context":
            raise RequestTooLarge(self._line(call, f"the request does not fit the context: {http}{reason}",
                                             f"send less, or set {_env('context_tokens')} to the server's context"), limit="context", setting="context_tokens")
        if kind == "fatal":
            raise AgentError(self._line(call, f"{http}{reason}", self._status_hint(call, status)))
        if kind == "rate" and epoch is not None:
            self.limit.rate_limited(epoch)
        headers = getattr(getattr(e, "response", None), "headers", None)
        if isinstance(e, openai.APIConnectionError) and reason.startswith("Connection error"):
            root = e
            while root.__cause__ is not None or root.__context__ is not None:
                root = root.__cause__ or root.__context__
            return self._scrub(f"could not connect: {root}"), None
        return f"{http}{reason}", retry_after(headers) if kind == "rate" or status == 503 else None

    def _vision_hint(self, call: _Call) -> str:
        kind = call.role.split()[0]
        where = _env(f"{kind}_model") if kind in ROLES else "the model setting"
        memo = f" (remembered in {self.config.state_path}; delete it if the server now takes images)" if self.config.state_path else ""
        return f"set {where} to a vision model{memo}"

    def _status_hint(self, call: _Call, status: int | None) -> str:
        if status in (401, 403):
            return f"check {_env('api_key')}"
        if status == 404:
            kind = call.role.split()[0]
            return f"check the model name ({_env(f'{kind}_model') if kind in ROLES else 'model setting'}) and {_env('base_url')}"
        return ""

    def _retry_hint(self, what: str) -> str:
        if what.startswith("could not connect"):
            return f"is the server running? check {_env('base_url')}"
        return f"check the server's log, or raise {_env('max_retries')}"

    def _pause(self, seconds: float, call: _Call) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
            return
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self._check_alive(call)
            time.sleep(min(left, 0.05))

    def _send(self, call: _Call, kwargs: dict, t0: float) -> _Answer:
        """One HTTP exchange under a Guard; usage recorded. Raises _Interrupted when the Guard closed it."""
        stream = bool(kwargs.get("stream"))
        guard = Guard(first_token=self.config.timeout, stall=self.config.stall_seconds, deadline=call.deadline, cancel=call.cancel)
        with guard:
            try:
                resp = self.sdk.chat.completions.create(**kwargs)
                if stream:
                    got = read_stream(resp, guard, max_chars=self.config.max_answer_chars, on_token=lambda n: self._progress(call, n, t0))
                    answer, u, pieces = _Answer(got.content, got.refusal, got.finish_reason), got.usage, got.tokens
                else:
                    choice = resp.choices[0] if resp.choices else None
                    msg = choice.message if choice else None
                    answer = _Answer(msg.content if msg else None, getattr(msg, "refusal", None), choice.finish_reason if choice else "no choices")
                    u, pieces = resp.usage, 0
                    if answer.content and len(answer.content) > self.config.max_answer_chars:
                        raise AnswerOverCap(len(answer.content))
            except AnswerOverCap:
                raise
            except Exception:
                if guard.reason:
                    raise _Interrupted(guard.reason) from None
                raise
            if guard.reason:
                raise _Interrupted(guard.reason)
        if stream and answer.finish_reason is None:
            import openai

            raise openai.APIConnectionError(message="the stream ended before the answer was complete", request=resp.response.request)
        completion = int(getattr(u, "completion_tokens", 0) or 0) or pieces
        call.usage.append(Usage(calls=1, prompt_tokens=int(getattr(u, "prompt_tokens", 0) or 0) or self.estimate_tokens(kwargs["messages"]),
                                completion_tokens=completion, seconds=round(time.monotonic() - t0, 3)))
        self._progress(call, completion, t0, done=True)
        return answer

    def _progress(self, call: _Call, tokens: int, t0: float, *, done: bool = False, note: str = "") -> None:
        if call.on_progress is None:
            return
        now = time.monotonic()
        if not (done or note) and now - call.last_progress < 0.2:
            return
        call.last_progress = now
        call.on_progress(Progress(call.role, call.model, tokens, round(now - t0, 3), done=done, note=note))

    # -- parsing and repair

    def _parse(self, answer: _Answer, result_type: type[T], check: Callable[[T], list[str]] | None) -> tuple[Any, str | None]:
        """(value, None) or (None, what was wrong)."""
        if answer.refusal:
            return None, f"the model refused: {answer.refusal[:300]}"
        if answer.finish_reason == "content_filter":
            return None, "the answer was blocked by the server's content filter"
        if not answer.content:
            return None, f"the answer was empty (finish_reason {answer.finish_reason})"
        cut = "the answer was cut off at the token limit; " if answer.finish_reason == "length" else ""
        try:
            data = extract_json(answer.content, max_chars=self.config.max_answer_chars)
        except ValueError as e:
            return None, cut + str(e)
        try:
            value = result_type.model_validate(data)
        except ValidationError as e:
            return None, cut + "the JSON does not match the schema: " + "; ".join(validation_problems(e))
        if check is not None:
            problems = check(value)
            if problems:
                return None, "; ".join(problems)
        return value, None

    def _repair_messages(self, answer: _Answer, problem: str, schema: dict | None) -> list[dict]:
        previous = answer.content or answer.refusal or ""
        if len(previous) > 6000:
            previous = previous[:6000] + " …(cut)"
        text = render("repair.j2", problem=problem, truncated=answer.finish_reason == "length",
                      schema=json.dumps(schema, separators=(",", ":")) if schema else "")
        return [{"role": "assistant", "content": previous or "(no answer)"}, {"role": "user", "content": text}]
