"""Takes: a shot rendered with several seeds, every take kept, one picked.

A take is the shot's clip for one seed (from the keyframe the shot had then), stored in the clip cache like any
clip. Picking a take sets the shot's seed (and keyframe) in the working draft (storage.repository.Unit.fold); its
render finds the take's clip in the cache, so the picked shot renders nothing (continuity shots that follow it
start from its new last frame, so they do). The panel can vote on a shot's takes in a short per-shot
screening: each persona watches every take alone and votes for the one they score highest, or records no
preference when their scores barely differ.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pydantic import BaseModel

from agents.base import FilmView, SampledFrame
from app.context import Context, ProgressFn, derived_seed, no_progress
from app.errors import NotRendered, StudioError
from app.services.clips import Clips
from app.services.projects import Projects
from app.services.watching import Watching
from generation.base import CancelToken, RenderError
from storage.records import TakeRecord, TakeScreeningRecord, TakeVote, UsageRecord, Version
from storage.run import ShotProgress
from storage.schema import Shot, Usage, new_id, utcnow

MAX_TAKES_PER_ACTION = 8
MAX_TAKES_SCREENED = 6
# A persona whose overall scores (0..10) across a shot's takes span less than this prefers none of them: critics
# score on a coarse scale (the offline ones move by hundredths between seeds), so a smaller gap is noise, and
# counting it as a vote would show "N votes" that mean nothing.
NO_PREFERENCE_SPREAD = 0.1


class ShotTakes(BaseModel):
    """One shot's takes, side by side: which one the version uses, which can be picked without a re-render (their
    clip matches the version), and the panel's latest votes."""

    shot_id: str
    picked: str | None  # the take the version renders, if it is one of the takes
    takes: list[TakeRecord]  # in the order they were made
    current: list[str]  # take ids whose clip this version reuses when picked
    votes: TakeScreeningRecord | None


class PickResult(BaseModel):
    version: Version
    take: TakeRecord
    rerenders: bool  # False: the clip cache holds the take, the shot renders nothing
    downstream: list[str]  # continuity shots after it, which start from its new last frame


def preferred(scores: list[float]) -> int | None:
    """The index of the take a persona votes for given their score of each (ties go to the earlier take), or None
    when the scores span less than `NO_PREFERENCE_SPREAD` (no preference)."""
    if round(max(scores) - min(scores), 6) < NO_PREFERENCE_SPREAD:  # rounded: 6.1 - 6.0 is 0.0999… in floats
        return None
    return max(range(len(scores)), key=lambda k: (scores[k], -k))


