"""Clips: what a version's shots are made of and where they lie.

One place for each of: a shot's request (`request_for`: its composed prompt, seed, size, keyframe and references,
and continuity — a shot that continues from the previous one starts from the last frame of that shot's clip),
the clip key (`key`), the clip cache (`cached`, `cached_shots`, `clip_for`: reuse or render and store), the
clips' files, sampled frames and thumbnails (app/services/thumbnails.py cuts them once per clip), and the film a version
shares with its ancestors (`latest_render`). Rendering, Takes, Watching, Keyframes and Consistency use it; it
uses no other service.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from app.context import SHEET_FRAMES, Context
from app.errors import NotRendered
from app.services.thumbnails import ClipMedia
from generation.base import Backend, Cancelled, CancelToken, RenderError, ShotRequest, clip_key, compose_prompt
from storage.records import ClipRecord, ClipsAffected, LastFilm, RenderRecord, Version
from storage.schema import Shot, Storyboard

if TYPE_CHECKING:
    from storage.repository import Unit


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


class Clips:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._media = ClipMedia(ctx)
        self._lock = threading.Lock()  # one render at a time per backend (it holds the GPU): films, shots, takes

    @property
    def backend(self) -> Backend:
        return self.ctx.backend

    # ------------------------------------------------------------------ files, frames, thumbnails
    def path(self, sha256: str) -> Path:
        return self.ctx.media.path(sha256, "mp4")

    def frames(self, sha256: str, k: int, offset: float = 0.0) -> list[tuple[int, float, Path]]:
        """`k` evenly spaced frames of a clip as (frame index, offset + index/fps, JPEG path), cut once."""
        return self._media.frames(sha256, k, offset)

    def thumbnail(self, sha256: str) -> Path:
        return self._media.thumbnail(sha256)

    # ------------------------------------------------------------------ requests, continuity, keys
    def chains(self, board: Storyboard) -> list[list[int]]:
        """The board's continuity chains (shot indexes) on this backend."""
        return continuity_chains(board.shots(), self.backend.supports_continuity)

    def request_for(
        self,
        board: Storyboard,
        i: int,
        *,
        after: ClipRecord | None = None,
        shot: Shot | None = None,
        pid: str | None = None,
        continuity: bool = True,
        tier: str | None = None,
    ) -> ShotRequest:
        """The request a render of `board` makes for its shot `i` (`shot`: that shot as it would be, e.g. with a
        take's seed and keyframe). A shot that continues from the previous one starts from the last frame of the
        previous shot's clip: `after` when the caller holds it (a render walking a chain), else the clip cache's,
        keyed as a render would key it (NotRendered when the cache does not hold it; `pid`: see `cached`).
        `continuity=False`: the shot's own request, unconditioned (what a keyframe is drawn from). `tier`: draft or
        final (None: the version's own, `FilmOptions.tier`)."""
        shots = board.shots()
        shot = shot or shots[i]
        req = self._own_request(board, shot, tier)
        if not (continuity and self._continues(shot, i)):
            return req
        prev = after if after is not None else self._cached_before(board, i, pid, req.tier)
        last = prev.last_frame_sha256
        assert last is not None  # a clip a continuity shot follows is stored with its last frame
        return req.with_(init_image=str(self.ctx.media.path(last, "png")), init_image_sha256=last)

    def key(self, req: ShotRequest) -> str:
        """The clip key of a request as the backend would render it (RenderError when it cannot)."""
        return self._resolved(req)[1]

    def film_signature(self, board: Storyboard) -> str:
        """A hash of everything that decides a version's film and its sidecars: each shot's request (the
        composed prompt, seed, size, ...), its spoken words (the narration, its lines with their speakers and
        delivery), its sounds, its scene's music cue, uploaded track and levels, its description (with the described
        track), the characters' voices, the film options (levels and the loudness target included), and the title
        when a title card shows it. Versions with the same signature
        have the same film. None of the sound is in a clip key: a changed line renders no picture."""
        music = {  # a scene's uploaded track with its cue (a board without one keeps its old signature)
            s.shot_id: [scene.music, scene.music_track] if scene.music_track else scene.music
            for scene in board.scenes
            for s in scene.shots
        }
        shots = [
            {
                **asdict(self._own_request(board, shot)),
                "narration": shot.narration,
                "dialogue": [ln.model_dump() for ln in shot.dialogue],
                "sounds": shot.sounds,
                "music": music[shot.shot_id],
                "description": shot.description if board.film.audio_description else "",  # the described track
            }
            for shot in board.shots()
        ]
        levels = [[sc.music_level, sc.effects_level] for sc in board.scenes]
        payload = {
            "shots": shots,
            **({"levels": levels} if any(x for pair in levels for x in pair) else {}),  # unset: keys as before
            "voices": [(c.name, c.voice.model_dump() if c.voice else None) for c in board.characters],
            "film": board.film.model_dump(mode="json"),
            "title": board.title if board.film.title_card else None,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def affected(self, board: Storyboard, after: Storyboard) -> list[str]:
        """The shots of `after` whose clip is not `board`'s clip of the same shot: a new shot, one whose clip key
        changed (its prompt, seed, keyframe, references, size, ... — keys are computed only where the requests
        differ), one that now continues from another shot or no longer does, and every continuity shot after one of
        those in its chain (it starts from that shot's last frame)."""
        old = board.shots()
        at = {s.shot_id: j for j, s in enumerate(old)}
        same_context = _request_context(board) == _request_context(after)
        shots, out = after.shots(), []
        for chain in self.chains(after):
            dirty = False
            for i in chain:
                s, j = shots[i], at.get(shots[i].shot_id)
                if j is None:
                    dirty = True
                elif not dirty:
                    before = old[j - 1].shot_id if self._continues(old[j], j) else None
                    now = shots[i - 1].shot_id if self._continues(s, i) else None
                    dirty = (
                        before != now
                        or not (same_context and old[j] == s)
                        and self._key_changed(board, old[j], after, s)
                    )
                if dirty:
                    out.append(s.shot_id)
        return out

    def clips_affected(
        self, board: Storyboard, after: Storyboard, action: str, cached: dict[str, ClipRecord] | None = None
    ) -> ClipsAffected:
        """`affected`, with which of those shots have a clip now (`cached`: `cached_shots(board)` when the caller
        has it), for a confirmation before an action runs."""
        shots = self.affected(board, after)
        cached = self.cached_shots(board) if cached is None else cached
        return ClipsAffected(
            action=action, shots=shots, rendered=[s for s in shots if s in cached], total=len(after.shots())
        )

    def last_film(self, pid: str, ref: int | str | None = None) -> LastFilm | None:
        """For a version without a film of its own (nor one it shares, see `latest_render`): the latest film of its
        nearest rendered ancestor and what changed since; None when it has a film or no ancestor was rendered. One
        walk up the line: the versions that share the film (the same `film_signature`) come first."""
        with self.ctx.repo.read() as u:
            v = u.version(pid, ref)
            for a, shared in self._line(u, v):
                render = u.latest_render(a)
                if render is None:
                    continue
                if shared:
                    return None
                return LastFilm(render=render, version=v.number, changed=self.affected(a.storyboard, v.storyboard))
        return None

    def _key_changed(self, board: Storyboard, shot: Shot, after: Storyboard, now: Shot) -> bool:
        a, b = self._own_request(board, shot), self._own_request(after, now)
        if a == b:
            return False
        try:
            return self.key(a) != self.key(b)
        except RenderError:  # the backend cannot render one of them: it is not the clip there was
            return True

    # ------------------------------------------------------------------ the clip cache
    def clip(self, key: str) -> ClipRecord | None:
        """A clip-cache entry (its render time, size, ...) by key."""
        with self.ctx.repo.read() as u:
            return u.clip(key)

    def cached(self, key: str, pid: str | None = None) -> ClipRecord | None:
        """The cached clip for `key` whose files are all there (one imported with project `pid` serves that
        project only), or None: never rendered, or a file went missing (render it again)."""
        with self.ctx.repo.read() as u:
            clip = u.clip(key, pid)
        media = self.ctx.media
        if (
            clip is None
            or clip.last_frame_sha256 is None
            or media.find(clip.sha256) is None
            or media.find(clip.last_frame_sha256) is None
        ):
            return None
        return clip

    def cached_shots(self, board: Storyboard, tier: str | None = None) -> dict[str, ClipRecord]:
        """The clips already in the cache for `board`'s shots as they stand (a draft included) at `tier` (None: the
        version's): shot_id -> clip. A continuity shot is found only when the clip it continues from is."""
        shots = board.shots()
        found: dict[str, ClipRecord] = {}
        for chain in self.chains(board):
            prev: ClipRecord | None = None
            for i in chain:
                try:
                    prev = self.cached(self.key(self.request_for(board, i, after=prev, tier=tier)))
                except (RenderError, NotRendered):
                    prev = None
                if prev is None:
                    break
                found[shots[i].shot_id] = prev
        return found

    @contextlib.contextmanager
    def turn(self, cancel: CancelToken | None = None) -> Iterator[None]:
        """Renders take turns on one device; a worker pool (max_parallel > 1) schedules its own devices. A job
        stopped while it waits for its turn stops at once (Cancelled), without waiting for the render before it."""
        if int(getattr(self.backend, "max_parallel", 1)) > 1:
            yield
            return
        while not self._lock.acquire(timeout=0.25):
            if cancel is not None:
                cancel.raise_if_cancelled()
        try:
            yield
        finally:
            self._lock.release()

    def clip_for(
        self, req: ShotRequest, out: Path, on_step, cancel: CancelToken, pid: str | None = None
    ) -> tuple[ClipRecord, str, Literal["rendered", "reused"]]:
        """(clip, key, "rendered" or "reused"): the cached clip for the request, or a new render, stored in the
        cache before it is returned. Every failure is a one-line RenderError; a stop raises Cancelled. A clip
        rendered here serves anyone; one imported with a project serves a render of project `pid` only."""
        backend = self.backend
        req, key = self._resolved(req)
        clip = self.cached(key, pid)
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

    # ------------------------------------------------------------------ the film a version shares
    def latest_render(self, pid: str, ref: int | str | None = None) -> RenderRecord | None:
        """The latest render of a version, or None. A version that changes no pixels (a new panel, a title
        without a title card, notes) shares the film of the nearest ancestor it matches: the record's
        `version` then names that ancestor."""
        with self.ctx.repo.read() as u:
            for a, shared in self._line(u, u.version(pid, ref)):
                if not shared:
                    return None
                render = u.latest_render(a)
                if render is not None:
                    return render
            return None

    def _line(self, u: Unit, v: Version) -> Iterator[tuple[Version, bool]]:
        """`v`'s line (`Unit.lineage`), each version with whether it shows `v`'s film: the same `film_signature` as
        `v`'s all the way from `v` (each signature computed once, and only as far as the walk goes)."""
        signature, shared = None, True
        for a in u.lineage(v):
            if a is not v and shared:
                signature = signature or self.film_signature(v.storyboard)
                shared = self.film_signature(a.storyboard) == signature
            yield a, shared

    # ------------------------------------------------------------------ inside
    def _continues(self, shot: Shot, i: int) -> bool:
        """Whether shot `i` starts from the previous shot's last frame (the rule `continuity_chains` follows)."""
        return i > 0 and shot.continuity and not shot.keyframe and self.backend.supports_continuity

    def _cached_before(self, board: Storyboard, i: int, pid: str | None, tier: str | None = None) -> ClipRecord:
        """The cached clip of the shot before `i`, found along its chain from the chain's start."""
        shots = board.shots()
        start = i - 1
        while self._continues(shots[start], start):
            start -= 1
        prev: ClipRecord | None = None
        for k in range(start, i):
            prev = self.cached(self.key(self.request_for(board, k, after=prev, pid=pid, tier=tier)), pid)
            if prev is None:
                raise NotRendered(shots[i].shot_id, shots[i - 1].shot_id)
        assert prev is not None
        return prev

    def _own_request(self, board: Storyboard, shot: Shot, tier: str | None = None) -> ShotRequest:
        cfg, media = self.ctx.config, self.ctx.media
        bible = {c.name: c for c in board.characters}
        chars = [bible[n] for n in shot.characters if n in bible]
        with_references = getattr(self.backend, "supports_references", False)
        refs = tuple(c.references[0] for c in chars if c.references) if with_references else ()
        # a creator's LoRAs act on the shots they concern, on a backend that takes LoRAs (the animatic takes none)
        loras = board.loras_for(shot) if getattr(self.backend, "supports_loras", False) else []
        return ShotRequest(
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
            tier=tier or board.film.tier,
            loras=tuple((lo.sha256, lo.scale, "all") for lo in loras),
            lora_files=tuple(str(media.path(lo.sha256, "safetensors")) for lo in loras),
        )

    def _resolved(self, req: ShotRequest) -> tuple[ShotRequest, str]:
        """The request with the backend's defaults and frame rule applied, and its clip key: the one place a
        clip key is computed."""
        req = self.backend.resolve(req)
        return req, clip_key(self.backend, req)

    def _store(self, key: str, backend: Backend, info, out: Path, seconds: float) -> ClipRecord:
        from generation.video_io import written_facts

        frame_png = out.with_suffix(".last.png")
        facts = written_facts(out)  # the clip the backend has just written: its boxes say what `inspect` would
        clip_media = self.ctx.media.put(out, "mp4")
        # its thumbnail, the frames critics and the contact sheet use, and its last frame (the next shot's
        # continuity), in one decode
        sampled = tuple(sorted({SHEET_FRAMES, self.ctx.config.frames_per_shot}))
        self._media.prepare(clip_media.sha256, ks=sampled, last_frame_to=frame_png, info=facts)
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
        return clip


def _request_context(board: Storyboard) -> tuple:
    """What a shot's own request takes from its storyboard besides the shot (`Clips._own_request`)."""
    return (board.style_guide, board.characters, board.width, board.height, board.fps, board.loras, board.film.tier)
