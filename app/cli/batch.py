"""`chief batch STORIES`: generate many stories unattended (resumable; see app/services/batch.py)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from app.cli.common import EXIT_ERROR, Ctx, echo, handles_errors, json_option, pass_ctx
from generation.text import json_text, terminal

if TYPE_CHECKING:
    from rich.progress import TaskID


class BatchProgress:
    """rich bars on stderr: overall (with ETA), one per story (its stages), the current stage and shot."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.p = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self.overall: TaskID | None = None  # from batch_start, the first event
        self.tasks: dict[str, tuple[TaskID, int]] = {}  # a story's bar and its stages
        self.names: dict[str, str] = {}
        self.lock = threading.Lock()

    def __enter__(self):
        self.p.__enter__()
        return self

    def __exit__(self, *exc):
        self.p.__exit__(*exc)

    def __call__(self, e: dict) -> None:
        with self.lock:
            kind = e["event"]
            if kind == "batch_start":
                self.overall = self.p.add_task("all stories", total=e["stages"], completed=e["done"])
            elif kind == "story_start":
                self.names[e["story"]] = e["slug"][:28]
                task = self.p.add_task(f"  {self.names[e['story']]}", total=e["stages"], completed=e["done"])
                self.tasks[e["story"]] = (task, e["stages"])
            elif kind == "stage_start":
                self._describe(e["story"], e["stage"])
            elif kind == "shot":
                self._describe(e["story"], f"render shot {e['shot']}/{e['shots']} {e['status']}")
            elif kind == "stage_done":
                assert self.overall is not None
                self.p.advance(self.tasks[e["story"]][0])
                self.p.advance(self.overall)
            elif kind in ("story_done", "story_failed"):
                assert self.overall is not None
                t, stages = self.tasks[e["story"]]
                left = stages - self.p.tasks[t].completed
                self.p.update(t, completed=stages)
                self.p.advance(self.overall, left)
                self._describe(e["story"], "done" if kind == "story_done" else "FAILED: " + e["error"][:60])

    def _describe(self, key: str, what: str) -> None:
        from rich.markup import escape

        text = terminal(f"{self.names[key]} · {what}")  # a story's error quotes its text: no escapes, no markup
        self.p.update(self.tasks[key][0], description=f"  {escape(text)}")


@click.command("batch")
@click.argument("stories", type=click.Path(exists=True))
@click.option(
    "-o",
    "--out",
    "outdir",
    type=click.Path(file_okay=False),
    help="Output folder (films, archives, report, state). Default: ./<stories name>-batch",
)
@click.option(
    "--minutes",
    type=click.FloatRange(0.25, 10),
    default=1.0,
    show_default=True,
    help="Target length of a story that sets none.",
)
@click.option(
    "--iterations",
    type=click.IntRange(0, 20),
    default=1,
    show_default=True,
    help="Refine → accept → render rounds per story.",
)
@click.option(
    "--policy",
    type=click.Choice(["all", "consensus", "none"]),
    default="consensus",
    show_default=True,
    help="Which proposed edits are accepted: all; consensus (backed by two personas or a creator note); "
    "none (critique only).",
)
@click.option("--panel", help="Comma-separated persona ids (default: all builtin).")
@click.option("--size", help="WIDTHxHEIGHT of every film (default: the backend's).")
@click.option("--fps", type=click.IntRange(1, 60), help="Frames per second (default: the backend's).")
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Stories in flight at once (their LLM calls overlap; renders take turns).",
)
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="local",
    default=None,
    metavar="[ADDRESS]",
    help="Render shots and run agent calls on a Ray cluster (auto, HOST:6379, ray://HOST:10001); "
    "alone: a local one. Needs pip install 'chief[ray]'. See docs/cluster.md.",
)
@json_option
@pass_ctx
@handles_errors
def batch(c: Ctx, stories, outdir, minutes, iterations, policy, panel, size, fps, jobs, ray_address):
    """Make a film from every story in STORIES (YAML list, JSONL, or a folder of .txt/.md ideas).

    Re-running the same command continues where it stopped. Exit status 0 only if every story succeeded.
    """
    from app.services.batch import BatchRunner, Defaults, load_stories

    width = height = None
    if size:
        try:
            width, height = (int(x) for x in size.lower().split("x"))
        except ValueError:
            raise click.BadParameter("use WIDTHxHEIGHT, e.g. 640x360", param_hint="--size") from None
    defaults = Defaults(
        minutes=minutes,
        iterations=iterations,
        policy=policy,
        panel=tuple(p.strip() for p in panel.split(",") if p.strip()) if panel else None,
        width=width,
        height=height,
        fps=fps,
    )
    items = load_stories(Path(stories), defaults)
    out = Path(outdir) if outdir else Path.cwd() / f"{Path(stories).stem}-batch"
    if ray_address:
        from app.cluster import cluster_studio
        from app.config import load_config

        c._studio = cluster_studio(
            load_config({"home": c.home, **c.overrides}), None if ray_address == "local" else ray_address
        )
    c.header()
    if c.json:
        lock = threading.Lock()

        def emit(e: dict) -> None:
            with lock:
                sys.stdout.write(json_text(json.dumps(e)) + "\n")
                sys.stdout.flush()

        report = BatchRunner(c.studio, items, out, emit, jobs).run()
    else:
        with BatchProgress() as prog:
            report = BatchRunner(c.studio, items, out, prog, jobs).run()
        for s in report["stories"]:
            mark = "✓" if s["status"] == "done" else "✗"
            scores = " → ".join(str(it["scores"].get("overall", "—")) for it in s["iterations"])
            echo(f"{mark} {s['name']}: {s['film'] or s['error']}" + (f"  (panel {scores})" if scores else ""))
        echo(f"{report['ok']}/{len(report['stories'])} stories done · report: {out / 'report.html'}")
    if report["failed"]:
        sys.exit(EXIT_ERROR)


COMMANDS = [batch]