class Takes:
    def __init__(self, ctx: Context, projects: Projects, clips: Clips, watching: Watching) -> None:
        self.ctx, self.projects, self.clips, self.watching = ctx, projects, clips, watching

    def render_takes(
        self,
        pid: str,
        shot_id: str,
        n: int = 1,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> ShotTakes:
        """`n` more takes of a shot, each with a new seed; the shot's own setting becomes a take first (its clip
        is reused when the version was rendered). Every finished take is kept, even if a later one fails."""
        if not 1 <= n <= MAX_TAKES_PER_ACTION:
            raise StudioError(f"takes: ask for 1 to {MAX_TAKES_PER_ACTION} takes at a time")
        progress, cancel = progress or no_progress, cancel or CancelToken()
        v = self.projects.version(pid, ref)
        shot = self.projects.shot(v, shot_id)
        try:
            base = self.clips.request_for(v.storyboard, _index(v, shot_id), pid=pid)
        except NotRendered as e:
            raise StudioError(f"shot {e.shot_id} continues from {e.previous}: render v{v.number} first") from None
        backend = self.ctx.backend
        with self.ctx.repo.read() as u:
            known = u.takes(pid, shot_id)
        keys, used = {t.key for t in known}, {t.seed for t in known} | {shot.seed}
        seeds = [shot.seed]
        k = len(used)
        while len(seeds) < n + 1:
            seed = derived_seed(shot_id, "take", k)
            k += 1
            if seed not in used:
                used.add(seed)
                seeds.append(seed)
        scratch = self.ctx.media.scratch()
        try:
            with self.clips.turn(cancel):
                for i, seed in enumerate(seeds):

                    def on_step(done: int, total: int, i=i) -> None:
                        progress(
                            ShotProgress(
                                stage="take",
                                shot_index=i,
                                shots=len(seeds),
                                shot_id=shot_id,
                                step=done,
                                steps=total,
                                status="rendering",
                            )
                        )

                    try:
                        clip, key, _ = self.clips.clip_for(base.with_(seed=seed), scratch / f"{i}.mp4", on_step, cancel)
                    except RenderError as e:
                        raise StudioError(
                            f"take {i + 1}/{len(seeds)} of {shot_id} failed: {e}. Finished takes are kept."
                        ) from None
                    if key in keys:
                        continue
                    keys.add(key)
                    with self.ctx.repo.write() as u:
                        number = len(u.takes(pid, shot_id)) + 1
                        u.add_take(
                            v,
                            TakeRecord(
                                id=new_id("tk"),
                                version=v.number,
                                shot_id=shot_id,
                                number=number,
                                seed=seed,
                                keyframe_sha256=shot.keyframe,
                                key=key,
                                sha256=clip.sha256,
                                backend=backend.name,
                                model=backend.model,
                                created_at=utcnow(),
                            ),
                        )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return self.shot_takes(pid, shot_id, v.number)

    def replace(
        self,
        pid: str,
        shot_id: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> PickResult:
        """One more take of the shot, picked at once (into the working draft). A new seed whose clip comes out as an
        earlier take's (same key) is refused: there is nothing new to replace the shot's clip with."""
        v = self.projects.version(pid, ref)
        shot = self.projects.shot(v, shot_id)
        before = {t.id for t in self.shot_takes(pid, shot_id, v.number).takes}
        state = self.render_takes(pid, shot_id, 1, v.number, progress, cancel)
        own = (shot.seed, shot.keyframe)  # the shot's own setting becomes a take too: it replaces nothing
        new = [t for t in state.takes if t.id not in before and (t.seed, t.keyframe_sha256) != own]
        if not new:
            raise StudioError(f"the new take of {shot_id} came out as an earlier one: nothing to replace it with")
        return self.pick(pid, shot_id, new[-1].id, v.number)

    def shot_takes(self, pid: str, shot_id: str, ref: int | str | None = None) -> ShotTakes:
        v = self.projects.version(pid, ref)
        shot = self.projects.shot(v, shot_id)
        with self.ctx.repo.read() as u:
            takes = u.takes(pid, shot_id)
            screenings = u.take_screenings(pid, shot_id)
        current = [t.id for t in takes if self._key_for(v, shot, t) == t.key]
        picked = next(
            (t.id for t in takes if t.id in current and t.seed == shot.seed and t.keyframe_sha256 == shot.keyframe),
            None,
        )
        return ShotTakes(
            shot_id=shot_id, picked=picked, takes=takes, current=current, votes=screenings[-1] if screenings else None
        )

    def board(self, pid: str, ref: int | str | None = None) -> dict[str, ShotTakes]:
        """The takes of every shot of the version that has any, by shot id (the storyboard's takes areas)."""
        v = self.projects.version(pid, ref)
        with self.ctx.repo.read() as u:
            taken = {t.shot_id for t in u.takes(pid)}
        return {
            s.shot_id: self.shot_takes(pid, s.shot_id, v.number) for s in v.storyboard.shots() if s.shot_id in taken
        }

    def _key_for(self, v: Version, shot: Shot, take: TakeRecord) -> str | None:
        """The clip key `v` would render the shot with under the take's seed and keyframe (None: cannot tell
        without a render of the clip it would continue from)."""
        as_taken = shot.model_copy(update={"seed": take.seed, "keyframe": take.keyframe_sha256})
        try:
            return self.clips.key(
                self.clips.request_for(v.storyboard, _index(v, shot.shot_id), shot=as_taken, pid=v.project_id)
            )
        except (StudioError, RenderError):
            return None

    def pick(self, pid: str, shot_id: str, take: str, ref: int | str | None = None) -> PickResult:
        """Make a take the shot's: its seed and keyframe in the working draft (a small action)."""
        v = self.projects.version(pid, ref)
        shot = self.projects.shot(v, shot_id)
        with self.ctx.repo.read() as u:
            takes = u.takes(pid, shot_id)
        chosen = next((t for t in takes if t.id == take or str(t.number) == take.lstrip("#")), None)
        if chosen is None:
            raise StudioError(f"shot {shot_id} has no take {take!r} (it has {len(takes)}: pick one by its number)")
        rerenders = self._key_for(v, shot, chosen) != chosen.key
        with self.ctx.repo.write() as u:
            base = u.version(pid, v.number)
            board = base.storyboard.model_copy(deep=True)
            target = board.shot(shot_id)
            if (target.seed, target.keyframe) == (chosen.seed, chosen.keyframe_sha256):
                raise StudioError(f"take {chosen.number} is already the one {shot_id} uses: nothing changes")
            target.seed, target.keyframe = chosen.seed, chosen.keyframe_sha256
            version = u.fold(base, board, "pick", f"pick take {chosen.number} of {shot_id} (seed {chosen.seed})")[0]
        ids = [s.shot_id for s in board.shots()]
        at = ids.index(shot_id)
        chain = next(c for c in self.clips.chains(board) if at in c)
        return PickResult(
            version=version, take=chosen, rerenders=rerenders, downstream=[ids[i] for i in chain if i > at]
        )

    def vote(
        self,
        pid: str,
        shot_id: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> TakeScreeningRecord:
        """A short per-shot screening: every persona watches each current take of the shot alone and votes for
        the one they score highest (see `preferred`). `cancel` stops it between critics (nothing of a stopped
        screening is saved)."""
        cancel = cancel or CancelToken()
        v = self.projects.version(pid, ref)
        shot = self.projects.shot(v, shot_id)
        state = self.shot_takes(pid, shot_id, v.number)
        takes = [t for t in state.takes if t.id in state.current][-MAX_TAKES_SCREENED:]
        if len(takes) < 2:
            raise StudioError(
                f"shot {shot_id} has {len(takes)} take(s) matching v{v.number}: render at least 2 takes of it first"
            )
        scene = v.storyboard.scene_of(shot_id).model_copy(update={"shots": [shot]})
        board = v.storyboard.model_copy(update={"scenes": [scene]})
        idea = self.projects.project(pid).idea or v.storyboard.logline
        runs = []
        scratch = self.ctx.media.scratch()
        try:
            for t in takes:
                film = FilmView(
                    storyboard=board,
                    frames=self._frames(t, scratch),
                    intent=idea,
                    renderer_label=f"take {t.number} of shot {shot_id}, watched alone "
                    f"({t.backend}{' · ' + t.model if t.model else ''})",
                    references=self.watching.references(v),
                )
                runs.append(self.watching.run_panel(v, film, progress, cancel))
                cancel.raise_if_cancelled()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        panel, mode = runs[0][0], runs[0][2]
        votes = []
        for i, persona in enumerate(panel):
            scores = {t.id: results[i].value.overall for t, (_, results, _) in zip(takes, runs)}
            best = preferred([scores[t.id] for t in takes])
            votes.append(
                TakeVote(
                    persona_id=persona.id,
                    persona_name=persona.name,
                    take_id=None if best is None else takes[best].id,
                    scores=scores,
                    reason="" if best is None else runs[best][1][i].value.summary,
                )
            )
        usage = sum((r.usage for _, results, _ in runs for r in results), Usage())
        record = TakeScreeningRecord(
            id=new_id("ts"),
            version=v.number,
            shot_id=shot_id,
            created_at=utcnow(),
            mode=mode,
            takes=[t.id for t in takes],
            votes=votes,
            usage=usage,
        )
        with self.ctx.repo.write() as u:
            u.add_take_screening(v, record)
            u.add_usage(v, UsageRecord(role="critic", mode=mode, **usage.model_dump()))
        return record

    def _frames(self, take: TakeRecord, scratch: Path) -> list[SampledFrame]:
        from generation.frames import sample_frames, save_jpeg

        clip = self.clips.path(take.sha256)
        return [
            SampledFrame(
                shot_id=take.shot_id,
                index=k,
                time=round(t, 3),
                path=str(save_jpeg(img, scratch / f"{take.id}_{idx}.jpg")),
            )
            for k, (idx, t, img) in enumerate(sample_frames(clip, self.ctx.config.frames_per_shot))
        ]


def _index(v: Version, shot_id: str) -> int:
    return next(i for i, s in enumerate(v.storyboard.shots()) if s.shot_id == shot_id)
