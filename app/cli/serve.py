"""`chief serve`: the web app (app/ui) on 127.0.0.1 by default."""

from __future__ import annotations

import click

from app.cli.common import handles_errors


@click.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Interface to bind (anything but loopback needs --auth)."
)
@click.option("--port", default=7860, show_default=True, type=int)
@click.option("--auth", envvar="CHIEF_AUTH", help="user:password required to open the app (or $CHIEF_AUTH).")
@click.pass_obj
def serve(c, host, port, auth):
    """Open the web app: the whole loop in the browser."""
    from app.ui import is_loopback, launch, parse_auth

    try:
        parse_auth(auth)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--auth") from None
    if not is_loopback(host) and not auth:
        raise click.UsageError(
            f"--host {host} is reachable from other machines: pass --auth user:password (or set CHIEF_AUTH)"
        )
    studio = _studio(c)
    st = studio.status()
    click.secho(f"chief · backend: {st.backend_label} · model: {st.model} · agents: {st.agents}", dim=True, err=True)
    click.echo(f"serving on http://{host}:{port} (Ctrl+C to stop)", err=True)
    launch(studio, host=host, port=port, auth=auth, quiet=True)


@handles_errors
def _studio(c):
    """The Studio to serve; a broken database or data folder is one line and exit status 1, as in every command."""
    ray_address = c.studio.config.ray_address
    if ray_address:  # shots and agent calls on a Ray cluster (docs/cluster.md); the database stays here
        from app.cluster import cluster_studio

        c._studio = cluster_studio(c.studio.config, None if ray_address == "local" else ray_address)
    return c.studio


COMMANDS = [serve]
