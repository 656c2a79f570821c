"""Shared helpers for the benchmarks: the machine, storyboards, a studio in a temp home, a timing backend."""

from __future__ import annotations

import os
import platform
import socket
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
}  # the libraries' loading bars would interleave with the tables


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (for a server a benchmark starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(root: int, descendants: bool = False) -> float:
    """CPU seconds (user + system) of process `root`, or with `descendants` of every process under it, from /proc."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")) if descendants else [str(root)]:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(pid)] = int(fields[1])
        cpu[int(pid)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    if not descendants:
        return cpu.get(root, 0.0)
    total = 0.0
    for pid, seconds in cpu.items():
        p = parent.get(pid)
        while p and p != root:
            p = parent.get(p)
        total += seconds if p == root else 0.0
    return total


def machine() -> dict:
    """nproc, CPU model and RAM, read from /proc (what docs/benchmarks.md quotes)."""
    cpu, ram = platform.processor() or "?", "?"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
        kb = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
        ram = f"{kb / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu, "ram": ram, "python": platform.python_version()}


def film(n: int, seconds: float = 1.0, width: int = 128, height: int = 72, fps: int = 8, title: str = "bench"):
    """A storyboard of n shots in scenes of 6, distinct prompts and seeds."""
    from storage.schema import Scene, Shot, Storyboard

    words = ["harbour", "storm", "lamp", "gull", "cliff", "rain", "dawn", "boat", "rope", "whale", "fog", "stairs"]
    shots = [
        Shot(
            shot_id=f"s{i:03d}",
            prompt=f"shot {i}: the {words[i % 12]} and the {words[(i * 5) % 12]}, wide",
            duration=seconds,
            seed=i,
            narration=f"line {i}" if i % 4 == 0 else "",
        )
        for i in range(n)
    ]
    scenes = [
        Scene(scene_id=f"sc{k:02d}", title=f"scene {k}", shots=shots[k * 6 : (k + 1) * 6]) for k in range((n + 5) // 6)
    ]
    return Storyboard(
        title=title,
        logline="a benchmark film",
        style_guide="muted teal",
        scenes=scenes,
        width=width,
        height=height,
        fps=fps,
    )


def edit_shots(board, indices: list[int], suffix: str = ", now raining"):
    """A copy of the storyboard with the prompts of shots at `indices` changed."""
    data = board.model_dump()
    k = 0
    for scene in data["scenes"]:
        for shot in scene["shots"]:
            if k in indices:
                shot["prompt"] += suffix
            k += 1
    return type(board).model_validate(data)


def studio(home: Path | None = None, *, backend_obj=None, agents_obj=None, **over):
    """A Studio in a temp home (offline agents, no narration); `over` are config fields."""
    from app.config import load_config
    from app.studio import Studio

    os.environ.update(OFFLINE_ENV)
    home = home or Path(tempfile.mkdtemp(prefix="chief-bench-"))
    cfg = load_config({"home": home, "narration": False, "agents": "offline", **over}, environ={})
    return Studio(cfg, backend=backend_obj, agents=agents_obj)


class Intervals:
    """(start, end) wall-clock spans recorded from any thread; `covered()` is the length of their union, so
    calls that overlap (a concurrent critic panel) are counted once, as wall time."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    @contextmanager
    def span(self):
        t = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self.spans.append((t, time.perf_counter()))

    def covered(self, since: float = float("-inf")) -> float:
        total, end = 0.0, float("-inf")
        for a, b in sorted((max(a, since), b) for a, b in self.spans if b > since):
            if b > end:
                total += b - max(a, end)
                end = b
        return total


class TimedBackend:
    """Wraps a backend and records the wall-clock spans spent inside render() (everything else is ours)."""

    def __init__(self, inner, spans: Intervals | None = None) -> None:
        self.inner, self.spans, self.calls = inner, spans or Intervals(), 0
        self.name, self.model, self.label = inner.name, inner.model, inner.label
        self.supports_continuity = inner.supports_continuity

    @property
    def seconds(self) -> float:
        return self.spans.covered()

    def resolve(self, request):
        return self.inner.resolve(request)

    def render(self, request, out, progress=None, cancel=None):
        with self.spans.span():
            self.calls += 1
            return self.inner.render(request, out, progress, cancel)


@contextmanager
def timer(into: dict, key: str):
    t = time.perf_counter()
    yield
    into[key] = round(time.perf_counter() - t, 3)


def table(rows: list[tuple], header: tuple) -> str:
    """A plain aligned text table."""
    cells = [tuple(str(c) for c in header)] + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells)
