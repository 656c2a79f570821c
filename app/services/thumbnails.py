"""Pictures cut from a clip once and kept, by the clip's sha256: its thumbnail (the storyboard's cards,
the timeline strip, the review rows) and `k` evenly sampled frames (what critics watch, the contact
sheet). Clips are content-addressed, so an iteration that changes k of N shots decodes k clips; the
other N - k are looked up. The last frame (continuity) is kept with the clip cache entry itself."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from app.context import Context
from storage.records import ClipMediaRecord, FrameRef, MediaRecord

THUMB_WIDTH = 320  # longer side of a thumbnail
FRAME_SIDE = 512  # longer side of a sampled frame (what an LLM critic is sent)


class ClipMedia:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._lock = threading.Lock()  # two tabs asking for one clip's thumbnail decode it once

    def thumbnail(self, clip_sha256: str) -> Path:
        """The clip's middle frame as a small JPEG (decoded on first use, then looked up)."""
        rec = self._get(clip_sha256, "thumb") or self.prepare(clip_sha256, thumb=True)["thumb"]
        return self.ctx.media.path(rec.frames[0].sha256, "jpg")

    def frames(self, clip_sha256: str, k: int, offset: float = 0.0) -> list[tuple[int, float, Path]]:
        """`k` evenly spaced frames, first and last included, as (frame index, offset + index/fps, JPEG path)."""
        kind = f"frames:{k}"
        rec = self._get(clip_sha256, kind) or self.prepare(clip_sha256, ks=(k,))[kind]
        return [(f.index, offset + f.index / rec.fps, self.ctx.media.path(f.sha256, "jpg")) for f in rec.frames]

    def prepare(
        self,
        clip_sha256: str,
        *,
        thumb: bool = True,
        ks: tuple[int, ...] = (),
        last_frame_to: Path | None = None,
        info: dict | None = None,
    ) -> dict[str, ClipMediaRecord]:
        """Cut the thumbnail and the `ks` frame samples of a clip in one decode and cache them (one transaction).
        `last_frame_to`: the clip's last frame is written there too, as a lossless PNG, from the same decode (a
        new clip's continuity frame: one ffmpeg pass per rendered shot, not two). `info`: the clip's fps, size
        and frames when they are known (a clip just rendered: `video_io.written_facts`), else read by `inspect`."""
        from generation import frames
        from generation.video_io import inspect

        with self._lock:
            kinds = (["thumb"] if thumb else []) + [f"frames:{k}" for k in ks]
            have = {kind: rec for kind in kinds if (rec := self._get(clip_sha256, kind)) is not None}
            todo = [kind for kind in kinds if kind not in have]
            if not todo and last_frame_to is None:
                return have
            clip = self.ctx.media.path(clip_sha256, "mp4")
            info = info or inspect(clip)
            n = frames.frame_count(clip, info)
            if n == 0:
                raise ValueError(f"no frames in {clip.name}")
            wanted = {
                kind: ([n // 2] if kind == "thumb" else sample_indices(n, int(kind.split(":")[1]))) for kind in todo
            }
            indices = sorted({i for idx in wanted.values() for i in idx} | ({n - 1} if last_frame_to else set()))
            images = dict(zip(indices, frames.decode(clip, indices, info)))
            if last_frame_to is not None:
                images[n - 1].save(last_frame_to)
            scratch = self.ctx.media.scratch()
            stored: dict[tuple[int, int], MediaRecord] = {}  # (frame, longer side) -> stored JPEG
            try:
                for kind, idx in wanted.items():
                    side = THUMB_WIDTH if kind == "thumb" else FRAME_SIDE
                    for i in idx:
                        if (i, side) not in stored:
                            path = frames.save_jpeg(images[i], scratch / f"{i}_{side}.jpg", max_side=side)
                            stored[i, side] = self.ctx.media.put(path, "jpg")
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            records = {
                kind: ClipMediaRecord(
                    clip_sha256=clip_sha256,
                    kind=kind,
                    fps=info["fps"],
                    frames=[
                        FrameRef(index=i, sha256=stored[i, THUMB_WIDTH if kind == "thumb" else FRAME_SIDE].sha256)
                        for i in idx
                    ],
                )
                for kind, idx in wanted.items()
            }
            with self.ctx.repo.write() as u:
                u.put_clip_media(list(records.values()), list(stored.values()))
            return {**have, **records}

    def _get(self, clip_sha256: str, kind: str) -> ClipMediaRecord | None:
        with self.ctx.repo.read() as u:
            rec = u.clip_media(clip_sha256, kind)
        if rec is None or any(self.ctx.media.find(f.sha256) is None for f in rec.frames):
            return None  # never cut, or a file went missing: cut again
        return rec


def sample_indices(n: int, k: int) -> list[int]:
    """`k` evenly spaced frame numbers of `n`, first and last included (fewer when the clip is shorter)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return [0] if k == 1 or n == 1 else sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})
