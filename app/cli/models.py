"""`chief models`: the OpenAI-compatible model servers running on this machine, and the setting that uses each model;
`chief models pull`: a video pipeline or a GGUF language model from the hub into its shared cache."""

from __future__ import annotations

import dataclasses

import click
from pydantic import BaseModel

from app.cli.common import Ctx, command, echo, json_option
from app.server.discovery import Server


class Listed(Server):
    settings: dict[str, str]  # model -> the line of settings that uses it


class Found(BaseModel):
    servers: list[Listed]
    probed: list[str]  # "Ollama 127.0.0.1:11434", ...


@click.group(name="models", invoke_without_command=True)
@json_option
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
@click.pass_context
def models(ctx, timeout, ports):
    """Find model servers on 127.0.0.1 (Ollama, LM Studio, llama.cpp, vLLM, or the discovery_ports setting's
    ports, and every --port) and list their models.

    Each model comes with the one line of settings that makes CHIEF's critics, refiner and planner use it, quoted
    for a shell. Only this machine is probed. `chief models pull` fetches a model from the hub."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(listing, timeout=timeout, ports=ports)


@command(project=False, name="list", hidden=True)
@click.option("--timeout", type=float, default=0.5)
@click.option("--port", "ports", type=int, multiple=True)
def listing(c: Ctx, timeout, ports):
    from app.config import load_config
    from app.server.discovery import HOST, discover, ports_to_probe

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


@command(project=False, name="pull")
@click.argument("name", required=False)
@click.option("--llm", is_flag=True, help="A GGUF language model for the agents, run by CHIEF (llama-cpp-python).")
@click.option(
    "--variant",
    help="Weights variant of a diffusers pipeline (the file infix, e.g. fp16, bf16); CHIEF_VIDEO_VARIANT=V loads it.",
)
@click.option("--revision", default="main", show_default=True, help="Branch, tag or commit on the hub.")
def pull(c: Ctx, name, llm, variant, revision):
    """Fetch NAME (a name from the list below, a hub id org/name, or one file org/name:path such as a family's draft
    LoRA) into the Hugging Face cache, with a progress bar; a pull that was interrupted continues where it stopped.
    Then CHIEF_VIDEO_MODEL=HUB_ID (or, with --llm, the CHIEF_LOCAL_LLM line it prints) uses it offline.

    Honours HF_ENDPOINT, HF_TOKEN (sent to the endpoint only; CHIEF never prints or stores it) and HF_HOME. The
    files' sizes are checked against the free disk first; a gated model's licence is said in one line.

    \b
    video: wan2.1-1.3b, wan2.2-5b, wan2.2-a14b, ltx-video, cogvideox-2b, cogvideox-5b, hunyuanvideo
    --llm: qwen2.5-3b (default), llama3.2-3b, qwen2.5-7b"""
    from generation import hub

    if name is None:
        if not llm:
            raise click.UsageError("name a model: a hub id (org/name) or one of the names in --help")
        name = hub.LLM_MODELS[0].name
    if llm and variant:
        raise click.UsageError("--variant is for diffusers pipelines; a GGUF's quantization is in its file name")
    repo_id, patterns = hub.lookup(name, llm=llm)
    plan = hub.plan(repo_id, revision=revision, variant=variant, patterns=patterns, llm=llm)
    err = lambda line: echo(line, err=True)  # noqa: E731 -- progress and notes go to stderr
    family = None
    if plan.pipeline:
        family = _family(plan)
        err(f"{repo_id}: {plan.pipeline}" + (f" ({family})" if family else " (not a video family CHIEF renders)"))
    err(plan.licence_line(hub.endpoint()))
    need, free = hub.check_disk(plan)
    err(
        f"{len(plan.files)} file(s), {hub.size_text(plan.total_bytes)}; {hub.size_text(need)} to fetch, "
        f"{hub.size_text(free)} free in {plan.cache_dir}"
    )
    done = hub.pull(plan)
    setting = None
    if llm:
        setting = f"CHIEF_LOCAL_LLM={repo_id}/{done.files[0]}"
    elif family:  # the variant's weights load when the loader asks for them by name
        setting = f"CHIEF_VIDEO_MODEL={repo_id}" + (f" CHIEF_VIDEO_VARIANT={variant}" if variant else "")
    result = {**dataclasses.asdict(done), "family": family, "setting": setting}  # the line that makes CHIEF use it
    lines = [f"pulled {repo_id} ({hub.size_text(done.bytes)}, commit {done.commit[:12]}) into {done.folder}"]
    if not plan.pipeline and not llm:
        lines += [f"  {done.folder}/{f}" for f in done.files]
    if done.resumed:
        lines.append("continued where the last pull stopped: " + ", ".join(done.resumed))
    if setting:
        lines.append(f"use it: {setting}")
    c.out(result, "\n".join(lines))


def _family(plan) -> str | None:
    from generation.families import family_for

    row = family_for(plan.pipeline, plan.index or {})
    return row.name if row else None


models.add_command(listing)
models.add_command(pull)
COMMANDS = [models]
