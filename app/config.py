"""Configuration: environment variables, then a chief.toml, then flags (flags win).

Whatever is active is reported by `Config.describe()` and shown to the user (CLI header, UI status
bar): never a silent downgrade. The API key is held in memory only: it is never written to the
database, an archive or a log, and never printed.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

ENV = {  # field -> environment variable
    "home": "CHIEF_HOME",
    "backend": "CHIEF_VIDEO_BACKEND",
    "model": "CHIEF_VIDEO_MODEL",
    "i2v_model": "CHIEF_VIDEO_I2V_MODEL",
    "device": "CHIEF_DEVICE",
    "dtype": "CHIEF_DTYPE",
    "cpu_offload": "CHIEF_CPU_OFFLOAD",
    "vae_tiling": "CHIEF_VAE_TILING",
    "steps": "CHIEF_STEPS",
    "guidance": "CHIEF_GUIDANCE",
    "llm_base_url": "CHIEF_LLM_BASE_URL",
    "critic_model": "CHIEF_CRITIC_MODEL",
    "refiner_model": "CHIEF_REFINER_MODEL",
    "planner_model": "CHIEF_PLANNER_MODEL",
    "agents": "CHIEF_AGENTS",
    "narration": "CHIEF_NARRATION",
    "frames_per_shot": "CHIEF_FRAMES_PER_SHOT",
    "llm_timeout": "CHIEF_LLM_TIMEOUT",
    "llm_max_retries": "CHIEF_LLM_MAX_RETRIES",
    "llm_backoff": "CHIEF_LLM_BACKOFF",
    "llm_concurrency": "CHIEF_LLM_CONCURRENCY",
    "image_detail": "CHIEF_IMAGE_DETAIL",
    "auth": "CHIEF_AUTH",
    "ray_address": "CHIEF_RAY_ADDRESS",
}


def default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "chief"


@dataclass(frozen=True)
class Config:
    home: Path = field(default_factory=default_home)
    backend: str = "animatic"  # animatic | diffusers
    model: str = ""  # diffusers hub id or local folder
    i2v_model: str = ""  # optional image-to-video model for continuity
    device: str = ""  # "" = best available
    dtype: str = ""
    cpu_offload: bool = False
    vae_tiling: bool = False
    steps: int | None = None
    guidance: float | None = None
    llm_base_url: str = ""
    api_key: str = field(default="", repr=False)
    critic_model: str = ""
    refiner_model: str = ""
    planner_model: str = ""
    agents: str = ""  # llm | offline; "" = llm when an endpoint is configured, else offline
    narration: bool = True
    frames_per_shot: int = 3
    llm_timeout: float = 120.0
    llm_max_retries: int = 3
    llm_backoff: float = 1.0  # first retry delay in seconds; doubles each retry
    llm_concurrency: int = 4
    image_detail: str = "low"
    auth: str = field(default="", repr=False)  # user:password for `chief serve`
    ray_address: str = ""  # `chief serve` on a Ray cluster: "local", "auto", "HOST:6379" or "ray://..."

    @property
    def agent_mode(self) -> str:
        if self.agents:
            return self.agents
        return "llm" if self.llm_base_url or self.api_key else "offline"

    @property
    def db_path(self) -> Path:
        return self.home / "chief.db"

    @property
    def media_root(self) -> Path:
        return self.home / "media"

    def describe(self) -> dict:
        """What is active, for the user's eyes (never includes the key)."""
        mode = self.agent_mode
        return {
            "home": str(self.home),
            "backend": self.backend,
            "model": self.model or ("(none: animatic previz)" if self.backend == "animatic" else "(not set)"),
            "agents": mode if mode == "llm" else "offline (embedded heuristic agents, no LLM)",
            "llm_endpoint": self.llm_base_url or ("api.openai.com" if mode == "llm" else ""),
            "critic_model": self.critic_model if mode == "llm" else "",
            "refiner_model": self.refiner_model if mode == "llm" else "",
            "planner_model": self.planner_model if mode == "llm" else "",
        }


def _coerce(name: str, value):
    kind = {f.name: f.type for f in fields(Config)}[name]
    if isinstance(value, str):
        if kind == "bool":
            return value.strip().lower() in ("1", "true", "yes", "on")
        if kind == "int | None" or kind == "int":
            return int(value) if value.strip() else None
        if kind == "float | None" or kind == "float":
            return float(value) if value.strip() else None
        if kind == "Path":
            return Path(value).expanduser()
    return Path(value).expanduser() if kind == "Path" else value


def load_config(overrides: dict | None = None, environ: dict | None = None) -> Config:
    env = os.environ if environ is None else environ
    values: dict = {}
    for name, var in ENV.items():
        if env.get(var):
            values[name] = _coerce(name, env[var])
    key = env.get("CHIEF_LLM_API_KEY") or env.get("OPENAI_API_KEY")
    if key:
        values["api_key"] = key
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    home = Path(overrides.get("home") or values.get("home") or default_home()).expanduser()
    for toml_path in (Path.cwd() / "chief.toml", home / "chief.toml"):
        if toml_path.is_file():
            data = tomllib.loads(toml_path.read_text())
            if "api_key" in data:
                raise ValueError(f"{toml_path}: put the API key in CHIEF_LLM_API_KEY, not in a file")
            for name, value in data.items():
                if name not in ENV:
                    raise ValueError(f"{toml_path}: unknown setting {name!r}")
                values.setdefault(name, _coerce(name, value))
            break
    values.update({k: _coerce(k, v) if isinstance(v, str) and k != "api_key" else v for k, v in overrides.items()})
    values["home"] = home
    cfg = Config(**values)
    if cfg.backend not in ("animatic", "diffusers"):
        raise ValueError(f"unknown video backend {cfg.backend!r} (animatic or diffusers)")
    if cfg.backend == "diffusers" and not cfg.model:
        raise ValueError("CHIEF_VIDEO_BACKEND=diffusers needs CHIEF_VIDEO_MODEL (a local folder or a cached hub id)")
    if cfg.agents not in ("", "llm", "offline"):
        raise ValueError(f"CHIEF_AGENTS must be llm or offline, not {cfg.agents!r}")
    return cfg


def with_overrides(cfg: Config, **changes) -> Config:
    return replace(cfg, **changes)
