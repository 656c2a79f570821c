"""One chat-completions request to the endpoint, sent until it succeeds or cannot succeed.

The request carries the output budget (shrunk to what the context leaves), streams under a Guard (progress,
stall, cancel, deadline), waits for a slot of the endpoint's adaptive limit, and retries what a retry can fix
(HTTP 429 as long as Retry-After says, 5xx, dropped connections; timeouts only to remote endpoints). What
cannot succeed is raised at once as one line: refusals of images, of sound or of the request's size, the server's own
reason for anything else. A refused response_format is handed back (FormatRefused) for the caller's ladder.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from agents.base import AgentError, Cancelled, RequestTooLarge
from agents.content import count_parts, estimate_tokens
from agents.endpoint import (
    LIST_CONTENT,
    EndpointMemory,
    classify,
    discover_context,
    is_local,
    public_url,
    retry_after,
    server_reason,
    shared_limit,
    traffic,
)
from agents.llm_config import ROLES, LLMConfig, env_name
from agents.streaming import AnswerOverCap, Cancel, Deadline, Guard, Progress, http_client, is_cancelled, read_stream
from storage.schema import Usage

log = logging.getLogger("agents.llm")  # one logger for the whole LLM client


@dataclass
class Answer:
    content: str | None
    refusal: str | None
    finish_reason: str | None
    completion_tokens: int = 0  # the server's own count of the answer's tokens (0: it gave none)
    asked: int = 0  # the max_tokens the request carried


ENDPOINT = "*"  # the endpoint memory's key for facts about the server, whatever the model


def plain_text(messages: list[dict]) -> list[dict]:
    """Messages whose content is only text parts, with that text as one string: servers that take no content
    parts (llama-cpp-python without a vision handler answers HTTP 500 to a list) take every text-only request."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
            m = {**m, "content": "\n\n".join(str(p.get("text", "")) for p in content)}
        out.append(m)
    return out


@dataclass
class Call:
    """One structured() call: who asks, and what bounds it."""

    role: str
    model: str
    max_tokens: int
    deadline: Deadline
    cancel: Cancel
    on_progress: Callable[[Progress], None] | None
    usage: list[Usage] = field(default_factory=list)
    last_progress: float = 0.0
    timeouts: int = 0  # requests of this call that timed out or stalled (re-sent once at most)
    server_cap: int = 0  # the output cap the server revealed (it cut an answer below the max_tokens it was sent)


class FormatRefused(Exception):
    pass


class _Interrupted(Exception):
    """The Guard closed the connection; args[0] is why."""


class _EmptyStream(Exception):
    """HTTP 200 and then nothing: llama-cpp-python reports errors raised while streaming only in its own log."""


class _StreamCut(Exception):
    """The stream ended (even with [DONE]) before a finish_reason: the server cut it or died."""


