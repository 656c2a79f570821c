"""Signing in to the web app (`chief serve --users` or `--auth`): who may try a password, and the sessions signed in.

- **Failures, not attempts, are counted** (`SignInLimiter`), per account (the name as `storage.owners.name_key` folds
  it, from any address: `ACCOUNT_FAILURES` a `WINDOW`) and per network (an IPv4 /24, an IPv6 /64, all of loopback as
  one: `NETWORK_FAILURES`, enough for a class behind one NAT to mistype ten times each). Neither stands in for the
  other: a network's failures never refuse a right password for another account until the network's own limit is
  reached, and a guesser moving between addresses still has `ACCOUNT_FAILURES` guesses at an account. A sign-in being
  checked counts as a possible failure until its answer: one that would pass a limit waits for the checks ahead of it
  (a burst of guesses gets no more checks than a sequence; a burst of right passwords all get in).
- **Sessions live in the database** (`Sessions`, table `sessions`): the browser holds a random token, the database
  its sha256, the account and the account's credential stamp when it signed in. A server restart keeps them; a
  password change, a removal or the name added again ends them (the stamp no longer matches: `Credentials.stamp`), as
  does sign-out and `idle` seconds without a request. Whether the database changed since a session was last checked
  is SQLite's `PRAGMA data_version` (`Changes`), so the CLI's `chief users passwd` in another process ends a session
  at its next request, and an unchanged database costs no read.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import ipaddress
import secrets
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from math import ceil
from pathlib import Path
from typing import Protocol

from storage.owners import name_key
from storage.records import SessionRecord

WINDOW = 600.0  # seconds over which failures are counted
ACCOUNT_FAILURES = 10  # wrong passwords for one account, from anywhere, in a window: then even the right one waits
NETWORK_FAILURES = 300  # wrong passwords from one network in a window: 30 students behind one NAT, ten typos each
CHECKS_AT_ONCE = 4  # password checks run at once (scrypt takes 16 MiB and ~50 ms each); more wait their turn
SEEN_EVERY = 60.0  # seconds between writes of a session's last request to the database
COOKIE = "chief_signin"  # the browser's token (HttpOnly, SameSite=Lax)
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def network(address: str) -> str:
    """The network an address is counted with: an IPv4 /24, an IPv6 /64, every loopback address as one (any
    127.x.y.z reaches a server on 127.0.0.1); an IPv4 address written as IPv6 as its IPv4 self."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    prefix = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


@dataclass(frozen=True)
class Turn:
    """A sign-in let through to its password check: the counters it holds until `SignInLimiter.done`."""

    keys: tuple[str, str]


@dataclass(frozen=True)
class Refused:
    """A sign-in refused before its check: why, in one line, and how many seconds until it may try again."""

    why: str
    wait: float


WAIT = None  # `SignInLimiter.ask`: checks ahead of this one may decide it; ask again when one ends


