"""Gradio's built front end answered from memory after its first request (app/ui/asset_cache.py), through the
served app with the Guard in front: the same bytes as the installed file, a hashed name marked immutable, a HEAD and
a range request answered as Gradio answers them, and a text file's Brotli form compressed once."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest


@pytest.fixture
def served(studio):
    from app.ui import launch
    from tests.process import free_port

    demo = launch(studio, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        yield demo.local_url.rstrip("/")
    finally:
        demo.close()


def test_the_front_end_is_read_from_disk_once_and_marked_immutable(served, monkeypatch):
    from gradio.routes import BUILD_PATH_LIB
    from starlette.responses import FileResponse

    reads: list[str] = []
    call = FileResponse.__call__

    async def counted(self, scope, receive, send):
        reads.append(scope["path"])
        return await call(self, scope, receive, send)

    monkeypatch.setattr(FileResponse, "__call__", counted)
    page = httpx.get(served + "/", timeout=60).text
    scripts = re.findall(r"/assets/([\w.-]+\.js)", page)
    assert scripts, page[:2000]
    name = scripts[0]
    url = f"{served}/assets/{name}"
    on_disk = (Path(BUILD_PATH_LIB) / name).read_bytes()
    plain = {"Accept-Encoding": "identity"}
    first, second = httpx.get(url, headers=plain), httpx.get(url, headers=plain)
    assert first.status_code == second.status_code == 200
    assert first.content == second.content == on_disk
    assert reads.count(f"/assets/{name}") == 1  # the second answer came from memory
    assert second.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert second.headers["content-type"].startswith(("text/javascript", "application/javascript"))
    assert httpx.get(url).content == first.content  # compressed by Gradio outside, decoded by the client
    again = httpx.get(url, headers=plain)  # what compressing it changed outside is not kept
    assert "content-encoding" not in again.headers and again.content == first.content

    head = httpx.head(url, headers=plain)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(first.content))

    part = httpx.get(url, headers={**plain, "Range": "bytes=0-99"})  # not from memory: Gradio's own answer
    assert part.status_code == 206 and part.content == first.content[:100]
    assert reads.count(f"/assets/{name}") == 2

    missing = httpx.get(f"{served}/assets/no-such-file-00000000.js")
    assert missing.status_code == 404 and "immutable" not in missing.headers.get("cache-control", "")


def test_a_text_file_is_compressed_once_and_gradio_does_not_compress_it_again(served, monkeypatch):
    import brotli
    from gradio.brotli_middleware import BrotliResponder
    from gradio.routes import BUILD_PATH_LIB

    packed: list[int] = []  # bodies compressed by the cache
    by_gradio: list[int] = []  # bodies Gradio's own middleware compressed
    compress, process = brotli.compress, BrotliResponder._process

    def counted(body, **kwargs):
        packed.append(len(body))
        return compress(body, **kwargs)

    def gradio_counted(self, body):
        by_gradio.append(len(body))
        return process(self, body)

    monkeypatch.setattr(brotli, "compress", counted)
    monkeypatch.setattr(BrotliResponder, "_process", gradio_counted)
    page = httpx.get(served + "/", timeout=60).text
    name = next(
        n
        for n in re.findall(r"/assets/([\w.-]+\.(?:js|css))", page)
        if (Path(BUILD_PATH_LIB) / n).stat().st_size > 4096
    )
    url, on_disk = f"{served}/assets/{name}", (Path(BUILD_PATH_LIB) / name).read_bytes()
    br = {"Accept-Encoding": "gzip, deflate, br"}
    first = httpx.get(url, headers=br)  # read from disk and compressed by Gradio, as before
    assert first.headers["content-encoding"] == "br" and first.content == on_disk
    assert len(by_gradio) == 1 and not packed
    by_gradio.clear()
    answers = [httpx.get(url, headers=br) for _ in range(3)]
    assert all(a.status_code == 200 and a.content == on_disk for a in answers)  # httpx decodes Brotli
    assert {a.headers["content-encoding"] for a in answers} == {"br"}
    assert {a.headers["content-length"] for a in answers} == {str(len(compress(on_disk, quality=4, lgwin=22)))}
    assert "accept-encoding" in answers[0].headers["vary"].lower()
    assert answers[0].headers["cache-control"] == "public, max-age=31536000, immutable"
    assert packed == [len(on_disk)] and not by_gradio  # compressed once by the cache, never again by Gradio
    head = httpx.head(url, headers=br)
    assert (
        head.headers["content-encoding"] == "br"
        and head.headers["content-length"] == answers[0].headers["content-length"]
    )

    gzipped = httpx.get(url, headers={"Accept-Encoding": "gzip"})  # a client without Brotli: Gradio's gzip
    assert gzipped.headers["content-encoding"] == "gzip" and gzipped.content == on_disk
    plain = httpx.get(url, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == on_disk
    assert packed == [len(on_disk)]
