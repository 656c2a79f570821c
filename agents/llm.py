"""The openai SDK wrapper every LLM role uses: structured outputs with fallbacks, one repair, retries, usage.

Works with any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio, llama.cpp).
Structured output is asked for in the strongest form the server accepts (json_schema strict → json_object
→ plain text with JSON extraction); the answer is validated with pydantic, repaired once, or an AgentError
names the role, the model and what was wrong. The API key never appears in a repr, a log line or an error.
"""

from __future__ import annotations

import base64
import copy
import functools
import io
import json
import logging
import os
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Literal, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from agents.base import AgentError
from prompts import render
from storage.schema import Usage

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
Mode = Literal["json_schema", "json_object", "text"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "text")


class LLMConfig(BaseModel):
    """Where and how to call the LLM. `api_key` is a SecretStr: it prints as '**********'."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = Field(default=None, description="None: the SDK default (api.openai.com)")
    api_key: SecretStr | None = None
    critic_model: str = "gpt-4o-mini"
    refiner_model: str = "gpt-4o-mini"
    planner_model: str = "gpt-4o-mini"
    timeout: float = Field(default=120.0, gt=0, description="seconds per request")
    max_retries: int = Field(default=3, ge=0, description="retries on 429/5xx/timeouts/connection errors")
    backoff: float = Field(default=1.0, ge=0, description="first retry delay in seconds; doubles each retry")
    max_backoff: float = Field(default=30.0, ge=0)
    max_concurrency: int = Field(default=4, ge=1, description="requests in flight at once, all roles together")
    image_detail: Literal["low", "high", "auto"] = "low"
    max_frames_per_call: int = Field(default=24, ge=1)
    max_image_side: int = Field(default=512, ge=32)
    max_tokens: int | None = Field(default=None, ge=1, description="None: the server's default")
    temperature: float | None = Field(default=None, description="None: the server default (reasoning models reject others)")

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> "LLMConfig":
        """CHIEF_LLM_BASE_URL, CHIEF_LLM_API_KEY (or OPENAI_API_KEY), CHIEF_{CRITIC,REFINER,PLANNER}_MODEL."""
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        if env.get("CHIEF_LLM_BASE_URL"):
            values["base_url"] = env["CHIEF_LLM_BASE_URL"]
        key = env.get("CHIEF_LLM_API_KEY") or env.get("OPENAI_API_KEY")
        if key:
            values["api_key"] = key
        for role in ("critic", "refiner", "planner"):
            name = f"CHIEF_{role.upper()}_MODEL"
            if env.get(name):
                values[f"{role}_model"] = env[name]
        values.update(overrides)
        return cls(**values)

    def describe(self) -> str:
        """One line for headers and status bars (never the key)."""
        where = self.base_url or "api.openai.com"
        return f"llm @ {where} · critic {self.critic_model} · refiner {self.refiner_model} · planner {self.planner_model}"


# ---------------------------------------------------------------- JSON schema and extraction

_DROP_KEYS = {
    "default", "title", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "uniqueItems", "examples",
}


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in OpenAI strict form: every object closed and every property required.

    Validation keywords (lengths, ranges, patterns) are dropped — pydantic checks them afterwards and the
    repair request quotes what failed. Open dicts cannot be strict: send a DTO with named fields instead.
    """
    schema = copy.deepcopy(model.model_json_schema())

    def fix(node: Any, path: str, names: bool = False) -> Any:
        if isinstance(node, dict) and names:  # a map of property / definition names: keep every key
            return {k: fix(v, f"{path}.{k}") for k, v in node.items()}
        if isinstance(node, dict):
            node = {k: v for k, v in node.items() if k not in _DROP_KEYS}
            if node.get("type") == "object" or "properties" in node:
                extra = node.get("additionalProperties")
                if isinstance(extra, dict) or ("properties" not in node and extra is not False):
                    raise ValueError(f"{model.__name__}: {path or 'root'} is an open mapping; strict schemas need named fields")
                node["additionalProperties"] = False
                node["required"] = list(node.get("properties", {}))
            return {k: fix(v, path, names=k in ("properties", "$defs")) for k, v in node.items()}
        if isinstance(node, list):
            return [fix(v, path) for v in node]
        return node

    return fix(schema, "")


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


def extract_json(text: str) -> Any:
    """The first JSON object in `text`: strips ```json fences and prose around it. Raises ValueError."""
    decoder = json.JSONDecoder()
    text = text.strip()
    for cand in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        pos = cand.find("{")
        while pos != -1:
            try:
                obj, _ = decoder.raw_decode(cand, pos)
            except json.JSONDecodeError:
                if cand.count("{") > cand.count("}"):
                    break  # cut off: an inner object would be a misleading answer
                pos = cand.find("{", pos + 1)
                continue
            if isinstance(obj, dict):
                return obj
            pos = cand.find("{", pos + 1)
    if text.count("{") > text.count("}"):
        raise ValueError("the JSON object is incomplete (unbalanced braces: the answer was probably cut off)")
    raise ValueError("no JSON object found in the answer" if "{" not in text else "the answer is not valid JSON")


