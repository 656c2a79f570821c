"""What CHIEF knows about one OpenAI-compatible endpoint: how its errors read, what it accepted before, how
many requests it takes at once, and how large its context is.

- `server_reason` / `classify`: a refusal is recognised by what the server says (llama-cpp-python answers an
  unsupported `response_format` with HTTP 500; text-only models answer image parts with 400 or 500, models without
  audio input answer `input_audio` parts likewise), not only by its status code.
- `EndpointMemory`: the accepted response_format rung and whether a model takes images and audio, per endpoint and
  model,
  in a small JSON file (written atomically; ignored and then replaced when the endpoint URL differs).
- `AdaptiveLimit`: requests in flight per endpoint, halved on HTTP 429 and raised again one step at a time.
- `Traffic`: the requests to one endpoint in this process, and the endpoint's one-at-a-time switch (a server that
  cuts a running stream when another request arrives: llama-cpp-python's `interrupt_requests`).
- `discover_context`: the context size the server reports (vLLM, llama.cpp, Ollama, LM Studio), when it does.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

log = logging.getLogger(__name__)

Kind = Literal[
    "rate",
    "images_unsupported",
    "audio_unsupported",
    "list_content",
    "too_many_images",
    "context",
    "format",
    "stream_options",
    "transient",
    "fatal",
]


# ---------------------------------------------------------------- URLs


def public_url(url: str | None) -> str:
    """The endpoint as it may be shown or stored: no user:password, no query string (keys hide in both)."""
    if not url:
        return "https://api.openai.com/v1"
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def is_local(url: str | None) -> bool:
    """A server on this machine or this network (loopback, private or link-local address, localhost)."""
    host = urlsplit(url or "").hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


# ---------------------------------------------------------------- what the server said


def _message_in(body: Any, depth: int = 0) -> str:
    """The first human-readable message in an error body (OpenAI, vLLM, FastAPI and llama.cpp shapes)."""
    if depth > 4 or body is None:
        return ""
    if isinstance(body, str):
        text = body.strip()
        if text[:1] in "{[":
            try:
                return _message_in(json.loads(text), depth + 1) or text
            except ValueError:
                return text
        return text
    if isinstance(body, dict):
        for key in ("message", "error", "detail", "msg"):
            found = _message_in(body.get(key), depth + 1)
            if found:
                return found
        return ""
    if isinstance(body, list):  # FastAPI validation errors: [{"loc": [...], "msg": "..."}]
        lines = []
        for item in body[:3]:
            if isinstance(item, dict) and "msg" in item:
                where = ".".join(str(p) for p in item.get("loc", ()))
                lines.append(f"{where}: {item['msg']}" if where else str(item["msg"]))
            else:
                lines.append(_message_in(item, depth + 1))
        return "; ".join(line for line in lines if line)
    return str(body)


def server_reason(err: BaseException, limit: int = 300) -> str:
    """The server's own reason for an error, on one line: no "Error code: 500 -" prefixes, no line breaks."""
    text = _message_in(getattr(err, "body", None)) or str(getattr(err, "message", "") or err)
    text = re.sub(r"^(?:(?:HTTP \d+: )?Error code: \d+ - )+", "", text.strip())
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and lines[0].startswith("Traceback ("):  # a Python traceback: the reason is its last line
        text = lines[-1]
    else:  # a message followed by the server's own traceback: the message
        text = re.split(r'\n\s*(?:File "|Traceback \()', text, maxsplit=1)[0]
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


