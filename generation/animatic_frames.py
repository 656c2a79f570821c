"""The animatic's stills: keyframes and references drawn on the CPU, no weights, labelled as previz.

A keyframe is the shot's drawn panel at its first instant (sky, horizon and shapes from the seed, the palette
from the prompt's mood words) with the reference images of its characters pasted in as cards, so a re-roll (a
new seed) is a new composition and a shot with references visibly carries them. The animatic video backend
animates an approved keyframe by `generation.animatic.keyframe_view`: the first frame is the keyframe itself, then the camera
move unfolds from it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from generation.animatic import AnimaticBackend, _canvas, _font, _subject
from generation.base import CancelToken, Progress, file_sha256
from generation.images import ImageInfo, ImageRequest

KEYFRAME_LABEL = "ANIMATIC · KEYFRAME"


class AnimaticImages:
    """Keyframes and references as drawn panels (the embedded default: the workflow runs offline)."""

    name = "animatic"
    model = ""
    label = "animatic keyframes (drawn panels, not a model render)"
    supports_references = True

    def resolve(self, request: ImageRequest) -> ImageRequest:
        w, h = request.width or AnimaticBackend.default_size[0], request.height or AnimaticBackend.default_size[1]
        refs = request.references_sha256 or tuple(file_sha256(Path(p)) for p in request.references)
        return request.with_(
            width=w - w % 2, height=h - h % 2, steps=None, guidance=None, strength=None, references_sha256=refs
        )

    def render(
        self, request: ImageRequest, out: Path, progress: Progress | None = None, cancel: CancelToken | None = None
    ) -> ImageInfo:
        r = self.resolve(request)
        if cancel is not None:
            cancel.raise_if_cancelled()
        w, h = r.size()
        canvas = _canvas(r.prompt, r.seed, w, h)
        top, left = (canvas.shape[0] - h) // 2, (canvas.shape[1] - w) // 2
        frame = _subject(canvas[top : top + h, left : left + w].copy(), r.seed, 0.0)
        img = Image.fromarray(np.clip(frame, 0, 255).astype(np.uint8))
        _paste_cards(img, r.references, r.seed)
        _label(img, r.subject)
        img.save(out, format="PNG")
        if progress is not None:
            progress(1, 1)
        return ImageInfo(path=Path(out), width=w, height=h)


def _paste_cards(img: Image.Image, references: tuple[str, ...], seed: int) -> None:
    """Each reference as a framed card in the lower part of the panel, at a place the seed picks."""
    if not references:
        return
    rng = np.random.default_rng(seed + 2)
    w, h = img.size
    slot = w // len(references)
    draw = ImageDraw.Draw(img)
    for i, path in enumerate(references):
        with Image.open(path) as ref:
            card = ref.convert("RGB")
            card.thumbnail((max(8, int(slot * 0.8)), max(8, int(h * 0.45))))
        x = i * slot + int(rng.uniform(0, max(1, slot - card.width)))
        y = h - card.height - int(rng.uniform(0.05, 0.2) * h)
        draw.rectangle([x - 2, y - 2, x + card.width + 1, y + card.height + 1], outline=(255, 255, 255), width=2)
        img.paste(card, (x, y))


def _label(img: Image.Image, subject: str) -> None:
    """The top bar every animatic frame has: what this is, and whose keyframe."""
    w, h = img.size
    draw = ImageDraw.Draw(img, "RGBA")
    small = _font(max(8, h // 28))
    draw.rectangle([0, 0, w, h // 14 + 6], fill=(0, 0, 0, 150))
    draw.text((6, 3), KEYFRAME_LABEL, fill=(255, 214, 10, 255), font=small)
    if draw.textlength(KEYFRAME_LABEL + "  " + subject, font=small) + 12 <= w:  # a small frame keeps the label only
        draw.text((w - 6, 3), subject, fill=(255, 255, 255, 255), font=small, anchor="ra")
