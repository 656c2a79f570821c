"""Personas from real audiences: build one from a viewer's comments, and calibrate one against the viewer's ratings.

Through the LLM when the agents are in llm mode (the client comes from app/factory.py), offline (keyword and
sentiment statistics) otherwise; every result says which one it used. The CLI (`chief persona`) and the web app's
builder call these; a persona kept in a project is saved through Projects (a new version).
"""

from __future__ import annotations

from pydantic import BaseModel

from agents.comments import Comment
from app.config import redact_url
from app.context import Context
from storage.schema import Persona

OFFLINE = "offline (keyword and sentiment statistics, no LLM)"


class PersonaBuild(BaseModel):
    persona: Persona
    builder: str  # what built it: the LLM and endpoint, or offline
    comments: int
    calibration: dict[str, float] | None  # on held-out comments, when asked


class RatedItem(BaseModel):
    index: int
    title: str
    rating: float
    predicted: float
    described: bool  # False: the persona rated the viewer's own comment (an optimistic figure)


class PersonaCalibration(BaseModel):
    persona: Persona  # with its calibration figures
    rater: str
    items: list[RatedItem]


class Personas:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def _client(self):
        """(LLMClient or None, label) for the active agent mode."""
        from app.factory import llm_client

        client = llm_client(self.ctx.config)
        if client is None:
            return None, OFFLINE
        llm = client.config
        return client, f"llm:{llm.critic_model} @ {redact_url(llm.base_url or '') or 'api.openai.com'}"

    def label(self) -> str:
        """Who builds and rates personas now: the LLM and its endpoint (credentials redacted), or offline."""
        return self._client()[1]

    def build(
        self,
        comments: list[Comment],
        name: str,
        persona_id: str | None = None,
        holdout: float | None = None,
        seed: int = 0,
    ) -> PersonaBuild:
        """A persona from one viewer's comments (each trait cites the comments it came from); with `holdout`, built
        from the rest and calibrated on that fraction of the rated comments."""
        from agents.calibration import LLMRater, calibrate, split_holdout
        from agents.persona_builder import build_persona

        client, label = self._client()
        train = split_holdout(comments, holdout, seed)[0] if holdout else comments
        p = build_persona(train, name, client=client, pid=persona_id)
        figures = None
        if holdout:
            figures = calibrate(p, comments, holdout=holdout, seed=seed, rater=LLMRater(client) if client else None)
        return PersonaBuild(persona=p, builder=label, comments=len(comments), calibration=figures)

    def calibrate(
        self, persona: Persona, items: list[Comment], holdout: float = 0.3, seed: int = 0
    ) -> PersonaCalibration:
        """How well `persona` predicts its viewer's ratings on held-out items (Spearman, mean absolute error); the
        figures are stored on a copy of the persona."""
        from agents.calibration import LLMRater, calibration_figures, rate_holdout

        p = persona.model_copy(deep=True)
        client, label = self._client()
        pairs = rate_holdout(p, items, holdout=holdout, seed=seed, rater=LLMRater(client) if client else None)
        p.calibration = calibration_figures(pairs, holdout, seed)
        rows = [
            RatedItem(index=it.index, title=it.title, rating=it.rating, predicted=r, described=bool(it.description))
            for it, r in pairs
            if it.rating is not None  # all of them: only rated items are held out
        ]
        return PersonaCalibration(persona=p, rater=label, items=rows)
