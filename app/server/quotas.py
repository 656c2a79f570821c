"""Quotas per account on a shared server: disk, renders per hour, jobs at once (all off by default: 0).

Checked by app/server/jobs.py when a job is asked for, before anything is written (not the job's record, not a file): a
refusal is one line (`QuotaReached`, a StudioError: the page's error toast, the CLI's stderr line).

- disk (`quota_disk_mb`): the media store's bytes the account's projects use (storage.repository.Unit.
  owner_media_bytes: a file shared with another account counts for each), plus what was written for them to download
  (`exports/<project>/` in the data folder: hand-off zips, archives, films that are copies rather than links to the
  store) and Gradio's copies of those (`tmp/gradio/<hash>/<name>`, the same name and size); at or over it, work that
  writes media (renders, takes, keyframes, references) or files (a fork, an export, a hand-off, an import) is
  refused. An import is refused too when the archive's media would take the account over (`check_disk`).
- renders per hour (`quota_renders_per_hour`): the account's render and takes jobs queued in the last 60 minutes.
- jobs at once (`quota_jobs`): the account's jobs queued or running, of every kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from app.errors import StudioError
from storage.schema import utcnow

WRITES_MEDIA = frozenset({"render", "takes", "keyframes", "reference"})
WRITES_FILES = frozenset({"fork", "export", "handoff", "import"})  # the Studio's own checks (`check_disk`)
EXPORTS = "exports"  # the data folder's downloads, a folder per project (app.ui.player.EXPORTS)
GRADIO_COPIES = ("tmp", "gradio")  # where Gradio copies what it serves (app.ui.private_temp_dir)
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
        if self.disk_mb and kind in WRITES_MEDIA | WRITES_FILES:
            self.check_disk(repo, user)

    def check_disk(self, repo, user: str, incoming: int = 0) -> None:
        """Refuse (QuotaReached) when account `user` is at or over its disk quota, or (`incoming`: the bytes an import
        brings) would go over it."""
        if not self.disk_mb:
            return
        used, limit = disk_bytes(repo, user), self.disk_mb * (1 << 20)
        if used >= limit:
            raise QuotaReached(
                f"{user}'s projects use {used / (1 << 20):.1f} MB of the {self.disk_mb:g} MB disk quota: ask the "
                "teacher for more room"
            )
        if used + incoming > limit:
            raise QuotaReached(
                f"{user}'s projects use {used / (1 << 20):.1f} MB of the {self.disk_mb:g} MB disk quota and this "
                f"brings {incoming / (1 << 20):.1f} MB more: ask the teacher for more room"
            )


def disk_bytes(repo, user: str) -> int:
    """What account `user` holds on the disk: its projects' media (`owner_media_bytes`) and their downloads
    (`exported_bytes`). The data folder is the database's."""
    with repo.read() as u:
        media = u.owner_media_bytes(user)
        pids = sorted(pid for pid, owner in u.owners().items() if owner == user)
    return media + exported_bytes(Path(repo.db.path).parent, pids)


def exported_bytes(home: Path, pids: list[str]) -> int:
    """The bytes of projects `pids`' downloads in `home/exports/<project>/` (a film that is a hard link to the media
    store is counted there, not again) and of Gradio's copies of them in `home/tmp/gradio/` (a file of the same name
    and size: Gradio keeps each served file under a folder named for its content hash)."""
    total, served = 0, set()
    for pid in pids:
        folder = home / EXPORTS / pid
        if not folder.is_dir() or folder.is_symlink():
            continue
        for path in folder.rglob("*"):
            st = path.lstat()
            if not path.is_file() or path.is_symlink():
                continue
            if st.st_nlink == 1:
                total += st.st_size
            served.add((path.name, st.st_size))
    copies = home.joinpath(*GRADIO_COPIES)
    if served and copies.is_dir():
        for held in copies.iterdir():
            if not held.is_dir() or held.is_symlink():
                continue
            for copy in held.iterdir():
                if copy.is_file() and not copy.is_symlink() and (copy.name, copy.stat().st_size) in served:
                    total += copy.stat().st_size
    return total
