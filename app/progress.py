"""rich progress bars on stderr for the CLI (stdout stays clean for --json), and no one else's: the
libraries' own bars ("Loading weights", "Loading pipeline components") are switched off."""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


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
            self.p.update(
                self.shots, total=e["shots"], completed=done, description=f"shots ({e['shot_id']} {e['status']})"
            )
            self.p.update(
                self.steps,
                total=e["steps"],
                completed=e["step"],
                visible=e["status"] == "rendering",
                description=f"  {e['shot_id']}",
            )
        elif e["stage"] == "assemble":
            self.p.update(self.shots, description="assembling the film")
            self.p.update(self.steps, visible=False)


def streamed(e: dict) -> str:
    """' · 312 tokens · 41 tok/s' while an answer streams in (and a retry's note), else ''."""
    out = f" · {e['tokens']:,} tokens" if e.get("tokens") else ""
    out += f" · {e['tokens_per_s']:.0f} tok/s" if e.get("tokens_per_s") else ""
    return out + (f" · {e['note'][:60]}" if e.get("note") else "")


class StageProgress:
    """One bar for a stage of N items (critics, scenes of a plan, stories), with what is streaming in.

    Critics: personas done (the bar also moves as each one watches its parts), the last persona's part and tokens.
    A plan: the story, then each scene. Anything else: {"done", "total"} and a word."""

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
        if not self.p:
            return
        total, done = e.get("total"), e.get("done", 0)
        if e.get("stage") == "critique" and total:
            part = f" part {e['chunk']}/{e['chunks']}" if e.get("chunks", 1) > 1 else ""
            self.p.update(
                self.task,
                total=total,
                completed=max(done, e.get("fraction", 0) * total),
                description=f"{self.label} ({e.get('persona', '')}{part}{streamed(e)})",
            )
        elif e.get("stage") == "plan":
            what = f"{e.get('scene', '')} {e.get('status', '')}".strip()
            self.p.update(self.task, total=total, completed=done, description=f"{self.label} ({what}{streamed(e)})")
        elif e.get("stage") == "refine":
            self.p.update(self.task, total=None, description=f"{self.label}{streamed(e)}")
        else:
            self.p.update(self.task, total=total, completed=done, description=f"{self.label} ({e.get('persona', '')})")


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
