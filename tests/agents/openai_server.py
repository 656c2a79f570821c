"""A real local HTTP server speaking the OpenAI chat-completions API, for tests.

Scripted: a queue of replies (or a `responder` function when the queue is empty), and a record of every
chat request received (`requests`: bodies, `headers`), so tests assert what the client actually sent.

It enforces limits the way real endpoints do, each off unless a test sets it:
- `max_output_tokens`: an answer longer than min(this, the request's max_tokens) is cut, finish_reason "length"
  (tokens counted as 4 characters);
- `max_images`: more image parts than this → HTTP 400 as vLLM words it ("At most N image(s) may be provided");
- `context_tokens`: prompt + max_tokens over this → HTTP 400 as OpenAI words it ("maximum context length");
- `refuse_formats`: response_format types refused with llama-cpp-python's HTTP 500 validation error;
- `images_refused`: image parts refused with a text-only server's message (`IMAGE_REFUSALS`);
- `reject_stream_options`: HTTP 400 naming stream_options (servers that validate every field);
- `errors_in_stream`: refusals of images and of the context size come, for a streamed request, as HTTP 200
  and an empty event stream (llama-cpp-python raises them inside its stream and only logs them);
- `list_content_refused`: any message whose `content` is a list (even of text parts only) → HTTP 500 with
  llama-cpp-python's "can only concatenate str (not "list") to str" (its chat templates add strings);
- `interrupt_requests`: one request at a time, and a running stream ends (`data: [DONE]`, no finish_reason)
  as soon as another request (any path, GET /v1/models too) is waiting, as llama-cpp-python's default does;
- `stream_as_json`: a streamed request is answered with one `application/json` chat.completion body;
- `input_audio` parts are always checked (format "wav" or "mp3", valid base64, a WAV's RIFF header or an MP3's
  frame sync): a malformed one → HTTP 400; `audio_refused`: audio parts refused with a server's message
  (`AUDIO_REFUSALS`); `max_audio_seconds` / `max_audio_bytes`: more sound in one request → HTTP 400. Sound counts
  25 prompt tokens a second (Qwen2-Audio's encoder: one token per 40 ms).
Every refusal sent is kept in `refusals` (status, message), so a test can assert that none was needed.
`stream: true` requests get SSE (`data: {chunk}` lines, a usage chunk when asked, `data: [DONE]`); a reply
can pace its tokens (`token_delay`), stop producing them (`stall_after`) or die mid-answer (`drop_after`). `slots=1` makes it answer one
request at a time, like a llama.cpp server with one slot; `ignore_disconnect` keeps "generating" an answer
whose client has gone (as llama-cpp-python does for a non-streamed request). GET /v1/models (and /props,
/api/show) answer with `models`, `props` and `ollama_show`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import json
import math
import select
import socket
import threading
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LLAMA_CPP_PYTHON_FORMAT_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be "
    "'text' or 'json_object'\", 'input': '%s', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File "
    '"/srv/llama_cpp/server/app.py", line 376, in create_chat_completion\n    POST /v1/chat/completions'
)
IMAGE_REFUSALS = {  # what text-only servers answer to an image part: (status, message)
    "llama-server": (
        500,
        "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
    ),
    "llama-cpp-python": (500, 'can only concatenate str (not "list") to str'),
    "vllm": (400, "At most 0 image(s) may be provided in one prompt."),
    "lm-studio": (400, "Model does not support images. Please use a model that does."),
}

AUDIO_REFUSALS = {  # what servers answer to an input_audio part when the model takes no sound: (status, message)
    "openai": (400, "Invalid 'messages[1]'. Content blocks are expected to be either text or image_url type."),
    "vllm": (400, "At most 0 audio(s) may be provided in one prompt."),
    "llama-server": (
        500,
        "audio input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
    ),
}
AUDIO_TOKENS_PER_SECOND = 25


def audio_facts(part: dict) -> tuple[float, int]:
    """(seconds, bytes) of an `input_audio` part; ValueError with the reason when it is malformed."""
    audio = part.get("input_audio")
    if not isinstance(audio, dict) or set(audio) != {"data", "format"}:
        raise ValueError("input_audio must be an object with 'data' and 'format'")
    if audio["format"] not in ("wav", "mp3"):
        raise ValueError(f"input_audio.format must be 'wav' or 'mp3', not {audio['format']!r}")
    try:
        raw = base64.b64decode(str(audio["data"]), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("input_audio.data is not valid base64") from None
    if audio["format"] == "mp3":
        if not (raw[:3] == b"ID3" or (len(raw) > 1 and raw[0] == 0xFF and raw[1] & 0xE0 == 0xE0)):
            raise ValueError("input_audio.data is not an MP3 stream")
        return len(raw) / 4000, len(raw)  # counted at 32 kbit/s
    try:
        with wave.open(io.BytesIO(raw)) as w:
            return w.getnframes() / w.getframerate(), len(raw)
    except (wave.Error, EOFError, ZeroDivisionError) as e:
        raise ValueError(f"input_audio.data is not a WAV file ({e})") from None


def decode_wav(part: dict):
    """An `input_audio` WAV part as (samples as float32 in [-1, 1], sample rate, channels)."""
    import numpy as np

    with wave.open(io.BytesIO(base64.b64decode(part["input_audio"]["data"]))) as w:
        assert w.getsampwidth() == 2
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
        return pcm, w.getframerate(), w.getnchannels()


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def completion(
    content: str | None = None,
    *,
    finish_reason: str = "stop",
    refusal: str | None = None,
    model: str = "fake-model",
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
) -> dict[str, Any]:
    """A chat.completion body shaped like OpenAI's."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error(
    status: int,
    message: str,
    type_: str = "invalid_request_error",
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    return Reply(
        status=status,
        body={"error": {"message": message, "type": type_, "param": param, "code": None}},
        headers=dict(headers or {}),
    )


