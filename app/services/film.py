"""Assembling a version's film from its clips, with the version's film options (title card, crossfades,
burned-in or soft subtitles, plain or SDH captions, a described second audio track), and the sidecars a creator and
an editor need: SRT/VTT subtitles, the narration track, a contact sheet and an OpenTimelineIO cut. Everything lands in
the media store."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.context import SHEET_FRAMES, Context
from generation.base import CancelToken
from storage.fileio import atomic_write
from storage.records import MediaExt, MediaRecord, RenderAudio, RenderRecord, ShotRender, SidecarKind
from storage.schema import Note, Shot, Storyboard

# The language both audio tracks are labelled with: the voices are the installed Piper voice's, which is English
# (lines are written in the idea's language; a storyboard does not say which).
TRACK_LANGUAGE = "eng"
# The film's soft subtitle stream is named for what it holds (`FilmOptions.captions`).
CAPTIONS_TITLE = {"sdh": "English captions (SDH)", "plain": "English subtitles"}
# In every film's key (`FilmAssembler.key`): raised when the cut or the mix changes what the same inputs give, so a
# film cut before is not taken for one cut now.
FILM_CUT = 2


@dataclass
class AssembledFilm:
    film: MediaRecord
    media: dict[SidecarKind, str]  # sidecar kind -> sha256 (see storage.records.RENDER_MEDIA_EXT)
    stored: list[MediaRecord]  # every file stored, for the media table
    stream_copied: bool
    audio: RenderAudio | None = None  # the film's sound (None: silent)


class FilmAssembler:
    def __init__(self, ctx: Context, clips, audio) -> None:
        # clips: app.services.clips.Clips (clip files and their sampled frames); audio: app.services.audio.Audio (the film's sound)
        self.ctx, self.clips, self.audio = ctx, clips, audio

    def key(self, board: Storyboard, shots: list[ShotRender]) -> str:
        """What decides the film `assemble` cuts and its sidecars, hashed: the version's film signature (each shot's
        request, its words and sounds, the scenes' music and levels, the film options), the clips it is cut from
        (by content, with their tier), and what the sound takes from the configuration, not the storyboard
        (`Audio.setup`, the narration switch). The same key: the same film."""
        import hashlib
        import json

        payload = {
            "cut": FILM_CUT,
            "signature": self.clips.film_signature(board),
            "clips": [[r.shot_id, r.sha256, r.tier, r.num_frames, r.fps] for r in shots],
            "sound": {**self.audio.setup(), "narration": self.ctx.config.narration},
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

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
        media: dict[SidecarKind, str] = {}

        def keep(kind: SidecarKind, path: Path, ext: MediaExt) -> None:
            rec = self.ctx.media.put(path, ext, move=True)
            stored.append(rec)
            media[kind] = rec.sha256

        cues = subtitles.cues_for(captions(board, board_shots, starts, ends, sdh=opts.captions == "sdh"), breaks=True)
        srt = subtitles.write_srt(cues, scratch / "film.srt") if cues else None
        vtt = subtitles.write_vtt(cues, scratch / "film.vtt") if cues else None
        burn = opts.burn_subtitles and srt is not None
        narration_wav = None
        narrated = [(start, shot.narration) for shot, start in zip(board_shots, starts) if shot.narration]
        if narrated and self.ctx.config.narration:
            narration_wav = self.audio.narration(narrated, total, scratch / "narration.wav", cancel)
        cancel.raise_if_cancelled()
        sound = self.audio.film_sound(board, board_shots, clips, starts, ends, total, narration_wav, scratch, cancel)
        audio = sound.path if sound is not None else None
        described = None
        if opts.audio_description:
            described = self.audio.described_track(board, board_shots, starts, ends, total, sound, scratch, cancel)
            if sound is None:  # a film with nothing else to hear: the main track is silence
                from generation.audio.pcm import silence

                audio = silence(scratch / "silence.wav", total, self.audio.CHANNELS[opts.channels])
        cancel.raise_if_cancelled()
        film = scratch / "film.mp4"

        picture_key = self._picture_key(board, shots, srt if burn else None)
        picture = self._picture(picture_key)  # the picture of a film cut before from the same clips and options

        def cut(main: Path | None, second: Path | None):
            return assembly.assemble(
                clips,
                film,
                audio=main,
                described=second,
                language=TRACK_LANGUAGE,
                subtitles_srt=srt,
                burn_subtitles=burn,
                soft_subtitles=None if burn else vtt,  # burned in: not twice
                subtitles_title=CAPTIONS_TITLE[opts.captions],
                title=board.title if opts.title_card else None,
                title_seconds=opts.title_seconds,
                crossfade=opts.crossfade,
                cancel=cancel,
                picture=picture,
            )

        result = cut(audio, described.path if described is not None else None)
        cancel.raise_if_cancelled()
        if sound is not None:  # the encoder can overshoot the mix's ceiling: measured on the film, cut again lower
            sound = self._under_ceiling(sound, described, film, scratch, cut, cancel)
            cancel.raise_if_cancelled()
        if srt is not None and vtt is not None:
            keep("vtt", vtt, "vtt")
            keep("srt", srt, "srt")
        if narration_wav is not None:
            keep("narration", narration_wav, "wav")
        for stem, path in (sound.stems if sound is not None else {}).items():
            keep(stem, path, "wav")
        sheet_rows = []
        for r, shot, start in zip(shots, board_shots, starts):  # frames cut once per clip (app.services.thumbnails)
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
        atomic_write(self._pictures / picture_key, film_rec.sha256.encode())
        return AssembledFilm(
            film=film_rec,
            media=media,
            stored=[*stored, film_rec],
            stream_copied=result.stream_copied,
            audio=_with_described(sound.summary if sound is not None else None, described, opts.loudness),
        )

    @property
    def _pictures(self) -> Path:
        """Each film's picture by its key (`_picture_key`): the film that has it, by its sha256."""
        return self.ctx.config.sound_dir / "pictures"

    def _picture_key(self, board: Storyboard, shots: list[ShotRender], burned: Path | None) -> str:
        """What decides the film's picture stream, hashed: the clips (by content), the title card and how long it
        shows, the crossfade, the subtitles burned in (their text). Not the sound, nor the soft subtitles."""
        import hashlib
        import json

        opts = board.film
        payload = {
            "cut": FILM_CUT,
            "clips": [[r.sha256, r.num_frames, r.fps] for r in shots],
            "title": [board.title, opts.title_seconds] if opts.title_card else None,
            "crossfade": opts.crossfade,
            "burned": burned.read_text() if burned is not None else None,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def _picture(self, key: str) -> Path | None:
        """A film in the media store whose picture has `key`, else None (never cut, or its file gone)."""
        try:
            sha = (self._pictures / key).read_text().strip()
        except OSError:
            return None
        return self.ctx.media.find(sha) if sha else None

    def _under_ceiling(self, sound, described, film: Path, scratch: Path, cut, cancel: CancelToken):
        """`sound` with the loudness the cut `film` has (`generation.assembly.under_ceiling`: measured, and cut again
        by `cut` with its sound tracks lowered where the AAC encoder took its true peak over the target's ceiling;
        AAC_HEADROOM keeps real mixes 2-3 dB under it, peaky noise such as a random-weight model's went 5 dB over).
        Either way the summary carries the film's figures."""
        from dataclasses import replace

        from generation import assembly
        from generation.audio.loudness import TARGETS

        ceiling = TARGETS[sound.summary.target].true_peak
        second = described.path if described is not None else None
        heard = assembly.under_ceiling(film, sound.path, second, ceiling, cut, scratch, cancel)
        measured = {"loudness_lufs": heard.integrated_lufs, "true_peak_dbtp": heard.true_peak_dbtp}
        return replace(sound, summary=sound.summary.model_copy(update={**measured, "lra_lu": heard.lra_lu}))


def captions(
    board: Storyboard, shots: list[Shot], starts: list[float], ends: list[float], *, sdh: bool
) -> list[tuple[float, float, str]]:
    """The film's subtitles as (start, end, text) on its timeline: each shot's lines share its window by word count
    (the windows the voices are placed in: `Shot.subtitles`), an off-screen speaker named. With `sdh` (captions
    for viewers who cannot hear) a speaker is named, in capitals, also where it is unclear who talks (the shot shows
    several characters, or its lines change speaker), the narration is the NARRATOR's, and a shot's first cue
    carries, above its words, what starts to be heard: "[music swells]" where a scene's cue starts (a new cue),
    "[music stops]" where a scene without one follows music, and the shot's sounds that are new since the shot
    before (`subtitles.sound_tags`), as many as one caption line holds. Tags with no words under them stay
    TAG_SECONDS (or to the shot's end)."""
    from generation import subtitles

    scene_of = {s.shot_id: sc for sc in board.scenes for s in sc.shots}
    out: list[tuple[float, float, str]] = []
    music, heard = "", set()
    for i, (shot, start, end) in enumerate(zip(shots, starts, ends)):
        windows = subtitles.split_window(start, end, shot.subtitles())
        if not sdh:
            out += windows
            continue
        cue = scene_of[shot.shot_id].music.strip()
        tags = []
        if i == 0 or scene_of[shots[i - 1].shot_id] is not scene_of[shot.shot_id]:
            tags += ["[music swells]"] if cue and cue != music else ["[music stops]"] if music and not cue else []
            music = cue
        sounds = subtitles.sound_tags(shot.sounds)
        tags += [t for t in sounds if t not in heard]
        heard = set(sounds)
        if shot.dialogue:
            named = len(shot.characters) > 1 or len({ln.character for ln in shot.dialogue}) > 1
            texts = [
                subtitles.speaker(ln.character, ln.line) if ln.character and (named or shot.off_screen(ln)) else ln.line
                for ln in shot.dialogue
            ]
        else:
            texts = [subtitles.speaker("Narrator", shot.narration)] if windows else []
        windows = [(t0, t1, text) for (t0, t1, _), text in zip(windows, texts, strict=True)]
        tag = ""
        for t in tags[: subtitles.MAX_TAGS]:  # as many as one caption line holds, in order
            tag = f"{tag} {t}".strip() if len(f"{tag} {t}".strip()) <= subtitles.LINE_CHARS else tag
        if tag and windows:
            t0, t1, text = windows[0]
            windows[0] = (t0, t1, f"{tag}\n{text}")
        elif tag:
            windows = [(start, min(end, start + subtitles.TAG_SECONDS), tag)]
        out += windows
    return out


def _with_described(summary: RenderAudio | None, described, loudness: Literal["web", "ebu"]) -> RenderAudio | None:
    """The render's sound summary with what the described track holds (`described`: app.services.audio.Described or None)."""
    if described is None:
        return summary
    base = summary or RenderAudio(
        lines_voiced=0,
        lines_reused=0,
        cues_made=0,
        cues_reused=0,
        loudness_lufs=described.loudness.integrated_lufs,
        true_peak_dbtp=described.loudness.true_peak_dbtp,
        lra_lu=described.loudness.lra_lu,
        target=loudness,
        label="the audio description only",
    )
    return base.model_copy(
        update={
            "descriptions_said": len(described.placed),
            "descriptions_voiced": described.voiced,
            "descriptions_flagged": described.flagged,
            "described_lufs": described.loudness.integrated_lufs,
        }
    )


@dataclass(frozen=True)
class Watched:
    """A panel run and the shots it speaks for in the film being handed off: the handed-off version's own run (the
    shots whose clip is the one it watched), or an earlier version's run on this very film (a version that changes
    no pixels or sound shares its parent's film)."""

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
    media_path=None,
    earlier: Sequence = (),
) -> dict[str, Path]:
    """The film's cut for an editor: OpenTimelineIO, CMX 3600 EDL and FCPXML, each with a marker per critic note
    (at its shot; from `watched`: version `number`'s panel, or one that watched this very film), per creator note on
    version `number` and on its ancestors (`earlier`: app.services.refining.EarlierNote, labelled with their version and
    whether this version answers them; at the note's shot, or the film's start), per line ("NAME (delivery): text"),
    per shot's sounds and per scene's music cue (at its first shot). Media are this machine's clip files, or
    `media_urls`; the film's dialogue, music and effects stems (`media_path(sha, ext)`: where the store keeps a file)
    are written beside the cut as WAVs and are its three audio tracks, each from the first shot (after the title card)
    for the cut's length; the captions, timed on the cut, are `cut.srt` and `cut.vtt` beside it."""
    from generation import otio_export

    items = [(r.shot_id, Path(clip_path(r.sha256)), r.num_frames / r.fps, float(r.fps)) for r in render.shots]
    first = render.shots[0].shot_id
    markers: list[otio_export.Marker] = []
    for w in watched:
        on = "" if w.version == number else f" (on v{w.version}, the same film)"
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
                    at = [first] if w is watched[0] else []
                for sid in at:
                    markers.append(otio_export.Marker(sid, f"{who} [{issue.urgency}]: {text}", "critic"))
    in_cut = {r.shot_id for r in render.shots}
    for n in notes:
        markers.append(otio_export.Marker(n.shot_id if n.shot_id in in_cut else first, f"note: {n.text}", "creator"))
    for e in earlier:
        where = e.note.shot_id if e.note.shot_id in in_cut else first
        markers.append(otio_export.Marker(where, f"note (on v{e.version}, {e.how}): {e.note.text}", "creator"))
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
        if media_path is None
        else {k: media_path(render.media[k], "wav") for k in ("dialogue", "music", "effects") if k in render.media}
    )
    offset = board.film.title_seconds if board.film.title_card else 0.0  # the stems follow the film, title card too
    out_dir = Path(out_dir)
    written = otio_export.export_timeline(items, out_dir, board.title, markers, stems, offset, media_urls)
    return {**written, **cut_captions(render, board, out_dir)}


