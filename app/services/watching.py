"""Watching: the critics' panel watches a version's latest film, or a scene or a range of shots of it.

Frames are sampled per shot from the clips (what a critic "sees", with shot ids and timecodes); every
persona on the panel critiques concurrently (an LLM critic watches in parts, in order: agents/critic.py); the
run is all or nothing (one failed critic saves nothing). Each critique records its scope and how it was
watched (its coverage). A scoped screening shows only its shots, and the whole storyboard as the story so far.
Critics also hear the watched shots (`hearing`): the lines with their times, the music and sounds, and what the
film's own sound measures in each shot (generation.audio.listen).
"""

from __future__ import annotations

import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agents.base import FilmView, HeardLine, Hearing, Result, SampledFrame, ShotSound, SoundFacts
from app.context import Context, ProgressFn, attach_usage, no_progress, record_failed_usage
from app.errors import StudioError
from app.services.clips import Clips
from app.services.projects import Projects
from storage.records import CritiqueRecord, RenderRecord, Screening, UsageRecord, Version
from storage.run import Cancelled, CancelToken, PanelProgress, ProgressEvent, RunContext, WatchProgress
from storage.schema import DIMENSIONS, Coverage, Critique, Persona, Scope, Unseen, Usage, new_id, utcnow


class Watching:
    def __init__(self, ctx: Context, projects: Projects, clips: Clips) -> None:
        self.ctx, self.projects, self.clips = ctx, projects, clips

    def critique(
        self,
        pid: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
        scope: Scope | None = None,
    ) -> list[CritiqueRecord]:
        """Every persona on the panel watches the latest render of the version (or `scope` of it), concurrently.
        `cancel` stops the run, closing the critics' requests (nothing of a stopped run is saved)."""
        v = self.projects.version(pid, ref)
        scope = scope or Scope()
        render = self.clips.latest_render(pid, v.number)
        if render is None:
            raise StudioError(f"v{v.number} has no film yet: render this version first")
        self.panel(v)
        scratch = self.ctx.media.scratch()
        try:
            film = self.film_view(
                v, render, scope, scratch if self.ctx.config.llm_critic_video else None, audio_dir=scratch
            )
            return self.screen(v, film, progress, render_id=render.id, cancel=cancel, scope=scope)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def screen(
        self,
        v: Version,
        film: FilmView,
        progress: ProgressFn | None = None,
        *,
        render_id: str | None = None,
        screening: Screening = "film",
        cancel: CancelToken | None = None,
        scope: Scope | None = None,
    ) -> list[CritiqueRecord]:
        """The panel watches `film` (the film, or the keyframe storyboard) and its critiques are recorded as one run."""
        cancel = cancel or CancelToken()
        try:
            panel, results, mode = self.run_panel(v, film, progress, cancel)
        except Exception as e:
            record_failed_usage(self.ctx, v, "critic", self.ctx.agents.critic.mode, e)
            raise
        cancel.raise_if_cancelled()
        batch, now = new_id("cb"), utcnow()
        records = [
            CritiqueRecord(
                id=new_id("c"),
                version=v.number,
                render_id=render_id,
                screening=screening,
                persona_id=p.id,
                persona_name=p.name,
                batch=batch,
                mode=mode,
                created_at=now,
                critique=res.value,
                usage=res.usage,
                scope=scope or Scope(),
                coverage=res.coverage or shown(film),
            )
            for p, res in zip(panel, results)
        ]
        with self.ctx.repo.write() as u:
            u.add_critiques(v, records)
            u.add_usage(
                v, UsageRecord(role="critic", mode=mode, **sum((r.usage for r in results), Usage()).model_dump())
            )
        return records

    def panel(self, v: Version) -> list[Persona]:
        """The personas on the version's panel (an unknown one is an error)."""
        personas = self.projects.personas_of(v)
        missing = [p for p in v.panel if p not in personas]
        if missing:
            raise StudioError(f"the panel names unknown persona(s) {missing}: choose the panel again")
        return [personas[p] for p in v.panel]

    def run_panel(
        self, v: Version, film: FilmView, progress: ProgressFn | None = None, cancel: CancelToken | None = None
    ) -> tuple[list[Persona], list[Result[Critique]], str]:
        """(panel, results, critic mode): every persona watches `film`, concurrently; one failure fails the run
        (and closes the other critics' requests). Progress: personas done, and each one's part of the film."""
        progress, cancel = progress or no_progress, cancel or CancelToken()
        panel = self.panel(v)
        critic = self.ctx.agents.critic
        stop = CancelToken(parent=cancel)  # cancelled too when a critic fails: the others close their requests
        tracker = _PanelProgress(panel, progress)
        run = RunContext(cancel=stop, progress=tracker.watching)

        def one(persona: Persona) -> Result[Critique]:
            stop.raise_if_cancelled("the panel stopped")
            try:
                res = critic.critique(persona, film, run)
            except Exception:
                stop.cancel()
                raise
            tracker.finished(persona.id)
            return res

        workers = max(1, min(len(panel), self.ctx.config.llm_concurrency))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(one, p) for p in panel]
            errors = [f.exception() for f in futures]
        if any(errors):
            cancel.raise_if_cancelled()  # stopped: the critics' "cancelled" is the outcome, not an error
            error = next(
                (e for e in errors if e is not None and not isinstance(e, Cancelled)),
                next(e for e in errors if e is not None),
            )
            # what the whole run cost (finished critics and the requests of failed ones), for the version's cost
            cost = sum(
                (
                    f.result().usage if e is None else getattr(e, "usage", None) or Usage()
                    for f, e in zip(futures, errors)
                ),
                Usage(),
            )
            attach_usage(error, cost)
            raise error
        return panel, [f.result() for f in futures], critic.mode

    def film_view(
        self,
        v: Version,
        render: RenderRecord,
        scope: Scope | None = None,
        clips_dir: Path | None = None,
        audio_dir: Path | None = None,
    ) -> FilmView:
        """What a critic watches: `frames_per_shot` frames of every shot in scope, in film order, with timecodes
        (a scope's view holds only its shots, with the whole storyboard as the story so far), and what it hears
        (`hearing`; with `audio_dir`, the film's mix is written there as a WAV for critics that take audio). With
        `clips_dir`, critics that take video can have consecutive shots joined into one clip there."""
        scope = scope or Scope()
        wanted = set(scope.shot_ids(v.storyboard))
        if not wanted:
            raise StudioError(f"v{v.number} has no shot in {scope.label()}")
        out: list[SampledFrame] = []
        clips: dict[str, str] = {}
        k = self.ctx.config.frames_per_shot
        for shot, start, _ in v.storyboard.timeline():
            if shot.shot_id not in wanted:
                continue
            r = render.shot(shot.shot_id)
            if r is None or r.status == "earlier":
                what = "no clip" if r is None else "only an earlier clip (it changed since)"
                raise StudioError(
                    f"shot {shot.shot_id} has {what} in the latest render of v{v.number}: render "
                    f"{scope.label() if not scope.whole else 'the film'} first"
                )
            clips[shot.shot_id] = str(self.clips.path(r.sha256))
            # frames are cut once per clip and kept (app.services.thumbnails): an unchanged shot is not decoded again
            for i, (_, t, path) in enumerate(self.clips.frames(r.sha256, k, offset=start)):
                out.append(SampledFrame(shot_id=shot.shot_id, index=i, time=round(t, 3), path=str(path)))
        idea = self.projects.project(v.project_id).idea
        board = v.storyboard if scope.whole else v.storyboard.restricted(wanted)
        return FilmView(
            storyboard=board,
            frames=out,
            intent=idea or v.storyboard.logline,
            renderer_label=render.label + drafts_line(render, wanted),
            clips=clips,
            references=self.references(v),
            story=None if scope.whole else v.storyboard,
            frames_per_shot=k,
            join_clips=joiner(clips, clips_dir) if clips_dir else None,
            hearing=self.hearing(v, render, wanted, audio_dir),
        )

    def hearing(self, v: Version, render: RenderRecord, wanted: set[str], audio_dir: Path | None) -> Hearing | None:
        """What is heard in the `wanted` shots of the render's film: each shot's lines in their subtitle windows (the
        times the voices were placed at: app.services.audio), its scene's cue and its sounds in words, and the facts the
        film's decoded sound and stems measure over the shot (generation.audio.listen). A render without sound
        gives the lines and cues with no facts (`label` says so); None when nothing in those shots makes a sound."""
        from generation import assembly, subtitles
        from generation.audio import score
        from generation.audio.loudness import TARGETS

        board, opts = v.storyboard, v.storyboard.film
        by_id = {s.shot_id: s for s in board.shots()}
        scene_of = {s.shot_id: sc for sc in board.scenes for s in sc.shots}
        film = [r for r in render.shots if r.shot_id in by_id]  # the film's shots, in order (a shared film's too)
        # the film's timeline, as app/services/film.py cut it: clip lengths, the title card, crossfades
        starts = assembly.timeline(
            [r.num_frames / r.fps for r in film],
            title_seconds=opts.title_seconds if opts.title_card else 0.0,
            crossfade=opts.crossfade,
        )
        ends = [*starts[1:], starts[-1] + film[-1].num_frames / film[-1].fps] if film else []
        made = render.audio.label if render.audio is not None else ""
        shots: list[ShotSound] = []
        for r, start, end in zip(film, starts, ends, strict=True):
            shot = by_id[r.shot_id]
            windows = subtitles.split_window(start, end, shot.subtitles()) if shot.dialogue else []
            music = scene_of[shot.shot_id].music.strip()
            shots.append(
                ShotSound(
                    shot_id=shot.shot_id,
                    start=round(start, 3),
                    end=round(end, 3),
                    lines=tuple(
                        HeardLine(ln.character, ln.line, ln.delivery, round(t0, 3), round(t1, 3), shot.off_screen(ln))
                        for ln, (t0, t1, _) in zip(shot.dialogue, windows, strict=True)
                    ),
                    music=music,
                    music_label=score.LABEL if music and score.LABEL in made else "",
                    sounds=shot.sounds.strip(),
                )
            )
        watched = [s for s in shots if s.shot_id in wanted]
        if render.audio is None:
            if not any(s.lines or s.music or s.sounds for s in watched):
                return None
            return Hearing(
                shots=tuple(watched),
                label="no sound in this render: the lines, music and sounds are the storyboard's, not heard or measured",
            )
        heard, wav = self._listen(render, shots, audio_dir)
        a = render.audio
        return Hearing(
            shots=tuple(_measured(s, heard.windows[s.shot_id]) for s in watched),
            loudness_lufs=a.loudness_lufs,
            true_peak_dbtp=a.true_peak_dbtp,
            target_lufs=TARGETS[a.target].lufs,
            label=a.label,
            voice_pitch_hz=dict(heard.pitch_hz),
            audio=str(wav) if wav is not None else None,
        )

    def _listen(self, render: RenderRecord, shots: list[ShotSound], audio_dir: Path | None):
        """(what listening measured over each shot's window, the mix's WAV in `audio_dir` or None): the film's AAC
        decoded (48 kHz, its own channels: a stereo film's loudness is its two channels'), and its dialogue and music
        stems (mono: channels averaged) from the media store."""
        from generation.audio.listen import Spoken, Window, listen
        from generation.audio.pcm import RATE, decode, read_wav, write_wav

        try:
            mix = decode(self.ctx.media.path(render.film_sha256, "mp4"), RATE, stereo=True)
        except ValueError as e:
            raise StudioError(f"the film's sound could not be heard: {e}") from None

        def stem(kind: str):
            if kind not in render.media:  # a render without stems: speech facts are not measured
                return None
            samples, rate = read_wav(self.ctx.media.path(render.media[kind], "wav"))
            if rate != RATE:
                raise StudioError(f"the film's {kind} stem is at {rate} Hz, not {RATE}: render the film again")
            return samples

        windows = [
            Window(
                s.shot_id,
                s.start,
                s.end,
                tuple(Spoken(ln.character, len(ln.line.split()), ln.start, ln.end) for ln in s.lines),
            )
            for s in shots
        ]
        heard = listen(mix, windows, stem("dialogue"), stem("music"))
        wav = write_wav(audio_dir / "film-mix.wav", mix, RATE) if audio_dir is not None else None
        return heard, wav

    def references(self, v: Version) -> dict[str, list[str]]:
        """Character name -> their reference images, which critics see beside the frames."""
        return {
            c.name: [str(self.ctx.media.path(sha, "png")) for sha in c.references]
            for c in v.storyboard.characters
            if c.references
        }

    def critiques(self, pid: str, ref: int | str | None = None) -> list[CritiqueRecord]:
        """The latest panel run on a version, with each persona's name."""
        with self.ctx.repo.read() as u:
            v = u.version(pid, ref)
            records = u.critiques(v)
        personas = self.projects.personas_of(v)
        return [
            r.model_copy(
                update={"persona_name": personas[r.persona_id].name if r.persona_id in personas else r.persona_id}
            )
            for r in records
        ]

    def panel_scores(self, pid: str, ref: int | str | None = None) -> dict[str, float]:
        """Mean scores of the latest panel run: 'overall' and each dimension scored (over the critics who scored it)."""
        crits = [c.critique for c in self.critiques(pid, ref)]
        if not crits:
            return {}
        out = {"overall": round(sum(c.overall for c in crits) / len(crits), 2)}
        for d in DIMENSIONS:  # a dimension no critic scored (`sound` of a silent film, older critiques) is left out
            given = [x for x in (c.scores.get(d) for c in crits) if x is not None]
            if given:
                out[d] = round(sum(given) / len(given), 2)
        return out

    def diversity(self, pid: str, ref: int | str | None = None):
        """How alike the panel's latest critiques are (a collapsed panel is flagged), or None under two critics."""
        from agents.diversity import panel_similarity

        crits = [c.critique for c in self.critiques(pid, ref)]
        return panel_similarity(crits) if len(crits) >= 2 else None


