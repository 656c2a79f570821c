"""Audio: the film's sound, from the storyboard.

A voice per character (`voices`: the one stored with the character, else cast from the bible's names in order by
`generation.audio.voices.cast`, shown as "cast"), each shot's lines voiced into its subtitle windows (the same
times the subtitles use), the narration on the dialogue stem, each scene's music cue (the temp score, or the
`music_model`'s, or the creator's uploaded track), each shot's sounds (the temp effects, or the `effects_model`'s)
and a clip's own sound (LTX-2) on the effects stem; mixed by `generation.audio.mix` with
the version's film options (loudness target, levels, ducking). Every voiced line, cue and effect is cached in
`Config.sound_dir` by its content, so a changed line voices that line only. It uses no other service: the render
hands it the clips' files and the film's timeline.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from app.context import Context
from app.errors import StudioError
from generation.base import CancelToken
from storage.records import RenderAudio, Version
from storage.schema import CharacterVoice, Shot, Storyboard

# The film's sound is AAC: its encoder overshot a -2.0 dBTP mix to -0.4 dBTP (measured on a 12-s film), so the
# mix's last limiter stays this far under the -1 dBTP ceiling (with it, 5 runs: the film -3.0 to -3.7 dBTP).
AAC_HEADROOM = 3.0
PREVIEW_LINE = "This is how I sound in the film."
TRACK_LABEL = "uploaded track"


@dataclass(frozen=True)
class Cast:
    """A character's voice, and whether it is stored with the character (else cast from the names)."""

    name: str
    voice: CharacterVoice
    stored: bool

    def describe(self) -> str:
        return f"{_voice(self.voice).describe()} ({'chosen' if self.stored else 'cast from the name'})"


@dataclass(frozen=True)
class FilmSound:
    path: Path  # the mix (48 kHz mono WAV), as long as the film
    summary: RenderAudio
    stems: dict[str, Path]  # dialogue, music, effects: levelled (the music ducked), before normalisation


def _voice(v: CharacterVoice):
    from generation.audio.voices import Voice

    return Voice("piper" if v.engine == "piper" else "openai", v.model, v.speaker, 1 / v.pace, v.pitch)


def _choice(v) -> CharacterVoice:
    return CharacterVoice(
        engine="piper" if v.engine == "piper" else "speech",
        model=v.model,
        speaker=v.speaker,
        pitch=v.pitch,
        pace=round(1 / v.length_scale, 4),
    )


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:4], "big")


_MP4_SOUND = re.compile(rb"hdlr.{8}soun", re.S)


def has_sound(clip: Path) -> bool:
    """Whether a clip's mp4 holds a sound track (an LTX-2 clip does; the animatic's and most models' do not)."""
    return _MP4_SOUND.search(Path(clip).read_bytes()) is not None


