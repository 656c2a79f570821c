"""The LLM critic: one persona watches sampled frames plus the storyboard text and answers a typed Critique."""

from __future__ import annotations

import logging
from pydantic import BaseModel, ConfigDict, Field

from agents.base import AgentError, FilmView, Result
from agents.llm import LLMClient, image_part, subsample
from prompts import render
from storage.schema import DIMENSION_MEANINGS, DIMENSIONS, Critique, CritiqueIssue, Dimension, Persona, Scores, ShotNote

log = logging.getLogger(__name__)
REFERENCES_PER_CHARACTER = 2  # reference images a critic sees per character, beside the frames

class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IssueOut(_Closed):
    summary: str
    urgency: int = Field(ge=1, le=5, description="5 = fix first")
    dimension: Dimension
    shot_ids: list[str]
    suggestion: str = Field(description="a concrete change to a prompt or the cut")


class CritiqueOut(_Closed):
    """What the model answers; converted to storage.schema.Critique."""

    overall: float = Field(ge=0, le=10)
    scores: Scores
    shot_notes: list[ShotNote]
    top_issues: list[IssueOut] = Field(description="most urgent first")
    keep_watching: bool
    keep_watching_reason: str
    summary: str = Field(description="your reaction, in your own voice")


def timecode(seconds: float) -> str:
    m, s = divmod(max(0.0, seconds), 60)
    return f"{int(m):02d}:{s:04.1f}"


def to_critique(out: CritiqueOut, persona_id: str, known_shots: set[str]) -> Critique:
    """The schema type, with notes about shots that do not exist dropped (and logged)."""
    notes = [n for n in out.shot_notes if n.shot_id in known_shots]
    issues = []
    for i in sorted(out.top_issues, key=lambda i: -i.urgency):
        ids = [s for s in i.shot_ids if s in known_shots]
        issues.append(CritiqueIssue(summary=i.summary, urgency=i.urgency, dimension=i.dimension, shot_ids=ids, suggestion=i.suggestion))
    dropped = [n.shot_id for n in out.shot_notes if n.shot_id not in known_shots]
    dropped += [s for i in out.top_issues for s in i.shot_ids if s not in known_shots]
    if dropped:
        log.warning("critic %s: dropped references to unknown shot ids %s", persona_id, sorted(set(dropped)))
    return Critique(
        persona_id=persona_id,
        overall=out.overall,
        scores=out.scores,
        shot_notes=notes,
        top_issues=issues,
        keep_watching=out.keep_watching,
        keep_watching_reason=out.keep_watching_reason,
        summary=out.summary,
    )


class LLMCritic:
    """Critic role over an OpenAI-compatible vision model (agents.base.Critic)."""

    def __init__(self, client: LLMClient, model: str | None = None):
        self.client = client
        self.model = model or client.config.critic_model
        self.mode = f"llm:{self.model}"

    def messages(self, persona: Persona, film: FilmView) -> list[dict]:
        """The chat messages sent for one persona (system: who they are; user: the film, frames as images)."""
        cfg = self.client.config
        sb = film.storyboard
        timecodes = {shot.shot_id: f"{timecode(a)}-{timecode(b)}" for shot, a, b in sb.timeline()}
        refs = [(name, path) for name, paths in film.references.items() for path in paths[:REFERENCES_PER_CHARACTER]]
        refs = refs[:cfg.max_frames_per_call // 3]  # the references share the call's image budget with the frames
        frames = subsample(sorted(film.frames, key=lambda f: f.time), cfg.max_frames_per_call - len(refs))
        system = render(
            "critic_system.j2",
            persona=persona,
            tastes=persona.tastes.describe(),
            weights=", ".join(f"{d} {persona.weights.get(d, 1.0):g}" for d in DIMENSIONS),
            dimensions=[(d, DIMENSION_MEANINGS[d]) for d in DIMENSIONS],
        )
        label = film.renderer_label
        text = render(
            "critic_user.j2",
            storyboard=sb,
            shots=sb.shots(),
            timecodes=timecodes,
            renderer_label=label,
            is_previz=any(w in label.lower() for w in ("animatic", "previz", "preview")),
            intent=film.intent,
            n_frames=len(frames),
        )
        content: list[dict] = [{"type": "text", "text": text}]
        for f in frames:
            content.append({"type": "text", "text": f"[shot {f.shot_id} · {timecode(f.time)}]"})
            content.append(image_part(f.path, cfg.image_detail, cfg.max_image_side))
        if refs:
            content.append({"type": "text", "text": render("critic_references.j2", names=list(dict.fromkeys(
                name for name, _ in refs)))})
        for name, path in refs:
            content.append({"type": "text", "text": f"[reference · {name}]"})
            content.append(image_part(path, cfg.image_detail, cfg.max_image_side))
        return [{"role": "system", "content": system}, {"role": "user", "content": content}]

    def critique(self, persona: Persona, film: FilmView) -> Result:
        try:
            messages = self.messages(persona, film)
        except OSError as e:
            raise AgentError(f"critic {persona.id} ({self.model}): could not read a frame: {e}") from None
        out, usage = self.client.structured(f"critic {persona.id}", self.model, messages, CritiqueOut)
        known = {s.shot_id for s in film.storyboard.shots()}
        return Result(value=to_critique(out, persona.id, known), usage=usage, model=self.model)
