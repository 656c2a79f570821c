"""The web app's door: which requests reach Gradio at all, and what every page may load.

ASGI middleware around the Gradio app (installed by `app.ui.launch`), deciding before any route runs:

- **Host.** The `Host` header must be an IP address, `localhost`, or a name in `CHIEF_ALLOWED_HOSTS`. A
  DNS-rebinding page (evil.example resolving to 127.0.0.1) sends its own name and is refused.
- **Origin.** A request from another origin (another site, or another port on localhost: "same-site" is
  not the same origin) is refused, whatever its route: queue/join, run, upload, file, info. Browsers say
  where a request comes from (`Origin`, `Sec-Fetch-Site`); only following a link to the app (a top-level
  navigation) is let through. Clients that are not browsers send neither header and are not refused here:
  they are not a page the user happened to open.
- **Size, per route.** The upload route takes `max_body` (app.ui.upload_cap: the largest file any upload button
  takes), the sign-in form `LOGIN_BODY`, every other route (events: queue/join, run, call, component_server)
  `EVENT_BODY`. A request whose Content-Length says more is answered 413 before its body is read; a body without one
  (chunked) is cut off with 413 once it passes its route's cap.
- **Signing in** (with `--auth` or `--users`: `sessions`). The Guard answers the sign-in form itself (`/login`): a
  password is checked behind `SignInLimiter` (failures per account and per network, app/server/sessions.py) and a
  right one opens a session kept in the database (`Sessions`), named by the browser's `chief_signin` cookie
  (HttpOnly, SameSite=Lax). Gradio is told the account of each request (its own login cookie is set by the Guard
  from the session, never taken from the browser). Without a live session only the sign-in page and its form are
  served: every other route (events, files, Gradio's heartbeat and event streams) is 401. A refused sign-in says why
  and when to retry, on the page and in the 429's one line. Sign-out is a POST from the app's own page (`/logout`):
  it ends every session of the account; a GET, or a POST from elsewhere, is refused and changes nothing.
- **What pages may load.** A Content-Security-Policy keeps every page to its own origin: no remote image
  (a note like `![x](http://host/p.png)` fetches nothing), no form posting elsewhere, no framing.

- **Browser sessions.** A browser without a valid `chief_session` cookie gets one (random, HttpOnly,
  SameSite=Strict): the jobs it starts are its own (`session_of`, app/server/jobs.py). A reload keeps it; another
  browser has its own.
- **File URLs per account.** With `--users` (`files`: `FileAccess`), a file route (`/gradio_api/file=…`, `/file=…`,
  `/file/…`: `FILE_ROUTE`) serves a file by what the account may read: a media file that a project it may open names
  (or that it made itself, such as a voice sample), an export of such a project, or a copy Gradio made for it (a file
  value of one of its answers, or its upload). What any text said (an error that echoes its input) grants nothing.
  Anything else is 404 "not found", the same as a file that does not exist.

`same_origin(request)` tells a handler whether an event came from the app's own page (see Settings).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterable
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from urllib.parse import urlsplit

from app.errors import StudioError
from app.server.sessions import (
    ACCOUNT_FAILURES,
    CHECKS_AT_ONCE,
    COOKIE,
    WINDOW,
    Changes,
    Refused,
    Sessions,
    SignInLimiter,
    Turn,
    retry_line,
    safe_next,
    sign_in_page,
)
from storage.owners import Actor, acting

LOGIN_FAILURES = ACCOUNT_FAILURES  # wrong passwords for one account before even the right one waits
LOGIN_WINDOW = WINDOW
LOGIN_PATHS = ("/login", "/login/")
LOGOUT_PATHS = ("/logout", "/logout/")
SIGN_IN_PAGES = ("/", "/login", "/login/")  # where someone not signed in is shown the sign-in form
# what else is served to someone not signed in: the icon, and the route Gradio's own launch calls once to start
PUBLIC = ("/favicon.ico", "/robots.txt", "/gradio_api/startup-events")
BODY_SLACK = 1 << 20  # a multipart body's headers and boundaries around the largest file
# An event's body (queue/join, run, call, component_server): its inputs as JSON, files having gone through the upload
# route. The largest text an input takes is a comments paste (agents.comments.MAX_PASTED_CHARS, 1,000,000
# characters), at most 6 bytes a character JSON-escaped; a 400 MB event body used to take the server to 1.95 GB.
EVENT_BODY = 8 << 20
LOGIN_BODY = 16 << 10  # the sign-in form: a name and a password of at most 1,024 characters
UPLOAD_ROUTE = re.compile(r"^(?:/gradio_api)?/upload/?$")
SESSION_COOKIE = "chief_session"  # which browser a request comes from: its jobs are its own (app/server/jobs.py)
_SESSION = re.compile(r"^[A-Za-z0-9_-]{32}$")

CSP = "; ".join(
    [
        "default-src 'self'",
        "img-src 'self' data: blob:",
        "media-src 'self' data: blob:",
        "font-src 'self' data:",
        "style-src 'self' 'unsafe-inline'",
        "script-src 'self' 'unsafe-inline' 'unsafe-eval'",  # Gradio's page boots from inline scripts
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "frame-src 'self'",
        "frame-ancestors 'none'",
        "form-action 'self'",
        "base-uri 'self'",
        "object-src 'none'",
    ]
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]


def allowed_hosts(setting: str) -> frozenset[str]:
    """The extra host names of CHIEF_ALLOWED_HOSTS ("a.lan, b.example"), lower-case."""
    return frozenset(n.strip().lower().rstrip(".") for n in setting.split(",") if n.strip())


def host_name(host: str) -> str:
    """The name in a Host header, without the port ("[::1]:7860" -> "::1")."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def host_ok(host: str, names: frozenset[str]) -> bool:
    name = host_name(host).rstrip(".")
    if not name:
        return False
    if name == "localhost" or name in names:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def cross_origin(method: str, headers) -> str | None:
    """Why a request is refused as coming from another origin, or None. `headers` is lower-cased."""
    host = headers.get("host", "")
    origin = headers.get("origin")
    if origin is not None:
        if origin == "null" or urlsplit(origin).netloc.lower() != host.lower():
            return f"requests from {origin} are refused: only the app's own page may call it"
        return None
    site = headers.get("sec-fetch-site")
    if site in (None, "same-origin", "none"):
        return None
    if (
        method in ("GET", "HEAD")
        and headers.get("sec-fetch-mode") == "navigate"
        and headers.get("sec-fetch-dest") == "document"
    ):
        return None  # a link to the app, followed from elsewhere: it opens the app and does nothing else
    return "requests from other sites are refused: only the app's own page may call it"


