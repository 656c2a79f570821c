"""Watching one HTTP exchange with the model: progress, stalls, cancel and deadlines.

Every request opens its own connection (no keep-alive), made in the calling thread, so a watchdog can close
exactly that connection: on cancel, when no token arrived for `stall` seconds, when the first token (or, when
not streaming, the whole answer) took longer than `first_token` seconds, or at the action's deadline. Closing the
socket wakes the blocked read at once and tells the server the client has gone.
"""

from __future__ import annotations

import functools
import math
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2

from storage.run import CancelToken

Cancel = CancelToken | None  # the run contract's stop flag (storage.run)


def is_cancelled(cancel: Cancel) -> bool:
    return cancel is not None and cancel.cancelled


@dataclass(frozen=True)
class Progress:
    """One update while an answer streams in (and a last one with done=True)."""

    role: str
    model: str
    tokens: int  # answer tokens so far (one per streamed piece; the server's count once it gives one)
    seconds: float  # since the request was sent
    done: bool = False
    note: str = ""  # a retry or a fallback, in a few words

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


class Deadline:
    """The time left for one action: every call of it (a plan's scenes, a critic's parts), retry and repair."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self._at = None if seconds is None else time.monotonic() + seconds

    def remaining(self) -> float:
        return math.inf if self._at is None else self._at - time.monotonic()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


_guards: dict[int, Guard] = {}
_guards_lock = threading.Lock()


class Guard:
    """Closes the connection of the request made in this thread when a limit trips; `reason` says which."""

    POLL = 0.05

    def __init__(self, *, first_token: float, stall: float, deadline: Deadline, cancel: Cancel):
        self.first_token, self.stall, self.deadline, self.cancel = first_token, stall, deadline, cancel
        self.reason: str | None = None  # "cancelled" | "timeout" | "stalled" | "deadline"
        self.started = time.monotonic()
        self.last_token: float | None = None
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()

    def __enter__(self) -> Guard:
        with _guards_lock:
            _guards[threading.get_ident()] = self
        threading.Thread(target=self._watch, name="chief-llm-guard", daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        with _guards_lock:
            _guards.pop(threading.get_ident(), None)

    def token(self) -> None:
        self.last_token = time.monotonic()

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            tripped = self.reason is not None
        if tripped:
            self._close(sock)

    def _watch(self) -> None:
        while not self._done.wait(self.POLL):
            reason = self._check()
            if reason:
                with self._lock:
                    self.reason = reason
                    sock = self._sock
                if sock is not None:
                    self._close(sock)
                return

    def _check(self) -> str | None:
        if is_cancelled(self.cancel):
            return "cancelled"
        if self.deadline.expired:
            return "deadline"
        now = time.monotonic()
        if self.last_token is None:
            return "timeout" if now - self.started > self.first_token else None
        return "stalled" if now - self.last_token > self.stall else None

    @staticmethod
    def _close(sock: socket.socket) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _TrackingBackend(httpcore2.SyncBackend):
    """Hands each new connection's socket to the Guard of the thread that opened it."""

    def connect_tcp(self, *args: Any, **kwargs: Any):
        stream = super().connect_tcp(*args, **kwargs)
        with _guards_lock:
            guard = _guards.get(threading.get_ident())
        if guard is not None:
            guard.attach(stream.get_extra_info("socket"))
        return stream


@functools.lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context (its CA bundle, or SSL_CERT_FILE / SSL_CERT_DIR), made once: httpx loads the
    bundle for every client it builds (~30 ms of CPU), and every exchange builds one."""
    return httpx2.create_ssl_context()


def http_client(timeout: httpx2.Timeout) -> httpx2.Client:
    """The SDK's HTTP client: the openai defaults, one connection per request, sockets the Guard can close."""
    import openai

    client = openai.DefaultHttpxClient(
        timeout=timeout, limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=0), verify=_tls()
    )
    # httpcore's ConnectionPool takes a network_backend, but httpx does not pass one through: set it on its pool
    transport = client._transport
    if not isinstance(transport, httpx2.HTTPTransport):  # the SDK's default client is built on it
        raise RuntimeError(f"the SDK's HTTP client has a {type(transport).__name__}, not an HTTPTransport")
    transport._pool._network_backend = _TrackingBackend()
    return client


@dataclass
class Streamed:
    content: str
    refusal: str | None
    finish_reason: str | None
    tokens: int  # pieces received
    usage: Any  # the server's usage object, when it sent one
    chunks: int  # events received: 0 when the server ended the stream without a word


class AnswerOverCap(Exception):
    """The answer grew past the configured character cap; the connection was closed."""


def read_stream(chunks: Iterable[Any], guard: Guard, *, max_chars: int, on_token: Callable[[int], None]) -> Streamed:
    """Collect a streamed chat completion; `on_token(tokens_so_far)` after each piece."""
    parts: list[str] = []
    refusal: list[str] = []
    size = tokens = received = 0
    finish = usage = None
    for chunk in chunks:
        received += 1
        if getattr(chunk, "usage", None):
            usage = chunk.usage
        for choice in chunk.choices[:1]:
            delta = choice.delta
            piece = delta.content if delta is not None else None
            extra = getattr(delta, "model_extra", None) or {}
            thinking = extra.get("reasoning_content") or extra.get("reasoning")
            if piece:
                parts.append(piece)
                size += len(piece)
            if delta is not None and getattr(delta, "refusal", None):
                refusal.append(delta.refusal)
            if piece or thinking:
                tokens += 1
                guard.token()
                on_token(tokens)
            if size > max_chars:
                raise AnswerOverCap(size)
            if choice.finish_reason:
                finish = choice.finish_reason
    return Streamed("".join(parts), "".join(refusal) or None, finish, tokens, usage, received)
