"""Calibration: Spearman (average ranks for ties) and MAE on held-out rated items, with known answers."""

from __future__ import annotations

import math

import pytest

from agents.calibration import (
    LLMRater,
    OfflineRater,
    average_ranks,
    calibrate,
    mean_absolute_error,
    rate_holdout,
    spearman,
    split_holdout,
)
from agents.comments import Comment, load_comments
from agents.persona_builder import build_persona
from agents.personas import builtin_personas
from tests.agents.openai_server import ok


def _items(ratings) -> list[Comment]:
    return [Comment(i, f"comment {i}", title=f"T{i}", rating=r) for i, r in enumerate(ratings, 1)]


def test_average_ranks_share_ties():
    assert average_ranks([10, 20, 20, 30]) == [1, 2.5, 2.5, 4]
    assert average_ranks([3, 1, 3, 3]) == [3, 1, 3, 3]


def test_spearman_on_hand_computed_cases():
    assert spearman([1, 2, 3, 4, 5], [10, 20, 30, 40, 50]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]) == pytest.approx(-1.0)
    # no ties: 1 - 6·Σd²/(n(n²-1)) with d = (-1, 1, -1, 1, 0): 1 - 6·4/120 = 0.8
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)
    # ties: ranks (1, 2.5, 2.5, 4) vs (1, 3, 2, 4): r = 4.5 / sqrt(4.5 · 5)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / math.sqrt(22.5))
    assert spearman([1, 2, 3], [7, 7, 7]) == 0.0  # a constant rater says nothing about order
    with pytest.raises(ValueError):
        spearman([1], [1])


def test_spearman_on_a_textbook_case():
    # Wikipedia's "Spearman's rank correlation coefficient" example: IQ vs hours of TV a week, rho = -29/165
    iq = [106, 100, 86, 101, 99, 103, 97, 113, 112, 110]
    tv = [7, 27, 2, 50, 28, 29, 20, 12, 6, 17]
    assert spearman(iq, tv) == pytest.approx(-29 / 165)


def test_mean_absolute_error():
    assert mean_absolute_error([1, 5, 9], [2, 5, 6]) == pytest.approx(4 / 3)


def test_exact_reversed_and_offset_raters():
    items = _items([1, 3, 4, 6, 8, 9, 2, 7, 5, 10])
    p = builtin_personas()["film_critic"]
    exact = calibrate(p, items, holdout=0.5, rater=lambda _p, its: [c.rating for c in its])
    assert exact == {"spearman": 1.0, "mae": 0.0, "n": 5.0, "holdout": 0.5, "seed": 0.0}
    assert p.calibration == exact  # stored with the persona
    rev = calibrate(p, items, holdout=0.5, rater=lambda _p, its: [10 - c.rating for c in its])
    assert rev["spearman"] == -1.0
    off = calibrate(p, items, holdout=1.0, rater=lambda _p, its: [c.rating + 1 for c in its])
    assert (off["spearman"], off["mae"], off["n"]) == (1.0, 1.0, 10.0)


def test_hand_computed_calibration():
    items = _items([2, 4, 6, 8])
    predicted = {"T1": 3.0, "T2": 2.0, "T3": 6.0, "T4": 9.0}  # ranks (2, 1, 3, 4) vs (1, 2, 3, 4): rho = 1 - 6·2/60
    fig = calibrate(
        builtin_personas()["genre_fan"], items, holdout=1.0, rater=lambda _p, its: [predicted[c.title] for c in its]
    )
    assert fig["spearman"] == pytest.approx(0.8) and fig["mae"] == pytest.approx((1 + 2 + 0 + 1) / 4) and fig["n"] == 4


def test_holdout_is_seeded_and_disjoint():
    items = _items([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) + [Comment(11, "unrated")]
    kept, held = split_holdout(items, 0.3, seed=1)
    assert len(held) == 3 and {c.index for c in kept} | {c.index for c in held} == set(range(1, 12))
    assert not {c.index for c in kept} & {c.index for c in held} and 11 in {c.index for c in kept}
    assert split_holdout(items, 0.3, seed=1) == (kept, held)
    assert split_holdout(items, 0.3, seed=2)[1] != held
    assert len(split_holdout(items, 0.01)[1]) == 3  # never fewer than 3
    with pytest.raises(ValueError, match="at least 3 rated items"):
        split_holdout(_items([1, 2]), 0.5)
    with pytest.raises(ValueError, match="holdout"):
        split_holdout(items, 0)


def test_rater_must_answer_every_item():
    with pytest.raises(ValueError, match="returned 1 ratings for 3 items"):
        rate_holdout(builtin_personas()["genre_fan"], _items([1, 2, 3]), holdout=1.0, rater=lambda _p, its: [5])


def test_offline_rater_uses_the_personas_loves_hates_and_tastes(viewer_file):
    p = build_persona(load_comments(viewer_file), "Colour fan")
    items = [
        Comment(1, "x", title="A", description="gorgeous cinematography, stunning colours and lighting"),
        Comment(2, "x", title="B", description="a slow, long film with flashing strobe lights"),
        Comment(3, "x", title="C", description="a film"),
    ]
    loved, hated, neutral = OfflineRater()(p, items)
    assert loved > neutral > hated
    assert neutral == OfflineRater.BASE


def test_offline_calibration_of_a_built_persona_on_its_held_out_items(viewer_file):
    comments = load_comments(viewer_file)
    kept, _ = split_holdout(comments, 0.5, seed=3)
    p = build_persona(kept, "Colour fan")
    fig = calibrate(p, comments, holdout=0.5, seed=3)
    _, held = split_holdout(comments, 0.5, seed=3)
    predicted = OfflineRater()(p, held)  # the figures are about these items and these predictions, recomputed here
    actual = [float(c.rating) for c in held]
    assert fig["n"] == len(held) == 4
    assert fig["spearman"] == pytest.approx(spearman(actual, predicted), abs=1e-4)
    assert fig["mae"] == pytest.approx(sum(abs(a - b) for a, b in zip(actual, predicted)) / 4, abs=1e-4)
    assert p.calibration == fig


def test_llm_rater_through_the_local_server(server, client):
    items = _items([2, 9, 5])
    server.script(ok({"ratings": [{"item": 3, "rating": 5}, {"item": 1, "rating": 2.5}, {"item": 2, "rating": 8}]}))
    p = builtin_personas()["teen_scroller"]
    fig = calibrate(p, items, holdout=1.0, rater=LLMRater(client))
    assert fig["spearman"] == 1.0 and fig["mae"] == pytest.approx((0.5 + 1 + 0) / 3)
    sent = server.texts(0)
    assert "You are Maya" in sent and '[1] "T1": comment 1' in sent
    assert "rated" not in sent.split("Rate each")[1]  # the persona never sees the viewer's ratings


def test_llm_rater_missing_an_item_is_repaired(server, client):
    server.script(
        ok({"ratings": [{"item": 1, "rating": 4}]}),
        ok({"ratings": [{"item": 1, "rating": 4}, {"item": 2, "rating": 6}, {"item": 3, "rating": 1}]}),
    )
    got = LLMRater(client)(builtin_personas()["genre_fan"], _items([1, 2, 3]))
    assert got == [4.0, 6.0, 1.0] and "exactly once" in server.texts(1)
