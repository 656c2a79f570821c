"""Assembling a version's film from its clips, with the version's film options (title card, crossfades,
burned-in subtitles), and the sidecars a creator and an editor need: SRT/VTT subtitles, the narration
track, a contact sheet and an OpenTimelineIO cut. Everything lands in the media store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.context import Context
from generation.base import CancelToken
from storage.records import MediaRecord, RenderAudio, RenderRecord, ShotRender
from storage.schema import Note, Storyboard

SHEET_FRAMES = 3  # frames per shot on the contact sheet


@dataclass
class AssembledFilm:
    film: MediaRecord
    media: dict[str, str]  # sidecar kind -> sha256 (see storage.records.RENDER_MEDIA_EXT)
    stored: list[MediaRecord]  # every file stored, for the media table
    stream_copied: bool
    audio: RenderAudio | None = None  # the film's sound (None: silent)


class FilmAssembler:
    def __init__(self, ctx: Context, clips, audio) -> None:
        # clips: app.clips.Clips (clip files and their sampled frames); audio: app.audio.Audio (the film's sound)
        self.ctx, self.clips, self.audio = ctx, clips, audio

    def assemble(
        self, board: Storyboard, shots: list[ShotRender], scratch: Path, cancel: CancelToken | None = None
    ) -> AssembledFilm:
        """The film and its sidecars; `cancel` stops it between steps and inside ffmpeg (raises Cancelled)."""
        from PIL import Image

        from generation import assembly, frames, otio_export, subtitles

        cancel = cancel or CancelToken()
        opts = board.film
        clips = [self.clips.path(r.sha256) for r in shots]
        lengths = [r.num_frames / r.fps for r in shots]
        title_seconds = opts.title_seconds if opts.title_card else 0.0
        starts = assembly.timeline(lengths, title_seconds=title_seconds, crossfade=opts.crossfade)
        total = starts[-1] + lengths[-1]
        ends = [*starts[1:], total]
        board_shots = board.shots()
        stored: list[MediaRecord] = []
        media: dict[str, str] = {}

        def keep(kind: str, path: Path, ext: str) -> None:
            rec = self.ctx.media.put(path, ext, move=True)
            stored.append(rec)
            media[kind] = rec.sha256

        cues = subtitles.cues_for(
            [
                cue
                for shot, start, end in zip(board_shots, starts, ends)
                for cue in subtitles.split_window(start, end, shot.subtitles())
            ]
        )
        srt = subtitles.write_srt(cues, scratch / "film.srt") if cues else None
        narration_wav = None
        narrated = [(start, shot.narration) for shot, start in zip(board_shots, starts) if shot.narration]
        if narrated and self.ctx.config.narration:
            from generation import narration

            narration_wav = scratch / "narration.wav"
            narration.narration_track(
                narrated, total, narration_wav, cache_dir=self.ctx.config.home / "cache" / "speech"
            )
        cancel.raise_if_cancelled()
        sound = self.audio.film_sound(board, board_shots, clips, starts, ends, total, narration_wav, scratch, cancel)
        audio = sound.path if sound is not None else None
        cancel.raise_if_cancelled()
        film = scratch / "film.mp4"
        result = assembly.assemble(
            clips,
            film,
            audio=audio,
            subtitles_srt=srt,
            burn_subtitles=opts.burn_subtitles and srt is not None,
            title=board.title if opts.title_card else None,
            title_seconds=opts.title_seconds,
            crossfade=opts.crossfade,
            cancel=cancel,
        )
        cancel.raise_if_cancelled()
        if srt is not None:
            keep("vtt", subtitles.write_vtt(cues, scratch / "film.vtt"), "vtt")
            keep("srt", srt, "srt")
        if narration_wav is not None:
            keep("narration", narration_wav, "wav")
        for stem, path in (sound.stems if sound is not None else {}).items():
            keep(stem, path, "wav")
        sheet_rows = []
        for r, shot, start in zip(shots, board_shots, starts):  # frames cut once per clip (app.thumbnails)
            imgs = [Image.open(p) for _, _, p in self.clips.frames(r.sha256, SHEET_FRAMES)]
            sheet_rows.append((f"{shot.shot_id} {frames.timecode(start)}", imgs))
        keep("contact_sheet", frames.contact_sheet(sheet_rows, scratch / "sheet.jpg"), "jpg")
        otio_path = scratch / "cut.otio"
        # Media paths relative to the store's layout (media/<ab>/<sha>.otio -> ../<cd>/<sha>.mp4), so the
        # cut stays valid wherever the store (or an archive of it) lives.
        otio_export.export_otio(
            [(r.shot_id, self.clips.path(r.sha256), r.num_frames / r.fps, r.fps) for r in shots],
            otio_path,
            board.title,
            relative_to=self.ctx.media.root / "00",
        )
        keep("otio", otio_path, "otio")
        film_rec = self.ctx.media.put(film, "mp4", move=True)
        return AssembledFilm(
            film=film_rec,
            media=media,
            stored=[*stored, film_rec],
            stream_copied=result.stream_copied,
            audio=sound.summary if sound is not None else None,
        )


@dataclass(frozen=True)
class Watched:
    """A panel run on version `version` and the shots it speaks for in the film being handed off (those whose clip
    is the one the panel watched)."""

    version: int
    critiques: list  # CritiqueRecord
    shots: frozenset[str]


def export_timeline(
    render: RenderRecord,
    board: Storyboard,
    clip_path,
    watched: list[Watched],
    notes: list[Note],
    out_dir: Path,
    number: int,
    media_urls: dict[str, str] | None = None,
    stem_path=None,
) -> dict[str, Path]:
    """The film's cut for an editor: OpenTimelineIO, CMX 3600 EDL and FCPXML, each with a marker per critic note
    (at its shot; from the latest panel run that watched that shot's clip, on version `number` or an earlier one),
    per creator note (at its shot, or the film's start), per line ("NAME (delivery): text"), per shot's sounds and
    per scene's music cue (at its first shot). Media are this machine's clip files, or `media_urls`; the film's
    dialogue, music and effects stems (`stem_path(sha)`: where the store keeps one) are written beside the cut as
    WAVs and are its three audio tracks, each from the first shot (after the title card) for the cut's length."""
    from generation import otio_export

    items = [(r.shot_id, clip_path(r.sha256), r.num_frames / r.fps, r.fps) for r in render.shots]
    markers: list[otio_export.Marker] = []
    for w in watched:
        on = "" if w.version == number else f" (on v{w.version})"
        for item in w.critiques:  # CritiqueRecord
            c = item.critique
            who = (item.persona_name or item.persona_id) + on
            for n in c.shot_notes:
                if n.shot_id in w.shots:
                    markers.append(otio_export.Marker(n.shot_id, f"{who}: {n.note}", "critic"))
            for issue in c.top_issues:
                text = issue.summary + (f" → {issue.suggestion}" if issue.suggestion else "")
                if issue.shot_ids:
                    at = [s for s in issue.shot_ids if s in w.shots]
                else:  # about the whole film: the nearest panel run's only, at the film's start
                    at = [render.shots[0].shot_id] if w is watched[0] else []
                for sid in at:
                    markers.append(otio_export.Marker(sid, f"{who} [{issue.urgency}]: {text}", "critic"))
    for n in notes:
        markers.append(otio_export.Marker(n.shot_id or render.shots[0].shot_id, f"note: {n.text}", "creator"))
    for scene in board.scenes:
        if scene.music:
            markers.append(otio_export.Marker(scene.shots[0].shot_id, f"music: {scene.music}", "sound"))
        for shot in scene.shots:
            for ln in shot.dialogue:
                who = (ln.character or "line") + (f" ({ln.delivery})" if ln.delivery else "")
                markers.append(otio_export.Marker(shot.shot_id, f"{who}: {ln.line}", "dialogue"))
            if shot.sounds:
                markers.append(otio_export.Marker(shot.shot_id, f"sounds: {shot.sounds}", "sound"))
    stems = (
        {}
        if stem_path is None
        else {k: stem_path(render.media[k]) for k in ("dialogue", "music", "effects") if k in render.media}
    )
    offset = board.film.title_seconds if board.film.title_card else 0.0  # the stems follow the film, title card too
    return otio_export.export_timeline(items, Path(out_dir), board.title, markers, stems, offset, media_urls)


def handoff_zip(
    render: RenderRecord, board: Storyboard, clip_path, watched, notes, out: Path, number: int, stem_path=None
) -> Path:
    """The hand-off as one zip an editor can open anywhere: cut.otio, cut.edl and cut.fcpxml at its top (with the
    dialogue, music and effects stems as WAVs beside them), each shot's clip in media/ (NNN_<shot id>.mp4), the cut's
    media paths relative to it. Written whole or not at all."""
    import shutil
    import tempfile
    import zipfile

    out = Path(out)
    with tempfile.TemporaryDirectory(prefix=".handoff-", dir=out.parent) as tmp:
        folder = Path(tmp)
        urls = {r.shot_id: f"media/{i:03d}_{r.shot_id}.mp4" for i, r in enumerate(render.shots, 1)}
        (folder / "media").mkdir()
        for r in render.shots:
            shutil.copyfile(clip_path(r.sha256), folder / urls[r.shot_id])
        written = export_timeline(
            render, board, clip_path, watched, notes, folder, number, media_urls=urls, stem_path=stem_path
        )
        part = folder / "handoff.zip"
        with zipfile.ZipFile(part, "w") as zf:
            for path in written.values():
                zf.write(path, path.name, compress_type=zipfile.ZIP_DEFLATED)
            for rel in urls.values():
                zf.write(folder / rel, rel, compress_type=zipfile.ZIP_STORED)  # H.264 does not compress further
        shutil.move(part, out)
    return out
