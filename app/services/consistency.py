"""Consistency measured: how alike each character looks across their shots, and to their reference images.

For every character, each shot they appear in gives one appearance: three frames of the shot's clip in the
version's latest render (their embeddings averaged), or the shot's keyframe before any render. Each appearance
is embedded with the image-embedding model of `CHIEF_EMBED_MODEL` (CLIP, SigLIP or DINOv2) and scored by its
cosine similarity to the character's reference images and to the character's other appearances; the table
lists the worst shots first. Whole frames are embedded (nothing crops to the character), and the table says so.
Without an embedding model nothing is measured, and the table says that instead of guessing.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel

from app.context import Context
from app.errors import StudioError
from app.services.clips import Clips
from app.services.projects import Projects
from generation.base import RenderError
from storage.records import RenderRecord, Version

Source = Literal["auto", "clips", "keyframes"]
Look = Literal["clip", "keyframe", "none"]  # what a shot's appearance is measured on
FRAMES_PER_APPEARANCE = 3
METHOD = (
    "cosine similarity of whole-frame image embeddings (1 = identical look); each shot is "
    f"{FRAMES_PER_APPEARANCE} frames of its clip averaged, or its keyframe; nothing crops to the character"
)


class Appearance(BaseModel):
    shot_id: str
    source: Look  # none: the shot has neither a clip nor a keyframe yet
    to_reference: float | None = None  # mean similarity to the character's reference images
    to_others: float | None = None  # mean similarity to the character's other appearances


class CharacterConsistency(BaseModel):
    name: str
    references: int
    appearances: list[Appearance]  # measured: worst first; else in film order
    mean_to_reference: float | None = None
    mean_to_others: float | None = None


class ConsistencyReport(BaseModel):
    version: int
    measured: bool
    model: str  # the embedding model that measured, or ""
    method: str
    note: str = ""  # why nothing was measured
    characters: list[CharacterConsistency]


class Consistency:
    def __init__(self, ctx: Context, projects: Projects, clips: Clips) -> None:
        self.ctx, self.projects, self.clips = ctx, projects, clips
        self._embedder = None

    @property
    def embedder(self):
        if self._embedder is None:
            from app.factory import make_embedder

            self._embedder = make_embedder(self.ctx.config)
        return self._embedder

    def report(self, pid: str, ref: int | str | None = None, source: Source = "auto") -> ConsistencyReport:
        v = self.projects.version(pid, ref)
        render = self.clips.latest_render(pid, v.number) if source != "keyframes" else None
        if source == "clips" and render is None:
            raise StudioError(f"v{v.number} has no render: render this version first, or measure its keyframes")
        shots = {s.shot_id: s for s in v.storyboard.shots()}
        try:
            embedder = self.embedder
        except RenderError as e:
            raise StudioError(f"CHIEF_EMBED_MODEL: {e}") from None
        scratch = self.ctx.media.scratch()
        try:
            looks = {sid: self._images(v, render, sid, scratch, embedder is not None) for sid in shots}
            if embedder is None:
                return ConsistencyReport(
                    version=v.number,
                    measured=False,
                    model="",
                    method=METHOD,
                    note="not measured: no image-embedding model. Set CHIEF_EMBED_MODEL to a CLIP, SigLIP or DINOv2 "
                    "model (a local folder or a cached hub id) to measure it.",
                    characters=[
                        CharacterConsistency(
                            name=c.name,
                            references=len(c.references),
                            appearances=[
                                Appearance(shot_id=s, source=looks[s][0])
                                for s in shots
                                if c.name in shots[s].characters
                            ],
                        )
                        for c in v.storyboard.characters
                    ],
                )
            try:
                characters = [
                    self._measure(embedder, c, [s for s in shots if c.name in shots[s].characters], looks)
                    for c in v.storyboard.characters
                ]
            except RenderError as e:
                raise StudioError(f"CHIEF_EMBED_MODEL: {e}") from None
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return ConsistencyReport(
            version=v.number, measured=True, model=embedder.label, method=METHOD, characters=characters
        )

    def _images(
        self, v: Version, render: RenderRecord | None, shot_id: str, scratch: Path, sample: bool
    ) -> tuple[Look, list[Path]]:
        """(source, image files) of one shot's appearance: frames of its clip (sampled only when they will be
        measured), else its keyframe, else none."""
        from generation.frames import sample_frames, save_jpeg

        clip = render.shot(shot_id) if render is not None else None
        if clip is not None:
            path = self.clips.path(clip.sha256)
            return "clip", [
                save_jpeg(img, scratch / f"{shot_id}_{i}.jpg")
                for i, _, img in (sample_frames(path, FRAMES_PER_APPEARANCE) if sample else ())
            ]
        keyframe = v.storyboard.shot(shot_id).keyframe
        if keyframe:
            return "keyframe", [self.ctx.media.path(keyframe, "png")]
        return "none", []

    def _measure(
        self, embedder, character, shot_ids: list[str], looks: dict[str, tuple[Look, list[Path]]]
    ) -> CharacterConsistency:
        refs = [self.ctx.media.path(sha, "png") for sha in character.references]
        seen = [s for s in shot_ids if looks[s][1]]
        files = refs + [p for s in seen for p in looks[s][1]]
        vectors = embedder.embed(files) if files else np.zeros((0, 1))
        ref_vecs, rest = vectors[: len(refs)], vectors[len(refs) :]
        per_shot, at = {}, 0
        for s in seen:
            k = len(looks[s][1])
            mean = rest[at : at + k].mean(axis=0)
            per_shot[s] = mean / max(float(np.linalg.norm(mean)), 1e-12)
            at += k
        rows = []
        for s in shot_ids:
            if s not in per_shot:
                rows.append(Appearance(shot_id=s, source="none"))
                continue
            others = [per_shot[o] for o in per_shot if o != s]
            rows.append(
                Appearance(
                    shot_id=s,
                    source=looks[s][0],
                    to_reference=_round(float(np.mean(ref_vecs @ per_shot[s]))) if len(ref_vecs) else None,
                    to_others=_round(float(np.mean([o @ per_shot[s] for o in others]))) if others else None,
                )
            )
        rows.sort(key=_worst_first)
        return CharacterConsistency(
            name=character.name,
            references=len(refs),
            appearances=rows,
            mean_to_reference=_mean([r.to_reference for r in rows]),
            mean_to_others=_mean([r.to_others for r in rows]),
        )


def _round(x: float) -> float:
    return round(x, 4)


def _mean(values: list[float | None]) -> float | None:
    known = [x for x in values if x is not None]
    return _round(float(np.mean(known))) if known else None


def _worst_first(row: Appearance) -> tuple:
    scores = [x for x in (row.to_reference, row.to_others) if x is not None]
    return (not scores, min(scores) if scores else 0.0)