def _measured(shot: ShotSound, facts) -> ShotSound:
    """`shot` with the facts generation.audio.listen measured over its window."""
    from dataclasses import replace

    return replace(
        shot,
        facts=SoundFacts(
            loudness_lufs=facts.loudness_lufs,
            speech_to_music_db=facts.speech_to_music_db,
            longest_silence_s=facts.longest_silence_s,
            clipped=facts.clipped,
            words_per_s=facts.words_per_s,
        ),
    )


def joiner(clips: dict[str, str], folder: Path):
    """shot ids -> one clip of them, joined once (by stream copy when the clips allow) and shared by the panel."""
    from generation.assembly import assemble

    made: dict[tuple[str, ...], str] = {}
    lock = threading.Lock()

    def join(ids: list[str]) -> str:
        key = tuple(ids)
        with lock:
            if key not in made:
                out = folder / f"part-{len(made):04d}.mp4"
                assemble([Path(clips[i]) for i in ids], out)
                made[key] = str(out)
            return made[key]

    return join


def shown(film: FilmView) -> Coverage:
    """What a critic that does not report its coverage (the offline critic, a take's vote) was shown: every
    frame of every shot in the view, read in one go."""
    shots = film.storyboard.shots()
    counts = {s.shot_id: len(film.frames_of(s.shot_id)) for s in shots}
    want = film.frames_per_shot or max(counts.values(), default=0)
    unseen = [
        Unseen(shot_id=sid, why=f"only {n} frame(s) could be cut from its clip")
        for sid, n in counts.items()
        if n < max(1, want)
    ]
    return Coverage(
        input="offline",
        shots=len(shots),
        seen=len(shots) - len(unseen),
        frames_per_shot=want,
        min_frames=min(counts.values(), default=0),
        chunks=1,
        unseen=unseen,
    )


