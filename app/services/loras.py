"""A creator's LoRAs: added to a project from a file, listed, removed.

A LoRA lives in the storyboard (`Storyboard.loras`: name, file hash, weight, whose shots it acts on), so it is
versioned with the film and an archive carries its file (media store, by hash); adding or removing one makes a new
version. A LoRA is checked against the video model before anything is written (keys and shapes, from the files'
headers: `DiffusersBackend.check_lora`); one that does not fit is refused in one line. On the animatic backend,
which takes no LoRA, it is stored unchecked and checked before the first shot the model renders.
"""

from __future__ import annotations

import re
from pathlib import Path

from app.context import Context
from app.errors import StudioError
from app.services.projects import Projects
from generation.base import RenderError
from storage.records import Version
from storage.schema import MAX_LORAS, Lora

_NAME = re.compile(r"[^A-Za-z0-9 _.-]+")


class Loras:
    def __init__(self, ctx: Context, projects: Projects) -> None:
        self.ctx, self.projects = ctx, projects

    def add(
        self,
        pid: str,
        file: Path,
        *,
        scale: float = 1.0,
        name: str | None = None,
        character: str | None = None,
        base: int | str | None = None,
    ) -> tuple[Version, str]:
        """A child version with the LoRA in `file` (a character's, or every shot's when `character` is None);
        (version, how it was checked). Refused in one line, with nothing written, when it does not fit the model."""
        v = self.projects.version(pid, base)
        board = v.storyboard
        file = Path(file)
        if not file.is_file():
            raise StudioError(f"{file} is not a file")
        if file.suffix.lower() != ".safetensors":
            raise StudioError(f"{file.name}: a LoRA is a .safetensors file")
        if character is not None and character not in {c.name for c in board.characters}:
            raise StudioError(f"no character {character!r} in v{v.number}'s bible")
        if not -4 <= scale <= 4:
            raise StudioError(f"--scale {scale:g} is out of range (-4 to 4)")
        name = (name or _NAME.sub(" ", file.stem).strip()[:80] or "lora").strip()
        if any(lo.name == name for lo in board.loras):
            raise StudioError(f"v{v.number} already has a LoRA named {name!r} (remove it first, or give --name)")
        if len(board.loras) >= MAX_LORAS:
            raise StudioError(f"v{v.number} has {MAX_LORAS} LoRAs, the most a storyboard holds")
        checked = self.check(file)
        stored = self.ctx.media.put(file, "safetensors", move=False)
        lora = Lora(name=name, sha256=stored.sha256, scale=scale, character=character)
        after = board.model_copy(update={"loras": [*board.loras, lora]})
        self.projects.check_board(after)
        whose = f"{character}'s shots" if character else "every shot"
        message = f"LoRA {name} ({whose}, weight {scale:g})"
        with self.ctx.repo.write() as u:
            u.add_media([stored])
            child = u.add_child(u.version(pid, v.number), after, "edit", message)[0]
        return child, checked

    def check(self, file: Path) -> str:
        """How the LoRA fits the video model, in words; a StudioError (one line) when it does not."""
        check = getattr(self.ctx.backend, "check_lora", None)
        if check is None:
            return f"not checked: {self.ctx.backend.name} takes no LoRA (checked before the model's first shot)"
        try:
            return f"fits {self.ctx.backend.model}: {check(file).text}"
        except RenderError as e:
            raise StudioError(f"LoRA refused: {e}") from None

    def remove(self, pid: str, name: str, base: int | str | None = None) -> Version:
        v = self.projects.version(pid, base)
        kept = [lo for lo in v.storyboard.loras if lo.name != name]
        if len(kept) == len(v.storyboard.loras):
            raise StudioError(f"v{v.number} has no LoRA named {name!r}")
        after = v.storyboard.model_copy(update={"loras": kept})
        return self.projects.save_storyboard(pid, after, v.number, f"LoRA {name} removed")[0]

    def list(self, pid: str, ref: int | str | None = None) -> list[Lora]:
        return list(self.projects.version(pid, ref).storyboard.loras)
