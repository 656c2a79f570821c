"""Rendering a version: shot requests, continuity chains, the clip cache, the schedule, and the render record.

For each shot in film order: compose the prompt (`generation.base.compose_prompt`), attach the previous
clip's last frame when the shot continues from it, `resolve` (family defaults and frame rule), key, then
reuse the cached clip or render it. Independent continuity chains render in parallel when the backend
has several workers; otherwise renders take turns (the backend holds the GPU). The only writes a failed
render keeps are finished clips (cache entries), so a retry renders only what is missing.
"""

from __future__ import annotations

import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from app.context import Context, ProgressFn, no_progress
from app.errors import RenderFailed, StudioError
from app.film import FilmAssembler
from app.projects import Projects
from generation.base import Backend, CancelToken, Cancelled, RenderError, ShotRequest, clip_key, compose_prompt
from storage.records import ClipRecord, RenderRecord, ShotRender, Version
from storage.schema import Shot, Storyboard, new_id, utcnow


def continuity_chains(shots: list[Shot], continuity: bool) -> list[list[int]]:
    """Shot indexes grouped so that each continuity shot follows the shot it continues from."""
    chains: list[list[int]] = []
    for i, shot in enumerate(shots):
        if chains and continuity and shot.continuity:
            chains[-1].append(i)
        else:
            chains.append([i])
    return chains


