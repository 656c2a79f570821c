"""rich progress bars on stderr for the CLI (stdout stays clean for --json), and no one else's: the
libraries' own bars ("Loading weights", "Loading pipeline components") are switched off."""

from __future__ import annotations

import importlib

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TimeRemainingColumn(), console=Console(stderr=True), transient=True)


class RenderProgress:
    """Two bars: shots of the film, and steps (or frames) of the shot being rendered."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.p = _progress() if enabled else None
        self.shots = self.steps = None

    def __enter__(self):
        if self.p:
            self.p.__enter__()
            self.shots = self.p.add_task("shots", total=None)
            self.steps = self.p.add_task("  shot", total=None, visible=False)
        return self

    def __exit__(self, *exc):
        if self.p:
            self.p.__exit__(*exc)

    def update(self, e: dict) -> None:
        if not self.p:
            return
        if e["stage"] == "render":
            done = e["shot_index"] + (1 if e["status"] in ("rendered", "reused") else 0)
            self.p.update(self.shots, total=e["shots"], completed=done, description=f"shots ({e['shot_id']} {e['status']})")
            self.p.update(self.steps, total=e["steps"], completed=e["step"], visible=e["status"] == "rendering",
                          description=f"  {e['shot_id']}")
        elif e["stage"] == "assemble":
            self.p.update(self.shots, description="assembling the film")
            self.p.update(self.steps, visible=False)


class StageProgress:
    """One bar for a stage of N items (critics, stories)."""

    def __init__(self, label: str, enabled: bool = True) -> None:
        self.label = label
        self.p = _progress() if enabled else None
        self.task = None

    def __enter__(self):
        if self.p:
            self.p.__enter__()
            self.task = self.p.add_task(self.label, total=None)
        return self

    def __exit__(self, *exc):
        if self.p:
            self.p.__exit__(*exc)

    def update(self, e: dict) -> None:
        if self.p:
            self.p.update(self.task, total=e.get("total"), completed=e.get("done", 0),
                          description=f"{self.label} ({e.get('persona', '')})")


def quiet_libraries() -> None:
    """Switch off the progress bars transformers, diffusers and huggingface_hub draw while loading weights
    (sentence embeddings for panel diversity, diffusion pipelines). Only libraries already installed are
    touched; their log messages are kept."""
    for module, fn in (("transformers.utils.logging", "disable_progress_bar"),
                       ("diffusers.utils.logging", "disable_progress_bar"),
                       ("huggingface_hub.utils", "disable_progress_bars")):
        try:
            getattr(importlib.import_module(module), fn)()
        except ImportError:
            continue
