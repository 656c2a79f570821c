"""The Studio: the whole co-creation loop as one API. The CLI and the web UI are thin over it.

Every action is one transaction: it either completes or leaves the project as it was. The one
thing a failed render keeps is what is worth keeping: the clips that finished (they are cached by
content key, so a retry renders only what is missing).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from sqlalchemy import func, select

from agents.base import FilmView, SampledFrame
from app.config import Config
from generation.base import Backend, CancelToken, Cancelled, RenderError, ShotRequest, clip_key, compose_prompt
from storage.db import (AgentCallRow, ClipRow, CritiqueRow, Database, MediaRow, NoteRow, ProjectRow, ProposalRow,
                        RenderRow, VersionRow)
from storage.edits import EditError, apply_edits, diff_storyboards
from storage.media import MediaStore
from storage.schema import Critique, Edit, Note, Persona, Proposal, Storyboard, Usage, new_id, utcnow


class StudioError(Exception):
    """A user-facing failure: one line that says what went wrong and what to do."""


class RenderFailed(StudioError):
    def __init__(self, shot_id: str, index: int, total: int, reason: str) -> None:
        super().__init__(f"shot {index + 1}/{total} ({shot_id}) failed: {reason}. "
                         f"Finished shots are kept; run render again to retry.")
        self.shot_id, self.index = shot_id, index


# progress(event) where event is a dict: {"stage", "shot_index", "shots", "shot_id", "step", "steps", "status"}
ProgressFn = Callable[[dict], None]


@dataclass
class Version:
    id: str
    project_id: str
    number: int
    parent_number: int | None
    kind: str
    message: str
    created_at: str
    storyboard: Storyboard
    panel: list[str]
    personas: list[Persona]


@dataclass
class RenderInfo:
    id: str
    version: int
    film: Path
    rendered: int
    reused: int
    seconds: float
    backend: str
    model: str
    label: str
    shots: list[dict]
    media: dict[str, str] = field(default_factory=dict)  # kind -> path


@dataclass
class AcceptResult:
    version: Version
    branched: bool
    applied: list[int]


class Studio:
    def __init__(self, config: Config, backend: Backend | None = None, agents=None) -> None:
        self.config = config
        self.db = Database(config.db_path)
        self.media = MediaStore(config.media_root)
        self.media.clean_scratch()
        self._backend = backend
        self._agents = agents
        self._render_lock = threading.Lock()  # one render at a time per backend (it holds the GPU)

    # ------------------------------------------------------------------ what is active
    @property
    def backend(self) -> Backend:
        if self._backend is None:
            from app.factory import make_backend

            self._backend = make_backend(self.config)
        return self._backend

    @property
    def agents(self):
        if self._agents is None:
            from app.factory import make_agents

            self._agents = make_agents(self.config)
        return self._agents

    def reconfigure(self, config: Config) -> None:
        """Use new agent settings (e.g. an LLM endpoint entered in the web app). The data folder and the
        backend stay: the warm pipeline is kept."""
        if config.home != self.config.home:
            raise StudioError("the data folder cannot change while the studio is running")
        self.config = config
        self._agents = None  # rebuilt from the new config on next use

    def status(self) -> dict:
        d = self.config.describe()
        d["backend_label"] = self.backend.label
        d["agents"] = self.agents.label
        return d

    # ------------------------------------------------------------------ projects
    def create_project(self, idea: str, minutes: float = 1.0, title: str | None = None,
                       panel: list[str] | None = None, *, overrides: dict | None = None, tag: str = "") -> Version:
        """Plan a storyboard from the idea and make it v1 of a new project, in one transaction.

        `overrides` set storyboard fields after planning (e.g. width, height, fps); `tag` is kept in v1's
        message so the plan can be found again (`find_tagged`), e.g. by a batch resuming after a kill."""
        planner = self.agents.planner
        result = planner.plan(idea, minutes)
        changes = {**(overrides or {}), **({"title": title} if title else {})}
        board = Storyboard.model_validate({**result.value.model_dump(mode="json"), **changes})
        message = f"planned by {planner.mode}" + (f" ({tag})" if tag else "")
        return self._new_project(board, idea, "plan", message, panel, result.usage, planner.mode)

    def find_tagged(self, tag: str) -> Version | None:
        """The first version whose project was created with this tag (see create_project), or None."""
        with self.db.reader() as s:
            row = s.scalars(select(VersionRow).where(VersionRow.number == 1, VersionRow.message.contains(f"({tag})"))
                            .limit(1)).first()
            return self._to_version(s, row) if row is not None else None

    def create_from_storyboard(self, board: Storyboard, panel: list[str] | None = None, idea: str = "") -> Version:
        return self._new_project(board, idea or board.logline, "import", "hand-written storyboard", panel)

    def _new_project(self, board: Storyboard, idea: str, kind: str, message: str, panel: list[str] | None,
                     usage: Usage | None = None, mode: str = "") -> Version:
        panel = panel if panel is not None else list(self.builtin_personas())
        self._check_panel(panel, [])
        pid, vid = new_id("p"), new_id("v")
        with self.db.session() as s:
            s.add(ProjectRow(id=pid, title=board.title, idea=idea, current_version_id=vid))
            s.flush()
            s.add(VersionRow(id=vid, project_id=pid, parent_id=None, number=1, kind=kind, message=message,
                             storyboard=board.model_dump(mode="json"), panel=panel, personas=[]))
            s.flush()
            if usage and usage.calls:
                s.add(_usage_row(vid, "planner", mode, usage))
        return self.version(pid, 1)

    def projects(self, include_trashed: bool = False) -> list[dict]:
        with self.db.reader() as s:
            q = select(ProjectRow).order_by(ProjectRow.created_at.desc())
            rows = [p for p in s.scalars(q) if include_trashed or p.trashed_at is None]
            counts = dict(s.execute(select(VersionRow.project_id, func.count()).group_by(VersionRow.project_id)).all())
            return [{"id": p.id, "title": p.title, "created_at": p.created_at.isoformat(), "versions": counts.get(p.id, 0),
                     "trashed": p.trashed_at is not None} for p in rows]

    def resolve_project(self, ref: str) -> str:
        """A project id, a unique id prefix, or an exact title."""
        with self.db.reader() as s:
            rows = s.execute(select(ProjectRow.id, ProjectRow.title)).all()
        exact = [pid for pid, title in rows if pid == ref]
        hits = exact or [pid for pid, _ in rows if pid.startswith(ref)] or [pid for pid, t in rows if t == ref]
        if not hits:
            raise StudioError(f"no project {ref!r} (see `chief projects`)")
        if len(hits) > 1:
            raise StudioError(f"{ref!r} matches {len(hits)} projects; use more of the id")
        return hits[0]

    def trash_project(self, pid: str) -> None:
        with self.db.session() as s:
            self._project(s, pid).trashed_at = utcnow()

    def restore_project(self, pid: str) -> None:
        with self.db.session() as s:
            self._project(s, pid).trashed_at = None

    # ------------------------------------------------------------------ versions
    def version(self, pid: str, ref: int | str | None = None) -> Version:
        with self.db.reader() as s:
            return self._to_version(s, self._version_row(s, pid, ref))

    def versions(self, pid: str) -> list[dict]:
        """The version tree, oldest first: number, parent, kind, message, and what is attached."""
        with self.db.reader() as s:
            proj = self._project(s, pid)
            rows = s.execute(select(VersionRow.id, VersionRow.number, VersionRow.parent_id, VersionRow.kind,
                                    VersionRow.message, VersionRow.created_at)
                             .where(VersionRow.project_id == pid).order_by(VersionRow.number)).all()
            numbers = {r.id: r.number for r in rows}
            ids = list(numbers)

            def count(model):
                return dict(s.execute(select(model.version_id, func.count()).where(model.version_id.in_(ids))
                                      .group_by(model.version_id)).all())
            renders, crits, notes, props = count(RenderRow), count(CritiqueRow), count(NoteRow), count(ProposalRow)
            return [{"number": r.number, "id": r.id, "parent": numbers.get(r.parent_id), "kind": r.kind,
                     "message": r.message, "created_at": r.created_at.isoformat(), "current": r.id == proj.current_version_id,
                     "renders": renders.get(r.id, 0), "critiques": crits.get(r.id, 0), "notes": notes.get(r.id, 0),
                     "proposals": props.get(r.id, 0)} for r in rows]

    def save_storyboard(self, pid: str, board: Storyboard, base: int | str | None, message: str = "hand edit",
                        kind: str = "edit") -> tuple[Version, bool]:
        """A child of `base` with this storyboard. Returns (version, branched): branched when `base`
        was no longer the newest version on its line (someone saved in between)."""
        with self.db.session() as s:
            parent = self._version_row(s, pid, base)
            row, branched = self._child(s, parent, board, kind, message)
        return self.version(pid, row.number), branched

    def fork(self, pid: str, ref: int | str) -> Version:
        """A new branch starting from version `ref` (same storyboard), made current."""
        with self.db.session() as s:
            parent = self._version_row(s, pid, ref)
            row, _ = self._child(s, parent, Storyboard.model_validate(parent.storyboard), "fork",
                                 f"fork of v{parent.number}")
        return self.version(pid, row.number)

    def checkout(self, pid: str, ref: int | str) -> Version:
        """Make an existing version the one commands act on (restore)."""
        with self.db.session() as s:
            row = self._version_row(s, pid, ref)
            self._project(s, pid).current_version_id = row.id
        return self.version(pid, row.number)

    def diff(self, pid: str, a: int | str, b: int | str) -> dict:
        va, vb = self.version(pid, a), self.version(pid, b)
        d = diff_storyboards(va.storyboard, vb.storyboard)
        d["from"], d["to"] = va.number, vb.number
        sa, sb = self.panel_scores(pid, va.number), self.panel_scores(pid, vb.number)
        d["scores"] = {k: (sa.get(k), sb.get(k)) for k in sorted(set(sa) | set(sb))}
        return d

    def set_panel(self, pid: str, persona_ids: list[str], base: int | str | None = None,
                  personas: list[Persona] | None = None) -> Version:
        """A child version with a new critics' panel (and, optionally, the project's own personas)."""
        with self.db.session() as s:
            parent = self._version_row(s, pid, base)
            own = personas if personas is not None else [Persona.model_validate(p) for p in parent.personas]
            self._check_panel(persona_ids, own)
            row, _ = self._child(s, parent, Storyboard.model_validate(parent.storyboard), "panel",
                                 "panel: " + ", ".join(persona_ids), panel=persona_ids,
                                 personas=[p.model_dump(mode="json") for p in own])
        return self.version(pid, row.number)

    def save_persona(self, pid: str, persona: Persona, base: int | str | None = None, on_panel: bool = True) -> Version:
        """Add or replace one of the project's own personas (a new version)."""
        v = self.version(pid, base)
        persona = persona.model_copy(update={"source": "built" if persona.source == "built" else "custom"})
        own = [p for p in v.personas if p.id != persona.id] + [persona]
        panel = v.panel + ([persona.id] if on_panel and persona.id not in v.panel else [])
        return self.set_panel(pid, panel, v.number, own)

    def personas_of(self, v: Version) -> dict[str, Persona]:
        return {**self.builtin_personas(), **{p.id: p for p in v.personas}}

    def builtin_personas(self) -> dict[str, Persona]:
        from agents.personas import builtin_personas

        return builtin_personas()

    def _check_panel(self, panel: list[str], own: list[Persona]) -> None:
        known = set(self.builtin_personas()) | {p.id for p in own}
        unknown = [p for p in panel if p not in known]
        if unknown:
            raise StudioError(f"unknown persona(s) {unknown}; known: {sorted(known)}")
        if not panel:
            raise StudioError("the critics' panel is empty")

    # ------------------------------------------------------------------ render
    def shot_requests(self, board: Storyboard) -> list[ShotRequest]:
        bible = {c.name: c.description for c in board.characters}
        reqs = []
        for shot in board.shots():
            chars = {n: bible[n] for n in shot.characters if n in bible}
            reqs.append(ShotRequest(
                shot_id=shot.shot_id, prompt=compose_prompt(shot.prompt, board.style_guide, chars),
                negative_prompt=shot.negative_prompt, seed=shot.seed, duration=shot.duration, camera=shot.camera,
                width=board.width, height=board.height, fps=board.fps, steps=self.config.steps,
                guidance=self.config.guidance, caption=shot.prompt))
        return reqs

    def render(self, pid: str, ref: int | str | None = None, progress: ProgressFn | None = None,
               cancel: CancelToken | None = None) -> RenderInfo:
        """Render every shot (reusing cached clips), assemble the film, record the render."""
        progress, cancel = progress or (lambda e: None), cancel or CancelToken()
        if int(getattr(self.backend, "max_parallel", 1)) > 1:  # a worker pool schedules its own devices
            return self._render(pid, ref, progress, cancel)
        with self._render_lock:  # one device: renders take turns
            return self._render(pid, ref, progress, cancel)

    def _render(self, pid: str, ref, progress: ProgressFn, cancel: CancelToken) -> RenderInfo:
        t0 = time.perf_counter()
        v = self.version(pid, ref)
        backend = self.backend
        shots = v.storyboard.shots()
        reqs = self.shot_requests(v.storyboard)
        n = len(reqs)
        scratch = self.media.scratch()
        records: list[dict | None] = [None] * n

        def run_chain(chain: list[int]) -> None:
            """Shots of one continuity chain, in order: each may be conditioned on the one before."""
            prev_last: tuple[str, Path] | None = None  # (sha, path) of the previous clip's last frame
            for i in chain:
                records[i], prev_last = self._render_shot(backend, shots[i], reqs[i], i, n, prev_last, scratch,
                                                          progress, cancel)
        try:
            chains = _continuity_chains(shots, backend.supports_continuity)
            workers = max(1, min(len(chains), int(getattr(backend, "max_parallel", 1))))
            if workers == 1:
                for chain in chains:
                    run_chain(chain)
            else:  # independent chains in parallel (a backend with several workers, e.g. a Ray pool)
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    futures = [pool.submit(run_chain, c) for c in chains]
                    errors = [f.exception() for f in futures]
                failed = [e for e in errors if e is not None]
                if failed:
                    cancelled = [e for e in failed if isinstance(e, Cancelled)]
                    real = sorted((e for e in failed if isinstance(e, RenderFailed)), key=lambda e: e.index)
                    raise (real or cancelled or failed)[0]
            cancel.raise_if_cancelled()
            progress({"stage": "assemble", "shots": n})
            try:
                film_media = self._assemble(v, records, scratch)
            except (OSError, RuntimeError) as e:  # disk full while writing the film (ffmpeg fails)
                raise StudioError(f"could not assemble the film: {getattr(e, 'strerror', None) or e}. "
                                  "Every clip is kept; free some space and run render again.") from None
            rid = new_id("r")
            rendered = sum(r["status"] == "rendered" for r in records)
            seconds = round(time.perf_counter() - t0, 3)
            with self.db.session() as s:
                for sha, ext, size in film_media["rows"]:
                    _ensure_media(s, sha, ext, size)
                s.add(RenderRow(id=rid, version_id=v.id, backend=backend.name, model=backend.model, label=backend.label,
                                shots=records, rendered=rendered, reused=n - rendered, seconds=seconds,
                                film_sha256=film_media["film"], media=film_media["media"]))
            progress({"stage": "done", "shots": n})
            return self.render_info(pid, v.number)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _render_shot(self, backend: Backend, shot, req: ShotRequest, i: int, n: int, prev_last, scratch: Path,
                     progress: ProgressFn, cancel: CancelToken) -> tuple[dict, tuple[str, Path]]:
        """Reuse or render one shot; returns its render record and its last frame (sha, path)."""
        cancel.raise_if_cancelled()
        if shot.continuity and prev_last:
            req = req.with_(init_image=str(prev_last[1]), init_image_sha256=prev_last[0])
        try:
            req = backend.resolve(req)
        except RenderError as e:
            raise RenderFailed(shot.shot_id, i, n, str(e)) from None
        key = clip_key(backend, req)
        clip = self._cached_clip(key)
        status = "reused"
        if clip is None:
            progress({"stage": "render", "shot_index": i, "shots": n, "shot_id": shot.shot_id, "step": 0,
                      "steps": req.steps or req.num_frames, "status": "rendering"})

            def on_step(done: int, total: int) -> None:
                progress({"stage": "render", "shot_index": i, "shots": n, "shot_id": shot.shot_id, "step": done,
                          "steps": total, "status": "rendering"})
            out = scratch / f"{i:04d}.mp4"
            t1 = time.perf_counter()
            try:
                info = backend.render(req, out, on_step, cancel)
            except Cancelled:
                raise
            except RenderError as e:
                raise RenderFailed(shot.shot_id, i, n, str(e)) from None
            except Exception as e:  # a backend crash: keep what finished, say which shot
                raise RenderFailed(shot.shot_id, i, n, f"{type(e).__name__}: {e}") from None
            try:
                clip = self._store_clip(key, backend, info, out, time.perf_counter() - t1)
            except OSError as e:  # disk full, database locked: nothing half-stored, say so
                raise RenderFailed(shot.shot_id, i, n, f"could not store the clip: {e.strerror or e}") from None
            status = "rendered"
        record = {"shot_id": shot.shot_id, "key": key, "sha256": clip.sha256, "status": status,
                  "duration": shot.duration, "num_frames": clip.num_frames, "fps": clip.fps}
        progress({"stage": "render", "shot_index": i, "shots": n, "shot_id": shot.shot_id, "step": 1,
                  "steps": 1, "status": status})
        return record, (clip.last_frame_sha256, self.media.path(clip.last_frame_sha256, "png"))

    def _cached_clip(self, key: str) -> ClipRow | None:
        with self.db.reader() as s:
            clip = s.get(ClipRow, key)
        if clip is None:
            return None
        if self.media.find(clip.sha256) is None or clip.last_frame_sha256 is None or \
                self.media.find(clip.last_frame_sha256) is None:
            return None  # the file went missing: render it again
        return clip

    def _store_clip(self, key: str, backend: Backend, info, out: Path, seconds: float) -> ClipRow:
        from generation.frames import last_frame

        frame_png = out.with_suffix(".last.png")
        last_frame(out).save(frame_png)
        sha, stored = self.media.put_file(out, "mp4", move=True)
        fsha, fstored = self.media.put_file(frame_png, "png", move=True)
        row = ClipRow(key=key, sha256=sha, backend=backend.name, model=backend.model, num_frames=info.num_frames,
                      fps=info.fps, width=info.width, height=info.height, seconds=round(seconds, 3),
                      last_frame_sha256=fsha)
        with self.db.session() as s:
            _ensure_media(s, sha, "mp4", stored.stat().st_size)
            _ensure_media(s, fsha, "png", fstored.stat().st_size)
            s.merge(row)
        return row

    def _assemble(self, v: Version, records: list[dict], scratch: Path) -> dict:
        from generation import assembly, frames, otio_export, subtitles

        board = v.storyboard
        clips = [self.media.path(r["sha256"], "mp4") for r in records]
        timeline = board.timeline()
        cues = subtitles.cues_for([(start, end, (s.dialogue or s.narration)) for s, start, end in timeline
                                   if (s.dialogue or s.narration)])
        rows: list[tuple[str, str, int]] = []
        media: dict[str, str] = {}

        def keep(kind: str, path: Path, ext: str) -> None:
            sha, stored = self.media.put_file(path, ext, move=True)
            rows.append((sha, ext, stored.stat().st_size))
            media[kind] = sha

        audio = None
        narrated = [(start, s.narration) for s, start, _ in timeline if s.narration]
        if narrated and self.config.narration:
            from generation import narration

            audio = scratch / "narration.wav"
            narration.narration_track(narrated, board.duration(), audio, cache_dir=self.config.home / "cache" / "speech")
        film = scratch / "film.mp4"
        result = assembly.assemble(clips, film, audio=audio)
        if cues:
            keep("srt", subtitles.write_srt(cues, scratch / "film.srt"), "srt")
            keep("vtt", subtitles.write_vtt(cues, scratch / "film.vtt"), "vtt")
        if audio is not None:
            keep("narration", audio, "wav")
        sheet_rows = []
        for r, (shot, start, _) in zip(records, timeline):
            imgs = [img for _, _, img in frames.sample_frames(self.media.path(r["sha256"], "mp4"), 3, offset=start)]
            sheet_rows.append((f"{shot.shot_id} {frames.timecode(start)}", imgs))
        keep("contact_sheet", frames.contact_sheet(sheet_rows, scratch / "sheet.jpg"), "jpg")
        otio_items = [(r["shot_id"], self.media.path(r["sha256"], "mp4"), r["num_frames"] / r["fps"], r["fps"])
                      for r in records]
        otio_path = scratch / "cut.otio"
        # Media paths relative to the store's layout (media/<ab>/<sha>.otio -> ../<cd>/<sha>.mp4), so the
        # cut stays valid wherever the store (or an archive of it) lives.
        otio_export.export_otio(otio_items, otio_path, board.title, relative_to=self.media.root / "00")
        keep("otio", otio_path, "otio")
        media["stream_copied"] = "yes" if result.stream_copied else "no"
        sha, stored = self.media.put_file(film, "mp4", move=True)
        rows.append((sha, "mp4", stored.stat().st_size))
        return {"film": sha, "media": media, "rows": rows}

    def render_info(self, pid: str, ref: int | str | None = None) -> RenderInfo | None:
        """The latest render of a version, or None."""
        with self.db.reader() as s:
            v = self._version_row(s, pid, ref)
            r = s.scalars(select(RenderRow).where(RenderRow.version_id == v.id)
                          .order_by(RenderRow.created_at.desc()).limit(1)).first()
            if r is None:
                return None
            media = {k: str(self.media.path(sha, RENDER_MEDIA_EXT[k])) for k, sha in r.media.items()
                     if k in RENDER_MEDIA_EXT}
            return RenderInfo(id=r.id, version=v.number, film=self.media.path(r.film_sha256, "mp4"), rendered=r.rendered,
                              reused=r.reused, seconds=r.seconds, backend=r.backend, model=r.model, label=r.label,
                              shots=r.shots, media=media)

    def clip_path(self, sha256: str) -> Path:
        return self.media.path(sha256, "mp4")

    # ------------------------------------------------------------------ critique
    def critique(self, pid: str, ref: int | str | None = None, progress: ProgressFn | None = None) -> list[dict]:
        """Every persona on the panel watches the latest render of the version, concurrently.
        All or nothing: if one critic fails, no critique of this run is saved."""
        progress = progress or (lambda e: None)
        v = self.version(pid, ref)
        render = self.render_info(pid, v.number)
        if render is None:
            raise StudioError(f"v{v.number} has no film yet: run `chief render` first")
        personas = self.personas_of(v)
        panel = [personas[p] for p in v.panel]
        scratch = self.media.scratch()
        try:
            film = self._film_view(v, render, scratch)
            critic = self.agents.critic
            done = []

            def one(persona: Persona):
                res = critic.critique(persona, film)
                done.append(persona.id)
                progress({"stage": "critique", "done": len(done), "total": len(panel), "persona": persona.id})
                return res
            with ThreadPoolExecutor(max_workers=max(1, min(len(panel), self.config.llm_concurrency))) as pool:
                results = list(pool.map(one, panel))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        batch = new_id("cb")
        with self.db.session() as s:
            for persona, res in zip(panel, results):
                c: Critique = res.value
                s.add(CritiqueRow(id=new_id("c"), version_id=v.id, render_id=render.id, persona_id=persona.id,
                                  batch=batch, mode=critic.mode, data=c.model_dump(mode="json"),
                                  usage=res.usage.model_dump()))
                if res.usage.calls:
                    s.add(_usage_row(v.id, "critic", critic.mode, res.usage))
        return self.critiques(pid, v.number)

    def _film_view(self, v: Version, render: RenderInfo, scratch: Path) -> FilmView:
        from generation import frames

        out: list[SampledFrame] = []
        by_id = {r["shot_id"]: r for r in render.shots}
        for shot, start, _ in v.storyboard.timeline():
            r = by_id.get(shot.shot_id)
            if r is None:
                raise StudioError(f"shot {shot.shot_id} has no clip in the latest render")
            for idx, t, img in frames.sample_frames(self.clip_path(r["sha256"]), self.config.frames_per_shot, offset=start):
                path = frames.save_jpeg(img, scratch / f"{shot.shot_id}_{idx}.jpg")
                out.append(SampledFrame(shot_id=shot.shot_id, index=len([f for f in out if f.shot_id == shot.shot_id]),
                                        time=round(t, 3), path=str(path)))
        with self.db.reader() as s:
            idea = self._project(s, v.project_id).idea
        return FilmView(storyboard=v.storyboard, frames=out, intent=idea or v.storyboard.logline,
                        renderer_label=render.label)

    def critiques(self, pid: str, ref: int | str | None = None) -> list[dict]:
        """The latest panel run on a version: [{persona_id, persona_name, mode, critique: Critique}]."""
        with self.db.reader() as s:
            v = self._version_row(s, pid, ref)
            latest = s.scalars(select(CritiqueRow.batch).where(CritiqueRow.version_id == v.id)
                               .order_by(CritiqueRow.created_at.desc()).limit(1)).first()
            if latest is None:
                return []
            rows = s.scalars(select(CritiqueRow).where(CritiqueRow.batch == latest).order_by(CritiqueRow.persona_id)).all()
            personas = self.personas_of(self._to_version(s, v))
            return [{"id": r.id, "persona_id": r.persona_id,
                     "persona_name": personas[r.persona_id].name if r.persona_id in personas else r.persona_id,
                     "mode": r.mode, "critique": Critique.model_validate(r.data)} for r in rows]

    def panel_scores(self, pid: str, ref: int | str | None = None) -> dict[str, float]:
        """Mean scores of the latest panel run: 'overall' and each dimension."""
        crits = [c["critique"] for c in self.critiques(pid, ref)]
        if not crits:
            return {}
        out = {"overall": round(sum(c.overall for c in crits) / len(crits), 2)}
        for d in crits[0].scores:
            out[d] = round(sum(c.scores[d] for c in crits) / len(crits), 2)
        return out

    def diversity(self, pid: str, ref: int | str | None = None):
        """How alike the panel's latest critiques are (a collapsed panel is flagged)."""
        from agents.diversity import panel_similarity

        crits = [c["critique"] for c in self.critiques(pid, ref)]
        return panel_similarity(crits) if len(crits) >= 2 else None

    # ------------------------------------------------------------------ notes and proposals
    def add_note(self, pid: str, text: str, shot_id: str | None = None, ref: int | str | None = None) -> Note:
        v = self.version(pid, ref)
        if shot_id is not None:
            try:
                v.storyboard.shot(shot_id)
            except KeyError:
                raise StudioError(f"v{v.number} has no shot {shot_id!r}") from None
        note = Note(text=text.strip(), shot_id=shot_id)
        with self.db.session() as s:
            s.add(NoteRow(id=note.id, version_id=v.id, shot_id=shot_id, text=note.text))
        return note

    def notes(self, pid: str, ref: int | str | None = None) -> list[Note]:
        with self.db.reader() as s:
            v = self._version_row(s, pid, ref)
            rows = s.scalars(select(NoteRow).where(NoteRow.version_id == v.id).order_by(NoteRow.created_at)).all()
            return [Note(id=r.id, text=r.text, shot_id=r.shot_id) for r in rows]

    def refine(self, pid: str, ref: int | str | None = None) -> dict:
        """The refiner's proposal for the version, from its notes (instructions) and latest critiques (evidence)."""
        v = self.version(pid, ref)
        notes = self.notes(pid, v.number)
        crits = [c["critique"] for c in self.critiques(pid, v.number)]
        if not notes and not crits:
            raise StudioError(f"v{v.number} has no notes and no critiques: add a note or run `chief critique` first")
        refiner = self.agents.refiner
        res = refiner.refine(v.storyboard, notes, crits)
        proposal = _sanitize(res.value, v.storyboard)
        prid = new_id("pr")
        with self.db.session() as s:
            s.add(ProposalRow(id=prid, version_id=v.id, mode=refiner.mode, data=proposal.model_dump(mode="json"),
                              usage=res.usage.model_dump()))
            if res.usage.calls:
                s.add(_usage_row(v.id, "refiner", refiner.mode, res.usage))
        return self.proposal(pid, prid)

    def proposal(self, pid: str, proposal_id: str | None = None, ref: int | str | None = None) -> dict:
        """A proposal by id, or the latest proposal on the version."""
        with self.db.reader() as s:
            if proposal_id:
                row = s.get(ProposalRow, proposal_id)
            else:
                v = self._version_row(s, pid, ref)
                row = s.scalars(select(ProposalRow).where(ProposalRow.version_id == v.id)
                                .order_by(ProposalRow.created_at.desc()).limit(1)).first()
            if row is None:
                raise StudioError("no proposal yet: run `chief refine` first")
            v = s.get(VersionRow, row.version_id)
            if v.project_id != pid:
                raise StudioError(f"proposal {proposal_id} is not in this project")
            accepted = s.get(VersionRow, row.accepted_version_id) if row.accepted_version_id else None
            return {"id": row.id, "version": v.number, "mode": row.mode, "proposal": Proposal.model_validate(row.data),
                    "accepted_as": accepted.number if accepted else None, "usage": row.usage}

    def accept(self, pid: str, proposal_id: str | None = None, only: list[int] | None = None,
               edits: dict[int, str] | None = None, ref: int | str | None = None) -> AcceptResult:
        """Accepted edits (1-based numbers; `edits` replaces an edit's new value) become a child version
        of the version the proposal was made on. If that version already has children, this is a branch."""
        info = self.proposal(pid, proposal_id, ref)
        prop: Proposal = info["proposal"]
        n = len(prop.edits)
        chosen = sorted(set(only)) if only else list(range(1, n + 1))
        chosen = sorted(set(chosen) | set((edits or {}).keys()))
        bad = [i for i in chosen if not 1 <= i <= n]
        if bad:
            raise StudioError(f"no edit number(s) {bad}: the proposal has edits 1..{n}")
        if not chosen:
            raise StudioError("nothing to accept: the proposal has no edits")
        picked: list[Edit] = []
        for i in chosen:
            e = prop.edits[i - 1]
            if edits and i in edits:
                e = e.model_copy(update={"new": edits[i]})
                e = Edit.model_validate(e.model_dump())
            picked.append(e)
        with self.db.session() as s:
            row = s.get(ProposalRow, info["id"])
            parent = s.get(VersionRow, row.version_id)
            try:
                board = apply_edits(Storyboard.model_validate(parent.storyboard), picked)
            except EditError as e:
                raise StudioError(str(e)) from None
            desc = f"accepted {len(picked)}/{n} edit(s) of proposal {row.id}" + (
                f" ({len(edits)} edited by hand)" if edits else "")
            child, branched = self._child(s, parent, board, "accept", desc)
            row.accepted_version_id = row.accepted_version_id or child.id
        return AcceptResult(version=self.version(pid, child.number), branched=branched, applied=chosen)

    def usage(self, pid: str, ref: int | str | None = None) -> dict:
        """Agent cost attached to a version: per role and in total."""
        with self.db.reader() as s:
            v = self._version_row(s, pid, ref)
            rows = s.scalars(select(AgentCallRow).where(AgentCallRow.version_id == v.id)).all()
        per: dict[str, Usage] = {}
        for r in rows:
            u = Usage(calls=r.calls, prompt_tokens=r.prompt_tokens, completion_tokens=r.completion_tokens, seconds=r.seconds)
            per[r.role] = per.get(r.role, Usage()) + u
        total = sum(per.values(), Usage())
        return {"total": total.model_dump(), **{k: u.model_dump() for k, u in per.items()}}

    # ------------------------------------------------------------------ archives (app/archives.py)
    def export_project(self, pid: str, out: Path, versions: str = "all", include_media: bool = True):
        """Write a .chief.zip archive of the project (see app/archives.py)."""
        from app.archives import export_project

        return export_project(self, pid, Path(out), versions=versions, include_media=include_media)

    def import_project(self, path: Path, title: str | None = None) -> Version:
        """A new project from an archive: all or nothing (see app/archives.py)."""
        from app.archives import import_project

        return import_project(self, Path(path), title=title)

    # ------------------------------------------------------------------ internals
    def _project(self, s, pid: str) -> ProjectRow:
        p = s.get(ProjectRow, pid)
        if p is None:
            raise StudioError(f"no project {pid!r}")
        return p

    def _version_row(self, s, pid: str, ref: int | str | None) -> VersionRow:
        proj = self._project(s, pid)
        if ref is None or ref == "":
            row = s.get(VersionRow, proj.current_version_id)
        elif isinstance(ref, int) or str(ref).lstrip("vV").isdigit():
            num = int(str(ref).lstrip("vV"))
            row = s.scalars(select(VersionRow).where(VersionRow.project_id == pid, VersionRow.number == num)).first()
        else:
            row = s.get(VersionRow, ref)
            row = row if row is not None and row.project_id == pid else None
        if row is None:
            raise StudioError(f"project {pid} has no version {ref!r}")
        return row

    def _to_version(self, s, row: VersionRow) -> Version:
        parent = s.get(VersionRow, row.parent_id) if row.parent_id else None
        return Version(id=row.id, project_id=row.project_id, number=row.number,
                       parent_number=parent.number if parent else None, kind=row.kind, message=row.message,
                       created_at=row.created_at.isoformat(), storyboard=Storyboard.model_validate(row.storyboard),
                       panel=list(row.panel), personas=[Persona.model_validate(p) for p in row.personas])

    def _child(self, s, parent: VersionRow, board: Storyboard, kind: str, message: str,
               panel: list[str] | None = None, personas: list | None = None) -> tuple[VersionRow, bool]:
        """Insert a child of `parent` and make it current. branched: parent already had a child."""
        has_child = s.scalars(select(VersionRow.id).where(VersionRow.parent_id == parent.id).limit(1)).first()
        number = (s.scalar(select(func.max(VersionRow.number)).where(VersionRow.project_id == parent.project_id)) or 0) + 1
        row = VersionRow(id=new_id("v"), project_id=parent.project_id, parent_id=parent.id, number=number, kind=kind,
                         message=message, storyboard=board.model_dump(mode="json"),
                         panel=panel if panel is not None else list(parent.panel),
                         personas=personas if personas is not None else list(parent.personas))
        s.add(row)
        s.flush()
        self._project(s, parent.project_id).current_version_id = row.id
        branched = has_child is not None and kind != "fork"
        if branched:
            row.message += f" (branched from v{parent.number}, which already had a newer version)"
        return row, branched