def same_origin(request) -> bool:
    """True when a Gradio event says it came from the app's own page (its Origin, or the browser's
    Sec-Fetch-Site, says so); False otherwise. Browsers set these headers truthfully, so a page on another
    origin gets False; a program that reaches the port can set both Origin and Host and get True."""
    if request is None:
        return False
    headers = {k.lower(): v for k, v in request.headers.items()}
    origin = headers.get("origin")
    if origin is not None:
        return origin != "null" and urlsplit(origin).netloc.lower() == headers.get("host", "").lower()
    return headers.get("sec-fetch-site") == "same-origin"


def session_of(headers) -> str:
    """The browser session named by a request's `chief_session` cookie ("" when it has none or a malformed one).
    `headers` is any mapping with a lower-case "cookie" entry."""
    try:
        morsel = SimpleCookie(headers.get("cookie") or "").get(SESSION_COOKIE)
    except CookieError:
        return ""
    return morsel.value if morsel is not None and _SESSION.match(morsel.value) else ""


def _session_cookie() -> tuple[bytes, bytes]:
    value = secrets.token_urlsafe(24)  # 32 characters
    return b"set-cookie", f"{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict".encode()


IDLE_MINUTES = 60  # `chief serve --idle-minutes`: a signed-in session with no request for this long is ended
NOT_ACTIVITY = re.compile(r"^(/gradio_api)?/heartbeat/")  # the page's own keep-alive is not someone working
# Every route that serves a file by its path: Gradio's /file=PATH (under /gradio_api too) and /file/PATH.
FILE_ROUTE = re.compile(r"^(?:/gradio_api)?/file(?:=|/)(?P<path>.+)$")
NOT_FOUND = "not found"
SIGN_IN_FIRST = "sign in first: open the app's address to get the sign-in form"
SCANNED_TYPES = ("application/json", "text/event-stream")
SCAN_CAP = 64 << 20  # an answer longer than this is not read for file values (nothing the app sends is near it)
_SHA_NAME = re.compile(r"^[0-9a-f]{64}$")


