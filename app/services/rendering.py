"""Rendering a version: the schedule of its continuity chains, the film's assembly, and the render record.

For each shot in film order: its request (`Clips.request_for`: the composed prompt, the shot's approved keyframe
or, when the shot continues from the previous one, the previous clip's last frame, the references), then reuse
the cached clip or render it (`Clips.clip_for`). Independent continuity chains render in parallel when the
backend has several workers; otherwise renders take turns (the backend holds the GPU). The only writes a failed
render keeps are finished clips (cache entries), so a retry renders only what is missing.

A scene or a range of shots renders alone (`scope`): its shots (and, for a continuity shot, the uncached shots
of its chain before it), then the film is assembled from the latest clip of every shot: its clip as it stands
when the cache has it, else the clip an earlier render of this version's line used ("earlier": the shot changed
since), else the shot is left out of this film until it is rendered.

Tiers: a draft render takes a shot's cached final clip when there is one as the shot stands (a finalised shot stays
final); a final render renders its scope under the family's final recipe with the seed, keyframe and take the draft
had. A film of mixed tiers says which shots are drafts (`tiers_label`, `shot_clips`; to critics `watching.drafts_line`).

A render whose film key (`FilmAssembler.key`: the film signature, the clips, the sound's configuration) names a film
cut before takes that film and its sidecars as they are: nothing is cut, mixed or measured again (`_film_again`;
bench/norender.py measures it against the first render).
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from app.context import Context, ProgressFn, no_progress
from app.errors import RenderFailed, StudioError
from app.services.audio import Audio
from app.services.clips import Clips
from app.services.film import FilmAssembler
from app.services.projects import Projects
from generation.base import Cancelled, CancelToken, RenderError
from storage.fileio import atomic_write
from storage.records import ClipRecord, RenderRecord, ShotRender, Version
from storage.run import AssembleProgress, DoneProgress, ShotProgress
from storage.schema import Scope, Storyboard, Tier, new_id, utcnow

# Said in the label of a render that changed nothing and took the film cut before (`Rendering._film_again`).
FILM_AGAIN = "the film as cut before (nothing in it changed)"


class Rendering:
    def __init__(self, ctx: Context, projects: Projects, clips: Clips, audio: Audio) -> None:
        self.ctx, self.projects, self.clips, self.audio = ctx, projects, clips, audio
        self.film = FilmAssembler(ctx, clips, audio)

    def render_shot(
        self,
        board: Storyboard,
        shot_id: str,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
        tier: Tier | None = None,
    ) -> ShotRender:
        """Render (or reuse) one shot of `board` (a draft is fine: nothing but clips is written), with the
        continuity shots before it that it is conditioned on. The clip lands in the cache, so the film's
        next render reuses it."""
        progress, cancel = progress or no_progress, cancel or CancelToken()
        shots = board.shots()
        index = next((i for i, s in enumerate(shots) if s.shot_id == shot_id), None)
        if index is None:
            raise StudioError(f"the storyboard has no shot {shot_id!r}")
        chain = next(c for c in self.clips.chains(board) if index in c)
        chain = chain[: chain.index(index) + 1]
        scratch = self.ctx.media.scratch()
        try:
            with self.clips.turn(cancel):
                prev, records = None, []
                for i in chain:
                    record, prev = self._shot(
                        board, i, i, len(shots), prev, scratch, progress, cancel, tier=tier or board.film.tier
                    )
                    records.append(record)
            return records[-1]  # the chain ends with the shot asked for
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def render(
        self,
        pid: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
        scope: Scope | None = None,
        tier: Tier | None = None,
    ) -> RenderRecord:
        """Render every shot (reusing cached clips), or only `scope`'s; assemble the film; record the render.
        `tier`: draft or final (None: the version's, `FilmOptions.tier`). A draft render takes a shot's final clip
        when the cache holds it as the shot stands (a finalised shot stays final); a final render renders every
        shot in its scope at full quality with the seed, keyframe and take the draft had."""
        progress, cancel = progress or no_progress, cancel or CancelToken()
        v = self.projects.version(pid, ref)
        tier = tier or v.storyboard.film.tier
        if tier not in ("draft", "final"):
            raise StudioError(f"unknown tier {tier!r}; use draft or final")
        with self.clips.turn(cancel):
            return self._render(v, progress, cancel, scope or Scope(), tier)

    def _render(self, v: Version, progress: ProgressFn, cancel: CancelToken, scope: Scope, tier: Tier) -> RenderRecord:
        self.projects.check_board(v.storyboard)  # a version stored before the caps were lowered
        t0 = time.perf_counter()
        backend = self.ctx.backend
        shots = v.storyboard.shots()
        n = len(shots)
        wanted = set(scope.shot_ids(v.storyboard))
        if not wanted:
            raise StudioError(f"v{v.number} has no shot in {scope.label()}")
        self._check_loras(v.storyboard)
        scratch = self.ctx.media.scratch()
        records: list[ShotRender | None] = [None] * n
        order = [i for i, s in enumerate(shots) if s.shot_id in wanted]  # progress counts the scope's shots
        place = {i: k for k, i in enumerate(order)}

        def run_chain(chain: list[int]) -> None:
            """Shots of one continuity chain, in order: each may be conditioned on the one before."""
            prev: ClipRecord | None = None  # the previous shot's clip (its last frame starts a continuity shot)
            for i in chain:
                records[i], prev = self._shot(
                    v.storyboard, i, place.get(i, 0), len(order), prev, scratch, progress, cancel, v.project_id, tier
                )

        try:
            chains = [
                c[: max(k for k, i in enumerate(c) if i in place) + 1]  # a chain up to its last shot in scope
                for c in self.clips.chains(v.storyboard)
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
            key = self.film.key(board, kept)
            again = self._film_again(v, key, kept, t0)
            if again is not None:
                progress(DoneProgress(shots=len(kept)))
                return again
            try:
                film = self.film.assemble(board, kept, scratch, cancel)
            except (OSError, RuntimeError) as e:  # ffmpeg fails: disk full, or another cause it names
                full = getattr(e, "errno", None) == errno.ENOSPC or os.strerror(errno.ENOSPC) in str(e)
                advice = "free some space and run" if full else "run"
                raise StudioError(
                    f"could not assemble the film: {getattr(e, 'strerror', None) or e}. "
                    f"Every clip is kept; {advice} render again."
                ) from None
            rendered = sum(r.status == "rendered" for r in kept)
            record = RenderRecord(
                id=new_id("r"),
                version=v.number,
                created_at=utcnow(),
                backend=backend.name,
                model=backend.model,
                label=f"{backend.label} · {self.tiers_label(kept, tier)}",
                shots=kept,
                rendered=rendered,
                reused=len(kept) - rendered,
                seconds=round(time.perf_counter() - t0, 3),
                film_sha256=film.film.sha256,
                media=film.media,
                stream_copied=film.stream_copied,
                audio=film.audio,
            )
            with self.ctx.repo.write() as u:
                u.add_media(film.stored)
                u.add_render(v, record)
            atomic_write(self._films / f"{key}.json", record.model_dump_json().encode())
            progress(DoneProgress(shots=len(kept)))
            return record
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    @property
    def _films(self) -> Path:
        """Each film cut, by its key (`FilmAssembler.key`): the render that cut it, as JSON."""
        return self.ctx.config.sound_dir / "films"

    def _film_again(self, v: Version, key: str, shots: list[ShotRender], t0: float) -> RenderRecord | None:
        """A render of `v` that takes the film cut before from the same inputs (the same film key: nothing that
        decides the picture, the sound or the sidecars changed), without cutting or mixing again; None when no
        such film is kept (never cut, or its files or rows gone)."""
        try:
            before = RenderRecord.model_validate_json((self._films / f"{key}.json").read_bytes())
        except (OSError, ValueError):
            return None
        shas = [before.film_sha256, *before.media.values()]
        if any(self.ctx.media.find(sha) is None for sha in shas):
            return None
        rendered = sum(r.status == "rendered" for r in shots)
        audio = before.audio
        if audio is not None:  # nothing voiced, made or mixed now
            audio = audio.model_copy(
                update={
                    "lines_voiced": 0,
                    "lines_reused": audio.lines_voiced + audio.lines_reused,
                    "cues_made": 0,
                    "cues_reused": audio.cues_made + audio.cues_reused,
                    "parts_mixed": 0,
                    "parts_reused": audio.parts_mixed + audio.parts_reused,
                    "descriptions_voiced": 0,
                }
            )
        record = before.model_copy(
            update={
                "id": new_id("r"),
                "version": v.number,
                "created_at": utcnow(),
                "shots": shots,
                "rendered": rendered,
                "reused": len(shots) - rendered,
                "seconds": round(time.perf_counter() - t0, 3),
                "label": f"{before.label} · {FILM_AGAIN}",
                "audio": audio,
            }
        )
        with self.ctx.repo.write() as u:
            if set(u.media(shas)) != set(shas):  # a row collected since: cut it again
                return None
            u.add_render(v, record)
        return record

    def tiers_label(self, shots: list[ShotRender], tier: Tier) -> str:
        """The render label's tier part: the recipe of the tier asked for, and how many shots are drafts."""
        describe = getattr(self.ctx.backend, "tier_label", None)
        recipe = describe(tier) if describe is not None else f"{tier} (the animatic draws both tiers alike)"
        drafts = [s.shot_id for s in shots if s.tier == "draft"]
        if not drafts:
            return f"{recipe} · every shot final"
        if len(drafts) == len(shots):
            return f"{recipe} · every shot a draft"
        return (
            f"{recipe} · {len(drafts)} of {len(shots)} shots drafts ({', '.join(drafts[:8])}{' …' * (len(drafts) > 8)})"
        )

    def shot_clips(self, board: Storyboard) -> dict[str, tuple[ClipRecord, Tier]]:
        """Each shot's clip as it stands, as a film of mixed tiers takes it: its final when the cache holds one, else
        its draft (shot_id -> (clip, tier); a shot with neither is absent)."""
        out: dict[str, tuple[ClipRecord, Tier]] = {}
        for tier in ("draft", "final"):  # final wins: set last
            out.update({sid: (clip, tier) for sid, clip in self.clips.cached_shots(board, tier).items()})
        return out

    def tier_recipes(self) -> dict[str, str]:
        """What each tier renders with, in words (the backend's recipes), and what a finalised shot keeps; a tier the
        model has not is said in one line, never left out."""
        backend = self.ctx.backend
        describe = getattr(backend, "tier_label", None)
        out: dict[str, str] = {}
        for tier in ("draft", "final"):
            try:
                out[tier] = describe(tier) if describe is not None else f"{tier}: the animatic draws both tiers alike"
            except RenderError as e:
                out[tier] = f"{tier}: not available ({e})"
        keeps = "the same seed, keyframe and take"  # what every backend keeps; a family row says how close it comes
        try:
            draft = getattr(getattr(backend, "family", None), "draft", None)
        except RenderError as e:  # the model's row cannot be read: said, not guessed
            draft, keeps = None, f"{keeps} (how close a final comes: unknown, {e})"
        out["keeps"] = getattr(draft, "keeps", None) or keeps
        return out

    def _check_loras(self, board: Storyboard) -> None:
        """Before the first shot: every LoRA the storyboard uses fits the model (one line, nothing rendered)."""
        check = getattr(self.ctx.backend, "check_lora", None)
        if check is None or not board.loras:
            return
        for lo in board.loras:
            path = self.ctx.media.find(lo.sha256)
            if path is None:
                raise StudioError(f"LoRA {lo.name}: its file {lo.sha256[:12]}… is not in the media store")
            try:
                check(path)
            except RenderError as e:
                raise StudioError(f"LoRA {lo.name}: {e}") from None

    def _latest_clips(self, v: Version, records: list[ShotRender | None]) -> list[ShotRender | None]:
        """Every shot outside a scoped render: its final clip as it stands when cached, else its draft ("reused"),
        else the clip the newest render of this version or an ancestor used ("earlier"), else None (left out)."""
        shots = v.storyboard.shots()
        latest = self.shot_clips(v.storyboard)
        cached = {sid: clip for sid, (clip, _) in latest.items()}
        out = list(records)
        missing = {s.shot_id for s, r in zip(shots, out) if r is None and s.shot_id not in cached}
        earlier: dict[str, ShotRender] = {}
        with self.ctx.repo.read() as u:
            for line in u.lineage(u.version(v.project_id, v.number)):
                if not missing - set(earlier):
                    break
                for render in reversed(u.renders(line)):
                    for r in render.shots:
                        if r.shot_id in missing and r.shot_id not in earlier and self.ctx.media.find(r.sha256):
                            earlier[r.shot_id] = r.model_copy(update={"status": "earlier"})
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
                    tier=latest[shot.shot_id][1],
                )
            elif out[i] is None:
                out[i] = earlier.get(shot.shot_id)
        return out

    def _shot(
        self,
        board: Storyboard,
        index: int,
        i: int,
        n: int,
        after: ClipRecord | None,
        scratch: Path,
        progress: ProgressFn,
        cancel: CancelToken,
        pid: str | None = None,
        tier: Tier = "final",
    ) -> tuple[ShotRender, ClipRecord]:
        """Reuse or render shot `index` of `board` (the `i`-th of `n` in the progress; of project `pid`: see
        `Clips.clip_for`), after the clip `after` of the shot before it in its chain; returns its render record
        and its clip."""
        cancel.raise_if_cancelled()
        shot = board.shots()[index]
        req = self.clips.request_for(board, index, after=after, tier=tier)
        if tier == "draft":  # a shot finalised as it stands stays final in a draft render
            final = self.clips.request_for(board, index, after=after, tier="final")
            try:
                done = self.clips.cached(self.clips.key(final), pid)
            except RenderError:
                done = None
            if done is not None:
                req, tier = final, "final"

        def on_step(done: int, total: int) -> None:
            progress(
                ShotProgress(shot_index=i, shots=n, shot_id=shot.shot_id, step=done, steps=total, status="rendering")
            )

        try:
            clip, key, status = self.clips.clip_for(req, scratch / f"{index:04d}.mp4", on_step, cancel, pid)
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
            tier=tier,
        )
        return record, clip
