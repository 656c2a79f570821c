"""Speed without retraining, as settings: diffusers' cache hooks, the attention backend, regional compilation.

Each is handed to diffusers as it is (`transformer.enable_cache(config)`, `transformer.set_attention_backend(name)`,
`transformer.compile_repeated_blocks()`), each is refused in one line where this machine cannot do it, and each is
in the render label. What changes the picture (a cache, another attention kernel) is also in the clip key.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

from .base import RenderError
from .families import Cache

CACHE_MODES = ("off", "draft", "all")  # the row's cache: never, on drafts (default), on finals too
ATTENTION = ("auto", "native", "flash", "sage")
COMPILE = ("auto", "on", "off")
_ATTENTION_PACKAGE = {"flash": "flash_attn", "sage": "sageattention"}


def installed() -> dict[str, bool]:
    """Which attention kernels are importable."""
    return {name: importlib.util.find_spec(pkg) is not None for name, pkg in _ATTENTION_PACKAGE.items()}


@dataclass(frozen=True)
class Speed:
    """The speed settings of the diffusers backend (CHIEF_VIDEO_CACHE, CHIEF_VIDEO_ATTENTION, CHIEF_VIDEO_COMPILE,
    CHIEF_VIDEO_DRAFT_LORA)."""

    cache: str = "draft"
    attention: str = "auto"
    compile: str = "auto"
    draft_lora: tuple[str, ...] = ()  # files (one per expert) over the family row's default hub files

    def check(self, device: str) -> None:
        """Refuse, in one line and before loading, what this device or this install cannot do."""
        cuda = device.split(":")[0] == "cuda"
        for value, allowed, name in (
            (self.cache, CACHE_MODES, "CHIEF_VIDEO_CACHE"),
            (self.attention, ATTENTION, "CHIEF_VIDEO_ATTENTION"),
            (self.compile, COMPILE, "CHIEF_VIDEO_COMPILE"),
        ):
            if value not in allowed:
                raise RenderError(f"unknown {name} {value!r}; use one of: {', '.join(allowed)}")
        if self.attention in _ATTENTION_PACKAGE:
            if not cuda:
                raise RenderError(f"CHIEF_VIDEO_ATTENTION={self.attention} needs a CUDA GPU; the device is {device}")
            if not installed()[self.attention]:
                package = _ATTENTION_PACKAGE[self.attention]
                raise RenderError(f"CHIEF_VIDEO_ATTENTION={self.attention} needs the {package} package")
        if self.compile == "on" and not cuda:
            raise RenderError(f"CHIEF_VIDEO_COMPILE=on compiles for a CUDA GPU; the device is {device}")

    def attention_for(self, device: str) -> str:
        """The attention backend a render uses: the one asked for, or with `auto` flash, then sage, where installed
        on CUDA, else torch's native one."""
        if self.attention != "auto":
            return self.attention
        if device.split(":")[0] == "cuda":
            have = installed()
            for name in ("flash", "sage"):
                if have[name]:
                    return name
        return "native"

    def compiles(self, device: str) -> bool:
        return self.compile == "on" or (self.compile == "auto" and device.split(":")[0] == "cuda")

    def cache_for(self, tier: str, draft_cache: Cache | None, final_cache: Cache | None) -> Cache | None:
        """The cache a shot of `tier` runs with: the draft recipe's on drafts, the row's on finals only with `all`."""
        if self.cache == "off":
            return None
        if tier == "draft":
            return draft_cache
        return final_cache if self.cache == "all" else None

    def label(self, device: str) -> str:
        parts = [f"attention {self.attention_for(device)}", "compiled" if self.compiles(device) else "not compiled"]
        parts.append({"off": "no cache", "draft": "cache on drafts", "all": "cache on drafts and finals"}[self.cache])
        return " · ".join(parts)


def cache_config(cache: Cache) -> Any:
    """The diffusers config object of a row's cache."""
    import diffusers

    return getattr(diffusers, cache.kind)(**dict(cache.params))


def report(speed: Speed, device: str) -> dict[str, Any]:
    """The speed settings as `chief doctor` shows them: what is asked, what this machine makes of it, and which
    attention kernels are installed."""
    return {
        "attention": speed.attention,
        "attention_used": speed.attention_for(device),
        "kernels": installed(),
        "compile": speed.compile,
        "compiles": speed.compiles(device),
        "cache": speed.cache,
        "draft_lora": list(speed.draft_lora),
    }


def report_line(r: dict[str, Any]) -> str:
    kernels = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in r["kernels"].items())
    lora = ", ".join(r["draft_lora"]) or "the family's default"
    return (
        f"speed: attention {r['attention']} → {r['attention_used']} ({kernels}) · compile {r['compile']} → "
        f"{'on' if r['compiles'] else 'off'} · cache {r['cache']} (CHIEF_VIDEO_CACHE) · draft LoRA: {lora}"
    )
