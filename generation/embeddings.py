"""Image embeddings (CLIP, SigLIP, DINOv2) for measuring how alike two images look.

The model is a transformers folder or a cached hub id (`CHIEF_EMBED_MODEL`), never downloaded; it loads once
per process and stays warm. What counts as "the embedding" depends on the architecture, in one table. Vectors
come back L2-normalised, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np

from .base import RenderError
from .pipelines import first_line, model_file

# Architecture (config.json `architectures[0]`) -> where its image embedding is.
ARCHITECTURES: dict[str, str] = {
    "CLIPModel": "get_image_features",
    "SiglipModel": "get_image_features",
    "Siglip2Model": "get_image_features",
    "CLIPVisionModelWithProjection": "image_embeds",
    "CLIPVisionModel": "pooler_output",
    "SiglipVisionModel": "pooler_output",
    "Dinov2Model": "pooler_output",
}
MAX_BATCH = 16

_MODELS: dict[tuple[str, str], tuple[Any, Any]] = {}
_LOCK = threading.Lock()


class ImageEmbedder:
    """Embeds images with one model; `label` says which, for every table it measures."""

    def __init__(self, model: str, device: str = "cpu") -> None:
        self.model, self.device = model, device
        config = model_file(model, "config.json", kind="embedding model", folder="transformers model")
        archs = json.loads(config.read_text()).get("architectures") or ["(none)"]
        self.architecture = archs[0]
        if self.architecture not in ARCHITECTURES:
            raise RenderError(
                f"{model}: {self.architecture} is not a supported image-embedding model "
                f"(supported: {', '.join(ARCHITECTURES)})"
            )

    @property
    def label(self) -> str:
        return f"{self.architecture} · {self.model}"

    def _loaded(self) -> tuple[Any, Any]:
        key = (
            str(Path(self.model).expanduser().resolve()) if Path(self.model).expanduser().exists() else self.model,
            self.device,
        )
        with _LOCK:
            if key not in _MODELS:
                import transformers

                try:
                    net = getattr(transformers, self.architecture).from_pretrained(self.model, local_files_only=True)
                    processor = transformers.AutoImageProcessor.from_pretrained(self.model, local_files_only=True)
                except Exception as e:
                    raise RenderError(f"could not load the embedding model {self.model}: {first_line(e)}") from e
                _MODELS[key] = (net.to(self.device).eval(), processor)
            return _MODELS[key]

    def embed(self, paths: list[Path]) -> np.ndarray:
        """One unit vector per image, in order (shape: images x dimensions)."""
        import torch
        from PIL import Image

        net, processor = self._loaded()
        where = ARCHITECTURES[self.architecture]
        out = []
        for start in range(0, len(paths), MAX_BATCH):
            images = []
            for p in paths[start : start + MAX_BATCH]:
                with Image.open(p) as im:
                    images.append(im.convert("RGB"))
            pixels = processor(images=images, return_tensors="pt")["pixel_values"].to(self.device)
            with torch.no_grad():
                if where == "get_image_features":
                    got = net.get_image_features(pixel_values=pixels)
                    got = got if isinstance(got, torch.Tensor) else got.pooler_output
                else:
                    got = getattr(net(pixel_values=pixels), where)
            out.append(got.float().cpu().numpy())
        vectors = np.concatenate(out) if out else np.zeros((0, 1), np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