class Rendering:
    def __init__(self, ctx: Context, projects: Projects) -> None:
        self.ctx, self.projects = ctx, projects
        self.film = FilmAssembler(ctx)
        self._lock = threading.Lock()  # one render at a time per backend (it holds the GPU)

    def shot_requests(self, board: Storyboard) -> list[ShotRequest]:
        bible = {c.name: c.description for c in board.characters}
        cfg = self.ctx.config
        reqs = []
        for shot in board.shots():
            chars = {n: bible[n] for n in shot.characters if n in bible}
            reqs.append(ShotRequest(
                shot_id=shot.shot_id, prompt=compose_prompt(shot.prompt, board.style_guide, chars),
                negative_prompt=shot.negative_prompt, seed=shot.seed, duration=shot.duration, camera=shot.camera,
                width=board.width, height=board.height, fps=board.fps, steps=cfg.steps, guidance=cfg.guidance,
                caption=shot.prompt))
        return reqs

    def latest(self, pid: str, ref: int | str | None = None) -> RenderRecord | None:
        """The latest render of a version, or None."""
        with self.ctx.repo.read() as u:
            return u.latest_render(u.version(pid, ref))

    def render(self, pid: str, ref: int | str | None = None, progress: ProgressFn | None = None,
               cancel: CancelToken | None = None) -> RenderRecord:
        """Render every shot (reusing cached clips), assemble the film, record the render."""
        progress, cancel = progress or no_progress, cancel or CancelToken()
        if int(getattr(self.ctx.backend, "max_parallel", 1)) > 1:  # a worker pool schedules its own devices
            return self._render(self.projects.version(pid, ref), progress, cancel)
        with self._lock:
            return self._render(self.projects.version(pid, ref), progress, cancel)

    def _render(self, v: Version, progress: ProgressFn, cancel: CancelToken) -> RenderRecord:
        self.projects.check_board(v.storyboard)  # a version stored before the caps were lowered
        t0 = time.perf_counter()
        backend = self.ctx.backend
        shots = v.storyboard.shots()
        reqs = self.shot_requests(v.storyboard)
        n = len(reqs)
        scratch = self.ctx.media.scratch()
        records: list[ShotRender | None] = [None] * n

        def run_chain(chain: list[int]) -> None:
            """Shots of one continuity chain, in order: each may be conditioned on the one before."""
            prev_last: tuple[str, Path] | None = None  # (sha, path) of the previous clip's last frame
            for i in chain:
                records[i], prev_last = self._shot(backend, v.project_id, shots[i], reqs[i], i, n, prev_last,
                                                   scratch, progress, cancel)
        try:
            chains = continuity_chains(shots, backend.supports_continuity)
            workers = max(1, min(len(chains), int(getattr(backend, "max_parallel", 1))))
            if workers == 1:
                for chain in chains:
                    run_chain(chain)
            else:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    errors = [f.exception() for f in [pool.submit(run_chain, c) for c in chains]]
                failed = [e for e in errors if e is not None]
                if failed:
                    real = sorted((e for e in failed if isinstance(e, RenderFailed)), key=lambda e: e.index)
                    raise (real or [e for e in failed if isinstance(e, Cancelled)] or failed)[0]
            cancel.raise_if_cancelled()
            progress({"stage": "assemble", "shots": n})
            try:
                film = self.film.assemble(v.storyboard, records, scratch)
            except (OSError, RuntimeError) as e:  # disk full while writing the film (ffmpeg fails)
                raise StudioError(f"could not assemble the film: {getattr(e, 'strerror', None) or e}. "
                                  "Every clip is kept; free some space and run render again.") from None
            rendered = sum(r.status == "rendered" for r in records)
            record = RenderRecord(id=new_id("r"), version=v.number, created_at=utcnow(), backend=backend.name,
                                  model=backend.model, label=backend.label, shots=records, rendered=rendered,
                                  reused=n - rendered, seconds=round(time.perf_counter() - t0, 3),
                                  film_sha256=film.film.sha256, media=film.media, stream_copied=film.stream_copied)
            with self.ctx.repo.write() as u:
                u.add_media(film.stored)
                u.add_render(v, record)
            progress({"stage": "done", "shots": n})
            return record
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _shot(self, backend: Backend, pid: str, shot: Shot, req: ShotRequest, i: int, n: int, prev_last,
              scratch: Path, progress: ProgressFn, cancel: CancelToken) -> tuple[ShotRender, tuple[str, Path]]:
        """Reuse (a clip this project may use, see Unit.clip) or render one shot; returns its render record and
        its last frame (sha, path)."""
        cancel.raise_if_cancelled()
        if shot.continuity and prev_last:
            req = req.with_(init_image=str(prev_last[1]), init_image_sha256=prev_last[0])
        try:
            req = backend.resolve(req)
        except RenderError as e:
            raise RenderFailed(shot.shot_id, i, n, str(e)) from None
        key = clip_key(backend, req)
        clip = self._cached(key, pid)
        status = "reused"
        if clip is None:
            def on_step(done: int, total: int) -> None:
                progress({"stage": "render", "shot_index": i, "shots": n, "shot_id": shot.shot_id, "step": done,
                          "steps": total, "status": "rendering"})
            on_step(0, req.steps or req.num_frames)
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
                clip = self._store(key, backend, info, out, time.perf_counter() - t1)
            except OSError as e:  # disk full, database locked: nothing half-stored, say so
                raise RenderFailed(shot.shot_id, i, n, f"could not store the clip: {e.strerror or e}") from None
            status = "rendered"
        progress({"stage": "render", "shot_index": i, "shots": n, "shot_id": shot.shot_id, "step": 1, "steps": 1,
                  "status": status})
        record = ShotRender(shot_id=shot.shot_id, key=key, sha256=clip.sha256, status=status, duration=shot.duration,
                            num_frames=clip.num_frames, fps=clip.fps)
        return record, (clip.last_frame_sha256, self.ctx.media.path(clip.last_frame_sha256, "png"))

    def _cached(self, key: str, pid: str) -> ClipRecord | None:
        with self.ctx.repo.read() as u:
            clip = u.clip(key, pid)
        media = self.ctx.media
        if clip is None or clip.last_frame_sha256 is None or media.find(clip.sha256) is None \
                or media.find(clip.last_frame_sha256) is None:
            return None  # never rendered, or the file went missing: render it again
        return clip

    def _store(self, key: str, backend: Backend, info, out: Path, seconds: float) -> ClipRecord:
        from generation.frames import last_frame

        frame_png = out.with_suffix(".last.png")
        last_frame(out).save(frame_png)
        clip_media = self.ctx.media.put(out, "mp4")
        frame_media = self.ctx.media.put(frame_png, "png")
        clip = ClipRecord(key=key, sha256=clip_media.sha256, backend=backend.name, model=backend.model,
                          num_frames=info.num_frames, fps=info.fps, width=info.width, height=info.height,
                          seconds=round(seconds, 3), last_frame_sha256=frame_media.sha256)
        with self.ctx.repo.write() as u:
            u.put_clip(clip, [clip_media, frame_media])
        return clip
