"""What every service shares: the configuration, the repository, the media store, and the active backend
and agents (built on first use, so a command that needs neither never loads a model)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.config import Config
from storage.media import MediaStore
from storage.records import UsageRecord, Version
from storage.repository import Repository
from storage.run import Cancelled, ProgressSink, no_progress
from storage.schema import Usage

# progress(event): a typed event of storage.run (ShotProgress, AssembleProgress, PanelProgress, PlanProgress, ...)
ProgressFn = ProgressSink
__all__ = ["Context", "ProgressFn", "no_progress"]


def derived_seed(*parts: object) -> int:
    """A seed for the n-th variation of something, stable across runs (reference and keyframe re-rolls, takes)."""
    return int(hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:8], 16)


@dataclass
class Context:
    config: Config
    repo: Repository
    media: MediaStore
    make_backend: Callable[[Config], Any]
    make_agents: Callable[[Config], Any]
    _backend: Any = field(default=None, repr=False)
    _agents: Any = field(default=None, repr=False)

    @property
    def backend(self):
        if self._backend is None:
            self._backend = self.make_backend(self.config)
        return self._backend

    @property
    def agents(self):
        if self._agents is None:
            self._agents = self.make_agents(self.config)
        return self._agents


def record_failed_usage(ctx: Context, v: Version, role: str, mode: str, error: BaseException) -> None:
    """A failed action saves nothing but what its requests cost (the error's `usage`), so a version's agent cost
    counts every request sent; a stopped one (cancelled) counts nothing new."""
    usage = getattr(error, "usage", None)
    if isinstance(error, Cancelled) or not isinstance(usage, Usage) or not usage.calls:
        return
    with ctx.repo.write() as u:
        u.add_usage(v, UsageRecord(role=role, mode=mode, **usage.model_dump()))
