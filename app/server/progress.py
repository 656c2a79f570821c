"""rich progress bars on stderr for the CLI (stdout stays clean for --json), and no one else's: the
libraries' own bars ("Loading weights", "Loading pipeline components") are switched off."""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from storage.run import (
    AssembleProgress,
    PanelProgress,
    PlanProgress,
    ProgressEvent,
    RefineProgress,
    ShotProgress,
    Streamed,
)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )


class RenderProgress:
    """Two bars: shots of the film, and steps (or frames) of the shot being rendered."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.p = _progress() if enabled else None
        self.bars: tuple[TaskID, TaskID] | None = None  # (shots, steps) while the bars are shown

    def __enter__(self):
        if self.p:
            self.p.__enter__()
            self.bars = (self.p.add_task("shots", total=None), self.p.add_task("  shot", total=None, visible=False))
        return self

    def __exit__(self, *exc):
        if self.p:
            self.p.__exit__(*exc)

    def update(self, e: ProgressEvent) -> None:
        """Fed with render events; keyframe and take events move the same bars (a still, a take)."""
        if not self.p or not self.bars:
            return
        shots, steps = self.bars
        if isinstance(e, ShotProgress):
            done = e.shot_index + (1 if e.status in ("rendered", "reused") else 0)
            self.p.update(shots, total=e.shots, completed=done, description=f"shots ({e.shot_id} {e.status})")
            self.p.update(
                steps,
                total=e.steps,
                completed=e.step,
                visible=e.status == "rendering",
                description=f"  {e.shot_id}",
            )
        elif isinstance(e, AssembleProgress):
            self.p.update(shots, description="assembling the film")
            self.p.update(steps, visible=False)


def streamed(e: Streamed) -> str:
    """' · 312 tokens · 41 tok/s' while an answer streams in (and a retry's note), else ''."""
    out = f" · {e.tokens:,} tokens" if e.tokens else ""
    out += f" · {e.tokens_per_s:.0f} tok/s" if e.tokens_per_s else ""
    return out + (f" · {e.note[:60]}" if e.note else "")


class StageProgress:
    """One bar for a stage: critics, the scenes of a plan, the refiner; with what is streaming in.

    Critics: personas done (the bar also moves as each one watches its parts), the last persona's part and tokens.
    A plan: the story, then each scene. The refiner: its streamed tokens."""

    def __init__(self, label: str, enabled: bool = True) -> None:
        self.label = label
        self.p = _progress() if enabled else None
        self.task: TaskID | None = None  # while the bar is shown

    def __enter__(self):
        if self.p:
            self.p.__enter__()
            self.task = self.p.add_task(self.label, total=None)
        return self

    def __exit__(self, *exc):
        if self.p:
            self.p.__exit__(*exc)

    def update(self, e: ProgressEvent) -> None:
        if not self.p or self.task is None:
            return
        task = self.task
        if isinstance(e, PanelProgress):
            part = f" part {e.chunk}/{e.chunks}" if e.chunks > 1 else ""
            self.p.update(
                task,
                total=e.total,
                completed=max(e.done, e.fraction * e.total),
                description=f"{self.label} ({e.persona}{part}{streamed(e)})",
            )
        elif isinstance(e, PlanProgress):
            what = f"{e.scene} {e.status}".strip()
            self.p.update(task, total=e.total, completed=e.done, description=f"{self.label} ({what}{streamed(e)})")
        elif isinstance(e, RefineProgress):
            self.p.update(task, total=None, description=f"{self.label}{streamed(e)}")


def quiet_libraries() -> None:
    """Switch off the progress bars transformers, diffusers and huggingface_hub draw while loading weights
    (sentence embeddings for panel diversity, diffusion pipelines); their log messages are kept. Imports none of
    them (torch alone is ~300 MB and seconds on every command): huggingface_hub and transformers read
    HF_HUB_DISABLE_PROGRESS_BARS when imported; diffusers' bars are switched off where pipelines load
    (`generation.pipelines`); a library already imported is switched off now."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for module, fn in (
        ("transformers.utils.logging", "disable_progress_bar"),
        ("diffusers.utils.logging", "disable_progress_bar"),
        ("huggingface_hub.utils", "disable_progress_bars"),
    ):
        if module in sys.modules:
            getattr(sys.modules[module], fn)()
