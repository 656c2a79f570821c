"""How well does a persona predict its viewer? Hold out rated items, let the persona rate them, compare.

`calibrate(persona, rated_items)` holds out part of the viewer's rated items (a seeded draw), has the persona
rate each from its description (title + description, else title + text), and reports Spearman's rank
correlation and the mean absolute error on 0..10, stored in `persona.calibration` so a creator knows which
critics to trust. Raters: `OfflineRater` (the persona's loves/hates/tastes vocabulary against the item's
words) or `LLMRater` (the persona role-played by the LLM); any callable `(persona, items) -> ratings` works.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from agents.comments import Comment
from agents.json_answer import Closed as _Closed
from agents.persona_builder import TASTE_DEFAULTS, has_phrase, topic_words, words
from storage.schema import Persona

if TYPE_CHECKING:
    from agents.llm import LLMClient

Rater = Callable[[Persona, list[Comment]], Sequence[float]]
MIN_ITEMS = 3  # fewer held-out items say nothing about agreement


# --------------------------------------------------------------------------------------------- figures


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks; tied values share the average of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r; 0.0 when either side has no spread (a constant says nothing about order)."""
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return 0.0
    return sxy / math.sqrt(sxx * syy)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation with average ranks for ties (Pearson's r of the ranks)."""
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"spearman needs two equally long lists of at least 2 values, got {len(x)} and {len(y)}")
    return max(-1.0, min(1.0, pearson(average_ranks(x), average_ranks(y))))


def mean_absolute_error(x: Sequence[float], y: Sequence[float]) -> float:
    if len(x) != len(y) or not x:
        raise ValueError(f"mean absolute error needs two equally long, non-empty lists, got {len(x)} and {len(y)}")
    return sum(abs(a - b) for a, b in zip(x, y)) / len(x)


# --------------------------------------------------------------------------------------------- holdout


def split_holdout(items: Sequence[Comment], holdout: float = 0.3, seed: int = 0) -> tuple[list[Comment], list[Comment]]:
    """(kept, held_out): a seeded draw of `holdout` of the rated items (at least 3); unrated items are always kept.

    Build a persona from `kept` and calibrate it on the same file with the same holdout and seed, and it is
    judged only on items it never saw.
    """
    if not 0 < holdout <= 1:
        raise ValueError(f"holdout must be within (0, 1], got {holdout}")
    rated = [c for c in items if c.rating is not None]
    if len(rated) < MIN_ITEMS:
        raise ValueError(f"calibration needs at least {MIN_ITEMS} rated items, found {len(rated)}")
    k = min(len(rated), max(MIN_ITEMS, round(holdout * len(rated))))
    held = {c.index for c in random.Random(seed).sample(rated, k)}
    return [c for c in items if c.index not in held], [c for c in items if c.index in held]


# ---------------------------------------------------------------------------------------------- raters


