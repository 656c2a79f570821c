"""`chief serve`: the web app (app/ui) on 127.0.0.1 by default."""

from __future__ import annotations

import errno
import socket

import click

from app.cli.common import EXIT_ERROR, echo, err, handles_errors, secho


@click.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Interface to bind (anything but loopback needs --auth)."
)
@click.option(
    "--port", envvar="CHIEF_PORT", default=7860, show_default=True, type=int, help="Port to serve on (or $CHIEF_PORT)."
)
@click.option("--auth", envvar="CHIEF_AUTH", help="user:password required to open the app (or $CHIEF_AUTH).")
@click.option(
    "--users",
    is_flag=True,
    help="Sign people in with the accounts of `chief users`; each sees and opens only their own projects "
    "(a teacher: all).",
)
@click.option(
    "--idle-minutes",
    type=click.IntRange(min=1),
    default=60,
    show_default=True,
    help="End a signed-in session (--auth, --users) after this many minutes without a request: the next one gets "
    "the login page.",
)
@click.option(
    "--forwarded-allow-ips",
    "proxies",
    envvar="CHIEF_FORWARDED_ALLOW_IPS",
    default="",
    metavar="IPS",
    help=(
        "The reverse proxy's addresses or networks (comma-separated; or $CHIEF_FORWARDED_ALLOW_IPS): only requests "
        "from them may name the client in X-Forwarded-For. Default: none, every request is counted by the address "
        "it comes from (login limits)."
    ),
)
@click.pass_obj
def serve(c, host, port, auth, users, idle_minutes, proxies):
    """Open the web app: the whole loop in the browser."""
    from app.ui import is_loopback, launch, parse_auth, parse_proxies

    try:
        parse_auth(auth)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--auth") from None
    try:
        proxies = parse_proxies(proxies)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--forwarded-allow-ips") from None
    if users and auth:
        raise click.UsageError("--users and --auth both say who may sign in: pass one")
    if not is_loopback(host) and not auth and not users:
        raise click.UsageError(
            f"--host {host} is reachable from other machines: pass --auth user:password or --users (or set CHIEF_AUTH)"
        )
    studio = _studio(c)  # the data folder's problems first, then the port's
    if users and not studio.accounts.any():
        err("--users needs accounts: add one first (chief users add NAME [--teacher] --password-stdin)")
        raise SystemExit(EXIT_ERROR)
    busy = _port_busy(host, port)
    if busy:
        err(busy)
        raise SystemExit(EXIT_ERROR)
    st = studio.status()
    secho(f"chief · backend: {st.backend_label} · model: {st.model} · agents: {st.agents}", dim=True, err=True)
    echo(f"serving on http://{host}:{port} (Ctrl+C to stop)", err=True)
    launch(
        studio,
        host=host,
        port=port,
        auth=auth,
        quiet=True,
        forwarded_allow_ips=proxies,
        users=users,
        idle_minutes=idle_minutes,
    )


@handles_errors
def _studio(c):
    """The Studio to serve; a broken database or data folder is one line and exit status 1, as in every command."""
    ray_address = c.studio.config.ray_address
    if ray_address:  # shots and agent calls on a Ray cluster (docs/cluster.md); the database stays here
        from app.cluster import cluster_studio

        c._studio = cluster_studio(c.studio.config, None if ray_address == "local" else ray_address)
    return c.studio


def _port_busy(host: str, port: int) -> str | None:
    """One line naming the problem when `host:port` cannot be bound (taken, or not this machine's), else None."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: a closing socket is no conflict
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return f"port {port} is already in use on {host}: pass --port N (or `make serve PORT=N`)"
            return f"cannot serve on {host}:{port}: {e.strerror or e}"
    return None


COMMANDS = [serve]