class _PanelProgress:
    """The panel's progress from its critics' events: personas finished, and how far each one has watched."""

    def __init__(self, panel: list[Persona], progress: ProgressFn) -> None:
        self.total, self.progress = len(panel), progress
        self.parts: dict[str, float] = {}  # persona -> fraction of the film watched
        self.done: list[str] = []
        self.lock = threading.Lock()

    def _emit(self, persona: str, **extra) -> None:
        with self.lock:
            fraction = sum(self.parts.values()) / max(self.total, 1)
            event = PanelProgress(
                done=len(self.done), total=self.total, persona=persona, fraction=round(min(fraction, 1.0), 4), **extra
            )
        self.progress(event)

    def watching(self, e: ProgressEvent) -> None:
        """A critic's event (WatchProgress: its part of the film, its streamed tokens); others are not a critic's."""
        if not isinstance(e, WatchProgress):
            return
        with self.lock:
            if e.chunks:
                self.parts[e.persona] = max(self.parts.get(e.persona, 0.0), (e.chunk - 1) / e.chunks)
        self._emit(e.persona, chunk=e.chunk, chunks=e.chunks, tokens=e.tokens, tokens_per_s=e.tokens_per_s, note=e.note)

    def finished(self, persona: str) -> None:
        with self.lock:
            self.done.append(persona)
            self.parts[persona] = 1.0
        self._emit(persona)


def drafts_line(render: RenderRecord, watched: set[str]) -> str:
    """What critics are told about the watched shots that are drafts (empty when none is)."""
    drafts = [r.shot_id for r in render.shots if r.tier == "draft" and r.shot_id in watched]
    if not drafts:
        return ""
    return (
        f". Shots {', '.join(drafts)} are drafts: fast renders made with the model's draft recipe (fewer steps, "
        "less detail and motion than the final); judge their story, framing and pacing, not their finish"
    )
