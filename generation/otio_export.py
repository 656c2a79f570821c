"""Export a film's cut as an OpenTimelineIO timeline, so an editor (Resolve, Premiere via adapters,
Kdenlive) can pick up the shots where CHIEF left them.

One clip per shot on a video track, each referring to its clip file and carrying its shot id as
metadata and as a marker; an optional narration WAV goes on an audio track.
"""

from __future__ import annotations

import os
from pathlib import Path


def export_otio(items: list[tuple[str, Path, float, float]], out: Path, title: str, *,
                relative_to: Path | None = None, narration: Path | None = None,
                narration_duration: float | None = None) -> Path:
    """Write `out` (.otio) from (shot_id, clip_path, duration_seconds, fps) items, in order.

    Media URLs are absolute `file://` URLs, or paths relative to `relative_to` when given (so the
    .otio and its media can be moved together).
    """
    import opentimelineio as otio

    if not items:
        raise ValueError("nothing to export: no shots")
    timeline = otio.schema.Timeline(name=title, metadata={"chief": {"title": title}})
    video = otio.schema.Track(name="shots", kind=otio.schema.TrackKind.Video)
    timeline.tracks.append(video)
    for shot_id, clip, duration, fps in items:
        length = otio.opentime.RationalTime(round(duration * fps), fps)
        span = otio.opentime.TimeRange(otio.opentime.RationalTime(0, fps), length)
        ref = otio.schema.ExternalReference(target_url=_url(Path(clip), relative_to), available_range=span)
        meta = {"chief": {"shot_id": shot_id}}
        marker = otio.schema.Marker(name=shot_id, marked_range=otio.opentime.TimeRange(
            otio.opentime.RationalTime(0, fps), otio.opentime.RationalTime(0, fps)), metadata=meta)
        video.append(otio.schema.Clip(name=shot_id, media_reference=ref, source_range=span,
                                      metadata=meta, markers=[marker]))
    if narration is not None:
        seconds = narration_duration if narration_duration is not None else video.duration().to_seconds()
        rate = 48000.0
        span = otio.opentime.TimeRange(otio.opentime.RationalTime(0, rate),
                                       otio.opentime.RationalTime(round(seconds * rate), rate))
        audio = otio.schema.Track(name="narration", kind=otio.schema.TrackKind.Audio)
        audio.append(otio.schema.Clip(name="narration", source_range=span, media_reference=otio.schema.ExternalReference(
            target_url=_url(Path(narration), relative_to), available_range=span)))
        timeline.tracks.append(audio)
    out = Path(out)
    tmp = out.with_name(f".{out.name}.part{os.getpid()}.otio")
    otio.adapters.write_to_file(timeline, str(tmp))
    os.replace(tmp, out)
    return out


def _url(path: Path, relative_to: Path | None) -> str:
    if relative_to is not None:
        return Path(os.path.relpath(path.resolve(), Path(relative_to).resolve())).as_posix()
    return path.resolve().as_uri()
