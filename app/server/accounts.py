"""Accounts: who may sign in to a shared server (`chief serve --users`) and whose projects are whose.

A password is kept only as a salted scrypt hash (hashlib), its parameters stored with it
(`scrypt$N$r$p$salt$hash`, base64), and compared in constant time; it is never logged, printed or stored in clear.
An unknown name costs the same hash as a known one, so the time of a refusal does not say which names exist.
Every project belongs to an account (storage.owners); `LOCAL_OWNER` ("local") is whoever runs CHIEF on this
machine: the CLI acts as it unless `--user` names another, and the web app without `--users` too.

Names are compared by `storage.owners.name_key` (NFKC, look-alike letters folded, case folded): no account is added
beside one that looks the same, nor named like a reserved word (`local`, `class`); a name typed at sign-in or in
`chief users` finds the account that looks like it. A password change or a removal ends the account's signed-in
sessions in the same transaction (app/server/sessions.py checks each session's `stamp` against the account too).
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
from storage.owners import LOCAL_OWNER, RESERVED, Actor, check_name, name_key

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
        """A new account (one transaction); a malformed name, a reserved word or a name that looks like an existing
        account's (name_key) is refused in one line."""
        name = _name(name)
        key = name_key(name)
        reserved = next((w for w in RESERVED if name_key(w) == key), None)
        if reserved == LOCAL_OWNER:
            raise StudioError(f"{name!r} is this machine's own account (the CLI's default): choose another name")
        if reserved is not None:
            raise StudioError(
                f"{name!r} is a reserved word (sharing with 'class' shares with everyone): choose another name"
            )
        hashed = hash_password(check_password(password))
        with self.ctx.repo.write() as u:
            taken = _looks_like(u, name)
            if taken is not None:
                same = "an account" if taken == name else f"an account {taken!r}, which looks the same as"
                raise StudioError(f"there is already {same} {name!r}: choose another name")
            u.add_user(name, hashed, teacher)
        return self.get(name)

    def set_password(self, name: str, password: str) -> None:
        """A new password for account `name`; its signed-in sessions end."""
        hashed = hash_password(check_password(password))
        with self.ctx.repo.write() as u:
            name = self._need(u, name)
            u.set_password(name, hashed)
            u.end_sessions(account=name)

    def remove(self, name: str) -> None:
        """Remove an account that owns no project (its projects would pass to whoever took the name next); its
        signed-in sessions end."""
        with self.ctx.repo.write() as u:
            name = self._need(u, name)
            owned = u.owned(name)
            if owned:
                raise StudioError(
                    f"{name!r} owns {owned} project(s), trashed ones included: their work stays theirs, so the "
                    "account stays"
                )
            u.remove_user(name)
            u.end_sessions(account=name)

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
        return self.check(name, password) is not None

    def check(self, name: str, password: str) -> str | None:
        """The account `name` (or the one that looks like it) when `password` opens it, else None; the same work
        whether or not the name exists."""
        found = None
        if isinstance(name, str) and len(name) <= 64:
            with self.ctx.repo.read() as u:
                account = _looks_like(u, name)
                found = (account, u.user(account)) if account is not None else None
        if not isinstance(password, str) or len(password) > MAX_PASSWORD:
            return None
        ok = verify_password(password, found[1][0] if found and found[1] else _dummy())
        return found[0] if ok and found is not None else None

    def stamp(self, name: str) -> str | None:
        """What a session of account `name` is bound to: a digest of its password hash (a fresh salt each time it is
        set, so a change, a removal or the name added again changes it); None when there is no such account."""
        with self.ctx.repo.read() as u:
            found = u.user(name)
        return None if found is None else credential_stamp(found[0])

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
    def _need(u, name: str) -> str:
        """The account `name` (or the one that looks like it), or a one-line refusal."""
        found = _looks_like(u, name)
        if found is None:
            raise StudioError(f"no account {name!r} (see `chief users list`)")
        return found


def credential_stamp(password_hash: str) -> str:
    return hashlib.sha256(b"chief session\0" + password_hash.encode()).hexdigest()


def _looks_like(u, name: str) -> str | None:
    """The account named `name`, else the one whose name looks the same (storage.owners.name_key), else None."""
    if u.user(name) is not None:
        return name
    key = name_key(name)
    return next((n for n, *_ in u.users() if name_key(n) == key), None)


def _name(name: str) -> str:
    try:
        return check_name(name)
    except ValueError as e:
        raise StudioError(str(e)) from None
