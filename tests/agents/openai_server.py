"""A real local HTTP server speaking the OpenAI chat-completions API, for tests.

Scripted: a queue of replies (or a `responder` function when the queue is empty), and a record of every
request body received, so tests assert what the client actually sent. Counts requests in flight.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


def completion(content: str | None = None, *, finish_reason: str = "stop", refusal: str | None = None,
               model: str = "fake-model", prompt_tokens: int = 11, completion_tokens: int = 7) -> dict[str, Any]:
    """A chat.completion body shaped like OpenAI's."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": refusal},
            "logprobs": None,
            "finish_reason": finish_reason,
        }],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def error(status: int, message: str, type_: str = "invalid_request_error", param: str | None = None) -> "Reply":
    return Reply(status=status, body={"error": {"message": message, "type": type_, "param": param, "code": None}})


@dataclass
class Reply:
    body: dict[str, Any] | None = None
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def ok(content: str | dict | None = None, **kw: Any) -> Reply:
    """A 200 reply; a dict `content` is sent as its JSON text."""
    delay = kw.pop("delay", 0.0)
    if isinstance(content, dict):
        content = json.dumps(content)
    return Reply(body=completion(content, **kw), delay=delay)


class FakeOpenAI:
    """`with FakeOpenAI() as server:` ... `LLMConfig(base_url=server.base_url)`; `server.requests` holds bodies."""

    def __init__(self, responder: Callable[[dict], Reply] | None = None):
        self.queue: list[Reply] = []
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> "FakeOpenAI":
        self.queue.extend(replies)
        return self

    def _next(self, body: dict) -> Reply:
        with self._lock:
            if self.queue:
                return self.queue.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return error(500, "test server: no scripted reply left", "server_error")

    def __enter__(self) -> "FakeOpenAI":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    if not self.path.endswith("/chat/completions"):
                        reply = error(404, f"unknown path {self.path}")
                    else:
                        reply = fake._next(body)
                    if reply.delay:
                        time.sleep(reply.delay)
                finally:
                    with fake._lock:
                        fake.in_flight -= 1
                data = json.dumps(reply.body or {}).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    # helpers for assertions
    def texts(self, i: int = -1) -> str:
        """All text of request `i`'s messages, joined."""
        out = []
        for m in self.requests[i]["messages"]:
            c = m.get("content")
            if isinstance(c, str):
                out.append(c)
            elif isinstance(c, list):
                out += [p["text"] for p in c if p.get("type") == "text"]
        return "\n".join(out)

    def image_parts(self, i: int = -1) -> list[dict]:
        return [p for m in self.requests[i]["messages"] if isinstance(m.get("content"), list)
                for p in m["content"] if p.get("type") == "image_url"]