def _continuity_chains(shots: list, continuity: bool) -> list[list[int]]:
    """Shot indexes grouped so that each continuity shot follows the shot it continues from."""
    chains: list[list[int]] = []
    for i, shot in enumerate(shots):
        if chains and continuity and shot.continuity:
            chains[-1].append(i)
        else:
            chains.append([i])
    return chains


# A render's sidecar media: kind -> file extension in the media store.
RENDER_MEDIA_EXT = {"srt": "srt", "vtt": "vtt", "narration": "wav", "contact_sheet": "jpg", "otio": "otio"}


def _ensure_media(s, sha: str, ext: str, size: int) -> None:
    if s.get(MediaRow, sha) is None:
        s.add(MediaRow(sha256=sha, ext=ext, size=size))


def _usage_row(version_id: str, role: str, mode: str, u: Usage) -> AgentCallRow:
    return AgentCallRow(version_id=version_id, role=role, mode=mode, calls=u.calls, prompt_tokens=u.prompt_tokens,
                        completion_tokens=u.completion_tokens, seconds=u.seconds)


def _sanitize(p: Proposal, board: Storyboard) -> Proposal:
    """Drop edits that cannot apply (unknown or locked shots) and say so: the refiner only proposes."""
    from storage.schema import Unchanged

    ids = {s.shot_id: s for s in board.shots()}
    keep, dropped = [], list(p.not_changed)
    for e in p.edits:
        if e.op in ("set", "remove_shot", "move_shot") and e.shot_id not in ids:
            dropped.append(Unchanged(what=f"{e.op} {e.shot_id}", why="no such shot in this version"))
        elif e.op in ("set", "remove_shot", "move_shot") and ids[e.shot_id].locked:
            dropped.append(Unchanged(what=f"{e.op} {e.shot_id}", why="shot is locked"))
        else:
            keep.append(e)
    return Proposal(summary=p.summary, edits=keep, not_changed=dropped)


def dumps(obj) -> str:
    """JSON for --json output and the UI (dataclasses, pydantic models, paths)."""
    import dataclasses

    from pydantic import BaseModel

    def default(o):
        if isinstance(o, BaseModel):
            return o.model_dump(mode="json")
        if dataclasses.is_dataclass(o):
            return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
        if isinstance(o, Path):
            return str(o)
        if isinstance(o, tuple):
            return list(o)
        raise TypeError(f"not JSON serialisable: {type(o).__name__}")
    return json.dumps(obj, default=default, indent=2)
