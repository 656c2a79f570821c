"""The fair queue of the web server's long work (app/server/jobs.py holds the jobs; this module only chooses).

Renders, takes, keyframes, references, critiques and plans from every account wait here until a place is free, in
two lanes (`LANES`): the GPU lane (renders, takes, stills: at most `Limits.running` at once, the GPU's places — the
backend's parallel workers, 1 on one device, one per render worker on Ray) and the CPU lane (plans, critiques: a
few at once), each with at most `Limits.per_user` of one account's. When a place frees, the account
served longest ago goes first (one never served before everyone else), then its oldest job: round-robin between
accounts, so ten renders queued by one account do not delay another account's first. A teacher may pause the queue
(nothing more starts; what runs goes on).

`FairQueue` is a plain structure: its owner (Jobs) calls it under its own lock. `line()` says a queued job's place in
words, with an estimate only from measured durations (`Durations`); with none measured it says the place alone.
"""

from __future__ import annotations

import statistics
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

# Two lanes, each fair between accounts and with places of its own: what holds the GPU (renders, takes, stills) and
# what does not (plans and critiques against an endpoint, or the embedded agents on the CPU). A plan never waits
# behind the class's renders.
LANES = {"gpu": frozenset({"render", "takes", "keyframes", "reference"}), "cpu": frozenset({"critique", "plan"})}
QUEUED_KINDS = LANES["gpu"] | LANES["cpu"]


def lane_of(kind: str) -> str:
    """The lane a queued kind waits in ("gpu" or "cpu")."""
    return next(name for name, kinds in LANES.items() if kind in kinds)


DURATIONS_KEPT = 20  # finished jobs of a kind an estimate is measured from (the median of the newest)


class Queued(Protocol):
    """What the queue needs of a job (app.server.jobs.Job)."""

    user: str
    kind: str
    seq_queued: int

    @property
    def elapsed(self) -> float: ...


@dataclass(frozen=True)
class Limits:
    """How many queued kinds of jobs run at once: `running` in all (0: no limit), `per_user` of one account's
    (0: no limit)."""

    running: int = 0
    per_user: int = 0


@dataclass
class FairQueue:
    limits: Limits = field(default_factory=Limits)
    paused: bool = False
    _waiting: dict[str, deque] = field(default_factory=dict)
    _running: Counter = field(default_factory=Counter)
    _served: dict[str, int] = field(default_factory=dict)  # account -> tick of its last job started
    _tick: int = 0

    @property
    def running(self) -> int:
        return sum(self._running.values())

    def running_of(self, user: str) -> int:
        return self._running[user]

    def add(self, job: Queued) -> None:
        self._waiting.setdefault(job.user, deque()).append(job)

    def remove(self, job: Queued) -> bool:
        """Take a queued job out (stopped or cancelled before it started); False when it was not waiting."""
        waiting = self._waiting.get(job.user)
        if not waiting or job not in waiting:
            return False
        waiting.remove(job)
        if not waiting:
            del self._waiting[job.user]
        return True

    def admit(self) -> list:
        """The jobs to start now, in order (each counted running)."""
        started = []
        while not self.paused and not self._full(self.running, self.limits.running):
            user = self._next(self._waiting, self._running, self._served, eligible_only=True)
            if user is None:
                break
            job = self._waiting[user].popleft()
            if not self._waiting[user]:
                del self._waiting[user]
            self._running[user] += 1
            self._tick += 1
            self._served[user] = self._tick
            started.append(job)
        return started

    def finished(self, job: Queued) -> None:
        """A job the queue admitted ended: its place is free."""
        if self._running[job.user] > 0:
            self._running[job.user] -= 1
        if self._running[job.user] == 0:
            del self._running[job.user]

    def order(self) -> list:
        """Every queued job in the order the queue would start them if places freed one by one (the same choice
        as `admit`, with the accounts' running jobs as they are now)."""
        waiting = {u: deque(js) for u, js in self._waiting.items()}
        served = dict(self._served)
        tick, out = self._tick, []
        while waiting:
            user = self._next(waiting, self._running, served, eligible_only=False)
            assert user is not None
            out.append(waiting[user].popleft())
            if not waiting[user]:
                del waiting[user]
            tick += 1
            served[user] = tick
        return out

    def _next(self, waiting: dict, running: Counter, served: dict, eligible_only: bool) -> str | None:
        """The account whose job starts next: one under its own limit first, then the one served longest ago (never:
        first), then the one whose oldest job waited longest."""

        def key(user: str):
            at_limit = self._full(running[user], self.limits.per_user)
            return (at_limit, served.get(user, -1), waiting[user][0].seq_queued)

        users = [u for u in waiting if not (eligible_only and self._full(running[u], self.limits.per_user))]
        return min(users, key=key) if users else None

    @staticmethod
    def _full(n: int, limit: int) -> bool:
        return limit > 0 and n >= limit


class Durations:
    """Measured run times of finished jobs by kind: the newest DURATIONS_KEPT from the database at first use, then
    each job that ends here. `typical(kind)`: their median, or None with none measured."""

    def __init__(self, load: Callable[[str, int], list[float]]) -> None:
        self._load = load
        self._seen: dict[str, deque] = {}

    def _of(self, kind: str) -> deque:
        if kind not in self._seen:
            self._seen[kind] = deque(reversed(self._load(kind, DURATIONS_KEPT)), maxlen=DURATIONS_KEPT)
        return self._seen[kind]

    def add(self, kind: str, seconds: float) -> None:
        self._of(kind).append(seconds)

    def typical(self, kind: str) -> tuple[float, int] | None:
        """(median seconds, how many measured), or None."""
        seen = self._of(kind)
        return (statistics.median(seen), len(seen)) if seen else None


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def wait_estimate(
    ahead: Iterable[Queued], running: Iterable[Queued], places: int, durations: Durations
) -> float | None:
    """Seconds until a job starts, estimated: what the running jobs have left plus the typical run of each job ahead,
    shared over the places. None when a kind involved has no measured duration (no made-up number)."""
    total = 0.0
    for job in running:
        typical = durations.typical(job.kind)
        if typical is None:
            return None
        total += max(typical[0] - job.elapsed, 0.0)
    for job in ahead:
        typical = durations.typical(job.kind)
        if typical is None:
            return None
        total += typical[0]
    return total / max(places, 1)


def line(position: int, wait: float | None, paused: bool) -> str:
    """A queued job's place in words: "2nd in line · starts in about 3 min (estimated from recent jobs)"."""
    text = f"queued: {ordinal(position)} in line"
    if paused:
        return text + " · the queue is paused by the teacher"
    if wait is None:
        return text
    if wait < 60:
        return text + " · starts in under a minute (estimated from recent jobs)"
    return text + f" · starts in about {round(wait / 60)} min (estimated from recent jobs)"


def recorded_jobs(repo, live: bool = False, limit: int = 200) -> list:
    """The jobs' records (the `jobs` table), newest first: every account's for a teacher, the local owner or no one
    in particular (storage.owners), else the acting account's own; queued and running ones only with `live`."""
    from storage.owners import LOCAL_OWNER, current

    actor = current()
    with repo.read() as u:
        rows = u.jobs(("queued", "running") if live else (), limit=limit if actor is None else 100_000)
    if actor is not None and not actor.teacher and actor.name != LOCAL_OWNER:
        rows = [r for r in rows if r.owner == actor.name]
    return rows[:limit]