def rate_limited(retry_after: str | None = None, retry_after_ms: str | None = None) -> Reply:
    """HTTP 429 with Retry-After (seconds) and/or retry-after-ms headers."""
    headers = {k: v for k, v in (("retry-after", retry_after), ("retry-after-ms", retry_after_ms)) if v is not None}
    return error(429, "Rate limit reached for requests", "rate_limit_error", headers=headers)


@dataclass
class Reply:
    body: dict[str, Any] | None = None
    status: int = 200
    delay: float = 0.0  # seconds before the answer starts ("prompt processing")
    headers: dict[str, str] = field(default_factory=dict)
    token_delay: float = 0.0  # seconds between streamed tokens (and per token of a non-streamed answer)
    stall_after: int | None = None  # stop producing tokens after this many, keeping the connection open
    drop_after: int | None = None  # close the connection after this many tokens, as a crashing server does


def ok(content: str | dict | None = None, **kw: Any) -> Reply:
    """A 200 reply; a dict `content` is sent as its JSON text."""
    pacing = {k: kw.pop(k) for k in ("delay", "token_delay", "stall_after", "drop_after") if k in kw}
    if isinstance(content, dict):
        content = json.dumps(content)
    return Reply(body=completion(content, **kw), **pacing)


def _client_left(conn: socket.socket) -> bool:
    """Whether the peer closed `conn` (readable, and a peek reads nothing or the connection was reset)."""
    try:
        if not select.select([conn], [], [], 0)[0]:
            return False
        return conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class FakeOpenAI:
    """`with FakeOpenAI() as server:` ... `LLMConfig(base_url=server.base_url)`; `server.requests` holds bodies."""

    def __init__(self, responder: Callable[[dict], Reply] | None = None, **limits: Any):
        self.queue: list[Reply] = []
        self.responder = responder
        self.requests: list[dict[str, Any]] = []  # chat completion bodies, in arrival order
        self.headers: list[dict[str, str]] = []  # their headers
        self.other: list[tuple[str, str]] = []  # (method, path) of every other request (/v1/models, /props, ...)
        self.in_flight = 0
        self.max_in_flight = 0
        self.disconnects = 0  # streamed answers whose client left before the end
        self.generated_for_nobody = 0  # tokens "generated" after the client had gone
        # limits (see the module docstring)
        self.max_output_tokens: int | None = None
        self.max_images: int | None = None
        self.context_tokens: int | None = None
        self.refuse_formats: set[str] = set()
        self.images_refused: str | None = None  # a key of IMAGE_REFUSALS
        self.reject_stream_options = False
        self.errors_in_stream = False
        self.list_content_refused = False
        self.interrupt_requests = False
        self.stream_as_json = False
        self.chunk_chars = 4  # characters per streamed chunk: a token's worth, as servers send them
        self.audio_refused: str | None = None  # a key of AUDIO_REFUSALS
        self.max_audio_seconds: float | None = None
        self.max_audio_bytes: int | None = None
        self.refusals: list[tuple[int, str]] = []  # every error reply sent: (status, message)
        self.interrupted = 0  # streams cut because another request arrived (interrupt_requests)
        self.waiting = 0  # requests arrived and waiting for the model (interrupt_requests)
        self.slots: int | None = None
        self.ignore_disconnect = False
        self.models: dict[str, dict] = {"fake-model": {}}  # id -> extra fields of its /v1/models entry
        self.props: dict | None = None  # GET /props (llama.cpp); None: 404
        self.ollama_show: dict | None = None  # POST /api/show (Ollama); None: 404
        for name, value in limits.items():
            if not hasattr(self, name):
                raise TypeError(f"unknown limit {name!r}")
            setattr(self, name, value)
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._slot_lock: threading.Semaphore | None = None
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> FakeOpenAI:
        self.queue.extend(replies)
        return self

    def wait_for_requests(self, n: int, timeout: float = 30.0) -> bool:
        """Block until `n` chat requests have arrived (the client may give up before the server reads one)."""
        return self.wait_for(lambda: len(self.requests) >= n, timeout)

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
        """Block until `predicate()` holds; checked whenever a request arrives or a client disconnects."""
        with self._arrived:
            return self._arrived.wait_for(predicate, timeout)

    @contextlib.contextmanager
    def _model(self):
        """Hold the one model (interrupt_requests): a request waiting for it cuts the running stream."""
        assert self._slot_lock is not None
        with self._lock:
            self.waiting += 1
        self._slot_lock.acquire()
        with self._lock:
            self.waiting -= 1
        try:
            yield
        finally:
            self._slot_lock.release()

    def _next(self, body: dict) -> Reply:
        with self._lock:
            if self.queue:
                return self.queue.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return error(500, "test server: no scripted reply left", "server_error")

    def _enforce(self, body: dict) -> Reply | None:
        """The refusal a real endpoint with these limits would send, before generating anything."""
        fmt = (body.get("response_format") or {}).get("type")
        if fmt in self.refuse_formats:  # request validation: always an HTTP error
            return error(500, LLAMA_CPP_PYTHON_FORMAT_REFUSAL % fmt, "internal_server_error")
        if self.reject_stream_options and "stream_options" in body:
            return error(400, "Unrecognized request argument supplied: stream_options", param="stream_options")
        refusal = self._content_refusal(body)
        if refusal is None and self.list_content_refused:
            if any(isinstance(m.get("content"), list) for m in body.get("messages", [])):
                refusal = error(500, 'can only concatenate str (not "list") to str', "internal_server_error")
        if refusal is not None and body.get("stream") and self.errors_in_stream:
            return Reply(status=200, body=None)  # 200, then a stream that ends without an event
        return refusal

    def _content_refusal(self, body: dict) -> Reply | None:
        """Refusals that depend on what the messages carry (images, sound, length)."""
        sounds = self.image_parts_of(body, "input_audio")
        seconds, size = 0.0, 0
        for part in sounds:
            try:
                s, n = audio_facts(part)
            except ValueError as e:
                return error(400, f"Invalid audio content: {e}", param="messages")
            seconds, size = seconds + s, size + n
        if sounds and self.audio_refused:
            status, message = AUDIO_REFUSALS[self.audio_refused]
            return error(status, message, "server_error" if status >= 500 else "invalid_request_error")
        if sounds and self.max_audio_seconds is not None and seconds > self.max_audio_seconds + 1e-6:
            return error(400, f"The audio in this request is {seconds:.2f} s; at most {self.max_audio_seconds} s.")
        if sounds and self.max_audio_bytes is not None and size > self.max_audio_bytes:
            return error(400, f"The audio in this request is {size} bytes; at most {self.max_audio_bytes} bytes.")
        images = len(self.image_parts_of(body))
        if images and self.images_refused:
            status, message = IMAGE_REFUSALS[self.images_refused]
            return error(status, message, "server_error" if status >= 500 else "invalid_request_error")
        if self.max_images is not None and images > self.max_images:
            return Reply(
                status=400,
                body={
                    "object": "error",
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                    "message": f"At most {self.max_images} image(s) may be provided in one request. "
                    "You can set `--limit-mm-per-prompt` to increase this limit if the model supports it.",
                },
            )
        if self.context_tokens is not None:
            prompt = self.prompt_tokens(body)
            asked = body.get("max_tokens") or body.get("max_completion_tokens") or 0
            if prompt + asked > self.context_tokens:
                return error(
                    400,
                    f"This model's maximum context length is {self.context_tokens} tokens. However, you requested "
                    f"{prompt + asked} tokens ({prompt} in the messages, {asked} in the completion). Please reduce "
                    "the length of the messages or completion.",
                    param="messages",
                )
        return None

    def _cap(self, body: dict, reply: Reply) -> Reply:
        """Cut an answer longer than the output limit, as a server does (finish_reason "length")."""
        caps = [c for c in (body.get("max_tokens"), body.get("max_completion_tokens"), self.max_output_tokens) if c]
        choice = ((reply.body or {}).get("choices") or [{}])[0]
        content = (choice.get("message") or {}).get("content")
        if reply.status == 200 and caps and choice.get("finish_reason") == "length" and reply.body.get("usage"):
            # a scripted cut: a server says "length" when it reached a cap, and counts that many tokens
            reply.body["usage"]["completion_tokens"] = min(caps)
        if reply.status != 200 or not caps or not content or tokens(content) <= min(caps):
            return reply
        cut = json.loads(json.dumps(reply.body))
        cut["choices"][0]["message"]["content"] = content[: 4 * min(caps)]
        cut["choices"][0]["finish_reason"] = "length"
        cut["usage"]["completion_tokens"] = min(caps)
        return Reply(
            cut, reply.status, reply.delay, reply.headers, reply.token_delay, reply.stall_after, reply.drop_after
        )

    def __enter__(self) -> FakeOpenAI:
        fake = self
        if self.images_refused == "llama-cpp-python":
            self.list_content_refused = True  # it refuses content parts of any kind, text ones too
        if self.interrupt_requests:
            self.slots = 1  # one model, one request at a time (llama-cpp-python's outer and inner locks)
        if self.slots:
            self._slot_lock = threading.Semaphore(self.slots)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                with fake._lock:
                    fake.other.append(("GET", self.path))
                if fake.interrupt_requests:  # llama-cpp-python takes the model's lock for /v1/models too
                    with fake._model():
                        return self._get()
                self._get()

            def _get(self) -> None:
                if self.path.endswith("/models"):
                    data = [{"id": k, "object": "model", "owned_by": "test", **v} for k, v in fake.models.items()]
                    self._json(200, {"object": "list", "data": data})
                elif self.path == "/props" and fake.props is not None:
                    self._json(200, fake.props)
                else:
                    self._json(404, {"error": {"message": f"unknown path {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    with fake._lock:
                        fake.other.append(("POST", self.path))
                    if self.path == "/api/show" and fake.ollama_show is not None:
                        return self._json(200, fake.ollama_show)
                    return self._json(404, {"error": {"message": f"unknown path {self.path}"}})
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    fake._arrived.notify_all()
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                slot = fake._slot_lock
                if slot is not None:
                    with fake._lock:
                        fake.waiting += 1
                    slot.acquire()
                    with fake._lock:
                        fake.waiting -= 1
                try:
                    reply = fake._enforce(body) or fake._cap(body, fake._next(body))
                    if reply.status != 200:
                        with fake._lock:
                            fake.refusals.append((reply.status, json.dumps(reply.body)[:300]))
                    if reply.delay:
                        fake._stop.wait(reply.delay)
                    if reply.status == 200 and body.get("stream") and reply.body and fake.stream_as_json:
                        self._json(200, reply.body, reply.headers)
                    elif reply.status == 200 and body.get("stream") and reply.body:
                        self._stream(body, reply)
                    elif reply.status == 200 and body.get("stream"):
                        self._stream_nothing()
                    else:
                        if reply.status == 200 and reply.token_delay:
                            fake._stop.wait(reply.token_delay * self._content_tokens(reply))
                        self._json(reply.status, reply.body or {}, reply.headers)
                finally:
                    if slot is not None:
                        slot.release()
                    with fake._lock:
                        fake.in_flight -= 1

            @staticmethod
            def _content_tokens(reply: Reply) -> int:
                choice = (reply.body or {}).get("choices", [{}])[0]
                return tokens((choice.get("message") or {}).get("content") or "")

            def _json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

            def _stream_nothing(self) -> None:
                self.close_connection = True
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("connection", "close")
                    self.end_headers()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _stream(self, body: dict, reply: Reply) -> None:
                """The answer as server-sent events, a token (`chunk_chars`: 4 characters) per chunk, as servers stream
                it."""
                choice = reply.body["choices"][0]
                message = choice.get("message") or {}
                content = message.get("content") or ""
                base = {
                    "id": reply.body.get("id"),
                    "object": "chat.completion.chunk",
                    "created": reply.body.get("created"),
                    "model": reply.body.get("model"),
                }

                def chunk(delta: dict, finish: str | None = None) -> dict:
                    return {
                        **base,
                        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
                    }

                events = [chunk({"role": "assistant", "content": ""})]
                step = fake.chunk_chars
                events += [chunk({"content": content[i : i + step]}) for i in range(0, len(content), step)]
                if message.get("refusal"):
                    events.append(chunk({"refusal": message["refusal"]}))
                events.append(chunk({}, choice.get("finish_reason") or "stop"))
                if (body.get("stream_options") or {}).get("include_usage"):
                    events.append({**base, "choices": [], "usage": reply.body.get("usage")})
                self.close_connection = True
                gone = False
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("cache-control", "no-cache")
                    self.send_header("connection", "close")
                    self.end_headers()
                except (BrokenPipeError, ConnectionResetError):
                    gone = True
                for n, event in enumerate(events):
                    if reply.stall_after is not None and n > reply.stall_after:
                        # stalled: hold the connection until the server stops, noticing a client that leaves (as a
                        # real server's disconnect check does; a write would show it only after the stall)
                        while not fake._stop.wait(0.05):
                            if _client_left(self.connection):
                                with fake._lock:
                                    fake.disconnects += 1
                                    fake._arrived.notify_all()
                                return
                        return
                    if reply.drop_after is not None and n > reply.drop_after:
                        return  # crashed: the connection closes without a finish_reason or [DONE]
                    if n and reply.token_delay:
                        fake._stop.wait(reply.token_delay)
                    if fake.interrupt_requests and n and not gone and fake.waiting:
                        with fake._lock:
                            fake.interrupted += 1
                        try:  # llama-cpp-python: "[DONE]" and the stream ends, with no finish_reason
                            self.wfile.write(b"data: [DONE]\n\n")
                            self.wfile.flush()
                        except (BrokenPipeError, ConnectionResetError):
                            pass
                        return
                    if gone:
                        with fake._lock:
                            fake.generated_for_nobody += 1
                        continue
                    try:
                        self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        with fake._lock:
                            fake.disconnects += 1
                            fake._arrived.notify_all()
                        if not fake.ignore_disconnect:
                            return  # a server that notices stops generating
                        gone = True
                if not gone:
                    try:
                        self.wfile.write(b"data: [DONE]\n\n")
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._stop.set()
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

    @staticmethod
    def image_parts_of(body: dict, kind: str = "image_url") -> list[dict]:
        return [
            p
            for m in body.get("messages", [])
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if p.get("type") == kind
        ]

    def image_parts(self, i: int = -1) -> list[dict]:
        return self.image_parts_of(self.requests[i])

    def video_parts(self, i: int = -1) -> list[dict]:
        return self.image_parts_of(self.requests[i], "video_url")

    def audio_parts(self, i: int = -1) -> list[dict]:
        return self.image_parts_of(self.requests[i], "input_audio")

    def max_tokens(self, i: int = -1) -> int | None:
        body = self.requests[i]
        return body.get("max_tokens", body.get("max_completion_tokens"))

    @staticmethod
    def prompt_tokens(body: dict) -> int:
        """≈ 4 characters a token, 85 per image, 25 a second of sound, 4 per message (what a tokenizer would say,
        roughly)."""
        text = 0
        for m in body.get("messages", []):
            c = m.get("content")
            text += (
                len(c)
                if isinstance(c, str)
                else sum(len(p.get("text", "")) for p in c or [] if p.get("type") == "text")
            )
        sound = sum(audio_facts(p)[0] for p in FakeOpenAI.image_parts_of(body, "input_audio"))
        return (
            math.ceil(text / 4)
            + 4 * len(body.get("messages", []))
            + 85 * len(FakeOpenAI.image_parts_of(body))
            + math.ceil(AUDIO_TOKENS_PER_SECOND * sound)
        )
