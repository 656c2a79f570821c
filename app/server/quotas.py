"""Quotas per account on a shared server: disk, renders per hour, jobs at once (all off by default: 0).

Checked by app/server/jobs.py when a job is asked for, before anything is written (not the job's record, not a file): a
refusal is one line (`QuotaReached`, a StudioError: the page's error toast, the CLI's stderr line).

- disk (`quota_disk_mb`): the media store's bytes the account's projects use (storage.repository.Unit.
  owner_media_bytes: a file shared with another account counts for each); at or over it, work that writes media
  (renders, takes, keyframes, references) is refused.
- renders per hour (`quota_renders_per_hour`): the account's render and takes jobs queued in the last 60 minutes.
- jobs at once (`quota_jobs`): the account's jobs queued or running, of every kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from app.errors import StudioError
from storage.schema import utcnow

WRITES_MEDIA = frozenset({"render", "takes", "keyframes", "reference"})
RENDER_KINDS = ("render", "takes")


class QuotaReached(StudioError):
    """One of an account's quotas is used up (one line: which, how much, what to do)."""


@dataclass(frozen=True)
class Quotas:
    disk_mb: float = 0  # 0: no limit
    renders_per_hour: int = 0
    jobs: int = 0

    @classmethod
    def of(cls, config) -> Quotas:
        return cls(config.quota_disk_mb, config.quota_renders_per_hour, config.quota_jobs)

    @property
    def off(self) -> bool:
        return not (self.disk_mb or self.renders_per_hour or self.jobs)

    def check(self, repo, user: str, kind: str, live: int) -> None:
        """Refuse (QuotaReached) a job of `kind` for account `user`, who has `live` jobs queued or running."""
        if self.jobs and live >= self.jobs:
            raise QuotaReached(
                f"{user} already has {live} job(s) queued or running (the limit is {self.jobs}): stop one or wait "
                "until one ends"
            )
        if self.renders_per_hour and kind in RENDER_KINDS:
            with repo.read() as u:
                since = utcnow() - timedelta(hours=1)
                done = sum(u.jobs_since(user, k, since) for k in RENDER_KINDS)
            if done >= self.renders_per_hour:
                raise QuotaReached(
                    f"{user} has started {done} render(s) in the last hour (the limit is {self.renders_per_hour} an "
                    "hour): try again later"
                )
        if self.disk_mb and kind in WRITES_MEDIA:
            with repo.read() as u:
                used = u.owner_media_bytes(user)
            if used >= self.disk_mb * (1 << 20):
                raise QuotaReached(
                    f"{user}'s projects use {used / (1 << 20):.1f} MB of the {self.disk_mb:g} MB disk quota: ask the "
                    "teacher for more room"
                )
