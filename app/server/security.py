"""The web app's door: which requests reach Gradio at all, and what every page may load.

ASGI middleware around the Gradio app (installed by `app.ui.launch`), deciding before any route runs:

- **Host.** The `Host` header must be an IP address, `localhost`, or a name in `CHIEF_ALLOWED_HOSTS`. A
  DNS-rebinding page (evil.example resolving to 127.0.0.1) sends its own name and is refused.
- **Origin.** A request from another origin (another site, or another port on localhost: "same-site" is
  not the same origin) is refused, whatever its route: queue/join, run, upload, file, info. Browsers say
  where a request comes from (`Origin`, `Sec-Fetch-Site`); only following a link to the app (a top-level
  navigation) is let through. Clients that are not browsers send neither header and are not refused here:
  they are not a page the user happened to open.
- **Login.** With `--auth` or `--users`, failed logins per client address (the connection's peer, or what a proxy
  listed with `--forwarded-allow-ips` says) are limited (`LOGIN_FAILURES` per `LOGIN_WINDOW` seconds); more are answered 429 until the window has passed. An attempt is counted before
  Gradio checks it, so a concurrent burst gets no more tries than a sequence.
- **Size.** With `max_body` (app.ui.upload_cap: the largest file any upload button takes), a request whose
  Content-Length says more is answered 413 before its body is read, and a body without one (chunked) is cut off
  with 413 once it passes that.
- **What pages may load.** A Content-Security-Policy keeps every page to its own origin: no remote image
  (a note like `![x](http://host/p.png)` fetches nothing), no form posting elsewhere, no framing.

- **Sessions.** A browser without a valid `chief_session` cookie gets one (random, HttpOnly, SameSite=Strict):
  the jobs it starts are its own (`session_of`, app/server/jobs.py). A reload keeps it; another browser has its own.

- **Idle sign-out.** With `idle` (`chief serve --idle-minutes N`, 60 by default), a signed-in session (Gradio's
  access token) that has made no request for that long is ended: its token is forgotten, an API call gets Gradio's
  401 and a page load is sent to the login page. Sign out (`/logout`) ends every session of the account at once.
- **File URLs per account.** With `--users` (`files`), a file route (`/gradio_api/file=…`, `/file=…`, `/file/…`,
  and any other path the app serves files by: `FILE_ROUTE`) serves a file only to the account the app's own answers
  named it to (the page, an event's answer, an upload's): each such answer went through the project check, so a file
  reaches an account only when its project, or one shared with it, uses the file. Anything else is 404 "not found",
  the same as a file that does not exist.

`same_origin(request)` tells a handler whether an event came from the app's own page (see Settings).
"""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from http.cookies import CookieError, SimpleCookie
from urllib.parse import unquote, urlsplit

LOGIN_FAILURES = 10
LOGIN_WINDOW = 600.0  # seconds
LOGIN_PATHS = ("/login", "/login/")
BODY_SLACK = 1 << 20  # a multipart body's headers and boundaries around the largest file
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


class LoginLimiter:
    """Login attempts per client address within a sliding window (addresses that stop failing are forgotten).

    An attempt is counted *before* it is checked (`attempt`), in one step under a lock, so a burst of concurrent
    logins cannot all pass the check before the first failure is recorded; an attempt that logs in is taken back
    (`succeeded`)."""

    def __init__(self, failures: int = LOGIN_FAILURES, window: float = LOGIN_WINDOW) -> None:
        self.failures, self.window = failures, window
        self._tries: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        q = self._tries.setdefault(client, deque())
        while q and now - q[0] > self.window:
            q.popleft()
        return q

    def attempt(self, client: str) -> tuple[float, float]:
        """Count one attempt by `client`: (0, its stamp) when it may be checked, else (seconds to wait, 0)."""
        with self._lock:
            now = time.monotonic()
            q = self._recent(client, now)
            if len(q) >= self.failures:
                return self.window - (now - q[0]), 0.0
            q.append(now)
            return 0.0, now

    def succeeded(self, client: str, stamp: float) -> None:
        """The attempt counted at `stamp` logged in: it is not a failure."""
        with self._lock:
            q = self._tries.get(client)
            if q is not None and stamp in q:
                q.remove(stamp)
            if not q:
                self._tries.pop(client, None)


