"""What every service shares: the configuration, the repository, the media store, and the active backend
and agents (built on first use, so a command that needs neither never loads a model)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from app.config import Config
from storage.media import MediaStore
from storage.records import UsageRecord, Version
from storage.repository import Repository
from storage.run import Cancelled, ProgressSink, no_progress
from storage.schema import Usage

if TYPE_CHECKING:
    from agents.base import Critic, Planner, Refiner
    from generation.base import Backend

# progress(event): a typed event of storage.run (ShotProgress, AssembleProgress, PanelProgress, PlanProgress, ...)
ProgressFn = ProgressSink
__all__ = ["AgentSet", "Context", "ProgressFn", "no_progress"]

SHEET_FRAMES = 3  # frames per shot on the contact sheet (the film's, and one of the counts sampled per clip)
MAX_UPLOAD_PIXELS = 40_000_000  # a still uploaded or carried in an archive: decoded only below this


def derived_seed(*parts: object) -> int:
    """A seed for the n-th variation of something, stable across runs (reference and keyframe re-rolls, takes)."""
    return int(hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:8], 16)


class AgentSet(Protocol):
    """The three agent roles and what the user is told they are (app.factory.Agents, app.cluster.RayAgents)."""

    @property
    def planner(self) -> Planner: ...

    @property
    def critic(self) -> Critic: ...

    @property
    def refiner(self) -> Refiner: ...

    @property
    def label(self) -> str: ...


@dataclass
class Context:
    config: Config
    repo: Repository
    media: MediaStore
    make_backend: Callable[[Config], Backend]
    make_agents: Callable[[Config], AgentSet]
    _backend: Backend | None = field(default=None, repr=False)
    _agents: AgentSet | None = field(default=None, repr=False)

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            self._backend = self.make_backend(self.config)
        return self._backend

    @property
    def agents(self) -> AgentSet:
        if self._agents is None:
            self._agents = self.make_agents(self.config)
        return self._agents


def attach_usage(error: BaseException, usage: Usage) -> None:
    """What a failed action's requests cost rides on its error, whatever its type (a critic may fail with an
    OSError): `record_failed_usage` reads it back."""
    setattr(error, "usage", usage)  # noqa: B010 -- an attribute no exception class but AgentError declares


def record_failed_usage(ctx: Context, v: Version, role: str, mode: str, error: BaseException) -> None:
    """A failed action saves nothing but what its requests cost (the error's `usage`), so a version's agent cost
    counts every request sent; a stopped one (cancelled) counts nothing new."""
    usage = getattr(error, "usage", None)
    if isinstance(error, Cancelled) or not isinstance(usage, Usage) or not usage.calls:
        return
    with ctx.repo.write() as u:
        u.add_usage(v, UsageRecord(role=role, mode=mode, **usage.model_dump()))