def cut_captions(render: RenderRecord, board: Storyboard, out_dir: Path) -> dict[str, Path]:
    """The film's captions (the version's plain or SDH choice) timed on the editor's cut, whose clips follow each
    other from 0 (no title card, no crossfades, as the OTIO/EDL/FCPXML place them): `cut.srt` and `cut.vtt` in
    `out_dir`, or nothing when the film has no words or tags to show."""
    from generation import assembly, subtitles

    by_id = {s.shot_id: s for s in board.shots()}
    shown = [r for r in render.shots if r.shot_id in by_id]
    if not shown:
        return {}
    lengths = [r.num_frames / r.fps for r in shown]
    starts = assembly.timeline(lengths)
    ends = [*starts[1:], starts[-1] + lengths[-1]]
    shots = [by_id[r.shot_id] for r in shown]
    cues = subtitles.cues_for(captions(board, shots, starts, ends, sdh=board.film.captions == "sdh"), breaks=True)
    if not cues:
        return {}
    return {
        "srt": subtitles.write_srt(cues, Path(out_dir) / "cut.srt"),
        "vtt": subtitles.write_vtt(cues, Path(out_dir) / "cut.vtt"),
    }


def handoff_zip(
    render: RenderRecord,
    board: Storyboard,
    clip_path,
    watched,
    notes,
    out: Path,
    number: int,
    media_path=None,
    earlier: Sequence = (),
) -> Path:
    """The hand-off as one zip an editor can open anywhere: cut.otio, cut.edl and cut.fcpxml at its top (with the
    dialogue, music and effects stems as WAVs and the captions as cut.srt and cut.vtt beside them), each shot's clip
    in media/ (NNN_<shot id>.mp4), the cut's media paths relative to it. Written whole or not at all."""
    import shutil
    import tempfile
    import zipfile

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".handoff-", dir=out.parent) as tmp:
        folder = Path(tmp)
        urls = {r.shot_id: f"media/{i:03d}_{r.shot_id}.mp4" for i, r in enumerate(render.shots, 1)}
        (folder / "media").mkdir()
        for r in render.shots:
            shutil.copyfile(clip_path(r.sha256), folder / urls[r.shot_id])
        written = export_timeline(
            render,
            board,
            clip_path,
            watched,
            notes,
            folder,
            number,
            media_urls=urls,
            media_path=media_path,
            earlier=earlier,
        )
        part = folder / "handoff.zip"
        with zipfile.ZipFile(part, "w") as zf:
            for path in written.values():
                zf.write(path, path.name, compress_type=zipfile.ZIP_DEFLATED)
            for rel in urls.values():
                zf.write(folder / rel, rel, compress_type=zipfile.ZIP_STORED)  # H.264 does not compress further
        os.replace(part, out)
    return out