class SignInLimiter:
    """Failed sign-ins per account and per network within a sliding window (see the module doc). `ask` and `done` are
    one locked step each; `clock` is injectable (tests)."""

    def __init__(
        self,
        account_failures: int = ACCOUNT_FAILURES,
        network_failures: int = NETWORK_FAILURES,
        window: float = WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = {"account": account_failures, "network": network_failures}
        self.window, self.clock = window, clock
        self._failed: dict[str, deque[float]] = {}
        self._checking: dict[str, int] = {}
        self._lock = threading.Lock()

    def ask(self, name: str, address: str) -> Turn | Refused | None:
        """A Turn (check the password now), a Refused, or WAIT (None): as many checks are under way as failures are
        left, so this one's fate depends on theirs."""
        keys = (f"account {name_key(name)[:64]}", f"network {network(address)}")
        with self._lock:
            now = self.clock()
            for key in keys:
                failed = self._recent(key, now)
                if len(failed) >= self.limits[key.split()[0]]:
                    return Refused(self._why(key), self.window - (now - failed[0]))
            if any(len(self._recent(k, now)) + self._checking.get(k, 0) >= self.limits[k.split()[0]] for k in keys):
                return WAIT
            for key in keys:
                self._checking[key] = self._checking.get(key, 0) + 1
            return Turn(keys)

    def done(self, turn: Turn, ok: bool) -> None:
        """The check of `turn` ended: a failure (not `ok`) is counted against its account and its network."""
        with self._lock:
            now = self.clock()
            for key in turn.keys:
                left = self._checking.get(key, 0) - 1
                if left > 0:
                    self._checking[key] = left
                else:
                    self._checking.pop(key, None)
                if not ok:
                    self._failed.setdefault(key, deque()).append(now)
            if len(self._failed) > 4096:  # forget what has aged out (names and networks nobody uses any more)
                for key in [k for k in self._failed if not self._recent(k, now)]:
                    self._failed.pop(key, None)

    def _recent(self, key: str, now: float) -> deque[float]:
        failed = self._failed.get(key)
        if failed is None:
            return deque()
        while failed and now - failed[0] > self.window:
            failed.popleft()
        if not failed:
            del self._failed[key]
        return failed

    def _why(self, key: str) -> str:
        if key.startswith("account"):
            return f"too many wrong passwords for this account ({self.limits['account']} in {self.window / 60:g} min)"
        return f"too many wrong passwords from this network ({self.limits['network']} in {self.window / 60:g} min)"


def retry_line(refused: Refused) -> str:
    """The one line a refused sign-in is answered with: why, and when to try again."""
    minutes = max(1, ceil(refused.wait / 60))
    return f"{refused.why}: try again in {minutes} minute{'s' if minutes > 1 else ''}"


class Credentials(Protocol):
    """Who may sign in: `check` gives the account a name and password open (None: refused), `stamp` what a session
    of that account is bound to now (None: there is no such account any more)."""

    def check(self, name: str, password: str) -> str | None: ...

    def stamp(self, name: str) -> str | None: ...


class OnePerson:
    """`chief serve --auth user:password`: one account. Its stamp is a scrypt digest of the password, salted by the
    name, so a new password ends the sessions signed in with the old one (made on the first sign-in)."""

    def __init__(self, user: str, password: str) -> None:
        self.user, self._password = user, password
        self._stamp: str | None = None

    def check(self, name: str, password: str) -> str | None:
        same = hmac.compare_digest(name.encode(), self.user.encode())
        right = hmac.compare_digest(password.encode(), self._password.encode())
        return self.user if same and right else None

    def stamp(self, name: str) -> str | None:
        if name != self.user:
            return None
        if self._stamp is None:
            salt = hashlib.sha256(b"chief --auth\0" + self.user.encode()).digest()
            key = hashlib.scrypt(self._password.encode(), salt=salt, n=1 << 14, r=8, p=1, maxmem=1 << 25, dklen=32)
            self._stamp = key.hex()
        return self._stamp


class Changes:
    """SQLite's `PRAGMA data_version` on a connection of its own: it changes whenever another connection (this process's
    or another's: `chief users passwd`) commits. A cache of what the database said is good while it stays the same."""

    def __init__(self, path: Path) -> None:
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()

    def version(self) -> int:
        with self._lock:
            return self._conn.execute("PRAGMA data_version").fetchone()[0]

    def close(self) -> None:
        self._conn.close()


def session_id(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Sessions:
    """The signed-in sessions (see the module doc). `repo` is the storage.repository.Repository, `idle` seconds without
    a request end a session (None: never), `clock` gives epoch seconds (injectable, for tests)."""

    repo: object
    credentials: Credentials
    changes: Changes
    idle: float | None = None
    clock: Callable[[], float] = time.time
    _valid: dict[str, str] = field(default_factory=dict)  # id -> account, as read while data_version was `_version`
    _seen: dict[str, list[float]] = field(default_factory=dict)  # id -> [last request, last one written]
    _version: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def open(self, account: str) -> str:
        """A new session of `account`: the token for the browser (only its sha256 is kept). Sessions idle for longer
        than `idle` are deleted in the same transaction, so the table holds live sessions only."""
        token = secrets.token_urlsafe(32)
        now = self.clock()
        stamp = self.credentials.stamp(account) or ""
        record = SessionRecord(
            id=session_id(token), account=account, stamp=stamp, created_at=datetime.now(UTC), seen_at=now
        )
        with self.repo.write() as u:  # pyright: ignore[reportAttributeAccessIssue]
            u.put_session(record)
            if self.idle is not None:  # the sessions left to go idle (a browser closed) are removed as others begin
                u.end_idle_sessions(now - self.idle - SEEN_EVERY)  # what is written lags by up to SEEN_EVERY
        with self._lock:
            self._seen[record.id] = [now, now]
        return token

    def account(self, token: str, activity: bool = True) -> tuple[str | None, str]:
        """(the account `token` is signed in as, or None when it names no live session; the session's id). A session
        whose account's credentials changed, or idle too long, is ended here. `activity`: this request counts as
        someone working (the page's heartbeat does not)."""
        if not token or len(token) > 128 or not set(token) <= _TOKEN_CHARS:
            return None, ""
        sid = session_id(token)
        version = self.changes.version()
        with self._lock:
            if version != self._version:
                self._version = version
                self._valid.clear()
            account = self._valid.get(sid)
        if account is None:
            account = self._read(sid)
            if account is None:
                return None, sid
        now = self.clock()
        with self._lock:
            seen = self._seen[sid]
            idle = self.idle is not None and now - seen[0] > self.idle
            write = activity and not idle and now - seen[1] > SEEN_EVERY
            if activity and not idle:
                seen[0] = now
            if write:
                seen[1] = now
        if idle:
            self.end([sid])
            return None, sid
        if write:
            with self.repo.write() as u:  # pyright: ignore[reportAttributeAccessIssue]
                u.seen_sessions({sid: now})
        return account, sid

    def _read(self, sid: str) -> str | None:
        """The account of session `sid` as the database has it, when its credentials are still those it signed in
        with (else it is ended)."""
        with self.repo.read() as u:  # pyright: ignore[reportAttributeAccessIssue]
            record = u.session(sid)
        if record is None:
            return None
        if self.credentials.stamp(record.account) != record.stamp:
            self.end([sid])
            return None
        with self._lock:
            self._valid[sid] = record.account
            seen = self._seen.setdefault(sid, [record.seen_at, record.seen_at])
            seen[0] = max(seen[0], record.seen_at)
        return record.account

    def end(self, ids: Sequence[str] = (), account: str | None = None) -> list[str]:
        """End the sessions `ids` and every session of `account`: the ids of those ended."""
        with self.repo.write() as u:  # pyright: ignore[reportAttributeAccessIssue]
            ended = set(u.end_sessions(account=account, ids=list(ids))) | set(ids)
        with self._lock:
            if account is not None:
                ended |= {sid for sid, name in self._valid.items() if name == account}
            for sid in ended:
                self._valid.pop(sid, None)
                self._seen.pop(sid, None)
        return sorted(ended)


SIGN_IN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>CHIEF · sign in</title>
<style>
body {{ font-family: system-ui, sans-serif; display: flex; justify-content: center; margin-top: 12vh; }}
form {{ display: flex; flex-direction: column; gap: 10px; width: 320px; }}
input, button {{ font: inherit; padding: 8px; }}
#sign_in_message {{ color: #b91c1c; min-height: 1.2em; }}
</style></head>
<body><form method="post" action="/login" id="sign_in">
<h1>CHIEF</h1>
<p id="sign_in_message" role="alert">{message}</p>
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password"
  autocomplete="current-password" required>
<input type="hidden" name="next" value="{next}">
<button type="submit" id="sign_in_button">Login</button>
</form></body></html>
"""


def sign_in_page(message: str = "", next_path: str = "/") -> bytes:
    """The sign-in form, with `message` (why the last try was refused) escaped."""
    return SIGN_IN_PAGE.format(message=html.escape(message), next=html.escape(safe_next(next_path))).encode()


def safe_next(path: str) -> str:
    """Where a sign-in goes on to: a path of this app ("/" for anything else: another site, a scheme, a backslash)."""
    if not path.startswith("/") or path.startswith("//") or "\\" in path or any(ord(c) < 32 for c in path):
        return "/"
    return path[:2000]