def _stem(w: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def _vocab(phrases: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for p in phrases:
        out |= {_stem(w) for w in topic_words(p) if " " not in w}
    return out


# What an item's description may say, and which taste it speaks to: taste -> (phrases, +1 if a high value likes it).
ITEM_CUES: dict[str, tuple[tuple[str, ...], int]] = {
    "patience": (
        ("slow", "slow burn", "long takes", "contemplative", "quiet", "meditative", "lingering", "unhurried"),
        1,
    ),
    "motion": (("action", "fast", "fast-paced", "chase", "kinetic", "frenetic", "energetic", "explosive", "fights"), 1),
    "brightness": (("dark", "noir", "night", "shadowy", "gloomy", "murky"), -1),
    "contrast": (("vivid", "striking", "bold colours", "bold colors", "high contrast", "saturated"), 1),
    "captions": (("subtitled", "captioned", "captions", "subtitles", "silent", "on-screen text"), 1),
    "flash_sensitivity": (("flashing", "strobe", "strobing", "flicker", "flickering", "flashes"), -1),
    "continuity": (("inconsistent", "continuity errors", "plot holes", "off-model"), -1),
}


class OfflineRater:
    """Rates an item from its words: the persona's loves pull up, hates pull down, tastes nudge.

    x = (love words hit) − (hate words hit) + Σ taste lean × cue; rating = 6 + 3·tanh(x / 2), on 0..10.
    Deterministic, no network.
    """

    mode = "offline"
    BASE = 6.0

    def __call__(self, persona: Persona, items: list[Comment]) -> list[float]:
        love, hate = _vocab(persona.loves), _vocab(persona.hates)
        tastes = persona.tastes.model_dump()
        out = []
        for item in items:
            text = f"{item.title} {item.description or item.text}"
            low, toks = text.lower(), set(words(text))
            stems = {_stem(w) for w in toks}
            x = float(len(stems & love) - len(stems & hate))
            for taste, (phrases, sign) in ITEM_CUES.items():
                if any(has_phrase(low, toks, p) for p in phrases):
                    x += sign * 4 * (tastes[taste] - TASTE_DEFAULTS[taste])
            out.append(round(min(10.0, max(0.0, self.BASE + 3 * math.tanh(x / 2))), 2))
        return out


class ItemRating(_Closed):
    item: int = Field(description="the item's number")
    rating: float = Field(description="0..10")


class RatingsOut(_Closed):
    ratings: list[ItemRating]


class LLMRater:
    """The persona, role-played by the LLM, rates every held-out item in one structured call."""

    def __init__(self, client: LLMClient, model: str | None = None):
        self.client = client
        self.model = model or client.config.critic_model
        self.mode = f"llm:{self.model}"

    def messages(self, persona: Persona, items: list[Comment]) -> list[dict]:
        from prompts import render

        tastes = persona.tastes.describe()
        return [{"role": "user", "content": render("persona_rate.j2", persona=persona, tastes=tastes, items=items)}]

    def __call__(self, persona: Persona, items: list[Comment]) -> list[float]:
        n = len(items)

        def check(out: RatingsOut) -> list[str]:
            got = sorted(r.item for r in out.ratings)
            problems = [] if got == list(range(1, n + 1)) else [f"rate each item 1..{n} exactly once (got {got})"]
            problems += [f"item {r.item}: rating must be within 0..10" for r in out.ratings if not 0 <= r.rating <= 10]
            return problems

        out, _usage = self.client.structured(
            f"persona rater {persona.id}", self.model, self.messages(persona, items), RatingsOut, check=check
        )
        by_item = {r.item: r.rating for r in out.ratings}
        return [float(by_item[i]) for i in range(1, n + 1)]


# ----------------------------------------------------------------------------------------------- entry


def rate_holdout(
    persona: Persona, rated_items: Sequence[Comment], *, holdout: float = 0.3, seed: int = 0, rater: Rater | None = None
) -> list[tuple[Comment, float]]:
    """(held-out item, the persona's rating) pairs, in file order."""
    _, held = split_holdout(rated_items, holdout, seed)
    predicted = list((rater or OfflineRater())(persona, held))
    if len(predicted) != len(held):
        raise ValueError(f"the rater returned {len(predicted)} ratings for {len(held)} items")
    return list(zip(held, (float(p) for p in predicted)))


def calibrate(
    persona: Persona, rated_items: Sequence[Comment], *, holdout: float = 0.3, seed: int = 0, rater: Rater | None = None
) -> dict[str, float]:
    """Agreement between the persona and its viewer on held-out rated items; also stored in `persona.calibration`.

    Returns {"spearman": -1..1, "mae": 0..10, "n": items compared, "holdout": fraction, "seed": draw}.
    """
    pairs = rate_holdout(persona, rated_items, holdout=holdout, seed=seed, rater=rater)
    figures = calibration_figures(pairs, holdout, seed)
    persona.calibration = figures
    return figures


def _rating(c: Comment) -> float:
    if c.rating is None:  # rate_holdout rates only rated comments
        raise ValueError(f"comment {c.index} has no rating to compare with")
    return float(c.rating)


def calibration_figures(pairs: Sequence[tuple[Comment, float]], holdout: float, seed: int) -> dict[str, float]:
    """The figures `calibrate` stores, from (rated item, predicted rating) pairs."""
    actual = [_rating(c) for c, _ in pairs]
    predicted = [p for _, p in pairs]
    return {
        "spearman": round(spearman(actual, predicted), 4),
        "mae": round(mean_absolute_error(actual, predicted), 4),
        "n": float(len(pairs)),
        "holdout": float(holdout),
        "seed": float(seed),
    }
