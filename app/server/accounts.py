"""Accounts: who may sign in to a shared server (`chief serve --users`) and whose projects are whose.

A password is kept only as a salted scrypt hash (hashlib), its parameters stored with it
(`scrypt$N$r$p$salt$hash`, base64), and compared in constant time; it is never logged, printed or stored in clear.
An unknown name costs the same hash as a known one, so the time of a refusal does not say which names exist.
Every project belongs to an account (storage.owners); `LOCAL_OWNER` ("local") is whoever runs CHIEF on this
machine: the CLI acts as it unless `--user` names another, and the web app without `--users` too.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets
from datetime import datetime

from pydantic import BaseModel

from app.context import Context
from app.errors import StudioError
from storage.owners import LOCAL_OWNER, Actor, check_name

SCRYPT_N, SCRYPT_R, SCRYPT_P = 1 << 14, 8, 1  # 16 MiB and ~50 ms a check: a guess costs what a login does
KEY_BYTES, SALT_BYTES = 32, 16
MAX_PASSWORD = 1024  # characters; longer is refused, not cut
MIN_PASSWORD = 8


class Account(BaseModel):
    name: str
    teacher: bool
    created_at: datetime
    projects: int


def hash_password(password: str, n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P) -> str:
    """`password` as `scrypt$N$r$p$salt$key` (a fresh random salt each time)."""
    salt = secrets.token_bytes(SALT_BYTES)
    key = _scrypt(password, salt, n, r, p)
    b64 = base64.b64encode
    return f"scrypt${n}${r}${p}${b64(salt).decode()}${b64(key).decode()}"


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` is the one `stored` (a hash_password value) was made from; constant-time compare."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != "scrypt":
            return False
        want = base64.b64decode(key)
        got = _scrypt(password, base64.b64decode(salt), int(n), int(r), int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=128 * r * n * 2, dklen=KEY_BYTES)


@functools.cache
def _dummy() -> str:
    """What an unknown name is checked against (made on first use: no work at import)."""
    return hash_password(secrets.token_urlsafe(16))


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise StudioError(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise StudioError(f"a password has at most {MAX_PASSWORD} characters")
    return password


class Accounts:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def add(self, name: str, password: str, teacher: bool = False) -> Account:
        """A new account (one transaction); a name taken, the local owner's or a malformed one is refused."""
        name = _name(name)
        if name == LOCAL_OWNER:
            raise StudioError(f"{LOCAL_OWNER!r} is this machine's own account (the CLI's default): choose another name")
        hashed = hash_password(check_password(password))
        with self.ctx.repo.write() as u:
            if u.user(name) is not None:
                raise StudioError(f"there is already an account {name!r}")
            u.add_user(name, hashed, teacher)
        return self.get(name)

    def set_password(self, name: str, password: str) -> None:
        hashed = hash_password(check_password(password))
        with self.ctx.repo.write() as u:
            self._need(u, name)
            u.set_password(name, hashed)

    def remove(self, name: str) -> None:
        """Remove an account that owns no project (its projects would pass to whoever took the name next)."""
        with self.ctx.repo.write() as u:
            self._need(u, name)
            owned = u.owned(name)
            if owned:
                raise StudioError(
                    f"{name!r} owns {owned} project(s), trashed ones included: their work stays theirs, so the "
                    "account stays"
                )
            u.remove_user(name)

    def list(self) -> list[Account]:
        with self.ctx.repo.read() as u:
            return [Account(name=n, teacher=t, created_at=c, projects=k) for n, t, c, k in u.users()]

    def get(self, name: str) -> Account:
        found = [a for a in self.list() if a.name == name]
        if not found:
            raise StudioError(f"no account {name!r} (see `chief users list`)")
        return found[0]

    def any(self) -> bool:
        with self.ctx.repo.read() as u:
            return bool(u.users())

    def sign_in(self, name: str, password: str) -> bool:
        """Whether `name` and `password` open an account (the same work whether or not the name exists)."""
        with self.ctx.repo.read() as u:
            found = u.user(name) if isinstance(name, str) and len(name) <= 32 else None
        if not isinstance(password, str) or len(password) > MAX_PASSWORD:
            return False
        ok = verify_password(password, found[0] if found else _dummy())
        return ok and found is not None

    def actor(self, name: str) -> Actor:
        """Who acts as account `name` (the local owner needs no account)."""
        if name == LOCAL_OWNER:
            return Actor(LOCAL_OWNER)
        with self.ctx.repo.read() as u:
            found = u.user(name)
        if found is None:
            raise StudioError(f"no account {name!r} (see `chief users list`)")
        return Actor(name, teacher=found[1])

    @staticmethod
    def _need(u, name: str) -> None:
        if u.user(name) is None:
            raise StudioError(f"no account {name!r} (see `chief users list`)")


def _name(name: str) -> str:
    try:
        return check_name(name)
    except ValueError as e:
        raise StudioError(str(e)) from None
