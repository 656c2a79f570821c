"""Audio: the film's sound, from the storyboard.

A voice per character (`voices`: the one stored with the character, else cast from the bible's names in order by
`generation.audio.voices.cast`, shown as "cast"), each shot's lines voiced into its subtitle windows (the same
times the subtitles use), the narration on the dialogue stem, each scene's music cue (the temp score, or the
`music_model`'s, or the creator's uploaded track), each shot's sounds (the temp effects, or the `effects_model`'s;
cues and sounds at their scene's level, dB over the film's) and a clip's own sound (LTX-2) on the effects stem;
mixed by `generation.audio.mix` with
the version's film options (loudness target, levels, ducking, stereo or mono). Every voiced line, cue and effect is cached in
`Config.sound_dir` by its content, so a changed line voices that line only. It uses no other service: the render
hands it the clips' files and the film's timeline.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from app.context import Context
from app.errors import StudioError
from generation.audio.loudness import Loudness
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
        from generation.audio.voices import describe

        return f"{describe(self.voice)} ({'chosen' if self.stored else 'cast from the name'})"


@dataclass(frozen=True)
class FilmSound:
    path: Path  # the mix (48 kHz WAV, stereo or mono as the film options say), as long as the film
    summary: RenderAudio
    stems: dict[str, Path]  # dialogue, music, effects: levelled (the music ducked), before normalisation


@dataclass(frozen=True)
class Described:
    """The described track: the mix with the descriptions said between the lines."""

    path: Path  # 48 kHz WAV with the mix's channels, as long as the film
    placed: list[tuple[str, float, float]]  # (shot id, start, end) of each description said, on the film's timeline
    flagged: list[str]  # the descriptions that fit no gap between their shot's lines (left out), one sentence each
    voiced: int  # descriptions voiced now
    reused: int  # descriptions the cache held
    loudness: Loudness  # the described track as ebur128 measured it


def _line_voice(voices: dict[str, CharacterVoice], character: str) -> CharacterVoice:
    """The voice a line is spoken in: its character's, else (nobody named, or a name not in the bible) the
    narrator's."""
    return voices.get(character) or CharacterVoice()


def _choice(v) -> CharacterVoice:
    """A voice `cast` gave (`generation.audio.voices.Voice`), as the storyboard keeps it: the same fields and units."""
    return CharacterVoice(
        engine="piper" if v.engine == "piper" else "speech",
        model=v.model,
        speaker=v.speaker,
        pitch=v.pitch,
        pace=v.pace,
    )


def _seed_key(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def mix_stems(film: Path, stems: dict[str, Path], chosen: list[str], mix_lufs: float, out: Path) -> Path:
    """`film` with its sound replaced by the sum of the `chosen` stems, at the level they have in the film, under
    the mix's ceiling (-1 dBTP less AAC_HEADROOM): `generation.audio.stems.with_stems`."""
    from generation.audio.stems import with_stems

    return with_stems(film, stems, chosen, mix_lufs, -1.0 - AAC_HEADROOM, out)


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:4], "big")


def has_sound(clip: Path) -> bool:
    """Whether a clip's mp4 holds a sound track (an LTX-2 clip does; the animatic's and most models' do not), read
    from its header only (`generation.video_io.mp4_has_sound`)."""
    from generation.video_io import mp4_has_sound

    return mp4_has_sound(clip)