LIST_CONTENT = 'can only concatenate str (not "list") to str'
_IMAGES_UNSUPPORTED = (
    "image input is not supported",
    "does not support image",
    "images are not supported",
    "image_url is only supported",
    "vision is not supported",
    "not a multimodal model",
    "multimodal is not supported",
    "does not support multimodal",
    "image inputs are not supported",
    LIST_CONTENT,
)  # the last: llama-cpp-python without a vision chat handler (its chat templates add strings)
_AUDIO_UNSUPPORTED = (
    "audio input is not supported",  # llama.cpp's llama-server without an audio projector
    "does not support audio",
    "audio is not supported",
    "audio inputs are not supported",
    "expected to be either text or image_url",  # OpenAI, a model without audio input
    "input_audio is not supported",
    "unsupported content type: input_audio",
    "unknown part type: input_audio",
)
_NO_AUDIO = re.compile(r"at most 0 audio\(s\)")  # vLLM: a model with no audio modality
_TOO_MANY_IMAGES = re.compile(r"at most (\d+) image\(s\)|too many images|only (\d+) images? (?:are|is) allowed")
_CONTEXT = (
    "maximum context length",
    "context length exceeded",
    "context_length_exceeded",
    "exceed_context",
    "exceeds the available context size",
    "exceed context window",
    "exceeds the context window",
    "context window of",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "maximum model length",
    "context size has been exceeded",
    "tokens exceed context",
)
# The context a refusal states: OpenAI and vLLM ("maximum context length is 8192 tokens"), llama.cpp's server
# (`"n_ctx": 4096` in the error body), vLLM's "maximum model length of 4096"
_STATED_CONTEXT = re.compile(
    r"maximum context length is (\d+)|\"n_ctx\":\s*(\d+)|maximum model length (?:of |is )?(\d+)|context window of (\d+)"
)
_FORMAT = ("response_format", "json_schema", "json_object", "structured output", "response format")


def classify(err: BaseException, *, has_images: bool, has_audio: bool = False) -> tuple[Kind, int | None]:
    """What an error means for the request that caused it, and the server's limit where it states one (too many
    images: how many it takes; context: its context in tokens).

    A request with sound is refused for its sound when the server says so in words it is known to use, or answers
    HTTP 400 naming audio (after the image and context refusals, which may name it in passing), or (with no image
    in the request) refuses content parts at all."""
    status = getattr(err, "status_code", None)
    text = f"{server_reason(err, 2000)} {getattr(err, 'body', '')}".lower()
    if status == 429:
        return "rate", None
    if has_audio and (any(p in text for p in _AUDIO_UNSUPPORTED) or _NO_AUDIO.search(text)):
        return "audio_unsupported", 0
    if has_images:
        m = _TOO_MANY_IMAGES.search(text)
        if m:
            n = next((int(g) for g in m.groups() if g is not None), None)
            return ("images_unsupported", 0) if n == 0 else ("too_many_images", n)
        if any(p in text for p in _IMAGES_UNSUPPORTED):
            return "images_unsupported", 0
    elif LIST_CONTENT in text:  # content parts without any image: the server takes only a string
        return ("audio_unsupported", 0) if has_audio else ("list_content", None)
    if any(p in text for p in _CONTEXT):
        m = _STATED_CONTEXT.search(text)
        return "context", next((int(g) for g in m.groups() if g is not None), None) if m else None
    if has_audio and status == 400 and ("audio" in text):
        return "audio_unsupported", 0
    if status is not None and any(p in text for p in _FORMAT):
        return "format", None
    if status is not None and "stream_options" in text:
        return "stream_options", None
    if status is None or status >= 500 or status in (408, 409):
        return "transient", None
    return "fatal", None


def retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, `retry-after` as seconds or an HTTP date)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            parsed = email.utils.parsedate_tz(value) if name == "retry-after" else None
            if parsed is None:
                continue
            seconds = email.utils.mktime_tz(parsed) - time.time()
        if seconds == seconds and seconds >= 0:  # not NaN
            return seconds
    return None


# ---------------------------------------------------------------- memory across processes

_file_locks: dict[str, threading.Lock] = {}
_file_locks_guard = threading.Lock()