IDLE_MINUTES = 60  # `chief serve --idle-minutes`: a signed-in session with no request for this long is ended
NOT_ACTIVITY = re.compile(r"^(/gradio_api)?/heartbeat/")  # the page's own keep-alive is not someone working
# Every route that serves a file by its path: Gradio's /file=PATH (under /gradio_api too) and /file/PATH.
FILE_ROUTE = re.compile(r"^(?:/gradio_api)?/file(?:=|/)(?P<path>.+)$")
NOT_FOUND = "not found"
SCANNED_TYPES = ("application/json", "text/event-stream", "text/html", "text/plain")


def access_token(app, headers) -> str | None:
    """The Gradio access token a request carries (its login cookie), or None."""
    cookie_id = getattr(app, "cookie_id", None)
    if cookie_id is None:
        return None
    names = (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}")
    for part in (headers.get("cookie") or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name in names and value:
            return value
    return None


class IdleSessions:
    """When each signed-in session (an access token) last made a request; `clock` is injectable (tests)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds, self.clock = seconds, clock
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def touch(self, token: str, activity: bool = True) -> bool:
        """Whether the session `token` is still live (and, on `activity`, note it now); an expired one is
        forgotten here and must be ended by the caller."""
        with self._lock:
            now = self.clock()
            last = self._seen.get(token)
            if last is not None and now - last > self.seconds:
                del self._seen[token]
                return False
            if activity or last is None:
                self._seen[token] = now
            return True

    def forget(self, tokens: Iterable[str]) -> None:
        with self._lock:
            for t in tokens:
                self._seen.pop(t, None)


class FileLedger:
    """Which files the app's answers named to which account (see the module doc). Paths are kept resolved; at most
    `cap` per account (the oldest are dropped first: the page asks again when it shows them again)."""

    def __init__(self, roots: Iterable[str], cap: int = 200_000) -> None:
        self.cap = cap
        self._sent: dict[str, dict[str, None]] = {}
        self._lock = threading.Lock()
        # a root as it may appear in an answer: plain, or percent-encoded (app.ui.common.media_url)
        forms = set()
        for root in roots:
            for r in {str(root), os.path.realpath(root)}:
                forms |= {r, r.replace("/", "%2F")}
        alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
        self._pattern = re.compile(rf"(?:{alternatives})(?:/|%2F)[^\"'\\\s<>?#]*") if forms else None

    def note(self, account: str, text: str) -> None:
        """Record every file under the roots that `text` (an answer to `account`) names."""
        if self._pattern is None:
            return
        found = {os.path.realpath(unquote(m.group(0))) for m in self._pattern.finditer(text)}
        if not found:
            return
        with self._lock:
            sent = self._sent.setdefault(account, {})
            for path in found:
                sent.pop(path, None)
                sent[path] = None
            while len(sent) > self.cap:
                del sent[next(iter(sent))]

    def allowed(self, account: str, path: str) -> bool:
        real = os.path.realpath(unquote(path) if path.startswith("%2F") else path)
        with self._lock:
            return real in self._sent.get(account, {})

    def forget(self, account: str | None) -> None:
        """Take back what `account` (None: every account) was sent: a project handed over or a share withdrawn. Its
        next answers say anew what it may fetch."""
        with self._lock:
            if account is None:
                self._sent.clear()
            else:
                self._sent.pop(account, None)


class Guard:
    """The ASGI middleware: Host and Origin checks, login limits, idle sign-out, per-account file URLs, security
    headers (see the module doc)."""

    def __init__(
        self,
        app,
        hosts: frozenset[str] = frozenset(),
        limiter: LoginLimiter | None = None,
        max_body: int | None = None,
        idle: IdleSessions | None = None,
        files: FileLedger | None = None,
    ) -> None:
        self.app, self.hosts, self.max_body = app, hosts, max_body
        self.limiter = limiter or LoginLimiter()
        self.idle, self.files = idle, files

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        method = scope.get("method", "GET")
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
        if scope["type"] == "http" and self.max_body is not None:
            declared = headers.get("content-length", "")
            if declared.strip().isdigit() and int(declared) > self.max_body + BODY_SLACK:
                return await _refuse(scope, receive, send, 413, self._too_big())
            receive, send, cut = self._bounded(scope, receive, send)
        else:
            cut = []
        login = scope["type"] == "http" and method == "POST" and scope.get("path") in LOGIN_PATHS
        client = (scope.get("client") or ("?", 0))[0]
        stamp = 0.0
        if login:
            wait, stamp = self.limiter.attempt(client)
            if wait > 0:
                return await _refuse(
                    scope,
                    receive,
                    send,
                    429,
                    f"too many failed logins: try again in {wait:.0f} s",
                    [(b"retry-after", str(int(wait) + 1).encode())],
                )

        new_session = [_session_cookie()] if scope["type"] == "http" and not session_of(headers) else []
        gradio = scope.get("app")
        token = access_token(gradio, headers)
        tokens = getattr(gradio, "tokens", None)
        account = tokens.get(token) if token is not None and isinstance(tokens, dict) else None
        path = scope.get("path", "")
        if account is not None and self.idle is not None:
            if not self.idle.touch(token, activity=not NOT_ACTIVITY.match(path)):  # pyright: ignore[reportArgumentType]
                tokens.pop(token, None)  # pyright: ignore[reportOptionalMemberAccess] - signed out: Gradio's login again
                account = None
                if method == "GET" and headers.get("sec-fetch-dest", "document") == "document":
                    return await _redirect(send, "/")  # the app's root shows the login form to no one signed in
        if self.files is not None and scope["type"] == "http":
            wanted = FILE_ROUTE.match(path)
            if wanted and (account is None or not self.files.allowed(account, wanted.group("path"))):
                return await _refuse(scope, receive, send, 404, NOT_FOUND)
        scan = self.files is not None and account is not None and scope["type"] == "http"
        tail = [""]
        scanning = [False]

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                if login and message["status"] not in (400, 401, 403):
                    self.limiter.succeeded(client, stamp)
                if scan:
                    kind = dict(message.get("headers", [])).get(b"content-type", b"").decode("latin-1")
                    scanning[0] = kind.split(";")[0].strip() in SCANNED_TYPES
                message = {**message, "headers": [*message.get("headers", []), *HEADERS, *new_session]}
            elif scanning[0] and message["type"] == "http.response.body":
                text = tail[0] + message.get("body", b"").decode("utf-8", "replace")
                self.files.note(account, text)  # pyright: ignore[reportOptionalMemberAccess, reportArgumentType]
                tail[0] = text[-4096:]  # a path cut between two chunks is read whole with the next
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            if not cut:  # a body cut off past max_body: the app's complaint that the client left is expected
                raise

    def _too_big(self) -> str:
        return f"too big: the web app takes files of at most {(self.max_body or 0) >> 20} MB"

    def _bounded(self, scope, receive, send):
        """(receive, send, cut) for a body that may come without a Content-Length (chunked): past `max_body` bytes the
        request is answered 413 here, the app is told the client left, and what it sends after is dropped (`cut`
        is then not empty)."""
        got, refused = 0, []

        async def bounded_receive():
            nonlocal got
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                got += len(message.get("body", b""))
                if got > (self.max_body or 0) + BODY_SLACK:
                    refused.append(True)
                    if not started:
                        await _refuse(scope, receive, send, 413, self._too_big())
                    return {"type": "http.disconnect"}
            return message

        started: list[bool] = []

        async def bounded_send(message) -> None:
            if refused:
                return
            if message["type"] == "http.response.start":
                started.append(True)
            await send(message)

        return bounded_receive, bounded_send, refused


async def _redirect(send, location: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 302,
            "headers": [(b"location", location.encode()), (b"content-length", b"0"), *HEADERS],
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