class Audio:
    CHANNELS = {"stereo": 2, "mono": 1}  # `FilmOptions.channels`: the mix's channels

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------------ voices
    def cast(self, board: Storyboard) -> dict[str, Cast]:
        """Every character's voice: the one stored with them, else cast from the bible's names in order (the same
        board always gets the same voices; a character added later does not change the others'), each at least
        MIN_APART + 1 semitones from the cast voices of the same speaker they share a scene with (`voices.cast`)."""
        from generation.audio.voices import VoiceError, cast

        names = [c.name for c in board.characters]
        together = [{ln.character for sh in sc.shots for ln in sh.dialogue} for sc in board.scenes]
        try:
            cast_voices = cast(names, together=together)
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
        chars = [c.model_copy(update={"voice": voice}) if c.name == name else c for c in board.characters]
        return board.model_copy(update={"characters": chars})

    def setup(self) -> dict:
        """What the film's sound takes from the configuration rather than the storyboard: the music and effects
        models, the speech endpoint and its model, and the versions of the temp score and effects (in a film's key,
        `FilmAssembler.key`)."""
        from generation.audio import ambience

        cfg = self.ctx.config
        return {
            "music_model": cfg.music_model,
            "effects_model": cfg.effects_model,
            "speech": [cfg.speech_base_url, cfg.speech_model],
            "effects_library": ambience.VERSION,
        }

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

    def say(self, board: Storyboard, character: str, text: str, delivery: str = ""):
        """A shot's line as the render voices it (`film_sound`): `character`'s voice (the narrator's when nobody is
        named), the same cache, so a line the render voiced is found again, not spoken anew. A name that is not one
        of the story's characters is refused."""
        voices = self.cast(board)
        if character and character not in voices:
            known = ", ".join(voices) or "none"
            raise StudioError(
                f"no character {character!r} in this storyboard (characters: {known}): the film speaks that line "
                "in the narrator's voice"
            )
        return self._speak(text, _line_voice({n: c.voice for n, c in voices.items()}, character), delivery)

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
            return self._voices().speak(text, voice, delivery, cancel)
        except VoiceError as e:
            raise StudioError(f"voice: {e}") from None

    # ------------------------------------------------------------------ the narration
    def narration(self, narrated: list[tuple[float, str]], total: float, out: Path, cancel: CancelToken) -> Path:
        """The narration track written to `out` (`generation.narration`): each (start, text) said by the narrator at
        its start through the same `Voices` and line cache as the lines, so a changed narration voices that line
        only."""
        from generation.narration import NarrationUnavailable, narration_track

        try:
            narration_track(narrated, total, out, voices=self._voices(), cancel=cancel)
        except NarrationUnavailable as e:
            raise StudioError(str(e)) from None
        return out

    # ------------------------------------------------------------------ hearing some stems only
    def stems_film(self, film: Path, stems: dict[str, Path], chosen: list[str], mix_lufs: float) -> Path:
        """The film with only the `chosen` stems in its sound (the screening room's solo and mute), kept in the
        media store (the page plays it) and found again by (film, stems, choice)."""
        import json

        from generation.audio.mix import STEMS
        from storage.fileio import atomic_write

        chosen = [name for name in STEMS if name in chosen]
        if not chosen or any(name not in stems for name in chosen):
            raise StudioError(f"choose stems this film has: {', '.join(stems) or 'none (the film is silent)'}")
        k = _seed_key(film.name, *(stems[n].name for n in STEMS if n in stems), *chosen)
        index = self.ctx.config.sound_dir / "heard" / f"{k}.json"
        if index.is_file():
            known = self.ctx.media.path(json.loads(index.read_text())["sha256"], "mp4")
            if known.is_file():
                return known
        work = self.ctx.media.scratch()
        try:
            made = mix_stems(film, stems, chosen, mix_lufs, work / "film.mp4")
            sha, path = self.ctx.media.put_file(made, "mp4", move=True)
        finally:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
        index.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(index, json.dumps({"sha256": sha, "stems": chosen}).encode())
        return path

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
        from generation.audio.mix import MixSettings, Placed, joined
        from generation.audio.pcm import louder

        music_model, effects_model = self._model("music"), self._model("effects")
        voices = {n: c.voice for n, c in self.cast(board).items()}
        dialogue: list[Placed] = [Placed(0.0, narration)] if narration is not None else []
        music: list[Placed] = []
        effects: list[Placed] = []
        voiced = reused = made = kept = 0
        labels: list[str] = []
        # each shot's sounds, and each scene's cue, crossfade with the one before across the cut (`mix.joined`)
        sounding = [i for i, s in enumerate(shots) if s.sounds.strip()]
        heard = dict(zip(sounding, joined([(starts[i], ends[i]) for i in sounding], total), strict=True))
        for i, (shot, clip, start, end) in enumerate(zip(shots, clips, starts, ends, strict=True)):
            if shot.dialogue:
                windows = subtitles.split_window(start, end, shot.subtitles())
                for line, (t0, _, _) in zip(shot.dialogue, windows, strict=True):
                    if not line.voiced():  # a signed line is captioned only
                        continue
                    spoken = self._speak(line.line, _line_voice(voices, line.character), line.delivery, cancel)
                    voiced, reused = voiced + spoken.made, reused + (not spoken.made)
                    dialogue.append(Placed(t0, spoken.path))
                    labels.append("Piper voices" if "Piper" in spoken.label else "speech endpoint voices")
            if shot.sounds.strip():
                window = heard[i]
                seconds = window.seconds
                db = board.scene_of(shot.shot_id).effects_level
                if effects_model is None:
                    path, new = self._cached(
                        "effects",
                        dict(
                            words=shot.sounds,
                            seconds=seconds,
                            seed=shot.seed,
                            library=ambience.VERSION,
                            **({"db": db} if db else {}),
                        ),  # fmt: skip
                        lambda s=shot, n=seconds, g=db: louder(ambience.ambience(s.sounds, n, s.seed).sound, g),
                    )
                    labels.append(ambience.LABEL)
                else:
                    path, new = self._generated("effects", effects_model, shot.sounds, seconds, shot.seed, cancel, db)
                    labels.append(f"{self._label(effects_model)} effects")
                made, kept = made + new, kept + (not new)
                effects.append(Placed(window.start, path, seconds, *window.fades))
            if has_sound(clip):
                effects.append(Placed(start, clip, end - start))
                labels.append("the clips' own sound")
        film_ids = {s.shot_id: i for i, s in enumerate(shots)}
        if board.film.music_track:  # the creator's track under the whole film: no scene's cue or track plays
            seconds = round(total, 3)
            music.append(Placed(0.0, self._track(board.film.music_track, seconds), seconds))
            labels.append(TRACK_LABEL)
        bounds: list[float] = []  # the mix is cut into parts at the scenes' starts
        scored = []  # the scenes a cue or a track of their own plays over, and where
        for scene in board.scenes:
            present = [film_ids[s.shot_id] for s in scene.shots if s.shot_id in film_ids]
            bounds += [starts[present[0]]] if present else []
            if board.film.music_track or not present or not (scene.music.strip() or scene.music_track):
                continue
            scored.append((scene, (starts[present[0]], ends[present[-1]])))
        cues = joined([w for _, w in scored], total)
        for (scene, _), window in zip(scored, cues, strict=True):
            t0, seconds = window.start, window.seconds
            db = scene.music_level
            if scene.music_track:  # the creator's track for this scene, instead of its cue
                music.append(Placed(t0, self._track(scene.music_track, seconds, db), seconds, *window.fades))
                labels.append(TRACK_LABEL)
                continue
            seed = _seed(scene.scene_id)
            if music_model is None:
                path, new = self._cached(
                    "music",
                    dict(words=scene.music, seconds=seconds, seed=seed, **({"db": db} if db else {})),
                    lambda w=scene.music, n=seconds, sd=seed, g=db: louder(score.compose(w, n, sd), g),
                )
                labels.append(score.LABEL)
            else:
                path, new = self._generated("music", music_model, scene.music, seconds, seed, cancel, db)
                labels.append(f"{self._label(music_model)} music")
            made, kept = made + new, kept + (not new)
            music.append(Placed(t0, path, seconds, *window.fades))
        if not (dialogue or music or effects):
            return None
        opts = board.film
        settings = MixSettings(
            target=TARGETS[opts.loudness],
            music_db=opts.music_level,
            effects_db=opts.effects_level,
            ducking=opts.ducking,
            headroom=AAC_HEADROOM,
            channels=self.CHANNELS[opts.channels],
        )
        mixed = self._mixed((dialogue, music, effects), total, bounds, settings, scratch, cancel)
        if mixed is None:  # every stem silent (a clip's silent sound track): the film has no sound
            return None
        loud = mixed.loudness
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
            parts_mixed=mixed.parts_mixed,
            parts_reused=mixed.parts_reused,
        )
        return FilmSound(mixed.path, summary, mixed.stems)

    def _mixed(
        self,
        stems: tuple[list, list, list],
        total: float,
        bounds: list[float],
        settings,
        scratch: Path,
        cancel: CancelToken,
    ):
        """The mix in `scratch` from parts cut at `bounds` (the scenes' starts), each part found in the part cache
        (`sound_dir/parts`) when the same pieces sit in it with the same settings, else mixed now; None when every
        stem is silent."""
        from generation.audio.mix import mix
        from storage.fileio import file_sha256

        def identity(path: Path) -> str:  # lines, cues and clips are named by their content; the narration is hashed
            return path.name if path.parent != scratch else file_sha256(path)

        try:
            dialogue, music, effects = stems
            return mix(
                dialogue, music, effects, total, scratch / "mix.wav", scratch / "stems", settings, cancel,
                bounds=bounds, cache=self.ctx.config.sound_dir / "parts", identity=identity,
            )  # fmt: skip
        except ValueError:
            return None

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

    def _track(self, sha: str, seconds: float, db: float = 0.0) -> Path:
        """An uploaded track cut to `seconds` (silence after a shorter one) as a 48 kHz WAV in the sound cache with
        its own channels (a stereo track stays stereo in the mix), `db` louder (its scene's music level). Decoding
        stops at `seconds`: a track from an archive is decoded no further than it plays."""
        import numpy as np

        from generation.audio.pcm import RATE, Sound, decode, louder

        path = self.ctx.media.find(sha)
        if path is None:
            raise StudioError(f"the uploaded track {sha[:12]}… is not in the media store: upload it again")

        def cut() -> Sound:
            try:
                samples = decode(path, RATE, seconds, stereo=True)
            except ValueError as e:
                raise StudioError(f"uploaded track: {e}") from None
            n = round(seconds * RATE)
            padded = np.pad(samples[:n], ((0, max(0, n - len(samples))), (0, 0)))
            return louder(Sound(padded if padded.shape[1] == 2 else padded[:, 0], RATE, TRACK_LABEL), db)

        parts = dict(track=sha, seconds=seconds, channels="own", **({"db": db} if db else {}))
        return self._cached("tracks", parts, cut)[0]

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
        self, role: str, model, words: str, seconds: float, seed: int, cancel: CancelToken, db: float = 0.0
    ) -> tuple[Path, bool]:
        """A cue (music) or a shot's sounds (effects) made by `model` at 48 kHz in the channels it makes (a stereo
        model's two kept), `db` louder (its scene's level),
        cached by the words, the length, the seed, the level and the model (its folder, resolved); a failure is one
        line, never the temp sound instead."""
        from generation.audio.families import make
        from generation.audio.pcm import louder
        from generation.base import RenderError

        where = Path(model.model).expanduser()
        model_id = str(where.resolve()) if where.exists() else model.model

        def generate():
            try:
                return louder(make(model, words, seconds, seed, cancel=cancel), db)
            except RenderError as e:
                raise StudioError(f"{role}_model: {e}") from None

        parts = dict(
            words=words, seconds=seconds, seed=seed, model=model_id, channels="own", **({"db": db} if db else {})
        )
        return self._cached(role, parts, generate)

    def _cached(self, kind: str, parts: dict, make) -> tuple[Path, bool]:
        """(the WAV for `parts`, whether it was made now): made once by `make()` (a Sound) and kept by content."""
        from generation.audio.pcm import key, write_wav

        path = self.ctx.config.sound_dir / kind / f"{key(kind=kind, **parts)}.wav"
        if path.is_file():
            return path, False
        sound = make()
        write_wav(path, sound.samples, sound.rate)
        return path, True

    # ------------------------------------------------------------------ the described track
    def described_track(
        self,
        board: Storyboard,
        shots: list[Shot],
        starts: list[float],
        ends: list[float],
        total: float,
        sound: FilmSound | None,
        scratch: Path,
        cancel: CancelToken,
    ) -> Described:
        """The film's second audio track for viewers who cannot see (WCAG 2.2 SC 1.2.5): each shot's description
        voiced by the narrator (cached like lines) and said by `generation.audio.described` in a gap between the lines
        of its shot (`fit_gap`: DESCRIPTION_MARGIN from a line, its ramps inside the gap), the mix ducked under it; one
        that fits no gap is left out and flagged, never said over a line. `sound`: the film's mix (None: silence; the
        track then has the film options' channels)."""
        from generation.audio.described import Description, described_track
        from generation.audio.loudness import TARGETS
        from storage.schema import DESCRIPTION_RAMP, fit_gap

        said: list[Description] = []
        voiced = reused = 0
        for shot, start, end in zip(shots, starts, ends, strict=True):
            if not shot.description:
                continue
            cancel.raise_if_cancelled()
            spoken = self._speak(shot.description, CharacterVoice(), "", cancel)
            voiced, reused = voiced + spoken.made, reused + (not spoken.made)
            said.append(Description(shot.shot_id, start, end, spoken.path, spoken.seconds))
        track = described_track(
            said,
            sound.path if sound is not None else None,
            sound.stems["dialogue"] if sound is not None else None,
            total,
            self.CHANNELS[board.film.channels],
            TARGETS[board.film.loudness],
            AAC_HEADROOM,
            DESCRIPTION_RAMP,
            fit_gap,
            scratch / "described.wav",
            cancel,
        )
        flagged = [
            f"shot {d.shot_id} description: takes {d.seconds:.1f} s to say; the longest gap between its lines holds "
            f"{room:.1f} s (left out of the described track)"
            for d, room in track.left_out
        ]
        return Described(track.path, track.placed, flagged, voiced, reused, track.loudness)
