"""Export a film's cut as an OpenTimelineIO timeline, so an editor (Resolve, Premiere via adapters,
Kdenlive) can pick up the shots where CHIEF left them.

One clip per shot on a video track, each referring to its clip file and carrying its shot id as
metadata and as a marker; an optional narration WAV goes on an audio track.
"""

from __future__ import annotations

import os
import shutil
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generation.text import plain
from storage.fileio import atomic_path

# The hand-off formats: file suffix -> the OTIO adapter that writes it (EDL and FCPXML come from the
# `otio-cmx3600-adapter` and `otio-fcpx-xml-adapter` packages).
HANDOFF = {"otio": "otio_json", "edl": "cmx_3600", "fcpxml": "fcpx_xml"}
MARKER_COLORS = {"critic": "RED", "creator": "GREEN", "dialogue": "CYAN", "sound": "MAGENTA"}


@dataclass(frozen=True)
class Marker:
    """A note pinned to the start of a shot: a critic's note (red), the creator's (green), a line said in the shot
    (cyan) or its sounds and its scene's music cue (magenta)."""

    shot_id: str
    text: str
    source: str  # "critic" | "creator" | "dialogue" | "sound"


def export_otio(
    items: list[tuple[str, Path, float, float]],
    out: Path,
    title: str,
    *,
    relative_to: Path | None = None,
    narration: Path | None = None,
    narration_duration: float | None = None,
) -> Path:
    """Write `out` (.otio) from (shot_id, clip_path, duration_seconds, fps) items, in order.

    Media URLs are absolute `file://` URLs, or paths relative to `relative_to` when given (so the
    .otio and its media can be moved together).
    """
    import opentimelineio as otio

    if not items:
        raise ValueError("nothing to export: no shots")
    title = plain(title)
    timeline = otio.schema.Timeline(name=title, metadata={"chief": {"title": title}})
    video = otio.schema.Track(name="shots", kind=otio.schema.TrackKind.Video)
    timeline.tracks.append(video)
    for shot_id, clip, duration, fps in items:
        length = otio.opentime.RationalTime(round(duration * fps), fps)
        span = otio.opentime.TimeRange(otio.opentime.RationalTime(0, fps), length)
        ref = otio.schema.ExternalReference(target_url=_url(Path(clip), relative_to), available_range=span)
        meta = {"chief": {"shot_id": shot_id}}
        marker = otio.schema.Marker(
            name=shot_id,
            marked_range=otio.opentime.TimeRange(
                otio.opentime.RationalTime(0, fps), otio.opentime.RationalTime(0, fps)
            ),
            metadata=meta,
        )
        video.append(
            otio.schema.Clip(name=shot_id, media_reference=ref, source_range=span, metadata=meta, markers=[marker])
        )
    if narration is not None:
        seconds = narration_duration if narration_duration is not None else video.duration().to_seconds()
        rate = 48000.0
        span = otio.opentime.TimeRange(
            otio.opentime.RationalTime(0, rate), otio.opentime.RationalTime(round(seconds * rate), rate)
        )
        audio = otio.schema.Track(name="narration", kind=otio.schema.TrackKind.Audio)
        audio.append(
            otio.schema.Clip(
                name="narration",
                source_range=span,
                media_reference=otio.schema.ExternalReference(
                    target_url=_url(Path(narration), relative_to), available_range=span
                ),
            )
        )
        timeline.tracks.append(audio)
    out = Path(out)
    with atomic_path(out, ".otio") as tmp:
        otio.adapters.write_to_file(timeline, str(tmp))
    return out


def _url(path: Path, relative_to: Path | None) -> str:
    if relative_to is not None:
        return Path(os.path.relpath(path.resolve(), Path(relative_to).resolve())).as_posix()
    return path.resolve().as_uri()