class Audio:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------------ voices
    def cast(self, board: Storyboard) -> dict[str, Cast]:
        """Every character's voice: the one stored with them, else cast from the bible's names in order (the same
        board always gets the same voices; a character added later does not change the others')."""
        from generation.audio.voices import VoiceError, cast

        names = [c.name for c in board.characters]
        try:
            cast_voices = cast(names)
        except VoiceError as e:
            raise StudioError(str(e)) from None
        return {
            c.name: Cast(c.name, c.voice, True) if c.voice else Cast(c.name, _choice(cast_voices[c.name]), False)
            for c in board.characters
        }

    def with_voice(self, board: Storyboard, name: str, changes: dict) -> Storyboard:
        """`board` with character `name`'s voice changed (`changes`: CharacterVoice fields, over the voice they have
        now, cast or stored). A speech voice needs the speech endpoint configured."""
        from pydantic import ValidationError

        from storage.schema import first_error

        current = self.cast(board)
        if name not in current:
            known = ", ".join(current) or "none"
            raise StudioError(f"no character {name!r} in this storyboard (characters: {known})")
        base = current[name].voice.model_dump()
        if changes.get("engine") == "speech" and base["engine"] != "speech":
            base = {**base, "model": "", "speaker": "", "pitch": 0.0}
        try:
            voice = CharacterVoice.model_validate({**base, **changes})
        except ValidationError as e:
            raise StudioError(f"voice: {first_error(e)}") from None
        if voice.engine == "speech" and not self.ctx.config.speech_base_url:
            raise StudioError("a speech voice needs a speech endpoint: set speech_base_url (CHIEF_SPEECH_BASE_URL)")
        chars = [c.model_copy(update={"voice": voice}) if c.name == name else c for c in board.characters]  # type: list[Character]
        return board.model_copy(update={"characters": chars})

    def preview(self, board: Storyboard, name: str, out: Path, text: str = PREVIEW_LINE) -> Path:
        """A line in character `name`'s voice, written to `out` (WAV)."""
        import shutil

        voices = self.cast(board)
        if name not in voices:
            raise StudioError(f"no character {name!r} in this storyboard (characters: {', '.join(voices) or 'none'})")
        spoken = self._speak(text, voices[name].voice, "")
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(spoken.path, out)
        return out

    def _voices(self):
        from generation.audio.voices import SpeechEndpoint, Voices

        cfg = self.ctx.config
        endpoint = (
            SpeechEndpoint(cfg.speech_base_url, cfg.speech_api_key, cfg.speech_model) if cfg.speech_base_url else None
        )
        return Voices(self.ctx.config.sound_dir / "lines", endpoint)

    def _speak(self, text: str, voice: CharacterVoice, delivery: str, cancel: CancelToken | None = None):
        from generation.audio.voices import VoiceError

        try:
            return self._voices().speak(text, _voice(voice), delivery, cancel)
        except VoiceError as e:
            raise StudioError(f"voice: {e}") from None

    # ------------------------------------------------------------------ the film's sound
    def film_sound(
        self,
        board: Storyboard,
        shots: list[Shot],
        clips: list[Path],
        starts: list[float],
        ends: list[float],
        total: float,
        narration: Path | None,
        scratch: Path,
        cancel: CancelToken,
    ) -> FilmSound | None:
        """The film's mix, or None when nothing in it makes a sound. `shots`, `clips`, `starts`, `ends`: the film's
        shots in order with their clip files and their times on the film's timeline (title card and crossfades
        included); `narration`: the narration track, placed on the dialogue stem."""
        from generation import subtitles
        from generation.audio import ambience, score
        from generation.audio.loudness import TARGETS
        from generation.audio.mix import MixSettings, Placed

        music_model, effects_model = self._model("music"), self._model("effects")
        voices = {n: c.voice for n, c in self.cast(board).items()}
        narrator = CharacterVoice()
        dialogue: list[Placed] = [Placed(0.0, narration)] if narration is not None else []
        music: list[Placed] = []
        effects: list[Placed] = []
        voiced = reused = made = kept = 0
        labels: list[str] = []
        for shot, clip, start, end in zip(shots, clips, starts, ends, strict=True):
            if shot.dialogue:
                windows = subtitles.split_window(start, end, shot.subtitles())
                for line, (t0, _, _) in zip(shot.dialogue, windows, strict=True):
                    spoken = self._speak(line.line, voices.get(line.character, narrator), line.delivery, cancel)
                    voiced, reused = voiced + spoken.made, reused + (not spoken.made)
                    dialogue.append(Placed(t0, spoken.path))
                    labels.append("Piper voices" if "Piper" in spoken.label else "speech endpoint voices")
            if shot.sounds.strip():
                seconds = round(end - start, 3)
                if effects_model is None:
                    path, new = self._cached(
                        "effects",
                        dict(words=shot.sounds, seconds=seconds, seed=shot.seed),
                        lambda s=shot, n=seconds: ambience.ambience(s.sounds, n, s.seed).sound,
                    )
                    labels.append(ambience.LABEL)
                else:
                    path, new = self._generated("effects", effects_model, shot.sounds, seconds, shot.seed, cancel)
                    labels.append(f"{self._label(effects_model)} effects")
                made, kept = made + new, kept + (not new)
                effects.append(Placed(start, path, seconds))
            if has_sound(clip):
                effects.append(Placed(start, clip, end - start))
                labels.append("the clips' own sound")
        film_ids = {s.shot_id: i for i, s in enumerate(shots)}
        if board.film.music_track:  # the creator's track under the whole film: no scene's cue or track plays
            seconds = round(total, 3)
            music.append(Placed(0.0, self._track(board.film.music_track, seconds), seconds))
            labels.append(TRACK_LABEL)
        for scene in board.scenes:
            present = [film_ids[s.shot_id] for s in scene.shots if s.shot_id in film_ids]
            if board.film.music_track or not present or not (scene.music.strip() or scene.music_track):
                continue
            t0, t1 = starts[present[0]], ends[present[-1]]
            seconds = round(t1 - t0, 3)
            if scene.music_track:  # the creator's track for this scene, instead of its cue
                music.append(Placed(t0, self._track(scene.music_track, seconds), seconds))
                labels.append(TRACK_LABEL)
                continue
            seed = _seed(scene.scene_id)
            if music_model is None:
                path, new = self._cached(
                    "music",
                    dict(words=scene.music, seconds=seconds, seed=seed),
                    lambda w=scene.music, n=seconds, sd=seed: score.compose(w, n, sd),
                )
                labels.append(score.LABEL)
            else:
                path, new = self._generated("music", music_model, scene.music, seconds, seed, cancel)
                labels.append(f"{self._label(music_model)} music")
            made, kept = made + new, kept + (not new)
            music.append(Placed(t0, path, seconds))
        if not (dialogue or music or effects):
            return None
        opts = board.film
        settings = MixSettings(
            target=TARGETS[opts.loudness],
            music_db=opts.music_level,
            effects_db=opts.effects_level,
            ducking=opts.ducking,
            headroom=AAC_HEADROOM,
        )
        mixed = self._mixed(dialogue, music, effects, total, settings, scratch, cancel)
        if mixed is None:  # every stem silent (a clip's silent sound track): the film has no sound
            return None
        path, stems, loud = mixed
        summary = RenderAudio(
            lines_voiced=voiced,
            lines_reused=reused,
            cues_made=made,
            cues_reused=kept,
            loudness_lufs=loud.integrated_lufs,
            true_peak_dbtp=loud.true_peak_dbtp,
            lra_lu=loud.lra_lu,
            target=opts.loudness,
            label=", ".join(dict.fromkeys(labels)) or "narration",
        )
        return FilmSound(path, summary, stems)

    def _mixed(self, dialogue, music, effects, total: float, settings, scratch: Path, cancel: CancelToken):
        """(mix, stems, loudness) in `scratch`: mixed now, or copied from the mix cache when the same pieces at the
        same times with the same settings were mixed before (a picture-only edit, a render again); None when
        every stem is silent."""
        import json
        import shutil
        from dataclasses import asdict

        from generation.audio.loudness import Loudness
        from generation.audio.mix import STEMS, mix
        from generation.audio.pcm import key
        from storage.fileio import file_sha256

        def piece(p) -> list:  # lines, cues and clips are named by their content; the narration is hashed
            name = p.path.name if p.path.parent != scratch else file_sha256(p.path)
            return [name, round(p.start, 4), p.length]

        k = key(
            kind="mix",
            pieces=[[piece(p) for p in stem] for stem in (dialogue, music, effects)],
            total=round(total, 4),
            settings=asdict(settings),
        )
        cached = self.ctx.config.sound_dir / "mixes" / k
        stems = {name: scratch / f"{name}.wav" for name in STEMS}
        if (cached / "loudness.json").is_file():
            for name in ("mix", *STEMS):
                shutil.copyfile(cached / f"{name}.wav", scratch / f"{name}.wav")
            return scratch / "mix.wav", stems, Loudness(**json.loads((cached / "loudness.json").read_text()))
        try:
            result = mix(dialogue, music, effects, total, scratch / "mix.wav", scratch / "stems", settings, cancel)
        except ValueError:
            return None
        for name in STEMS:
            shutil.copyfile(result.stems[name], stems[name])
        work = cached.with_name(f".{k}.part{os.getpid()}")
        work.mkdir(parents=True, exist_ok=True)
        for name in ("mix", *STEMS):
            shutil.copyfile(scratch / f"{name}.wav", work / f"{name}.wav")
        (work / "loudness.json").write_text(json.dumps(asdict(result.loudness)))
        try:
            work.rename(cached)
        except OSError:  # another render stored the same mix first
            shutil.rmtree(work, ignore_errors=True)
        return result.path, stems, result.loudness

    # ------------------------------------------------------------------ uploaded tracks
    def with_track(self, board: Storyboard, scene_id: str | None, upload: Path | None) -> tuple[Storyboard, list]:
        """`board` with a creator's track placed over scene `scene_id` (None: under the whole film), or taken away
        (`upload` None: the scene's cue plays again), and the media to store with the version (the checked track
        as 48 kHz FLAC in the media store). The file is checked (`generation.audio.upload`) before anything is
        written; a refusal is one line."""
        import shutil
        import tempfile

        from generation.audio.upload import UploadRefused, store_track

        if scene_id is not None and scene_id not in {sc.scene_id for sc in board.scenes}:
            known = ", ".join(sc.scene_id for sc in board.scenes)
            raise StudioError(f"no scene {scene_id!r} in this storyboard (scenes: {known})")
        media = []
        sha = ""
        if upload is not None:
            with tempfile.TemporaryDirectory(prefix="chief-track-") as tmp:
                try:
                    track = store_track(Path(upload), Path(tmp))
                except UploadRefused as e:
                    raise StudioError(f"track refused: {e}") from None
                except OSError as e:
                    raise StudioError(f"track refused: {Path(upload).name}: {e.strerror or e}") from None
                rec = self.ctx.media.put(track.path, "flac", move=True)
                shutil.rmtree(tmp, ignore_errors=True)
            media, sha = [rec], rec.sha256
        if scene_id is None:
            board = board.model_copy(update={"film": board.film.model_copy(update={"music_track": sha})})
        else:
            scenes = [
                sc.model_copy(update={"music_track": sha}) if sc.scene_id == scene_id else sc for sc in board.scenes
            ]
            board = board.model_copy(update={"scenes": scenes})
        return board, media

    def set_track(
        self, pid: str, scene_id: str | None, upload: Path | None, base: int | str | None = None
    ) -> tuple[Version, bool]:
        """A child of `base` with a creator's track over scene `scene_id` (None: under the whole film), or with it
        taken away (`upload` None); the track and the version are stored in one transaction. (`base`, False) when
        nothing changes (the same track again, or none to clear)."""
        with self.ctx.repo.read() as r:
            v = r.version(pid, base)
        board, media = self.with_track(v.storyboard, scene_id, upload)
        if board == v.storyboard:
            return v, False
        where = f"scene {scene_id}" if scene_id is not None else "the film"
        message = f"music track for {where}: {Path(upload).name}" if upload is not None else f"{where}: track removed"
        with self.ctx.repo.write() as u:
            u.add_media(media)
            return u.add_child(u.version(pid, v.number), board, "edit", message)[0], True

    def _track(self, sha: str, seconds: float) -> Path:
        """An uploaded track cut to `seconds` (silence after a shorter one) as a 48 kHz WAV in the sound cache.
        Decoding stops at `seconds`: a track from an archive is decoded no further than it plays."""
        import numpy as np

        from generation.audio.pcm import RATE, Sound, decode

        path = self.ctx.media.find(sha)
        if path is None:
            raise StudioError(f"the uploaded track {sha[:12]}… is not in the media store: upload it again")

        def cut() -> Sound:
            try:
                samples = decode(path, RATE, seconds)
            except ValueError as e:
                raise StudioError(f"uploaded track: {e}") from None
            n = round(seconds * RATE)
            return Sound(np.pad(samples[:n], (0, max(0, n - len(samples)))), RATE, TRACK_LABEL)

        return self._cached("tracks", dict(track=sha, seconds=seconds), cut)[0]

    # ------------------------------------------------------------------ music and effects models
    def _model(self, role: str):
        """The configured music or effects model (`music_model`/`effects_model`: a local diffusers folder or a
        cached hub id), checked to make `role`; None when none is set (the temp score/effects). Its pipeline loads
        on the first cue that is not cached and stays warm for the process (`generation.pipelines.warm`)."""
        from generation.audio.families import check_role
        from generation.base import RenderError
        from generation.pipelines import PipelineModel

        name = getattr(self.ctx.config, f"{role}_model")
        if not name:
            return None
        cfg = self.ctx.config
        try:
            model = PipelineModel(name, device=cfg.device or None, dtype=cfg.dtype or None)
            check_role(model, role)
        except RenderError as e:
            raise StudioError(f"{role}_model: {e}") from None
        return model

    @staticmethod
    def _label(model) -> str:
        from generation.audio.families import label

        return label(model)

    def _generated(
        self, role: str, model, words: str, seconds: float, seed: int, cancel: CancelToken
    ) -> tuple[Path, bool]:
        """A cue (music) or a shot's sounds (effects) made by `model` at 48 kHz, cached by the words, the length,
        the seed and the model (its folder, resolved); a failure is one line, never the temp sound instead."""
        from generation.audio.families import make
        from generation.base import RenderError

        where = Path(model.model).expanduser()
        model_id = str(where.resolve()) if where.exists() else model.model

        def generate():
            try:
                return make(model, words, seconds, seed, cancel=cancel)
            except RenderError as e:
                raise StudioError(f"{role}_model: {e}") from None

        return self._cached(role, dict(words=words, seconds=seconds, seed=seed, model=model_id), generate)

    def _cached(self, kind: str, parts: dict, make) -> tuple[Path, bool]:
        """(the WAV for `parts`, whether it was made now): made once by `make()` (a Sound) and kept by content."""
        from generation.audio.pcm import key, write_wav

        path = self.ctx.config.sound_dir / kind / f"{key(kind=kind, **parts)}.wav"
        if path.is_file():
            return path, False
        sound = make()
        write_wav(path, sound.samples, sound.rate)
        return path, True
