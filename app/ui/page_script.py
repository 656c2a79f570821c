"""The first script of every page the app serves: the frame governor (`frames.js`).

Gradio adds a `head=` script after its own scripts have run, too late for a script that must be in place before
them (Gradio's status tracker keeps its own copy of `requestAnimationFrame`). `PageScript`, ASGI middleware
installed by `app.ui.launch` inside `security.Guard`, puts `frames.js` right after `<head>` in each HTML page
(the app, the login page) and leaves every other response as it is. A HEAD is answered as its GET would be (the
server drops the body), so the length it tells is the page's with the script."""

from __future__ import annotations

import re
from pathlib import Path

SCRIPT = b"<script>" + (Path(__file__).parent / "frames.js").read_bytes() + b"</script>"
HEAD = re.compile(rb"<head\b[^>]*>", re.IGNORECASE)


def with_script(page: bytes) -> bytes:
    """`page` with SCRIPT right after its `<head>` tag (unchanged when it has none)."""
    found = HEAD.search(page)
    return page if found is None else page[: found.end()] + SCRIPT + page[found.end() :]


class PageScript:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            return await self.app(scope, receive, send)
        start: dict = {}
        body: list[bytes] = []

        async def send_page(message) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", []))
                html = headers.get(b"content-type", b"").split(b";")[0].strip() == b"text/html"
                if not html or b"content-encoding" in headers:
                    return await send(message)
                start.update(message)  # held until the page is whole: its length changes
                return None
            if not start:
                return await send(message)
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return None
            sent = b"".join(body)
            if not sent:  # a HEAD answered without its body: nothing to measure, its headers pass as they were
                await send(start)
                return await send(message)
            page = with_script(sent)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(page)).encode())]})
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, send_page)