def export_timeline(
    items: list[tuple[str, Path, float, float]],
    out_dir: Path,
    title: str,
    markers: Sequence[Marker] = (),
    stems: dict[str, Path] | None = None,
    stems_offset: float = 0.0,
    media_urls: dict[str, str] | None = None,
) -> dict[str, Path]:
    """The cut as `cut.otio`, `cut.edl` (CMX 3600) and `cut.fcpxml` in `out_dir`, each marker on its shot's clip at
    the clip's first frame. Media are absolute file URLs, or `media_urls[shot_id]` (e.g. a path relative to
    `out_dir`, for a hand-off that travels with its clips; the stems are then named relative too). Returns
    suffix -> path. The title and the markers' text go through `plain` (what XML cannot hold is dropped: a U+0001 in
    a note used to stop the FCPXML). `stems` (name -> WAV, on the film's timeline from `stems_offset` seconds) are
    copied beside the cut as `<name>.wav` and become audio tracks of the OTIO and FCPXML; CMX 3600 holds at most two
    audio channels (and the OTIO adapter writes none), so `cut.edl` is the picture cut and each stem has an audio EDL
    of its own, `cut.<name>.edl` (one event on channel A, reel <NAME>, clip name `<name>.wav`)."""
    import opentimelineio as otio

    if not items:
        raise ValueError("nothing to export: no shots")
    title = plain(title)
    timeline = otio.schema.Timeline(name=title, metadata={"chief": {"title": title}})
    video = otio.schema.Track(name="shots", kind=otio.schema.TrackKind.Video)
    timeline.tracks.append(video)
    by_shot: dict[str, list[Marker]] = {}
    for m in markers:
        by_shot.setdefault(m.shot_id, []).append(m)
    for shot_id, clip, duration, clip_fps in items:
        # EDL timecode needs a SMPTE rate: clips made at another rate (Wan's 16, CogVideoX's 8) are timed at 24
        fps = clip_fps if otio.opentime.RationalTime.is_valid_timecode_rate(clip_fps) else 24
        span = otio.opentime.TimeRange(
            otio.opentime.RationalTime(0, fps), otio.opentime.RationalTime(round(duration * fps), fps)
        )
        url = media_urls[shot_id] if media_urls else Path(clip).resolve().as_uri()
        ref = otio.schema.ExternalReference(target_url=url, available_range=span)
        ref.name = shot_id
        notes = [
            otio.schema.Marker(
                name=plain(m.text)[:500],
                color=MARKER_COLORS[m.source],
                marked_range=otio.opentime.TimeRange(
                    otio.opentime.RationalTime(0, fps), otio.opentime.RationalTime(1, fps)
                ),
                metadata={"chief": {"source": m.source, "shot_id": shot_id}},
            )
            for m in by_shot.get(shot_id, [])
        ]
        video.append(
            otio.schema.Clip(
                name=shot_id,
                media_reference=ref,
                source_range=span,
                markers=notes,
                metadata={"chief": {"shot_id": shot_id}},
            )
        )
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    picture = timeline.deepcopy()  # CMX 3600 holds at most 2 audio tracks: the EDL is the picture cut alone
    for name, stem in (stems or {}).items():  # one audio track per stem, its file written beside the cut
        copy = out_dir / f"{name}.wav"
        with atomic_path(copy) as tmp:
            shutil.copyfile(stem, tmp)
        written[name] = copy
        track = otio.schema.Track(name=name, kind=otio.schema.TrackKind.Audio)
        rate = video[0].source_range.duration.rate  # the cut's rate: FCPXML times every lane in it
        with wave.open(str(copy)) as w:
            seconds = w.getnframes() / w.getframerate()
        whole = otio.opentime.TimeRange(
            otio.opentime.RationalTime(0, rate), otio.opentime.RationalTime(round(seconds * rate), rate)
        )
        span = otio.opentime.TimeRange(
            otio.opentime.RationalTime(round(stems_offset * rate), rate),
            otio.opentime.RationalTime(round(video.duration().to_seconds() * rate), rate),
        )
        url = copy.name if media_urls else copy.resolve().as_uri()
        ref = otio.schema.ExternalReference(target_url=url, available_range=whole)
        track.append(otio.schema.Clip(name=name, media_reference=ref, source_range=span))
        timeline.tracks.append(track)
        edl = out_dir / f"cut.{name}.edl"
        with atomic_path(edl) as tmp:
            tmp.write_text(audio_edl(f"{title} ({name})", name, copy.name, span), encoding="utf-8")
        written[f"{name}.edl"] = edl
    for suffix, adapter in HANDOFF.items():
        path = out_dir / f"cut.{suffix}"
        with atomic_path(path) as tmp:
            otio.adapters.write_to_file(picture if suffix == "edl" else timeline, str(tmp), adapter_name=adapter)
        written[suffix] = path
    return written


def audio_edl(title: str, name: str, wav: str, span) -> str:
    """A CMX 3600 EDL of one sound file on channel A: source `span` (an OTIO TimeRange in the file) cut at the
    record's start, non-drop-frame timecode at the span's rate (the picture cut's)."""
    import opentimelineio as otio

    rate = span.duration.rate

    def tc(t) -> str:
        return otio.opentime.to_timecode(t, rate, drop_frame=False)

    zero = otio.opentime.RationalTime(0, rate)
    reel = "".join(ch for ch in name.upper() if ch.isalnum())[:8] or "AX"
    event = (
        f"001  {reel:8} A     C        {tc(span.start_time)} {tc(span.end_time_exclusive())} "
        f"{tc(zero)} {tc(span.duration)}"
    )
    return f"TITLE: {plain(title)}\nFCM: NON-DROP FRAME\n\n{event}\n* FROM CLIP NAME: {plain(wav)}\n"
