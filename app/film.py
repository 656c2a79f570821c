"""Assembling a version's film from its clips, with the version's film options (title card, crossfades,
burned-in subtitles), and the sidecars a creator and an editor need: SRT/VTT subtitles, the narration
track, a contact sheet and an OpenTimelineIO cut. Everything lands in the media store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.context import Context
from storage.records import MediaRecord, ShotRender
from storage.schema import Storyboard


@dataclass
class AssembledFilm:
    film: MediaRecord
    media: dict[str, str]  # sidecar kind -> sha256 (see storage.records.RENDER_MEDIA_EXT)
    stored: list[MediaRecord]  # every file stored, for the media table
    stream_copied: bool


class FilmAssembler:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def clip_path(self, sha256: str) -> Path:
        return self.ctx.media.path(sha256, "mp4")

    def assemble(self, board: Storyboard, shots: list[ShotRender], scratch: Path) -> AssembledFilm:
        from generation import assembly, frames, otio_export, subtitles

        opts = board.film
        clips = [self.clip_path(r.sha256) for r in shots]
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

        cues = subtitles.cues_for([(start, end, shot.dialogue or shot.narration)
                                   for shot, start, end in zip(board_shots, starts, ends)])
        srt = subtitles.write_srt(cues, scratch / "film.srt") if cues else None
        audio = None
        narrated = [(start, shot.narration) for shot, start in zip(board_shots, starts) if shot.narration]
        if narrated and self.ctx.config.narration:
            from generation import narration

            audio = scratch / "narration.wav"
            narration.narration_track(narrated, total, audio, cache_dir=self.ctx.config.home / "cache" / "speech")
        film = scratch / "film.mp4"
        result = assembly.assemble(clips, film, audio=audio, subtitles_srt=srt,
                                   burn_subtitles=opts.burn_subtitles and srt is not None,
                                   title=board.title if opts.title_card else None, title_seconds=opts.title_seconds,
                                   crossfade=opts.crossfade)
        if srt is not None:
            keep("vtt", subtitles.write_vtt(cues, scratch / "film.vtt"), "vtt")
            keep("srt", srt, "srt")
        if audio is not None:
            keep("narration", audio, "wav")
        sheet_rows = []
        for r, shot, start in zip(shots, board_shots, starts):
            imgs = [img for _, _, img in frames.sample_frames(self.clip_path(r.sha256), 3, offset=start)]
            sheet_rows.append((f"{shot.shot_id} {frames.timecode(start)}", imgs))
        keep("contact_sheet", frames.contact_sheet(sheet_rows, scratch / "sheet.jpg"), "jpg")
        otio_path = scratch / "cut.otio"
        # Media paths relative to the store's layout (media/<ab>/<sha>.otio -> ../<cd>/<sha>.mp4), so the
        # cut stays valid wherever the store (or an archive of it) lives.
        otio_export.export_otio([(r.shot_id, self.clip_path(r.sha256), r.num_frames / r.fps, r.fps) for r in shots],
                                otio_path, board.title, relative_to=self.ctx.media.root / "00")
        keep("otio", otio_path, "otio")
        film_rec = self.ctx.media.put(film, "mp4", move=True)
        return AssembledFilm(film=film_rec, media=media, stored=[*stored, film_rec],
                             stream_copied=result.stream_copied)
