"""`chief models`: the OpenAI-compatible model servers running on this machine, and the setting that uses each model."""

from __future__ import annotations

import click
from pydantic import BaseModel

from app.cli.common import Ctx, command
from app.discovery import Server


class Listed(Server):
    settings: dict[str, str]  # model -> the line of settings that uses it


class Found(BaseModel):
    servers: list[Listed]
    probed: list[str]  # "Ollama 127.0.0.1:11434", ...


@command(project=False, name="models")
@click.option(
    "--timeout",
    type=click.FloatRange(0.05, 10),
    default=0.5,
    show_default=True,
    help="Seconds to wait for each server.",
)
@click.option(
    "--port",
    "ports",
    type=click.IntRange(1, 65535),
    multiple=True,
    help="Also probe this loopback port (repeatable); the discovery_ports setting replaces the usual ports.",
)
def models(c: Ctx, timeout, ports):
    """Find model servers on 127.0.0.1 (Ollama, LM Studio, llama.cpp, vLLM, or the discovery_ports setting's
    ports, and every --port) and list their models.

    Each model comes with the one line of settings that makes CHIEF's critics, refiner and planner use it, quoted
    for a shell. Only this machine is probed."""
    from app.config import load_config
    from app.discovery import HOST, discover, ports_to_probe

    setting = load_config({"home": c.home, **c.overrides}).discovery_ports
    pairs = ports_to_probe(setting, tuple(ports))
    servers = discover(timeout=timeout, ports=pairs)
    probed = [f"{name} {HOST}:{port}" for name, port in pairs]
    lines = []
    for s in servers:
        lines.append(f"{s.name} at {s.base_url}: {len(s.models)} model(s)")
        lines += [f"  {m}\n    {s.setting_line(m)}" for m in s.models] or ["  (no models: pull or load one first)"]
    if not servers:
        lines.append(
            "no model server answered on " + ", ".join(probed) + ".\n"
            "Start one (e.g. `ollama serve` then `ollama pull qwen2.5vl`) and run `chief models` again."
        )
    data = [Listed(**s.model_dump(), settings={m: s.setting_line(m) for m in s.models}) for s in servers]
    c.out(Found(servers=data, probed=probed), "\n".join(lines))


COMMANDS = [models]
