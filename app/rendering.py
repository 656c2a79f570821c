"""Rendering a version: shot requests, continuity chains, the clip cache, the schedule, and the render record.

For each shot in film order: compose the prompt (`generation.base.compose_prompt`), attach the shot's approved
keyframe (the clip starts from it) or else, when the shot continues from the previous one, the previous clip's
last frame, and the first reference image of each of its characters when the backend takes references;
`resolve` (family defaults and frame rule), key, then reuse the cached clip or render it. Independent continuity chains render in parallel when the backend
has several workers; otherwise renders take turns (the backend holds the GPU). The only writes a failed
render keeps are finished clips (cache entries), so a retry renders only what is missing.

A scene or a range of shots renders alone (`scope`): its shots (and, for a continuity shot, the uncached shots
of its chain before it), then the film is assembled from the latest clip of every shot: its clip as it stands
when the cache has it, else the clip an earlier render of this version's line used ("earlier": the shot changed
since), else the shot is left out of this film until it is rendered.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from app.context import Context, ProgressFn, no_progress
from app.errors import RenderFailed, StudioError
from app.film import SHEET_FRAMES, FilmAssembler
from app.projects import Projects
from app.thumbnails import ClipMedia
from generation.base import Backend, Cancelled, CancelToken, RenderError, ShotRequest, clip_key, compose_prompt
from storage.records import ClipRecord, RenderRecord, ShotRender, Version
from storage.run import AssembleProgress, DoneProgress, ShotProgress
from storage.schema import Scope, Shot, Storyboard, new_id, utcnow


def continuity_chains(shots: list[Shot], continuity: bool) -> list[list[int]]:
    """Shot indexes grouped so that each continuity shot follows the shot it continues from (a shot with a
    keyframe starts from its keyframe, so it starts a chain)."""
    chains: list[list[int]] = []
    for i, shot in enumerate(shots):
        if chains and continuity and shot.continuity and not shot.keyframe:
            chains[-1].append(i)
        else:
            chains.append([i])
    return chains


class Rendering:
    def __init__(self, ctx: Context, projects: Projects) -> None:
        self.ctx, self.projects = ctx, projects
        self.clip_media = ClipMedia(ctx)
        self.film = FilmAssembler(ctx, self.clip_media)
        self._lock = threading.Lock()  # one render at a time per backend (it holds the GPU): films, shots, takes

    def shot_requests(self, board: Storyboard) -> list[ShotRequest]:
        bible = {c.name: c for c in board.characters}
        cfg, media = self.ctx.config, self.ctx.media
        with_references = getattr(self.ctx.backend, "supports_references", False)
        reqs = []
        for shot in board.shots():
            chars = [bible[n] for n in shot.characters if n in bible]
            refs = tuple(c.references[0] for c in chars if c.references) if with_references else ()
            reqs.append(
                ShotRequest(
                    shot_id=shot.shot_id,
                    prompt=compose_prompt(shot.prompt, board.style_guide, {c.name: c.description for c in chars}),
                    negative_prompt=shot.negative_prompt,
                    seed=shot.seed,
                    duration=shot.duration,
                    camera=shot.camera,
                    width=board.width,
                    height=board.height,
                    fps=board.fps,
                    steps=cfg.steps,
                    guidance=cfg.guidance,
                    caption=shot.prompt,
                    keyframe=str(media.path(shot.keyframe, "png")) if shot.keyframe else None,
                    keyframe_sha256=shot.keyframe,
                    references=tuple(str(media.path(r, "png")) for r in refs),
                    references_sha256=refs,
                )
            )
        return reqs

    def film_signature(self, board: Storyboard) -> str:
        """A hash of everything that decides a version's film and its sidecars: each shot's request (the
        composed prompt, seed, size, ...), its spoken words, the film options, and the title when a
        title card shows it. Versions with the same signature have the same film."""
        shots = [
            {**asdict(req), "narration": shot.narration, "dialogue": shot.dialogue}
            for req, shot in zip(self.shot_requests(board), board.shots())
        ]
        payload = {
            "shots": shots,
            "film": board.film.model_dump(mode="json"),
            "title": board.title if board.film.title_card else None,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def request_for(self, v: Version, shot_id: str) -> ShotRequest:
        """The request a render of `v` makes for one shot. A continuity shot starts from the last frame of the
        previous shot's clip, which must be in the clip cache (keyed as the render would key it)."""
        shots = v.storyboard.shots()
        i = next((k for k, s in enumerate(shots) if s.shot_id == shot_id), None)
        if i is None:
            raise StudioError(f"v{v.number} has no shot {shot_id!r}")
        reqs = self.shot_requests(v.storyboard)
        backend = self.ctx.backend

        def chained(k: int) -> ShotRequest:
            if not (k and shots[k].continuity and not shots[k].keyframe and backend.supports_continuity):
                return reqs[k]
            clip = self._cached(clip_key(backend, backend.resolve(chained(k - 1))), v.project_id)
            if clip is None:
                raise StudioError(
                    f"shot {shots[k].shot_id} continues from {shots[k - 1].shot_id}: render v{v.number} first"
                )
            return reqs[k].with_(
                init_image=str(self.ctx.media.path(clip.last_frame_sha256, "png")),
                init_image_sha256=clip.last_frame_sha256,
            )

        return chained(i)

    def latest(self, pid: str, ref: int | str | None = None) -> RenderRecord | None:
        """The latest render of a version, or None. A version that changes no pixels (a new panel, a title
        without a title card, notes) shares the film of the nearest ancestor it matches: the record's
        `version` then names that ancestor."""
        with self.ctx.repo.read() as u:
            v = u.version(pid, ref)
            signature = None
            while True:
                render = u.latest_render(v)
                if render is not None or v.parent_number is None:
                    return render
                signature = signature or self.film_signature(v.storyboard)
                v = u.version(pid, v.parent_number)
                if self.film_signature(v.storyboard) != signature:
                    return None

    def clip(self, key: str) -> ClipRecord | None:
        """A clip-cache entry (its render time, size, ...) by key."""
        with self.ctx.repo.read() as u:
            return u.clip(key)

    def cached_shots(self, board: Storyboard) -> dict[str, ClipRecord]:
        """The clips already in the cache for `board`'s shots as they stand (a draft included): shot_id -> clip.
        A continuity shot is found only when the clip it continues from is."""
        backend = self.ctx.backend
        shots, reqs = board.shots(), self.shot_requests(board)
        found: dict[str, ClipRecord] = {}
        for chain in continuity_chains(shots, backend.supports_continuity):
            prev: ClipRecord | None = None
            for i in chain:
                req = reqs[i]
                if shots[i].continuity and prev is not None:
                    req = req.with_(
                        init_image=str(self.ctx.media.path(prev.last_frame_sha256, "png")),
                        init_image_sha256=prev.last_frame_sha256,
                    )
                try:
                    prev = self._cached(clip_key(backend, backend.resolve(req)))
                except RenderError:
                    prev = None
                if prev is None:
                    break
                found[shots[i].shot_id] = prev
        return found

    def render_shot(
        self, board: Storyboard, shot_id: str, progress: ProgressFn | None = None, cancel: CancelToken | None = None
    ) -> ShotRender:
        """Render (or reuse) one shot of `board` (a draft is fine: nothing but clips is written), with the
        continuity shots before it that it is conditioned on. The clip lands in the cache, so the film's
        next render reuses it."""
        progress, cancel = progress or no_progress, cancel or CancelToken()
        backend = self.ctx.backend
        shots = board.shots()
        index = next((i for i, s in enumerate(shots) if s.shot_id == shot_id), None)
        if index is None:
            raise StudioError(f"the storyboard has no shot {shot_id!r}")
        chain = next(c for c in continuity_chains(shots, backend.supports_continuity) if index in c)
        chain = chain[: chain.index(index) + 1]
        reqs = self.shot_requests(board)
        scratch = self.ctx.media.scratch()
        try:
            with self.turn():
                prev_last, record = None, None
                for i in chain:
                    record, prev_last = self._shot(
                        backend, shots[i], reqs[i], i, len(shots), prev_last, scratch, progress, cancel
                    )
            return record
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def render(
        self,
        pid: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
        scope: Scope | None = None,
    ) -> RenderRecord:
        """Render every shot (reusing cached clips), or only `scope`'s; assemble the film; record the render."""
        progress, cancel = progress or no_progress, cancel or CancelToken()
        with self.turn():
            return self._render(self.projects.version(pid, ref), progress, cancel, scope or Scope())

    def turn(self):
        """Renders take turns on one device; a worker pool (max_parallel > 1) schedules its own devices."""
        return contextlib.nullcontext() if int(getattr(self.ctx.backend, "max_parallel", 1)) > 1 else self._lock

    def _render(self, v: Version, progress: ProgressFn, cancel: CancelToken, scope: Scope) -> RenderRecord:
        self.projects.check_board(v.storyboard)  # a version stored before the caps were lowered
        t0 = time.perf_counter()
        backend = self.ctx.backend
        shots = v.storyboard.shots()
        reqs = self.shot_requests(v.storyboard)
        n = len(reqs)
        wanted = set(scope.shot_ids(v.storyboard))
        if not wanted:
            raise StudioError(f"v{v.number} has no shot in {scope.label()}")
        scratch = self.ctx.media.scratch()
        records: list[ShotRender | None] = [None] * n
        order = [i for i, s in enumerate(shots) if s.shot_id in wanted]  # progress counts the scope's shots
        place = {i: k for k, i in enumerate(order)}

        def run_chain(chain: list[int]) -> None:
            """Shots of one continuity chain, in order: each may be conditioned on the one before."""
            prev_last: tuple[str, Path] | None = None  # (sha, path) of the previous clip's last frame
            for i in chain:
                records[i], prev_last = self._shot(
                    backend,
                    shots[i],
                    reqs[i],
                    place.get(i, 0),
                    len(order),
                    prev_last,
                    scratch,
                    progress,
                    cancel,
                    v.project_id,
                )

        try:
            chains = [
                c[: max(k for k, i in enumerate(c) if i in place) + 1]  # a chain up to its last shot in scope
                for c in continuity_chains(shots, backend.supports_continuity)
                if any(i in place for i in c)
            ]
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
            if not scope.whole:
                records = self._latest_clips(v, records)
            kept = [r for r in records if r is not None]
            board = v.storyboard if len(kept) == n else v.storyboard.restricted({r.shot_id for r in kept})
            progress(AssembleProgress(shots=len(kept)))
            try:
                film = self.film.assemble(board, kept, scratch, cancel)
            except (OSError, RuntimeError) as e:  # disk full while writing the film (ffmpeg fails)
                raise StudioError(
                    f"could not assemble the film: {getattr(e, 'strerror', None) or e}. "
                    "Every clip is kept; free some space and run render again."
                ) from None
            rendered = sum(r.status == "rendered" for r in kept)
            record = RenderRecord(
                id=new_id("r"),
                version=v.number,
                created_at=utcnow(),
                backend=backend.name,
                model=backend.model,
                label=backend.label,
                shots=kept,
                rendered=rendered,
                reused=len(kept) - rendered,
                seconds=round(time.perf_counter() - t0, 3),
                film_sha256=film.film.sha256,
                media=film.media,
                stream_copied=film.stream_copied,
            )
            with self.ctx.repo.write() as u:
                u.add_media(film.stored)
                u.add_render(v, record)
            progress(DoneProgress(shots=len(kept)))
            return record
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _latest_clips(self, v: Version, records: list[ShotRender | None]) -> list[ShotRender | None]:
        """Every shot outside a scoped render: its clip as it stands when cached ("reused"), else the clip the
        newest render of this version or an ancestor used ("earlier"), else None (left out of the film)."""
        shots = v.storyboard.shots()
        cached = self.cached_shots(v.storyboard)
        out = list(records)
        missing = {s.shot_id for s, r in zip(shots, out) if r is None and s.shot_id not in cached}
        earlier: dict[str, ShotRender] = {}
        with self.ctx.repo.read() as u:
            line = u.version(v.project_id, v.number)
            while missing - set(earlier):
                for render in reversed(u.renders(line)):
                    for r in render.shots:
                        if r.shot_id in missing and r.shot_id not in earlier and self.ctx.media.find(r.sha256):
                            earlier[r.shot_id] = r.model_copy(update={"status": "earlier"})
                if line.parent_number is None:
                    break
                line = u.version(v.project_id, line.parent_number)
        for i, shot in enumerate(shots):
            if out[i] is None and shot.shot_id in cached:
                clip = cached[shot.shot_id]
                out[i] = ShotRender(
                    shot_id=shot.shot_id,
                    key=clip.key,
                    sha256=clip.sha256,
                    status="reused",
                    duration=shot.duration,
                    num_frames=clip.num_frames,
                    fps=clip.fps,
                )
            elif out[i] is None:
                out[i] = earlier.get(shot.shot_id)
        return out

    def _shot(
        self,
        backend: Backend,
        shot: Shot,
        req: ShotRequest,
        i: int,
        n: int,
        prev_last,
        scratch: Path,
        progress: ProgressFn,
        cancel: CancelToken,
        pid: str | None = None,
    ) -> tuple[ShotRender, tuple[str, Path]]:
        """Reuse or render one shot (of project `pid`: see `clip_for`); returns its render record and its last
        frame (sha, path)."""
        cancel.raise_if_cancelled()
        if shot.continuity and prev_last and not req.keyframe:
            req = req.with_(init_image=str(prev_last[1]), init_image_sha256=prev_last[0])

        def on_step(done: int, total: int) -> None:
            progress(
                ShotProgress(shot_index=i, shots=n, shot_id=shot.shot_id, step=done, steps=total, status="rendering")
            )

        try:
            clip, key, status = self.clip_for(backend, req, scratch / f"{i:04d}.mp4", on_step, cancel, pid)
        except RenderError as e:
            raise RenderFailed(shot.shot_id, i, n, str(e)) from None
        progress(ShotProgress(shot_index=i, shots=n, shot_id=shot.shot_id, step=1, steps=1, status=status))
        record = ShotRender(
            shot_id=shot.shot_id,
            key=key,
            sha256=clip.sha256,
            status=status,
            duration=shot.duration,
            num_frames=clip.num_frames,
            fps=clip.fps,
        )
        return record, (clip.last_frame_sha256, self.ctx.media.path(clip.last_frame_sha256, "png"))

    def clip_for(
        self, backend: Backend, req: ShotRequest, out: Path, on_step, cancel: CancelToken, pid: str | None = None
    ) -> tuple[ClipRecord, str, str]:
        """(clip, key, "rendered" or "reused"): the cached clip for the request, or a new render, stored in the
        cache before it is returned. Every failure is a one-line RenderError; a stop raises Cancelled. A clip
        rendered here serves anyone; one imported with a project serves a render of project `pid` only."""
        req = backend.resolve(req)
        key = clip_key(backend, req)
        clip = self._cached(key, pid)
        if clip is not None:
            return clip, key, "reused"
        on_step(0, req.steps or req.num_frames)
        t1 = time.perf_counter()
        try:
            info = backend.render(req, out, on_step, cancel)
        except (Cancelled, RenderError):
            raise
        except Exception as e:  # a backend crash: keep what finished, say what broke
            raise RenderError(f"{type(e).__name__}: {e}") from None
        try:
            return self._store(key, backend, info, out, time.perf_counter() - t1), key, "rendered"
        except OSError as e:  # disk full, database locked: nothing half-stored, say so
            raise RenderError(f"could not store the clip: {e.strerror or e}") from None

    def _cached(self, key: str, pid: str | None = None) -> ClipRecord | None:
        with self.ctx.repo.read() as u:
            clip = u.clip(key, pid)
        media = self.ctx.media
        if (
            clip is None
            or clip.last_frame_sha256 is None
            or media.find(clip.sha256) is None
            or media.find(clip.last_frame_sha256) is None
        ):
            return None  # never rendered, or the file went missing: render it again
        return clip

    def _store(self, key: str, backend: Backend, info, out: Path, seconds: float) -> ClipRecord:
        from generation.frames import last_frame

        frame_png = out.with_suffix(".last.png")
        last_frame(out).save(frame_png)
        clip_media = self.ctx.media.put(out, "mp4")
        frame_media = self.ctx.media.put(frame_png, "png")
        clip = ClipRecord(
            key=key,
            sha256=clip_media.sha256,
            backend=backend.name,
            model=backend.model,
            num_frames=info.num_frames,
            fps=info.fps,
            width=info.width,
            height=info.height,
            seconds=round(seconds, 3),
            last_frame_sha256=frame_media.sha256,
        )
        with self.ctx.repo.write() as u:
            u.put_clip(clip, [clip_media, frame_media])
        # cut its thumbnail and the frames critics and the contact sheet use now, in one decode
        self.clip_media.prepare(clip.sha256, ks=tuple(sorted({SHEET_FRAMES, self.ctx.config.frames_per_shot})))
        return clip
