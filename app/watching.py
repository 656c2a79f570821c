"""Watching: the critics' panel watches a version's latest film.

Frames are sampled per shot from the clips (what a critic "sees", with shot ids and timecodes); every
persona on the panel critiques concurrently; the run is all or nothing (one failed critic saves nothing).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from agents.base import FilmView, Result, SampledFrame
from app.context import Context, ProgressFn, no_progress
from app.errors import StudioError
from app.projects import Projects
from app.rendering import Rendering
from generation.base import CancelToken
from storage.records import CritiqueRecord, RenderRecord, Screening, UsageRecord, Version
from storage.schema import DIMENSIONS, Persona, Usage, new_id, utcnow


class Watching:
    def __init__(self, ctx: Context, projects: Projects, rendering: Rendering) -> None:
        self.ctx, self.projects, self.rendering = ctx, projects, rendering

    def critique(self, pid: str, ref: int | str | None = None, progress: ProgressFn | None = None,
                 cancel: CancelToken | None = None) -> list[CritiqueRecord]:
        """Every persona on the panel watches the latest render of the version, concurrently. `cancel` stops
        the run before the next critic starts (nothing of a stopped run is saved)."""
        v = self.projects.version(pid, ref)
        render = self.rendering.latest(pid, v.number)
        if render is None:
            raise StudioError(f"v{v.number} has no film yet: run `chief render` first")
        self.panel(v)
        return self.screen(v, self.film_view(v, render), progress, render_id=render.id, cancel=cancel)

    def screen(self, v: Version, film: FilmView, progress: ProgressFn | None = None, *, render_id: str | None = None,
               screening: Screening = "film", cancel: CancelToken | None = None) -> list[CritiqueRecord]:
        """The panel watches `film` (the film, or the keyframe storyboard) and its critiques are recorded as one run."""
        cancel = cancel or CancelToken()
        panel, results, mode = self.run_panel(v, film, progress, cancel)
        cancel.raise_if_cancelled()
        batch, now = new_id("cb"), utcnow()
        records = [CritiqueRecord(id=new_id("c"), version=v.number, render_id=render_id, screening=screening,
                                  persona_id=p.id, persona_name=p.name, batch=batch, mode=mode, created_at=now,
                                  critique=res.value, usage=res.usage) for p, res in zip(panel, results)]
        with self.ctx.repo.write() as u:
            u.add_critiques(v, records)
            u.add_usage(v, UsageRecord(role="critic", mode=mode, **sum((r.usage for r in results), Usage())
                                       .model_dump()))
        return records

    def panel(self, v: Version) -> list[Persona]:
        """The personas on the version's panel (an unknown one is an error)."""
        personas = self.projects.personas_of(v)
        missing = [p for p in v.panel if p not in personas]
        if missing:
            raise StudioError(f"the panel names unknown persona(s) {missing}: choose the panel again")
        return [personas[p] for p in v.panel]

    def run_panel(self, v: Version, film: FilmView, progress: ProgressFn | None = None,
                  cancel: CancelToken | None = None) -> tuple[list[Persona], list[Result], str]:
        """(panel, results, critic mode): every persona watches `film`, concurrently; one failure fails the run."""
        progress, cancel = progress or no_progress, cancel or CancelToken()
        panel = self.panel(v)
        critic = self.ctx.agents.critic
        done: list[str] = []

        def one(persona: Persona):
            cancel.raise_if_cancelled()
            res = critic.critique(persona, film)
            done.append(persona.id)
            progress({"stage": "critique", "done": len(done), "total": len(panel), "persona": persona.id})
            return res
        workers = max(1, min(len(panel), self.ctx.config.llm_concurrency))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return panel, list(pool.map(one, panel)), critic.mode

    def film_view(self, v: Version, render: RenderRecord) -> FilmView:
        """What a critic watches: `frames_per_shot` frames of every shot, in film order, with timecodes."""
        out: list[SampledFrame] = []
        clips: dict[str, str] = {}
        for shot, start, _ in v.storyboard.timeline():
            r = render.shot(shot.shot_id)
            if r is None:
                raise StudioError(f"shot {shot.shot_id} has no clip in the latest render")
            clips[shot.shot_id] = str(self.rendering.film.clip_path(r.sha256))
            # frames are cut once per clip and kept (app.thumbnails): an unchanged shot is not decoded again
            for k, (_, t, path) in enumerate(self.rendering.clip_media.frames(r.sha256, self.ctx.config.frames_per_shot,
                                                                              offset=start)):
                out.append(SampledFrame(shot_id=shot.shot_id, index=k, time=round(t, 3), path=str(path)))
        idea = self.projects.project(v.project_id).idea
        return FilmView(storyboard=v.storyboard, frames=out, intent=idea or v.storyboard.logline,
                        renderer_label=render.label, clips=clips, references=self.references(v))

    def references(self, v: Version) -> dict[str, list[str]]:
        """Character name -> their reference images, which critics see beside the frames."""
        return {c.name: [str(self.ctx.media.path(sha, "png")) for sha in c.references]
                for c in v.storyboard.characters if c.references}

    def critiques(self, pid: str, ref: int | str | None = None) -> list[CritiqueRecord]:
        """The latest panel run on a version, with each persona's name."""
        with self.ctx.repo.read() as u:
            v = u.version(pid, ref)
            records = u.critiques(v)
        personas = self.projects.personas_of(v)
        return [r.model_copy(update={"persona_name": personas[r.persona_id].name if r.persona_id in personas
                                     else r.persona_id}) for r in records]

    def panel_scores(self, pid: str, ref: int | str | None = None) -> dict[str, float]:
        """Mean scores of the latest panel run: 'overall' and each dimension."""
        crits = [c.critique for c in self.critiques(pid, ref)]
        if not crits:
            return {}
        out = {"overall": round(sum(c.overall for c in crits) / len(crits), 2)}
        for d in DIMENSIONS:
            out[d] = round(sum(c.scores.get(d) for c in crits) / len(crits), 2)
        return out

    def diversity(self, pid: str, ref: int | str | None = None):
        """How alike the panel's latest critiques are (a collapsed panel is flagged), or None under two critics."""
        from agents.diversity import panel_similarity

        crits = [c.critique for c in self.critiques(pid, ref)]
        return panel_similarity(crits) if len(crits) >= 2 else None
