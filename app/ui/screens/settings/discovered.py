"""The Settings screen's list of model servers found on this machine: each server and its models, one click to use
a model for the critics, refiner and planner (the screen then applies it like its own Apply button).

Only 127.0.0.1 is probed (`app.server.discovery`), at the usual ports or at `discovery_ports` when that setting names
others. A click names a port and a model; both are checked against a fresh probe before anything is filled in.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, ValidationError

from app.server.discovery import KNOWN, Server, discover
from app.ui.common import esc

MAX_SHOWN = 40  # models listed per server (a long list is cut; any model can still be typed in)

# Event delegation: a model's button sends 'use' with its port and name.
SERVERS_JS = """
element.addEventListener('click', (ev) => {
  const b = ev.target.closest('button.use');
  if (!b) return;
  trigger('use', { port: parseInt(b.dataset.port, 10), model: b.dataset.model });
});
"""

CSS = """
.servers { list-style: none; padding: 0; margin: 4px 0; }
.servers li { margin-bottom: 6px; }
.servers .models { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 3px; }
.servers button.use { font: inherit; font-size: 0.85em; border: 1px solid var(--border-color-primary); border-radius: 4px;
  padding: 1px 8px; background: var(--button-secondary-background-fill); color: var(--body-text-color); cursor: pointer; }
.servers button.use.on { border-color: var(--color-accent); font-weight: 600; }
.no-servers { color: var(--body-text-color-subdued); }
"""


class UseModel(BaseModel):
    port: int = Field(ge=1, le=65535)
    model: str = Field(min_length=1, max_length=200)


def probed_ports(config) -> tuple[tuple[str, int], ...]:
    """(name, port) pairs to probe: the `discovery_ports` setting when set, else the usual servers' ports."""
    if not config.discovery_ports:
        return KNOWN
    names = {port: name for name, port in KNOWN}
    return tuple((names.get(int(p), "A model server"), int(p)) for p in config.discovery_ports.split(","))


def servers_html(servers: list[Server], ports, config) -> str:
    """The servers found and their models as buttons (the model in use marked), or one line saying none answered."""
    if not servers:
        where = ", ".join(f"{esc(name)} {port}" for name, port in ports)
        return (
            f"<p class='no-servers' id='no_servers'>No model server answered on this machine (127.0.0.1: "
            f"{where}). Start one, for example <code>ollama serve</code>, then press <b>Look again</b>.</p>"
        )
    rows = []
    for s in servers:
        on = s.base_url == config.llm_base_url
        models = "".join(
            f"<button type='button' class='use{' on' if on and m == config.critic_model else ''}' "
            f"data-port='{s.port}' data-model='{esc(m)}' title='Use {esc(m)} for the critics, refiner and planner'>"
            f"{esc(m)}</button>"
            for m in s.models[:MAX_SHOWN]
        )
        more = (
            f" <span>(+{len(s.models) - MAX_SHOWN} more: type the name below)</span>"
            if len(s.models) > MAX_SHOWN
            else ""
        )
        rows.append(
            f"<li data-port='{s.port}'><b>{esc(s.name)}</b> <code>{esc(s.base_url)}</code> · "
            f"{len(s.models)} model(s){more}<div class='models'>{models or 'no models listed'}</div></li>"
        )
    return (
        "<p>Found on this machine: one click uses a model for the critics, refiner and planner.</p>"
        f"<ul class='servers' id='server_list'>{''.join(rows)}</ul>"
    )


def chosen(data, ports) -> tuple[Server, str]:
    """The server and model a click asked for, after probing that port again; one line if it is not there."""
    try:
        ask = UseModel.model_validate(data if isinstance(data, dict) else {})
    except ValidationError:
        raise ValueError("the servers list sent something unreadable: press Look again") from None
    named = [(name, port) for name, port in ports if port == ask.port]
    if not named:
        raise ValueError(f"port {ask.port} is not one this screen probes")
    found = discover(ports=tuple(named[:1]))
    if not found or ask.model not in found[0].models:
        raise ValueError(f"the server on port {ask.port} no longer lists that model: press Look again")
    return found[0], ask.model