class Exchange:
    """Requests to one endpoint, shared by every role: its memory, its limit of requests in flight, its SDK client."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        sleep: Callable[[float], None] | None = None,
        start: Callable[[], object] | None = None,
    ):
        self.config = config
        self._start = start  # brings the endpoint up before the first request (a local model CHIEF runs itself)
        self.endpoint = public_url(config.base_url)
        self.memory = EndpointMemory(config.state_path, self.endpoint)
        self.limit = shared_limit(self.endpoint, config.max_concurrency)
        self.traffic = traffic(self.endpoint)
        if self.memory.get(ENDPOINT).get("interrupts"):
            self.traffic.serialize()
        self._sleep = sleep  # tests pass one that records; None waits, waking for a cancel
        self._local = bool(config.base_url) and is_local(config.base_url)
        self._token_field = (
            "max_completion_tokens" if self.endpoint.startswith("https://api.openai.com") else "max_tokens"
        )
        self._contexts: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()
        self._sdk = None
        self._httpx = None
        key = config.api_key.get_secret_value() if config.api_key else ""
        self._secrets = [s for s in (key, urlsplit(config.base_url or "").password or "") if len(s) >= 4]

    @property
    def sdk(self):
        """The openai.OpenAI client, built on first use (the SDK's own retries off: ours are counted)."""
        with self._lock:
            return self._sdk or self._build_sdk()

    def _build_sdk(self):
        import httpx2
        import openai

        if self._start is not None:
            self._start()

        key = self.config.api_key.get_secret_value() if self.config.api_key else None
        if not key and self.config.base_url:
            key = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) ignore the key
        if not key:
            raise AgentError(
                "no API key: set CHIEF_LLM_API_KEY or OPENAI_API_KEY, or CHIEF_LLM_BASE_URL for a local server"
            )
        # The Guard enforces timeout and stall_seconds; httpx's own read timeout is only a backstop.
        backstop = httpx2.Timeout(
            self.config.timeout + self.config.stall_seconds + 5, connect=min(self.config.timeout, 30.0)
        )
        self._httpx = http_client(backstop)
        self._sdk = openai.OpenAI(
            api_key=key, base_url=self.config.base_url, timeout=backstop, max_retries=0, http_client=self._httpx
        )
        return self._sdk

    def scrub(self, text: str) -> str:
        """Text without the API key or a password written into the endpoint URL."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

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
                log.debug("context size of %s not discovered: %s", model, self.scrub(str(e)))
            if found and found < ctx:  # an assumption (Ollama's default) is said to be one
                ctx, source = found, where if where.startswith("assumed") else f"reported by the server ({where})"
        with self._lock:
            self._contexts[model] = (ctx, source)
        return ctx, source

    def _get_json(self, url: str) -> Any:
        return self._http("GET", url, None)

    def _post_json(self, url: str, body: dict) -> Any:
        return self._http("POST", url, body)

    def _http(self, method: str, url: str, body: dict | None) -> Any:
        sdk = self.sdk  # a path on the endpoint's own host: its key may go along
        client = self._httpx  # opened with the SDK client
        if client is None:
            raise RuntimeError("the endpoint's HTTP client is not open")
        headers = {"Authorization": f"Bearer {sdk.api_key}"}
        turn = self.traffic.one_at_a_time and self.traffic.take_turn(lambda: False)
        self.traffic.begin()  # llama-cpp-python cuts a running stream for a GET /v1/models too
        try:
            resp = client.request(method, url, json=body, headers=headers, timeout=min(5.0, self.config.timeout))
        finally:
            self.traffic.end()
            if turn:
                self.traffic.turn.release()
        resp.raise_for_status()
        return resp.json()

    def line(self, call: Call, what: str, hint: str = "") -> str:
        """role (model) at endpoint: what happened; what to change — on one line, without the key."""
        text = f"{call.role} ({call.model}) at {self.endpoint}: {what}" + (f"; {hint}" if hint else "")
        return self.scrub(" ".join(text.split()))

    # -- one request, retried

    def request(self, call: Call, messages: list[dict], response_format: dict | None) -> Answer:
        facts = self.memory.get(call.model)
        messages = plain_text(messages)
        images = count_parts(messages, "image_url")
        media = images + count_parts(messages, "video_url")
        audio = count_parts(messages, "input_audio")
        if audio and facts.get("audio") is False:
            raise AgentError(
                self.line(
                    call,
                    f"this model does not take audio (the server said: {facts.get('audio_reason', '?')})",
                    self._audio_hint(call),
                )
            )
        if images and facts.get("images") is False:
            raise AgentError(
                self.line(
                    call,
                    f"this model does not take images (the server said: {facts.get('images_reason', '?')})",
                    self._vision_hint(call),
                )
            )
        if images > self.config.max_images_per_request:
            raise RequestTooLarge(
                self.line(
                    call,
                    f"{images} images in one request, over max_images_per_request={self.config.max_images_per_request}",
                    "send fewer frames per request",
                ),
                limit="images",
                setting="max_images_per_request",
            )
        kwargs: dict[str, Any] = {
            "model": call.model,
            "messages": messages,
            self._token_field: self._fit(call, messages),
        }
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self.config.temperature is not None:
            kwargs["temperature"] = self.config.temperature
        if self.config.stream and facts.get("stream", True):
            kwargs["stream"] = True
            if facts.get("stream_options", True):
                kwargs["stream_options"] = {"include_usage": True}
        attempt = 0
        while True:
            outcome = self._attempt(call, kwargs, media > 0, audio > 0)
            if isinstance(outcome, Answer):
                return outcome
            if outcome is None:  # changed the request (stream_options refused, an empty stream): send it again at once
                continue
            what, wait = outcome
            tries = f"{attempt + 1} {'try' if attempt == 0 else 'tries'}"
            if attempt >= self.config.max_retries:
                raise AgentError(self.line(call, f"gave up after {tries}: {what}", self._retry_hint(what)))
            delay = (
                wait
                if wait is not None
                else min(self.config.max_backoff, self.config.backoff * 2**attempt) * (0.75 + random.random() / 2)
            )
            if delay >= call.deadline.remaining():
                raise AgentError(
                    self.line(
                        call,
                        f"gave up after {tries}: {what}; the next try ({delay:.0f} s away) would pass "
                        f"this action's deadline of {call.deadline.seconds:g} s",
                        f"raise {env_name('action_timeout')}",
                    )
                )
            log.warning(
                "%s (%s): %s; retry %d/%d in %.1f s",
                call.role,
                call.model,
                what[:120],
                attempt + 1,
                self.config.max_retries,
                delay,
            )
            self.progress(
                call,
                0,
                time.monotonic(),
                note=f"retry {attempt + 1}/{self.config.max_retries} in {delay:.1f} s: {what[:80]}",
            )
            self._pause(delay, call)
            attempt += 1

    def _fit(self, call: Call, messages: list[dict]) -> int:
        """The max_tokens to send: the call's budget, less if the prompt leaves less room in the context."""
        ctx, source = self.context_tokens(call.model)
        prompt = self.estimate_tokens(messages)
        room = ctx - prompt
        if room < min(call.max_tokens, 256):
            raise RequestTooLarge(
                self.line(
                    call,
                    f"the request is about {prompt:,} tokens; the context is {ctx:,} ({source}), "
                    f"leaving {max(room, 0):,} for the answer",
                    f"send less (a smaller chunk) or use a larger context ({env_name('context_tokens')}, or the server's)",
                ),
                limit="context",
                setting="context_tokens",
                tokens=ctx,
            )
        if room < call.max_tokens:
            log.warning(
                "%s (%s): the prompt (about %d tokens) leaves %d of the %d-token context (%s) for the answer",
                call.role,
                call.model,
                prompt,
                room,
                ctx,
                source,
            )
            return room
        return call.max_tokens

    def _attempt(
        self, call: Call, kwargs: dict, has_images: bool, has_audio: bool = False
    ) -> Answer | tuple[str, float | None] | None:
        """Send once. The answer; or (what failed, Retry-After) when a retry may help; or None to re-send now."""
        import openai

        self._check_alive(call)
        stop = lambda: is_cancelled(call.cancel) or call.deadline.expired  # noqa: E731
        epoch = self.limit.acquire(stop=stop)
        if epoch is None:
            self._check_alive(call)
        turn = self.traffic.one_at_a_time
        if turn and not self.traffic.take_turn(stop):
            if epoch is not None:
                self.limit.release()
            self._check_alive(call)
        began = self.traffic.begin()
        t0 = time.monotonic()
        try:
            answer = self._send(call, kwargs, t0)
        except _StreamCut:
            call.usage.append(Usage(calls=1, seconds=round(time.monotonic() - t0, 3)))
            if not turn and self.traffic.sibling_since(began):
                return self._cut_by_sibling(call)
            return "the stream ended before the answer was complete", None
        except _Interrupted as e:
            call.usage.append(Usage(calls=1, seconds=round(time.monotonic() - t0, 3)))
            return self._interrupted(call, str(e))
        except _EmptyStream:
            call.usage.append(Usage(calls=1, seconds=round(time.monotonic() - t0, 3)))
            log.warning(
                "%s (%s): the server ended the stream without a word; asking once more without streaming to hear why",
                call.role,
                call.model,
            )
            kwargs.pop("stream", None)
            kwargs.pop("stream_options", None)
            return None
        except AnswerOverCap as e:
            raise AgentError(
                self.line(
                    call,
                    f"the answer passed {self.config.max_answer_chars:,} characters ({e}); the connection was closed",
                    f"lower the output budget ({env_name('max_output_tokens')})",
                )
            ) from None
        except openai.APIError as e:
            call.usage.append(Usage(calls=1, seconds=round(time.monotonic() - t0, 3)))
            return self._failed(call, e, kwargs, has_images, epoch, has_audio)
        finally:
            self.traffic.end()
            if turn:
                self.traffic.turn.release()
            if epoch is not None:
                self.limit.release()
        self.limit.succeeded()
        return answer

    def _cut_by_sibling(self, call: Call) -> None:
        """A stream cut while another request to the endpoint was under way: a server that serves one request
        and drops it for the next (llama-cpp-python's interrupt_requests). Take turns from now on, remembered for
        the endpoint, and send this request again at once (it did not fail; it was pushed aside)."""
        if self.traffic.serialize():
            log.warning(
                "%s (%s): the server cut an answer when another request arrived (llama-cpp-python: "
                "--interrupt_requests False keeps parallel requests); one request at a time to %s from now on",
                call.role,
                call.model,
                self.endpoint,
            )
            self.memory.remember(ENDPOINT, interrupts=True)
        self.progress(call, 0, time.monotonic(), note="the server cuts answers for new requests: one at a time")
        return None

    def _check_alive(self, call: Call) -> None:
        if is_cancelled(call.cancel):
            raise Cancelled(self.line(call, "cancelled"))
        if call.deadline.expired:
            raise AgentError(
                self.line(
                    call,
                    f"this action's deadline of {call.deadline.seconds:g} s passed",
                    f"raise {env_name('action_timeout')}",
                )
            )

    def _interrupted(self, call: Call, reason: str) -> tuple[str, None]:
        if reason == "cancelled":
            raise Cancelled(self.line(call, "cancelled; the connection was closed"))
        if reason == "deadline":
            raise AgentError(
                self.line(
                    call,
                    f"this action's deadline of {call.deadline.seconds:g} s passed; the connection was closed",
                    f"raise {env_name('action_timeout')}",
                )
            )
        if reason == "stalled":
            what, setting = f"the answer stalled (no token for {self.config.stall_seconds:g} s)", "stall_seconds"
        else:
            what = (
                f"no answer within {self.config.timeout:g} s"
                if not self.config.stream
                else f"no first token within {self.config.timeout:g} s"
            )
            setting = "timeout"
        resend = self.config.resend_timeouts if self.config.resend_timeouts is not None else not self._local
        if not resend:
            raise AgentError(
                self.line(
                    call,
                    f"{what}; not re-sent (a local server keeps generating an abandoned answer)",
                    f"raise {env_name(setting)}, or ask for less ({env_name('max_output_tokens')})",
                )
            )
        call.timeouts += 1
        if call.timeouts > 1:  # a server that timed out twice in a row is hung or overloaded: say so now
            raise AgentError(
                self.line(call, f"{what}, twice; not re-sent again", f"raise {env_name(setting)}, or check the server")
            )
        return what, None

    def _failed(
        self, call: Call, e: Exception, kwargs: dict, has_images: bool, epoch: int | None, has_audio: bool = False
    ) -> tuple[str, float | None] | None:
        import openai

        if isinstance(e, openai.APITimeoutError):  # httpx's backstop fired before the Guard did
            return self._interrupted(call, "timeout")
        kind, limit = classify(e, has_images=has_images, has_audio=has_audio)
        reason = self.scrub(server_reason(e))
        status = getattr(e, "status_code", None)
        http = f"HTTP {status}: " if status else ""
        if has_audio and LIST_CONTENT in reason:  # a server that takes no content parts takes no sound either
            self.memory.remember(call.model, audio=False, audio_reason=reason[:200])
        if kind == "audio_unsupported":  # remembered: never sent again to this model, never retried
            self.memory.remember(call.model, audio=False, audio_reason=reason[:200])
            raise AgentError(self.line(call, f"this model does not take audio: {http}{reason}", self._audio_hint(call)))
        if kind == "format" and "response_format" in kwargs:
            raise FormatRefused(reason)
        if kind == "stream_options" and "stream_options" in kwargs:
            log.warning(
                "%s (%s): the server refuses stream_options (%s); streaming without usage",
                call.role,
                call.model,
                reason[:120],
            )
            self.memory.remember(call.model, stream_options=False)
            del kwargs["stream_options"]
            return None
        if kind == "list_content":  # content parts with no image: sent as a string, this cannot recur
            self.memory.remember(call.model, images=False, images_reason=reason[:200])
            raise AgentError(self.line(call, f"the server takes message content only as text: {http}{reason}"))
        if kind == "images_unsupported":
            self.memory.remember(call.model, images=False, images_reason=reason[:200])
            raise AgentError(
                self.line(call, f"this model does not take images: {http}{reason}", self._vision_hint(call))
            )
        if kind == "too_many_images":
            raise RequestTooLarge(
                self.line(
                    call,
                    f"too many images for the server: {http}{reason}",
                    f"set {env_name('max_images_per_request')}={limit}",
                ),
                limit="images",
                setting="max_images_per_request",
            )
        if kind == "context":
            if limit:  # the server stated its context: later requests to this model are planned to it
                with self._lock:
                    known = self._contexts.get(call.model)
                    if known is None or limit < known[0]:
                        self._contexts[call.model] = (limit, "stated by the server when it refused a request")
            raise RequestTooLarge(
                self.line(
                    call,
                    f"the request does not fit the context: {http}{reason}",
                    f"send less, or set {env_name('context_tokens')} to the server's context",
                ),
                limit="context",
                setting="context_tokens",
                tokens=limit,
            )
        if kind == "fatal":
            raise AgentError(self.line(call, f"{http}{reason}", self._status_hint(call, status)))
        if kind == "rate" and epoch is not None:
            self.limit.rate_limited(epoch)
        headers = getattr(getattr(e, "response", None), "headers", None)
        if isinstance(e, openai.APIConnectionError) and reason.startswith("Connection error"):
            root: BaseException = e
            while (inner := root.__cause__ or root.__context__) is not None:
                root = inner
            return self.scrub(f"could not connect: {root}"), None
        return f"{http}{reason}", retry_after(headers) if kind == "rate" or status == 503 else None

    def _vision_hint(self, call: Call) -> str:
        kind = call.role.split()[0]
        where = env_name(f"{kind}_model") if kind in ROLES else "the model setting"
        memo = (
            f" (remembered in {self.config.state_path}; delete it if the server now takes images)"
            if self.config.state_path
            else ""
        )
        return f"set {where} to a vision model{memo}"

    def _audio_hint(self, call: Call) -> str:
        memo = (
            f" (remembered in {self.config.state_path}; delete it if the server now takes audio)"
            if self.config.state_path
            else ""
        )
        return f"unset {env_name('critic_audio')}, or use a model that takes audio{memo}"

    def _status_hint(self, call: Call, status: int | None) -> str:
        if status in (401, 403):
            return f"check {env_name('api_key')}"
        if status == 404:
            kind = call.role.split()[0]
            return f"check the model name ({env_name(f'{kind}_model') if kind in ROLES else 'model setting'}) and {env_name('base_url')}"
        return ""

    def _retry_hint(self, what: str) -> str:
        if what.startswith("could not connect"):
            return f"is the server running? check {env_name('base_url')}"
        return f"check the server's log, or raise {env_name('max_retries')}"

    def _pause(self, seconds: float, call: Call) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
            return
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self._check_alive(call)
            time.sleep(min(left, 0.05))

    def _send(self, call: Call, kwargs: dict, t0: float) -> Answer:
        """One HTTP exchange under a Guard; usage recorded. Raises _Interrupted when the Guard closed it."""
        stream = bool(kwargs.get("stream"))
        guard = Guard(
            first_token=self.config.timeout, stall=self.config.stall_seconds, deadline=call.deadline, cancel=call.cancel
        )
        with guard:
            try:
                resp = self.sdk.chat.completions.create(**kwargs)
                if stream and "json" in resp.response.headers.get("content-type", ""):
                    resp, stream = self._json_for_stream(call, resp), False
                if stream:
                    got = read_stream(
                        resp,
                        guard,
                        max_chars=self.config.max_answer_chars,
                        on_token=lambda n: self.progress(call, n, t0),
                    )
                    answer, u, pieces = Answer(got.content, got.refusal, got.finish_reason), got.usage, got.tokens
                else:
                    choice = resp.choices[0] if resp.choices else None
                    msg = choice.message if choice else None
                    answer = Answer(
                        msg.content if msg else None,
                        getattr(msg, "refusal", None),
                        (choice.finish_reason if choice else None) or "no choices",
                    )
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
        if stream and got.chunks == 0:
            raise _EmptyStream()
        if stream and answer.finish_reason is None:
            raise _StreamCut()
        completion = int(getattr(u, "completion_tokens", 0) or 0) or pieces
        answer.completion_tokens = int(getattr(u, "completion_tokens", 0) or 0)
        answer.asked = int(kwargs.get(self._token_field) or 0)
        call.usage.append(
            Usage(
                calls=1,
                prompt_tokens=int(getattr(u, "prompt_tokens", 0) or 0) or self.estimate_tokens(kwargs["messages"]),
                completion_tokens=completion,
                seconds=round(time.monotonic() - t0, 3),
            )
        )
        self.progress(call, completion, t0, done=True)
        return answer

    def _json_for_stream(self, call: Call, stream: Any) -> Any:
        """A streamed request answered with one JSON body: that body is the answer; the model is asked without
        streaming from now on (remembered), instead of a second request."""
        from openai.types.chat import ChatCompletion

        raw = stream.response.read()
        if len(raw) > self.config.max_answer_chars * 2 + 65536:
            raise AnswerOverCap(len(raw))
        log.warning(
            "%s (%s): the server answers a streamed request with one JSON body; not streaming to it from now on",
            call.role,
            call.model,
        )
        self.memory.remember(call.model, stream=False)
        return ChatCompletion.model_validate_json(raw)

    def progress(self, call: Call, tokens: int, t0: float, *, done: bool = False, note: str = "") -> None:
        if call.on_progress is None:
            return
        now = time.monotonic()
        if not (done or note) and now - call.last_progress < 0.2:
            return
        call.last_progress = now
        call.on_progress(Progress(call.role, call.model, tokens, round(now - t0, 3), done=done, note=note))
