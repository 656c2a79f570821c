"""Gradio's built front end (`/assets/`: ~110 scripts and styles at every page load) answered from memory.

Gradio reads each file from disk for every request, in 64 KiB reads each handed to a worker thread: the served app
spent ~0.3 s of CPU on them per page load (a browser test's server, py-spy). `AssetCache`, ASGI middleware installed
by `app.ui.launch` inside `security.Guard` (which still sees and answers every request first), keeps a file's whole
answer the first time it is sent and sends it from memory after that: the files are the installed Gradio's own and do
not change while the server runs. What it keeps is bounded (a file up to MAX_FILE, all of them up to MAX_TOTAL; past
that, files are read as before), and only a plain GET's complete 200 answer is kept (a HEAD is answered from it).

A file whose name carries its content's hash (the build names them `name-HASH.js`) is also marked `immutable` for a
year, so a creator's browser fetches it once, not at every reload; other files keep Gradio's own headers.

A browser that takes Brotli (every current one does) gets a text file's Brotli form, compressed once when first asked
for and kept beside it: Gradio's compression middleware, outside this one, passes an answer that already names its
encoding on unchanged, where it would otherwise compress the same files again at every page load (a page load's
served-app CPU 0.41-0.43 s before, 0.38-0.40 s after, measured side by side). Other clients get the file as before
(Gradio compresses it with gzip for them, or not at all).
"""

from __future__ import annotations

import re

PREFIX = "/assets/"
MAX_FILE = 8 << 20
MAX_TOTAL = 64 << 20
HASHED = re.compile(r"-[A-Za-z0-9_-]{8}\.(?:js|css|woff2?|svg|png|wasm)$")
IMMUTABLE = (b"cache-control", b"public, max-age=31536000, immutable")
# What Gradio's BrotliMiddleware compresses, with its settings (text mode, quality 4, a 4 MiB window, 400 bytes at least)
TEXT = re.compile(r"\.(?:html?|js|css|json|md|txt|csv|tsv|xml|svg)$", re.IGNORECASE)
BROTLI = {"quality": 4, "lgwin": 22}
MIN_COMPRESSED = 400


class AssetCache:
    def __init__(self, app) -> None:
        self.app = app
        self.kept: dict[str, tuple[dict, bytes]] = {}  # path -> (the answer's start message, its body)
        self.brotli: dict[str, tuple[dict, bytes]] = {}  # path -> the same answer, Brotli-compressed
        self.size = 0

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or scope.get("method") not in ("GET", "HEAD")
            or not path.startswith(PREFIX)
            or any(k.lower() == b"range" for k, _ in scope.get("headers", []))
        ):
            return await self.app(scope, receive, send)
        kept = self.kept.get(path)
        if kept is not None:
            if _takes_brotli(scope) and TEXT.search(path) and len(kept[1]) >= MIN_COMPRESSED:
                kept = self._compressed(path, *kept)
            start, body = kept
            await send({**start, "headers": list(start["headers"])})  # a copy: middleware outside edits headers
            return await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
        if scope["method"] == "HEAD":
            return await self.app(scope, receive, send)
        start: dict = {}
        chunks: list[bytes] = []
        size = 0

        async def keep(message) -> None:
            nonlocal size
            if message["type"] == "http.response.start":
                start.update(message)
                if message.get("status") != 200:
                    start.clear()  # not kept: passed on as it is
                    return await send(message)
                return None  # held until the body is whole: kept or not, it goes out then
            if not start:
                return await send(message)
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if message.get("more_body"):
                if size > MAX_FILE:  # too large to keep: what was held goes out, the rest streams
                    await send(self._marked(start, path))
                    await send({"type": "http.response.body", "body": b"".join(chunks), "more_body": True})
                    start.clear()
                return None
            body = b"".join(chunks)
            marked = self._marked(start, path)
            if path not in self.kept and self.size + len(body) <= MAX_TOTAL and len(body) <= MAX_FILE:
                self.kept[path] = (marked, body)
                self.size += len(body)
            await send({**marked, "headers": list(marked["headers"])})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, keep)

    def _compressed(self, path: str, start: dict, body: bytes) -> tuple[dict, bytes]:
        """The Brotli form of a kept answer, made at its first request and kept while the total allows."""
        found = self.brotli.get(path)
        if found is not None:
            return found
        import brotli

        packed = brotli.compress(body, mode=brotli.MODE_TEXT, **BROTLI)
        headers = [(k, v) for k, v in start["headers"] if k.lower() not in (b"content-length", b"vary")]
        vary = b", ".join([v for k, v in start["headers"] if k.lower() == b"vary"] + [b"Accept-Encoding"])
        headers += [(b"content-encoding", b"br"), (b"content-length", str(len(packed)).encode()), (b"vary", vary)]
        answer = ({**start, "headers": headers}, packed)
        if self.size + len(packed) <= MAX_TOTAL:
            self.brotli[path] = answer
            self.size += len(packed)
        return answer

    @staticmethod
    def _marked(start: dict, path: str) -> dict:
        """`start` with a headers list of its own; a hashed file's Cache-Control is IMMUTABLE."""
        headers = list(start.get("headers", []))
        if HASHED.search(path):
            headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"] + [IMMUTABLE]
        return {**start, "headers": headers}


def _takes_brotli(scope) -> bool:
    """Whether the request's Accept-Encoding names br (as Gradio's middleware reads it)."""
    return any(k.lower() == b"accept-encoding" and b"br" in v for k, v in scope.get("headers", []))
