"""A local OpenAI-compatible chat server for benchmarks: every answer arrives after a fixed latency L.

`answer(body) -> dict` builds the JSON the model "says" from the request (the benchmark knows its roles);
the server wraps it in a chat.completion (streamed as server-sent events when the request asks, as CHIEF's
client does by default) and counts requests in flight, so a benchmark can report the
real concurrency it reached. (The test suite has its own, scriptable server with endpoint limits.)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LatencyServer:
    def __init__(self, answer: Callable[[dict], dict], latency: float = 0.0) -> None:
        self.answer, self.latency = answer, latency
        self.requests = 0
        self.in_flight = self.max_in_flight = 0
        self.prompt_chars = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> LatencyServer:
        bench = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with bench._lock:
                    bench.requests += 1
                    bench.prompt_chars += len(json.dumps(body.get("messages", [])))
                    bench.in_flight += 1
                    bench.max_in_flight = max(bench.max_in_flight, bench.in_flight)
                try:
                    time.sleep(bench.latency)
                    content = json.dumps(bench.answer(body))
                finally:
                    with bench._lock:
                        bench.in_flight -= 1
                model = body.get("model", "bench")
                usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
                if body.get("stream"):  # as servers stream: the content, the finish, the usage, [DONE]
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("connection", "close")
                    self.end_headers()
                    chunk = {
                        "id": "bench",
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": model,
                    }
                    events = [
                        {
                            **chunk,
                            "choices": [
                                {"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}
                            ],
                        },
                        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    ]
                    if (body.get("stream_options") or {}).get("include_usage"):
                        events.append({**chunk, "choices": [], "usage": usage})
                    self.wfile.write(
                        b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"
                    )
                    self.close_connection = True
                    return
                reply = {
                    "id": "bench",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                    ],
                    "usage": usage,
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
