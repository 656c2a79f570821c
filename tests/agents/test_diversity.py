"""Panel diversity with the packaged all-MiniLM-L6-v2 embeddings."""

from __future__ import annotations

import pytest

from agents.diversity import panel_similarity
from storage.schema import DIMENSIONS, Critique


def crit(pid, summary, reason):
    return Critique(
        persona_id=pid,
        overall=5,
        scores={d: 5 for d in DIMENSIONS},
        keep_watching=True,
        keep_watching_reason=reason,
        summary=summary,
    )


@pytest.mark.slow
def test_identical_panel_is_collapsed_and_varied_panel_is_not():
    same = [crit(p, "The pacing drags and the lighthouse shots are too dark.", "it is slow") for p in ("a", "b", "c")]
    report = panel_similarity(same)
    assert report.collapsed and report.mean_pairwise_cosine > 0.99 and len(report.pairs) == 3
    paraphrased = [
        crit("a", "The pacing drags and the lighthouse shots are too dark.", "it is slow"),
        crit("b", "Too slow, and the lighthouse images are very dark.", "slow pace"),
        crit("c", "It drags; the shots of the lighthouse are much too dark to see.", "it is too slow"),
    ]
    assert panel_similarity(paraphrased).collapsed

    varied = [
        crit("teen", "ngl the first shot is so slow i swiped, needs a hook and way faster cuts", "boring start"),
        crit(
            "parent",
            "The storm scene frightened my four-year-old; the thunder flash was too much before bedtime.",
            "too scary",
        ),
        crit(
            "critic",
            "The composition of the stairwell shot recalls Tarkovsky; the eyeline match at the cut is admirable.",
            "formal rigour",
        ),
    ]
    report = panel_similarity(varied)
    assert not report.collapsed and report.mean_pairwise_cosine < report.threshold
    assert "diverse" in report.describe()


def test_fewer_than_two_is_not_collapsed():
    assert not panel_similarity([crit("a", "x", "y")]).collapsed


def test_a_panel_is_embedded_once_and_another_panel_anew(monkeypatch):
    """The screening room asks for the panel's diversity each time it opens: the same critiques are embedded once
    (the same figures again); a changed critique is embedded with its panel."""
    from agents import diversity

    calls: list[int] = []
    embed = diversity.embed
    monkeypatch.setattr(diversity, "embed", lambda texts: calls.append(len(texts)) or embed(texts))
    panel = [crit(p, f"{p} found the storm scene long and the ending unearned.", "slow") for p in ("x1", "x2", "x3")]
    first = panel_similarity(panel)
    assert panel_similarity([c.model_copy() for c in panel]) == first and calls == [3]
    changed = [*panel[:2], crit("x3", "The gull is the best thing in it; more of the gull.", "the gull")]
    assert panel_similarity(changed) != first and calls == [3, 3]