def validation_problems(error: ValidationError, limit: int = 12) -> list[str]:
    """Short 'path: message' lines for a repair request."""
    out = []
    for e in error.errors()[:limit]:
        where = ".".join(str(p) for p in e["loc"]) or "(root)"
        out.append(f"{where}: {e['msg']}")
    if error.error_count() > limit:
        out.append(f"... and {error.error_count() - limit} more")
    return out


# ---------------------------------------------------------------- images

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


def subsample(items: Sequence[R], k: int) -> list[R]:
    """At most `k` items, evenly spread, first and last kept."""
    n = len(items)
    if n <= k:
        return list(items)
    if k == 1:
        return [items[0]]
    return [items[round(i * (n - 1) / (k - 1))] for i in range(k)]


# ---------------------------------------------------------------- client

@dataclass
class _Answer:
    content: str | None
    refusal: str | None
    finish_reason: str | None


def _refuses_format(err: Exception) -> bool:
    import openai

    if not isinstance(err, openai.APIStatusError) or err.status_code not in (400, 404, 415, 422, 501):
        return False
    text = f"{err.message} {err.body}".lower()
    return any(w in text for w in ("response_format", "json_schema", "json_object", "structured", "schema"))


class LLMClient:
    """One OpenAI-compatible endpoint, shared by all roles: bounded concurrency, retries, usage per call."""

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self._modes: dict[str, Mode] = {}  # model -> strongest response_format the server accepted
        self._lock = threading.Lock()
        self._sdk = None

    def __repr__(self) -> str:
        return f"LLMClient({self.config.describe()})"

    @property
    def sdk(self):
        """The openai.OpenAI client, built on first use (the SDK's own retries off: ours are counted)."""
        with self._lock:
            return self._sdk or self._build_sdk()

    def _build_sdk(self):
        import openai

        key = self.config.api_key.get_secret_value() if self.config.api_key else None
        if not key and self.config.base_url:
            key = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) ignore the key
        if not key:
            raise AgentError("no API key: set CHIEF_LLM_API_KEY or OPENAI_API_KEY, or CHIEF_LLM_BASE_URL for a local server")
        self._sdk = openai.OpenAI(api_key=key, base_url=self.config.base_url, timeout=self.config.timeout, max_retries=0)
        return self._sdk

    def _scrub(self, text: str) -> str:
        key = self.config.api_key.get_secret_value() if self.config.api_key else ""
        return text.replace(key, "***") if key and len(key) >= 4 else text

    def map(self, fn: Callable[[Any], R], items: Sequence[Any]) -> list[R | AgentError]:
        """fn over items concurrently (at most max_concurrency in flight), in order; AgentErrors returned, not raised."""

        def call(item: Any) -> R | AgentError:
            try:
                return fn(item)
            except AgentError as e:
                return e

        if len(items) <= 1:
            return [call(i) for i in items]
        with ThreadPoolExecutor(max_workers=min(len(items), self.config.max_concurrency), thread_name_prefix="chief-llm") as pool:
            return list(pool.map(call, items))

    # -- one HTTP call, retried

    def _complete(self, role: str, model: str, messages: list[dict], response_format: dict | None, usage: list[Usage]) -> _Answer:
        import openai

        kwargs: dict[str, Any] = {"model": model, "messages": messages}
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self.config.max_tokens is not None:
            kwargs["max_tokens"] = self.config.max_tokens
        if self.config.temperature is not None:
            kwargs["temperature"] = self.config.temperature
        attempt = 0
        while True:
            t0 = time.perf_counter()
            try:
                with self._slots:
                    resp = self.sdk.chat.completions.create(**kwargs)
            except (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError) as e:
                usage.append(Usage(calls=1, seconds=round(time.perf_counter() - t0, 3)))
                if attempt >= self.config.max_retries:
                    raise AgentError(f"{role} ({model}): gave up after {attempt + 1} tries: {self._describe(e)}") from None
                delay = min(self.config.max_backoff, self.config.backoff * 2**attempt) * (0.75 + random.random() / 2)
                log.warning("%s (%s): %s; retry %d/%d in %.2fs", role, model, self._describe(e), attempt + 1, self.config.max_retries, delay)
                self._sleep(delay)
                attempt += 1
                continue
            except openai.APIStatusError:
                usage.append(Usage(calls=1, seconds=round(time.perf_counter() - t0, 3)))
                raise
            seconds = round(time.perf_counter() - t0, 3)
            u = getattr(resp, "usage", None)
            usage.append(Usage(
                calls=1,
                prompt_tokens=int(getattr(u, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(u, "completion_tokens", 0) or 0),
                seconds=seconds,
            ))
            if not resp.choices:
                return _Answer(None, None, "no choices")
            choice = resp.choices[0]
            msg = choice.message
            return _Answer(msg.content, getattr(msg, "refusal", None), choice.finish_reason)

    def _describe(self, e: Exception) -> str:
        import openai

        if isinstance(e, openai.APIStatusError):
            text = f"HTTP {e.status_code}: {e.message}"
        elif isinstance(e, openai.APITimeoutError):
            text = f"timed out after {self.config.timeout:g}s"
        else:
            text = f"{type(e).__name__}: {e}"
        return self._scrub(text)[:300]

    # -- structured output

    def structured(
        self,
        role: str,
        model: str,
        messages: list[dict],
        result_type: type[T],
        *,
        check: Callable[[T], list[str]] | None = None,
    ) -> tuple[T, Usage]:
        """Ask `model` for a `result_type`; validate (and `check` for semantic problems), repair once, or raise AgentError."""
        schema = strict_json_schema(result_type)
        name = re.sub(r"[^A-Za-z0-9_-]", "_", result_type.__name__)[:64]
        usage: list[Usage] = []
        try:
            mode, answer = self._ask(role, model, messages, schema, name, usage)
            value, problem = self._parse(answer, result_type, check)
            if problem is None:
                return value, sum(usage, Usage())
            log.info("%s (%s): repairing: %s", role, model, problem[:200])
            repair = messages + self._repair_messages(answer, problem, schema if mode != "json_schema" else None)
            answer = self._ask_mode(role, model, repair, schema, name, mode, usage)
            value, problem2 = self._parse(answer, result_type, check)
            if problem2 is None:
                return value, sum(usage, Usage())
            raise AgentError(f"{role} ({model}): no valid {result_type.__name__} after one repair: {self._scrub(problem2)[:500]}")
        except AgentError:
            raise
        except Exception as e:  # openai.APIStatusError (401, 404, ...) and anything unexpected: one clear line
            raise AgentError(f"{role} ({model}): {self._describe(e)}") from None

    def _format_for(self, mode: Mode, schema: dict, name: str) -> dict | None:
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
        if mode == "json_object":
            return {"type": "json_object"}
        return None

    def _with_schema_instructions(self, messages: list[dict], mode: Mode, schema: dict) -> list[dict]:
        if mode == "json_schema":
            return messages
        return messages + [{"role": "system", "content": render("json_instructions.j2", schema=json.dumps(schema, separators=(",", ":")))}]

    def _ask(self, role: str, model: str, messages: list[dict], schema: dict, name: str, usage: list[Usage]) -> tuple[Mode, _Answer]:
        """Try the strongest response_format this server accepts, remembering the answer per model."""
        import openai

        with self._lock:
            first = self._modes.get(model, "json_schema")
        for mode in MODES[MODES.index(first):]:
            try:
                answer = self._ask_mode(role, model, messages, schema, name, mode, usage)
            except openai.APIStatusError as e:
                if mode != "text" and _refuses_format(e):
                    log.warning("%s (%s): server refused response_format %s (%s); falling back", role, model, mode, self._describe(e))
                    with self._lock:
                        self._modes[model] = MODES[MODES.index(mode) + 1]
                    continue
                raise
            return mode, answer
        raise AssertionError("unreachable: text mode sends no response_format")

    def _ask_mode(self, role: str, model: str, messages: list[dict], schema: dict, name: str, mode: Mode, usage: list[Usage]) -> _Answer:
        return self._complete(role, model, self._with_schema_instructions(messages, mode, schema), self._format_for(mode, schema, name), usage)

    def _parse(self, answer: _Answer, result_type: type[T], check: Callable[[T], list[str]] | None) -> tuple[Any, str | None]:
        """(value, None) or (None, what was wrong)."""
        if answer.refusal:
            return None, f"the model refused: {answer.refusal[:300]}"
        if answer.finish_reason == "content_filter":
            return None, "the answer was blocked by the server's content filter"
        if not answer.content:
            return None, f"the answer was empty (finish_reason {answer.finish_reason})"
        truncated = answer.finish_reason == "length"
        try:
            data = extract_json(answer.content)
        except ValueError as e:
            return None, ("the answer was cut off at the token limit: " if truncated else "") + str(e)
        try:
            value = result_type.model_validate(data)
        except ValidationError as e:
            cut = "the answer was cut off at the token limit; " if truncated else ""
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
