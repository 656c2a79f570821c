"""The teacher's report: per account, each project's versions over time with their renders, disk use, time spent in
the queue and the panel's scores (the measures the CHIEF paper's study reports). `chief class report [--csv]` and
the web app's Class screen (app/ui/teacher.py) show it; only a teacher (or the machine's own CLI) reads it.

The time in the queue is read from the fair queue's job records (the `jobs` table: what a version's jobs waited).
"""

from __future__ import annotations

import csv
import io
from datetime import datetime

from pydantic import BaseModel

from app.context import Context
from app.errors import StudioError
from generation.text import csv_cell
from storage.owners import current
from storage.schema import DIMENSIONS

COLUMNS = (
    "account",
    "project_id",
    "title",
    "version",
    "created_at",
    "renders",
    "critiques",
    "disk_bytes",
    "queue_seconds",
    *DIMENSIONS,
    "mean_score",
)


class VersionLine(BaseModel):
    """One version of one project in the report."""

    account: str
    project_id: str
    title: str
    version: int
    created_at: datetime
    renders: int
    critiques: int
    disk_bytes: int  # the stored files of this version's renders (films and sidecars), each counted once
    queue_seconds: float | None  # None: no job on it has started (the `jobs` table)
    scores: dict[str, float]  # each dimension's mean over the version's latest panel on a film; {} when none

    @property
    def mean_score(self) -> float | None:
        return round(sum(self.scores.values()) / len(self.scores), 3) if self.scores else None


class Classroom:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def report(self) -> list[VersionLine]:
        actor = current()
        if actor is not None and not actor.teacher:
            raise StudioError("only a teacher reads the class report")
        lines: list[VersionLine] = []
        with self.ctx.repo.read() as u:
            owners = u.owners()
            for p in sorted(u.projects(), key=lambda p: (owners[p.id], p.created_at)):
                for node in sorted(u.version_nodes(p.id), key=lambda n: n.number):
                    v = u.version(p.id, node.number)
                    renders = u.renders(v)
                    shas = {s for r in renders for s in (r.film_sha256, *r.media.values())}
                    sizes = u.media(sorted(shas))
                    film = _latest_film_panel(u.critiques(v, latest_only=False))
                    scores = _means([c.critique.scores.scored() for c in film])
                    lines.append(
                        VersionLine(
                            account=owners[p.id],
                            project_id=p.id,
                            title=p.title,
                            version=v.number,
                            created_at=v.created_at,
                            renders=len(renders),
                            critiques=len(film),
                            disk_bytes=sum(m.size for m in sizes.values()),
                            queue_seconds=u.queue_seconds(p.id, v.number),
                            scores=scores,
                        )
                    )
        return lines


def _latest_film_panel(critiques: list) -> list:
    """The critiques of the latest panel run on a film (keyframe screenings are not the film's scores)."""
    film = [c for c in critiques if c.screening == "film"]
    return [c for c in film if c.batch == film[-1].batch] if film else []


def _means(scored: list[dict[str, float]]) -> dict[str, float]:
    """Each dimension's mean over the critics that scored it (sound is not scored for a silent film)."""
    return {d: round(sum(vals) / len(vals), 3) for d in DIMENSIONS if (vals := [s[d] for s in scored if d in s])}


def to_csv(lines: list[VersionLine]) -> str:
    """The report as CSV, every cell through `generation.text.csv_cell`: a title such as `=HYPERLINK(…)` is text in
    a spreadsheet, never a formula."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for ln in lines:
        cells = [
            ln.account,
            ln.project_id,
            ln.title,
            ln.version,
            ln.created_at.isoformat(),
            ln.renders,
            ln.critiques,
            ln.disk_bytes,
            "" if ln.queue_seconds is None else ln.queue_seconds,
            *[ln.scores.get(d, "") for d in DIMENSIONS],
            "" if ln.mean_score is None else ln.mean_score,
        ]
        w.writerow([csv_cell(cell) for cell in cells])
    return out.getvalue()
