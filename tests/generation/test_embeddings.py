"""Image embeddings with a tiny random-weight CLIP image encoder saved to a folder and loaded by the product."""

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
from PIL import Image

from generation.base import RenderError
from generation.embeddings import ImageEmbedder


@pytest.fixture
def clip(folders):
    return folders("clip_vision")


def noise(path, seed: int) -> str:
    Image.fromarray(np.random.default_rng(seed).integers(0, 255, (40, 60, 3), dtype=np.uint8)).save(path)
    return str(path)


def test_unit_vectors_whose_dot_product_is_the_cosine_similarity(clip, tmp_path):
    embedder = ImageEmbedder(clip)
    a, b = noise(tmp_path / "a.png", 1), noise(tmp_path / "b.png", 2)
    copy = tmp_path / "copy.png"
    copy.write_bytes(open(a, "rb").read())
    vectors = embedder.embed([a, b, copy])
    assert vectors.shape == (3, 16)  # the projection's dimensions
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[2] == pytest.approx(1.0, abs=1e-5)
    assert vectors[0] @ vectors[1] < 0.999
    assert embedder.label == f"CLIPVisionModelWithProjection · {clip}"


def test_a_missing_or_unsupported_model_is_one_line(clip, tmp_path):
    with pytest.raises(RenderError, match=r"^embedding model '.*nope' not found: no such folder"):
        ImageEmbedder(str(tmp_path / "nope"))
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    with pytest.raises(RenderError, match=r"BertModel is not a supported image-embedding model \(supported: CLIPModel"):
        ImageEmbedder(str(other))