class EndpointMemory:
    """Facts learned from one endpoint, per model, kept in a JSON file when a path is given.

    {"version": 1, "endpoint": "<public url>", "models": {"<model>": {"response_format": "json_object",
    "images": false, "images_reason": "...", "audio": false, "audio_reason": "...", "stream_options": true,
    "updated": 1700000000}}}
    """

    VERSION = 1

    def __init__(self, path: Path | str | None, endpoint: str):
        self.path = Path(path) if path else None
        self.endpoint = endpoint
        self._models: dict[str, dict[str, Any]] = {}
        with _file_locks_guard:
            self._lock = _file_locks.setdefault(str(self.path), threading.Lock())
        with self._lock:
            self._models = self._load()

    def _load(self) -> dict[str, dict[str, Any]]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            log.warning("ignoring %s: %s", self.path, e)
            return {}
        if not isinstance(data, dict) or data.get("version") != self.VERSION or data.get("endpoint") != self.endpoint:
            return {}  # another endpoint's facts: ignored, and replaced on the next write
        models = data.get("models")
        return {k: v for k, v in models.items() if isinstance(v, dict)} if isinstance(models, dict) else {}

    def get(self, model: str) -> dict[str, Any]:
        with self._lock:
            return dict(self._models.get(model, {}))

    def remember(self, model: str, **facts: Any) -> None:
        """Record facts about `model` (merged with what other processes wrote since) and save them atomically."""
        with self._lock:
            current = self._load() if self.path else self._models
            current.setdefault(model, {}).update(facts, updated=int(time.time()))
            self._models = current
            if self.path is not None:
                self._save(current)

    def _save(self, models: dict[str, dict[str, Any]]) -> None:
        data = {"version": self.VERSION, "endpoint": self.endpoint, "models": models}
        path = self.path
        if path is None:  # in memory only
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".llm-endpoints-", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except OSError as e:  # a read-only home: the facts stay in memory for this process
            log.warning("could not save what the endpoint accepts to %s: %s", path, e)


# ---------------------------------------------------------------- requests in flight


