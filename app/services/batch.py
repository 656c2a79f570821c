"""Unattended batch generation: many stories, each planned, rendered, critiqued and refined for N iterations.

Per story: plan → render → critique → refine → accept (policy) → render … → export (archive + film) into
OUTDIR/<slug>/. Stories run in their own threads so their agent calls overlap; renders share the one warm
backend (Studio.render holds a lock).

Resumable: OUTDIR/batch-state.json (replaced atomically after every finished stage) maps each story's key
(a hash of its spec) to its project and finished stages; re-running skips them. Every stage is also checked
against the database before it acts (a render that exists, a proposal already accepted…), so a kill -9
between a Studio transaction and the state write does not make the stage run twice. Studio actions are
single transactions, so a kill leaves no half-written version.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.errors import StudioError
from storage.fileio import atomic_path, atomic_write
from storage.repository import NotFound
from storage.run import ProgressEvent, ShotProgress
from storage.schema import first_error, slug

Policy = Literal["all", "consensus", "none"]
STATE_FILE = "batch-state.json"
EmitFn = Callable[[dict], None]


class BatchError(StudioError):
    """The stories file or the batch options are unusable (one line)."""


class StorySpec(BaseModel):
    """One story in a stories file; unset fields take the batch defaults (flags)."""

    model_config = ConfigDict(extra="forbid")
    idea: str = Field(min_length=1, max_length=20000)
    title: str | None = Field(default=None, max_length=200)
    minutes: float | None = Field(default=None, ge=0.25, le=10)
    panel: list[str] | None = None
    iterations: int | None = Field(default=None, ge=0, le=20)
    policy: Policy | None = None
    width: int | None = Field(default=None, ge=64, le=4096)
    height: int | None = Field(default=None, ge=64, le=4096)
    fps: int | None = Field(default=None, ge=1, le=60)

    @field_validator("panel", mode="before")
    @classmethod
    def _split(cls, v):
        return [p.strip() for p in v.split(",") if p.strip()] if isinstance(v, str) else v


@dataclass(frozen=True)
class Defaults:
    minutes: float = 1.0
    iterations: int = 1
    policy: str = "consensus"
    panel: tuple[str, ...] | None = None
    width: int | None = None
    height: int | None = None
    fps: int | None = None


@dataclass(frozen=True)
class Story:
    """A story with every option resolved; `key` identifies it across runs."""

    idea: str
    title: str | None
    minutes: float
    panel: tuple[str, ...] | None
    iterations: int
    policy: str
    width: int | None
    height: int | None
    fps: int | None

    @property
    def key(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def name(self) -> str:
        return self.title or " ".join(self.idea.split())[:60]

    def stage_count(self) -> int:
        loops = 0 if self.policy == "none" else self.iterations
        return 1 + 4 * loops + 2 + 1  # plan, (render critique refine accept)*N, render critique, export


# ---------------------------------------------------------------------------------------- stories


def load_stories(path: Path, defaults: Defaults = Defaults()) -> list[Story]:
    """Stories from a YAML list, a JSONL file, or a folder of .txt/.md ideas (one per file)."""
    from storage.parsing import ParseError, parse_json, parse_yaml

    path = Path(path)
    raw: list = []
    try:
        if path.is_dir():
            for f in sorted(p for p in path.iterdir() if p.suffix.lower() in (".txt", ".md") and p.is_file()):
                raw.append(_idea_file(f))
            if not raw:
                raise BatchError(f"{path}: no .txt or .md story files in this folder")
        elif path.suffix.lower() == ".jsonl":
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    raw.append(parse_json(line, f"{path}:{i}"))
        else:
            data = parse_yaml(path.read_text(encoding="utf-8"), str(path))
            listed = data.get("stories") if isinstance(data, dict) else data
            if not isinstance(listed, list):
                raise BatchError(f"{path}: expected a list of stories (or a mapping with 'stories:')")
            raw = listed
    except ParseError as e:
        raise BatchError(str(e)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise BatchError(f"{path}: cannot read stories ({str(e).splitlines()[0]})") from None
    if not raw:
        raise BatchError(f"{path}: no stories")
    stories = []
    for i, item in enumerate(raw, 1):
        try:
            spec = StorySpec.model_validate({"idea": item} if isinstance(item, str) else item)
        except ValidationError as e:
            raise BatchError(f"{path}: story {i}: {first_error(e)}") from None
        stories.append(resolve(spec, defaults))
    return stories


def _idea_file(f: Path) -> dict:
    text = f.read_text(encoding="utf-8").strip()
    lines = text.splitlines()
    if f.suffix.lower() == ".md" and lines and lines[0].startswith("# "):
        return {"title": lines[0][2:].strip(), "idea": "\n".join(lines[1:]).strip() or lines[0][2:].strip()}
    return {"idea": text}


def resolve(spec: StorySpec, d: Defaults) -> Story:
    def pick(name):
        v = getattr(spec, name)
        return getattr(d, name) if v is None else v

    panel = pick("panel")
    return Story(
        idea=" ".join(spec.idea.split()),
        title=spec.title,
        minutes=float(pick("minutes")),
        panel=tuple(panel) if panel else None,
        iterations=int(pick("iterations")),
        policy=pick("policy"),
        width=pick("width"),
        height=pick("height"),
        fps=pick("fps"),
    )


def accepted_edits(proposal, policy: str) -> list[int]:
    """1-based numbers of the edits the policy accepts. consensus: backed by a creator note (id "n_…") or by
    at least two personas."""
    if policy == "none":
        return []
    out = []
    for i, e in enumerate(proposal.edits, 1):
        notes = [s for s in e.sources if s.startswith("n_")]
        personas = {s for s in e.sources if not s.startswith("n_")}
        if policy == "all" or notes or len(personas) >= 2:
            out.append(i)
    return out


# ---------------------------------------------------------------------------------------- state


class BatchState:
    """OUTDIR/batch-state.json: story key -> {slug, name, project, stages, status, error}. Thread-safe."""

    def __init__(self, outdir: Path) -> None:
        self.path = Path(outdir) / STATE_FILE
        self.lock = threading.Lock()
        self.data: dict = {"format": 1, "stories": {}}
        if self.path.exists():
            try:
                self.data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as e:
                raise BatchError(f"{self.path}: unreadable state file ({e}); move it away to start over") from None

    def story(self, key: str) -> dict:
        with self.lock:
            return self.data["stories"].setdefault(key, {"stages": {}, "status": "pending", "error": None})

    def update(self, key: str, **fields) -> None:
        with self.lock:
            self.data["stories"][key].update(fields)
            self._save()

    def finish_stage(self, key: str, stage: str, result: dict) -> None:
        with self.lock:
            self.data["stories"][key]["stages"][stage] = result
            self._save()

    def _save(self) -> None:
        atomic_write(self.path, json.dumps(self.data, indent=2).encode())


def atomic_copy(src: Path, dest: Path) -> None:
    with atomic_path(dest) as tmp:
        shutil.copyfile(src, tmp)


# ---------------------------------------------------------------------------------------- runner


class BatchRunner:
    def __init__(self, studio, stories: list[Story], outdir: Path, emit: EmitFn | None = None, jobs: int = 4) -> None:
        self.studio, self.stories, self.outdir = studio, stories, Path(outdir)
        self.emit = emit or (lambda e: None)
        self.jobs = max(1, jobs)
        self.outdir.mkdir(parents=True, exist_ok=True)
        for stale in self.outdir.rglob(".*.part"):  # temp files of a run that was killed mid-write
            stale.unlink(missing_ok=True)
        self.state = BatchState(self.outdir)
        self._slugs()

    def _slugs(self) -> None:
        taken = {s.get("slug") for s in self.state.data["stories"].values() if s.get("slug")}
        for story in self.stories:
            st = self.state.story(story.key)
            if not st.get("slug"):
                base = slug(story.name)
                name, n = base, 2
                while name in taken:
                    name, n = f"{base}-{n}", n + 1
                taken.add(name)
                st.update(slug=name, name=story.name, idea=story.idea, policy=story.policy, iterations=story.iterations)
        with self.state.lock:
            self.state._save()

    def run(self) -> dict:
        """Run (or continue) every story; returns the report (also written as report.json and report.html)."""
        t0 = time.perf_counter()
        # Build the backend and agents once, before the threads (a diffusers pipeline must be loaded once).
        _ = self.studio.backend, self.studio.agents
        self.emit(
            {
                "event": "batch_start",
                "stories": len(self.stories),
                "outdir": str(self.outdir),
                "stages": sum(s.stage_count() for s in self.stories),
                "done": sum(len(self.state.story(s.key)["stages"]) for s in self.stories),
            }
        )
        with ThreadPoolExecutor(max_workers=min(self.jobs, len(self.stories))) as pool:
            # each story runs as the account the batch runs as (`chief --user`: storage.owners), in a copy of this
            # context: what it makes is that account's, and resuming finds only that account's projects
            runs = [pool.submit(contextvars.copy_context().run, self._run_story, s) for s in self.stories]
            for run in runs:
                run.result()
        report = self.report()
        report["seconds"] = round(time.perf_counter() - t0, 3)
        write_report(self.outdir, report)
        self.emit(
            {
                "event": "batch_done",
                "ok": report["ok"],
                "failed": report["failed"],
                "report": str(self.outdir / "report.html"),
                "seconds": report["seconds"],
            }
        )
        return report

    # -------------------------------------------------------------- one story
    def _run_story(self, story: Story) -> None:
        key = story.key
        rec = self.state.story(key)
        self.emit(
            {
                "event": "story_start",
                "story": key,
                "name": story.name,
                "slug": rec["slug"],
                "stages": story.stage_count(),
                "done": len(rec["stages"]),
            }
        )
        self.state.update(key, status="running", error=None)
        try:
            plan = self._stage(story, "plan", lambda: self._plan(story))
            pid, version = plan["project"], plan["version"]
            loops = 0 if story.policy == "none" else story.iterations
            converged = False
            for k in range(1, loops + 2):
                self._stage(story, f"render:{k}", lambda: self._render(story, pid, version))
                self._stage(story, f"critique:{k}", lambda: self._critique(pid, version))
                if k > loops:
                    break
                prop = self._stage(story, f"refine:{k}", lambda: self._refine(pid, version))
                acc = self._stage(story, f"accept:{k}", lambda: self._accept(story, pid, prop["proposal"]))
                if acc["version"] is None:  # the policy accepted nothing: the next render would be the same film
                    converged = True
                    self.emit({"event": "converged", "story": key, "iteration": k})
                    break
                version = acc["version"]
            self._stage(story, "export", lambda: self._export(story, pid, version))
            self.state.update(key, status="done", converged=converged)
            self.emit({"event": "story_done", "story": key, "name": story.name, "project": pid})
        except Exception as e:  # one story's failure never stops the batch; it is recorded and reported
            reason = str(e).splitlines()[0] if str(e) else ""
            msg = f"{type(e).__name__}: {reason}" if type(e).__name__ not in reason else reason
            self.state.update(key, status="failed", error=msg)
            self.emit({"event": "story_failed", "story": key, "name": story.name, "error": msg})

    def _stage(self, story: Story, stage: str, fn: Callable[[], dict]) -> dict:
        done = self.state.story(story.key)["stages"]
        if stage in done:
            self.emit({"event": "stage_skipped", "story": story.key, "stage": stage})
            return done[stage]
        self.emit({"event": "stage_start", "story": story.key, "stage": stage})
        t0 = time.perf_counter()
        result = fn()
        result["seconds"] = round(time.perf_counter() - t0, 3)
        self.state.finish_stage(story.key, stage, result)
        self.emit({"event": "stage_done", "story": story.key, "stage": stage, **result})
        return result

    def _marker(self, story: Story) -> str:
        """Tags the planned version so a plan committed just before a kill is found again, not redone."""
        where = str(self.outdir.resolve())
        return "batch " + hashlib.sha256(f"{story.key}|{where}".encode()).hexdigest()[:12]

    def _plan(self, story: Story) -> dict:
        st = self.studio
        marker = self._marker(story)
        found = st.find_tagged(marker)
        if found is not None:
            return {"project": found.project_id, "version": found.number, "recovered": True}
        v = st.create_project(
            story.idea,
            story.minutes,
            story.title,
            list(story.panel) if story.panel else None,
            overrides={k: getattr(story, k) for k in ("width", "height", "fps") if getattr(story, k)},
            tag=marker,
        )
        return {
            "project": v.project_id,
            "version": v.number,
            "title": v.storyboard.title,
            "shots": len(v.storyboard.shots()),
        }

    def _render(self, story: Story, pid: str, version: int) -> dict:
        st = self.studio
        info = st.render_info(pid, version)
        if info is None:

            def progress(e: ProgressEvent, key=story.key) -> None:
                if isinstance(e, ShotProgress) and e.status in ("rendered", "reused"):
                    self.emit(
                        {"event": "shot", "story": key, "shot": e.shot_index + 1, "shots": e.shots, "status": e.status}
                    )

            info = st.render(pid, version, progress=progress)
        folder = self.outdir / self.state.story(story.key)["slug"]
        film, thumb = folder / f"v{version}.mp4", folder / f"v{version}.jpg"
        atomic_copy(st.film_path(info), film)
        sidecars = st.media_paths(info)
        if "contact_sheet" in sidecars:
            atomic_copy(sidecars["contact_sheet"], thumb)
        return {
            "version": version,
            "film": self._rel(film),
            "thumb": self._rel(thumb) if thumb.exists() else None,
            "rendered": info.rendered,
            "reused": info.reused,
            "label": info.label,
        }

    def _critique(self, pid: str, version: int) -> dict:
        st = self.studio
        if not st.critiques(pid, version):
            st.critique(pid, version)
        return {"version": version, "scores": st.panel_scores(pid, version)}

    def _refine(self, pid: str, version: int) -> dict:
        st = self.studio
        try:
            info = st.proposal(pid, ref=version)
        except NotFound:
            info = st.refine(pid, version)
        return {"version": version, "proposal": info.id, "edits": len(info.proposal.edits)}

    def _accept(self, story: Story, pid: str, proposal_id: str) -> dict:
        st = self.studio
        info = st.proposal(pid, proposal_id)
        n = len(info.proposal.edits)
        chosen = accepted_edits(info.proposal, story.policy)
        if info.accepted_as is not None:
            return {"version": info.accepted_as, "accepted": len(chosen), "of": n}
        if not chosen:
            return {"version": None, "accepted": 0, "of": n}
        res = st.accept(pid, proposal_id, only=chosen)
        return {"version": res.version.number, "accepted": len(chosen), "of": n}

    def _export(self, story: Story, pid: str, version: int) -> dict:
        st = self.studio
        name = self.state.story(story.key)["slug"]
        folder = self.outdir / name
        archive = st.export_project(pid, folder / f"{name}.chief.zip")
        film = folder / "film.mp4"
        atomic_copy(st.film_path(st.render_info(pid, version)), film)
        return {"version": version, "archive": self._rel(archive), "film": self._rel(film)}

    def _rel(self, p: Path) -> str:
        return Path(p).relative_to(self.outdir).as_posix()

    # -------------------------------------------------------------- report
    def report(self) -> dict:
        stories = []
        for story in self.stories:
            rec = self.state.story(story.key)
            stages = rec["stages"]
            iters = []
            for k in range(1, story.iterations + 2):
                r, c = stages.get(f"render:{k}"), stages.get(f"critique:{k}")
                if not r:
                    break
                a = stages.get(f"accept:{k}")
                iters.append(
                    {
                        "iteration": k,
                        "version": r["version"],
                        "film": r["film"],
                        "thumb": r["thumb"],
                        "rendered": r["rendered"],
                        "reused": r["reused"],
                        "scores": c["scores"] if c else {},
                        "accepted": f"{a['accepted']}/{a['of']}" if a else None,
                    }
                )
            export = stages.get("export", {})
            stories.append(
                {
                    "key": story.key,
                    "name": story.name,
                    "slug": rec["slug"],
                    "idea": story.idea,
                    "status": rec["status"],
                    "error": rec["error"],
                    "project": stages.get("plan", {}).get("project"),
                    "policy": story.policy,
                    "iterations": iters,
                    "archive": export.get("archive"),
                    "film": export.get("film"),
                    "stages_done": list(stages),
                }
            )
        ok = sum(s["status"] == "done" for s in stories)
        return {"stories": stories, "ok": ok, "failed": len(stories) - ok}


def write_report(outdir: Path, report: dict) -> None:
    atomic_write(outdir / "report.json", json.dumps(report, indent=2).encode())
    atomic_write(outdir / "report.html", render_html(report).encode())


def score_plot(points: list[float | None], width: int = 260, height: int = 90) -> dict:
    """Coordinates for a tiny inline SVG line plot of panel scores (0..10) per iteration."""
    pad, n = 24, len(points)
    xs = [pad + (i * (width - 2 * pad) / (n - 1) if n > 1 else (width - 2 * pad) / 2) for i in range(n)]
    dots = [
        {"x": round(x, 1), "y": round(height - pad / 2 - (s / 10) * (height - pad), 1), "score": s, "i": i + 1}
        for i, (x, s) in enumerate(zip(xs, points))
        if s is not None
    ]
    return {
        "width": width,
        "height": height,
        "dots": dots,
        "line": " ".join(f"{d['x']},{d['y']}" for d in dots),
        "grid": [{"y": round(height - pad / 2 - (v / 10) * (height - pad), 1), "v": v} for v in (0, 5, 10)],
    }


def render_html(report: dict) -> str:
    from importlib.resources import files

    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(files("app").joinpath("templates/batch_report.html.j2").read_text(encoding="utf-8"))
    plots = {s["key"]: score_plot([it["scores"].get("overall") for it in s["iterations"]]) for s in report["stories"]}
    return template.render(report=report, plots=plots)