class FileAccess:
    """Which files an account may fetch by URL (see the module doc): decided by what it may read, never by what any
    answer's text said. `repo` is the storage.repository.Repository, `actor_of(name)` the account's Actor (a
    StudioError, or any ValueError, for one that is gone), `changes` says when the database changed (what was
    read from it is then read again)."""

    def __init__(
        self,
        repo,
        actor_of: Callable[[str], Actor],
        changes: Changes,
        media_root: str | Path,
        exports_root: str | Path,
        copies: Iterable[str | Path],
        cap: int = 200_000,
    ) -> None:
        self.repo, self.actor_of, self.changes, self.cap = repo, actor_of, changes, cap
        self.media_root = os.path.realpath(media_root)
        self.exports_root = os.path.realpath(exports_root)
        self.copies = tuple(os.path.realpath(c) for c in copies)
        self._read: dict[str, set[str]] = {}  # account -> media it may read (sha256), while `_version` holds
        self._projects: dict[str, dict[str, bool]] = {}  # account -> project id -> may open it
        self._version: int | None = None
        self._made: dict[str, dict[str, None]] = {}  # account -> media it stored itself (a voice sample)
        self._sent: dict[str, dict[str, None]] = {}  # account -> copies Gradio made for it (file values, uploads)
        self._lock = threading.Lock()

    def allowed(self, account: str, path: str) -> bool:
        real = os.path.realpath(path)  # the file Gradio would open: the route's path as it is, relative to the cwd
        parent, name = os.path.split(real)
        if os.path.dirname(parent) == self.media_root:
            sha = name.split(".", 1)[0]
            return bool(_SHA_NAME.match(sha)) and self._media(account, sha)
        if real.startswith(self.exports_root + os.sep):
            pid = real[len(self.exports_root) + 1 :].split(os.sep, 1)[0]
            return self._project(account, pid)
        with self._lock:
            return real in self._sent.get(account, {})

    def made(self, sha: str) -> None:
        """The media store stored `sha` for whoever acts now (storage.media.MediaStore.on_store)."""
        from storage.owners import current

        actor = current()
        if actor is not None:
            self._add(self._made, actor.name, [sha])

    def sent(self, account: str, paths: Iterable[str]) -> None:
        """Gradio's copies (or uploads) that an answer to `account` handed it as file values."""
        found = [os.path.realpath(p) for p in paths]
        self._add(self._sent, account, [p for p in found if p.startswith(tuple(c + os.sep for c in self.copies))])

    def forget(self, account: str | None) -> None:
        """Read again what `account` (None: every account) may fetch: a project handed over or a share withdrawn."""
        with self._lock:
            for known in (self._read, self._projects):
                if account is None:
                    known.clear()
                else:
                    known.pop(account, None)

    def _fresh(self) -> None:
        version = self.changes.version()
        with self._lock:
            if version != self._version:
                self._version = version
                self._read.clear()
                self._projects.clear()

    def _media(self, account: str, sha: str) -> bool:
        with self._lock:
            if sha in self._made.get(account, {}):
                return True
        self._fresh()
        with self._lock:
            known = self._read.get(account)
        if known is None:
            actor = self._actor(account)
            if actor is None:
                return False
            with acting(actor), self.repo.read() as u:
                known = u.readable_media()
            with self._lock:
                self._read[account] = known
        return sha in known

    def _project(self, account: str, pid: str) -> bool:
        from storage.repository import NotFound

        self._fresh()
        with self._lock:
            known = self._projects.get(account, {}).get(pid)
        if known is None:
            actor = self._actor(account)
            if actor is None:
                return False
            try:
                with acting(actor), self.repo.read() as u:
                    u.project(pid)
                known = True
            except NotFound:
                known = False
            with self._lock:
                self._projects.setdefault(account, {})[pid] = known
        return known

    def _actor(self, account: str) -> Actor | None:
        try:
            return self.actor_of(account)
        except (StudioError, ValueError):  # the account is gone
            return None

    def _add(self, table: dict[str, dict[str, None]], account: str, items: list[str]) -> None:
        if not items:
            return
        with self._lock:
            kept = table.setdefault(account, {})
            for item in items:
                kept.pop(item, None)
                kept[item] = None
            while len(kept) > self.cap:
                del kept[next(iter(kept))]