class AdaptiveLimit:
    """At most `limit` requests in flight. HTTP 429 halves the limit (once per wave of requests); every `limit`
    successes in a row raise it by one, up to `maximum` (additive increase, multiplicative decrease)."""

    def __init__(self, maximum: int):
        self.maximum = maximum
        self.limit = maximum
        self.in_flight = 0
        self._epoch = 0  # bumped on every decrease: a 429 from a request sent before it does not count again
        self._successes = 0
        self._cond = threading.Condition()

    def acquire(self, stop: Callable[[], bool]) -> int | None:
        """Wait for a slot; the slot's epoch, or None when `stop()` said to give up while waiting."""
        with self._cond:
            while self.in_flight >= self.limit:
                if stop():
                    return None
                self._cond.wait(0.05)
            self.in_flight += 1
            return self._epoch

    def release(self) -> None:
        with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def rate_limited(self, epoch: int) -> None:
        with self._cond:
            if epoch == self._epoch and self.limit > 1:
                self.limit = max(1, self.limit // 2)
                log.warning("rate limited: at most %d requests in flight to this endpoint for now", self.limit)
            if epoch == self._epoch:
                self._epoch += 1
            self._successes = 0

    def succeeded(self) -> None:
        with self._cond:
            self._successes += 1
            if self._successes >= self.limit and self.limit < self.maximum:
                self.limit += 1
                self._successes = 0
                self._cond.notify_all()


_limits: dict[tuple[str, int], AdaptiveLimit] = {}
_limits_guard = threading.Lock()


def shared_limit(endpoint: str, maximum: int) -> AdaptiveLimit:
    """One limiter per endpoint in this process, shared by every client that calls it."""
    with _limits_guard:
        return _limits.setdefault((endpoint, maximum), AdaptiveLimit(maximum))


class Traffic:
    """Requests to one endpoint in this process (counted so a cut stream can tell whether a sibling arrived), and,
    once the endpoint was seen to cut a stream for a sibling, one lock that makes its requests take turns."""

    def __init__(self) -> None:
        self.started = 0  # requests begun, ever
        self.in_flight = 0
        self.one_at_a_time = False
        self.turn = threading.Lock()
        self._lock = threading.Lock()

    def begin(self) -> int:
        with self._lock:
            self.started += 1
            self.in_flight += 1
            return self.started

    def end(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def sibling_since(self, began: int) -> bool:
        """Whether another request to the endpoint was under way while the one begun as `began` ran."""
        with self._lock:
            return self.in_flight > 1 or self.started > began

    def serialize(self) -> bool:
        """Take turns from now on; True when this call switched it on."""
        with self._lock:
            switched, self.one_at_a_time = not self.one_at_a_time, True
            return switched

    def take_turn(self, stop: Callable[[], bool]) -> bool:
        """Wait for the endpoint's turn (one request at a time), and for the requests begun before it took turns to
        end (one of them reaching the server now would cut this one); False when `stop()` said to give up."""
        while not self.turn.acquire(timeout=0.05):
            if stop():
                return False
        while True:
            with self._lock:
                if self.in_flight == 0:
                    return True
            if stop():
                self.turn.release()
                return False
            time.sleep(0.01)


_traffic: dict[str, Traffic] = {}


def traffic(endpoint: str) -> Traffic:
    with _limits_guard:
        return _traffic.setdefault(endpoint, Traffic())


# ---------------------------------------------------------------- context size

_CONTEXT_KEYS = ("max_model_len", "loaded_context_length", "context_length", "max_context_length", "context_window")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _context_of(entry: dict) -> tuple[int | None, str]:
    for key in _CONTEXT_KEYS:
        if _int(entry.get(key)):
            return entry[key], key
    meta = entry.get("meta")
    if not isinstance(meta, dict):
        meta = {}
    for key in ("n_ctx", "n_ctx_train"):
        if _int(meta.get(key)):
            return meta[key], f"meta.{key}"
    return None, ""


def discover_context(
    get: Callable[[str], Any], post: Callable[[str, dict], Any], base_url: str, model: str
) -> tuple[int | None, str]:
    """The context size (tokens) the server reports for `model`, and where it came from; (None, "") if unknown.

    `get(url)` / `post(url, json)` return parsed JSON or raise. Reads GET {base}/models (vLLM `max_model_len`,
    llama.cpp `meta`), then, by server: llama.cpp GET /props (`default_generation_settings.n_ctx`, the context
    it really runs with), Ollama GET /api/ps (`context_length` of the loaded model) or POST /api/show (`num_ctx`
    parameter), LM Studio GET /api/v0/models/{model} (`loaded_context_length`/`max_context_length`).
    """
    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    listing = get(f"{base}/models")
    entries = [e for e in (listing or {}).get("data", []) if isinstance(e, dict)]
    entry = next((e for e in entries if e.get("id") == model), entries[0] if len(entries) == 1 else {})
    n, source = _context_of(entry)
    if "meta" in entry:  # llama.cpp's llama-server: n_ctx_train is the model's, /props has the server's
        try:
            props = get(f"{root}/props")
            n_ctx = _int(((props or {}).get("default_generation_settings") or {}).get("n_ctx")) or _int(
                (props or {}).get("n_ctx")
            )
            if n_ctx:
                return n_ctx, "/props n_ctx"
        except Exception as e:  # noqa: BLE001 - an older server: keep what /models said
            log.debug("no /props: %s", e)
    if n and source != "meta.n_ctx_train":
        return n, f"/models {source}"
    owner = entry.get("owned_by")
    if owner in ("library", "ollama"):
        try:
            for m in (get(f"{root}/api/ps") or {}).get("models", []):
                if model in (m.get("name"), m.get("model")) and _int(m.get("context_length")):
                    return m["context_length"], "ollama /api/ps context_length"
        except Exception as e:  # noqa: BLE001
            log.debug("no /api/ps: %s", e)
        show = post(f"{root}/api/show", {"model": model}) or {}
        m = re.search(r"(?m)^\s*num_ctx\s+(\d+)", str(show.get("parameters") or ""))
        if m:
            return int(m.group(1)), "ollama /api/show num_ctx"
        return 4096, "assumed: Ollama's default num_ctx (the model is not loaded and sets no num_ctx)"
    if owner == "organization_owner":  # LM Studio
        info = get(f"{root}/api/v0/models/{model}") or {}
        n2, source2 = _context_of(info)
        if n2:
            return n2, f"lm studio {source2}"
    return (n, f"/models {source}") if n else (None, "")
