"""#34.2: login limits count the address a connection comes from, never one a request names. uvicorn believes
X-Forwarded-For from 127.0.0.1 by default, so a local client that named another address in every attempt got
unlimited guesses (300 wrong logins, then the right password got in). Only a proxy listed with
`--forwarded-allow-ips` may name the client."""

from __future__ import annotations

import pytest

from app.server.security import LOGIN_FAILURES
from tests.process import free_port
from tests.security.conftest import chief
from tests.security.test_web import raw

AUTH = "ann:correct-horse"


@pytest.fixture
def serve_behind(tmp_path):
    """serve_behind(studio, proxies) -> base URL of the app launched with `forwarded_allow_ips=proxies`."""
    from app.ui import launch

    demos = []

    def start(studio, proxies: str) -> str:
        port = free_port()
        demos.append(
            launch(studio, port=port, auth=AUTH, prevent_thread_lock=True, quiet=True, forwarded_allow_ips=proxies)
        )
        return f"http://127.0.0.1:{port}"

    yield start
    for demo in demos:
        demo.close()


def login(base: str, password: str, headers: dict, name: str = "ann") -> int:
    body = f"username={name}&password={password}".encode()
    return raw(base, "POST", "/login", {"Content-Type": "application/x-www-form-urlencoded", **headers}, body)[0]


FORGED = {
    "X-Forwarded-For": lambda i: f"198.51.100.{i}",
    "Forwarded": lambda i: f"for=198.51.100.{i};proto=http",
    "X-Real-IP": lambda i: f"198.51.100.{i}",
    "X-Client-IP": lambda i: f"2001:db8::{i:x}",
}


@pytest.mark.parametrize("header", list(FORGED))
def test_a_forwarded_header_does_not_dodge_the_login_limit(make_studio, serve, header):
    base = serve(make_studio(), auth=AUTH)
    value = FORGED[header]
    statuses = [login(base, f"guess{i}", {header: value(i)}) for i in range(LOGIN_FAILURES)]
    assert statuses == [400] * LOGIN_FAILURES
    assert login(base, "another-guess", {header: value(200)}) == 429
    assert login(base, "correct-horse", {header: value(201)}) == 429  # still refused until the window passes
    assert login(base, "correct-horse", {}) == 429


def test_a_listed_proxy_names_the_client_and_only_it_does(make_studio, serve_behind):
    """Behind a proxy at 127.0.0.1 (listed), each client is counted by the address the proxy appends: one network's
    guesses (at many names) do not lock out another's, and a client that writes its own X-Forwarded-For before the
    proxy's entry is still counted by the proxy's entry (the rightmost address not listed)."""
    from app.server.sessions import NETWORK_FAILURES

    base = serve_behind(make_studio(), "127.0.0.1")
    guesser = {"X-Forwarded-For": "203.0.113.5"}
    names = [f"user{i // LOGIN_FAILURES}" for i in range(NETWORK_FAILURES)]  # never ann: her account is not locked
    statuses = [login(base, f"guess{i}", guesser, name) for i, name in enumerate(names)]
    assert statuses == [400] * NETWORK_FAILURES
    assert login(base, "correct-horse", guesser) == 429
    forged_chain = [{"X-Forwarded-For": f"192.0.2.{i}, 203.0.113.5"} for i in range(3)]
    assert [login(base, "correct-horse", h) for h in forged_chain] == [429] * 3
    assert login(base, "correct-horse", {"X-Forwarded-For": "198.51.100.6"}) == 200  # another client's network


def test_a_proxy_list_that_does_not_name_the_peer_changes_nothing(make_studio, serve_behind):
    base = serve_behind(make_studio(), "10.9.8.7, 10.1.0.0/16")
    statuses = [login(base, f"guess{i}", {"X-Forwarded-For": f"203.0.113.{i}"}) for i in range(LOGIN_FAILURES)]
    assert statuses == [400] * LOGIN_FAILURES
    assert login(base, "correct-horse", {"X-Forwarded-For": "203.0.113.99"}) == 429


@pytest.mark.parametrize("proxies", ["*", "proxy.lan", "127.0.0.1,*", "10.0.0.0/33"])
def test_forwarded_allow_ips_takes_addresses_and_networks_only(tmp_path, proxies):
    res = chief(
        tmp_path / "home",
        "serve",
        "--port",
        str(free_port()),
        "--forwarded-allow-ips",
        proxies,
        timeout=60,
        process=True,
    )
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "--forwarded-allow-ips" in res.stderr and "not an IP address or network" in res.stderr
    assert "Traceback" not in res.stderr