def file_values(data) -> list[str]:
    """The paths of the file values (Gradio's FileData: `{"path": …, "meta": {"_type": "gradio.FileData"}}`) in a
    parsed answer, however deep. Strings are never read as paths: an error that echoes its input names nothing."""
    found, stack = [], [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            meta = item.get("meta")
            if isinstance(meta, dict) and meta.get("_type") == "gradio.FileData" and isinstance(item.get("path"), str):
                found.append(item["path"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


class _Answer:
    """Reads an answer to an account as it is sent, for the file values it hands over (`FileAccess.sent`): an event
    stream message by message, a JSON body whole. An upload's answer (a list of the paths stored) hands over each."""

    def __init__(self, files: FileAccess, account: str, upload: bool) -> None:
        self.files, self.account, self.upload = files, account, upload
        self.kind, self.buffer, self.over = "", b"", False

    def start(self, headers) -> None:
        kind = dict(headers).get(b"content-type", b"").decode("latin-1")
        self.kind = kind.split(";")[0].strip()

    def body(self, chunk: bytes, more: bool) -> None:
        if self.kind not in SCANNED_TYPES or self.over:
            return
        self.buffer += chunk
        if len(self.buffer) > SCAN_CAP:
            self.over, self.buffer = True, b""
            return
        if self.kind == "text/event-stream":
            *lines, self.buffer = self.buffer.split(b"\n")
            for line in lines:
                if line.startswith(b"data:"):
                    self._parsed(line[5:])
        elif not more:
            self._parsed(self.buffer)
            self.buffer = b""

    def _parsed(self, text: bytes) -> None:
        try:
            data = json.loads(text)
        except ValueError:
            return
        paths = file_values(data)
        if self.upload and isinstance(data, list):
            paths += [p for p in data if isinstance(p, str)]
        self.files.sent(self.account, paths)


class Guard:
    """The ASGI middleware: Host and Origin checks, body sizes, signing in and out, per-account file URLs, security
    headers (see the module doc)."""

    def __init__(
        self,
        app,
        hosts: frozenset[str] = frozenset(),
        max_body: int | None = None,
        sessions: Sessions | None = None,
        limiter: SignInLimiter | None = None,
        files: FileAccess | None = None,
    ) -> None:
        self.app, self.hosts, self.max_body = app, hosts, max_body
        self.sessions, self.files = sessions, files
        self.limiter = limiter or SignInLimiter()
        self._turns: asyncio.Condition | None = None  # made in the server's event loop, at the first sign-in
        self._checks = None  # anyio.CapacityLimiter(CHECKS_AT_ONCE), likewise

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        method = scope.get("method", "GET")
        path = scope.get("path", "")
        if not host_ok(headers.get("host", ""), self.hosts):
            return await _refuse(
                scope,
                receive,
                send,
                403,
                "unknown host: open the app by its address, or add the name to CHIEF_ALLOWED_HOSTS",
            )
        why = cross_origin(method, headers)
        if why:
            return await _refuse(scope, receive, send, 403, why)
        cut: list[bool] = []
        if scope["type"] == "http":
            cap = self._cap(path)
            declared = headers.get("content-length", "")
            if declared.strip().isdigit() and int(declared) > cap:
                return await _refuse(scope, receive, send, 413, self._too_big(path))
            receive, send, cut = self._bounded(scope, receive, send, cap, path)
        new_session = [_session_cookie()] if scope["type"] == "http" and not session_of(headers) else []
        account = None
        if self.sessions is not None:
            token = _cookie(headers, COOKIE)
            account, sid = (None, "")
            if token:
                account, sid = await asyncio.to_thread(self.sessions.account, token, not NOT_ACTIVITY.match(path))
            gradio = scope.get("app")
            tokens = getattr(gradio, "tokens", None)
            if sid and account is None and isinstance(tokens, dict):
                tokens.pop(sid, None)  # ended: Gradio forgets it too
            if method == "POST" and path in LOGIN_PATHS:
                return await self._sign_in(scope, receive, send, headers)
            if path in LOGOUT_PATHS:
                return await self._sign_out(scope, receive, send, headers, account, tokens)
            forget = [_clear_cookie()] if token and account is None else []
            if account is None:
                if method in ("GET", "HEAD") and path in SIGN_IN_PAGES:
                    nxt = path + ("?" + scope["query_string"].decode("latin-1") if scope.get("query_string") else "")
                    return await _page(send, 200, sign_in_page("", "/" if path != "/" else nxt), forget)
                if token and _document(method, headers):
                    return await _redirect(send, "/", forget)  # signed out meanwhile: to the sign-in form
                if path not in PUBLIC:
                    return await _refuse(scope, receive, send, 401, SIGN_IN_FIRST, forget)
            else:
                if method in ("GET", "HEAD") and path in LOGIN_PATHS:
                    return await _redirect(send, "/")
                if isinstance(tokens, dict):
                    tokens[sid] = account
                scope = {
                    **scope,
                    "headers": _as_gradio(scope.get("headers", []), gradio, sid),
                    "chief.account": account,
                }
        if self.files is not None and scope["type"] == "http":
            wanted = FILE_ROUTE.match(path)
            if wanted and (
                account is None or not await asyncio.to_thread(self.files.allowed, account, wanted.group("path"))
            ):  # off the event loop: what a teacher may read is read from every project
                return await _refuse(scope, receive, send, 404, NOT_FOUND)
        answer = (
            _Answer(self.files, account, bool(UPLOAD_ROUTE.match(path)))
            if self.files is not None and account is not None and scope["type"] == "http"
            else None
        )

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                if answer is not None:
                    answer.start(message.get("headers", []))
                message = {**message, "headers": [*message.get("headers", []), *HEADERS, *new_session]}
            elif answer is not None and message["type"] == "http.response.body":
                answer.body(message.get("body", b""), bool(message.get("more_body")))
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            if not cut:  # a body cut off past its cap: the app's complaint that the client left is expected
                raise

    # ------------------------------------------------------------------ signing in and out
    async def _sign_in(self, scope, receive, send, headers) -> None:
        """The sign-in form's POST: a session and its cookie for a right name and password; a refusal in one line (and,
        to a browser, the form again with that line) for anything else. Nothing is written for a refusal."""
        import anyio

        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            body += message.get("body", b"")
            if len(body) > LOGIN_BODY:
                return await _refuse(scope, receive, send, 413, self._too_big(scope.get("path", "")))
            if not message.get("more_body"):
                break
        form = await _form(scope, body)
        browser = headers.get("sec-fetch-mode") == "navigate" or headers.get("accept", "").startswith("text/html")
        nxt = safe_next(form.get("next", "/"))
        name, password = form.get("username", "").strip(), form.get("password", "")

        async def refuse(status: int, line: str, extra: list | None = None) -> None:
            if browser:
                return await _page(send, status, sign_in_page(line, nxt), extra)
            return await _refuse(scope, receive, send, status, line, extra)

        if not name or not password:
            return await refuse(400, "enter your name and your password")
        client = (scope.get("client") or ("?", 0))[0]
        turn = await self._turn(name, client)
        if isinstance(turn, Refused):
            return await refuse(429, retry_line(turn), [(b"retry-after", str(int(turn.wait) + 1).encode())])
        if self._checks is None:
            self._checks = anyio.CapacityLimiter(CHECKS_AT_ONCE)
        account = None
        try:
            account = await anyio.to_thread.run_sync(
                self.sessions.credentials.check,  # pyright: ignore[reportOptionalMemberAccess]
                name,
                password,
                limiter=self._checks,
            )
        finally:
            self.limiter.done(turn, ok=account is not None)
            async with self._turns:  # pyright: ignore[reportOptionalContextManager]
                self._turns.notify_all()  # pyright: ignore[reportOptionalMemberAccess]
        if account is None:
            return await refuse(400, "wrong name or password")
        token = await asyncio.to_thread(self.sessions.open, account)  # pyright: ignore[reportOptionalMemberAccess]
        cookie = (b"set-cookie", f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax".encode())
        if browser:
            return await _redirect(send, nxt, [cookie], status=303)
        body = b'{"success": true}'
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    *HEADERS,
                    cookie,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _turn(self, name: str, client: str) -> Turn | Refused:
        """The limiter's answer for a sign-in of `name` from `client`, once it is no longer WAIT."""
        if self._turns is None:
            self._turns = asyncio.Condition()
        async with self._turns:
            while True:
                got = self.limiter.ask(name, client)
                if got is not None:
                    return got
                await self._turns.wait()

    async def _sign_out(self, scope, receive, send, headers, account: str | None, tokens) -> None:
        """A POST from the app's own page ends every session of the account; anything else changes nothing."""
        if scope.get("method") != "POST":
            return await _refuse(
                scope,
                receive,
                send,
                405,
                "sign out with the page's Sign out button (a POST from the app's own page)",
                [(b"allow", b"POST")],
            )
        origin = headers.get("origin")
        own = origin is not None and not cross_origin("POST", headers)
        if not own and headers.get("sec-fetch-site") != "same-origin":
            return await _refuse(scope, receive, send, 403, "sign-out is taken only from the app's own page")
        if account is not None:
            ended = await asyncio.to_thread(self.sessions.end, (), account)  # pyright: ignore[reportOptionalMemberAccess]
            for sid in ended if isinstance(tokens, dict) else ():
                tokens.pop(sid, None)
        return await _redirect(send, "/", [_clear_cookie()], status=303)

    # ------------------------------------------------------------------ sizes
    def _cap(self, path: str) -> int:
        if path in LOGIN_PATHS:
            return LOGIN_BODY
        if UPLOAD_ROUTE.match(path) and self.max_body is not None:
            return self.max_body + BODY_SLACK
        return EVENT_BODY

    def _too_big(self, path: str) -> str:
        if UPLOAD_ROUTE.match(path) and self.max_body is not None:
            return f"too big: the web app takes files of at most {self.max_body >> 20} MB"
        return f"too big: a request to {path[:80]} takes at most {self._cap(path) >> 10} KB"

    def _bounded(self, scope, receive, send, cap: int, path: str):
        """(receive, send, cut) for a body that may come without a Content-Length (chunked): past `cap` bytes the
        request is answered 413 here, the app is told the client left, and what it sends after is dropped (`cut`
        is then not empty)."""
        got, refused = 0, []
        started: list[bool] = []

        async def bounded_receive():
            nonlocal got
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                got += len(message.get("body", b""))
                if got > cap:
                    refused.append(True)
                    if not started:
                        await _refuse(scope, receive, send, 413, self._too_big(path))
                    return {"type": "http.disconnect"}
            return message

        async def bounded_send(message) -> None:
            if refused:
                return
            if message["type"] == "http.response.start":
                started.append(True)
            await send(message)

        return bounded_receive, bounded_send, refused


def _cookie(headers, name: str) -> str:
    try:
        morsel = SimpleCookie(headers.get("cookie") or "").get(name)
    except CookieError:
        return ""
    return morsel.value if morsel is not None else ""


def _as_gradio(raw: list, gradio, sid: str) -> list:
    """The request's headers with its cookies as Gradio should see them: the sign-in cookie and any Gradio login
    cookie the browser sent taken out, Gradio's own login cookie for session `sid` put in (Gradio reads the account
    from it: `app.tokens`)."""
    cookie_id = getattr(gradio, "cookie_id", None)
    out, cookies = [], []
    for k, v in raw:
        if k.lower() != b"cookie":
            out.append((k, v))
            continue
        for part in v.decode("latin-1").split(";"):
            name = part.strip().partition("=")[0]
            if name and name != COOKIE and not name.startswith("access-token-"):
                cookies.append(part.strip())
    if cookie_id is not None:
        cookies.append(f"access-token-{cookie_id}={sid}")
    if cookies:
        out.append((b"cookie", "; ".join(cookies).encode("latin-1")))
    return out


def _document(method: str, headers) -> bool:
    """A page load (what a browser navigates to), as opposed to a script's request."""
    return method in ("GET", "HEAD") and headers.get("sec-fetch-dest", "document") == "document"


def _clear_cookie() -> tuple[bytes, bytes]:
    return b"set-cookie", f"{COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax".encode()


async def _form(scope, body: bytes) -> dict[str, str]:
    """The sign-in form's fields (urlencoded, or multipart as Gradio's own page sent it); {} when malformed."""
    from starlette.requests import Request

    async def replay():
        return {"type": "http.request", "body": body, "more_body": False}

    try:
        form = await Request(scope, replay).form(max_files=0, max_fields=8)
    except Exception:  # a malformed form is answered as an empty one: "enter your name and your password"
        return {}
    return {k: v for k, v in form.items() if isinstance(v, str)}


async def _page(send, status: int, page: bytes, extra: list | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(page)).encode()),
                (b"cache-control", b"no-store"),
                *HEADERS,
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": page})


async def _redirect(send, location: str, extra: list | None = None, status: int = 302) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"location", location.encode()), (b"content-length", b"0"), *HEADERS, *(extra or [])],
        }
    )
    await send({"type": "http.response.body", "body": b""})


async def _refuse(scope, receive, send, status: int, text: str, extra: list | None = None) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = (text + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *HEADERS,
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
