"""What critics hear (app.services.watching fills FilmView.hearing), through the Studio with the animatic and the offline
critics: each shot's lines at their times on the film's timeline (a title card shifts them), the scene's cue and
what made it, the facts measured on the film's own sound, each voice's pitch and the mix as a WAV for the screening;
a scoped screening hears only its shots; a render without sound has lines and cues but no facts; a film with
nothing to hear has no hearing."""

from __future__ import annotations

import wave
from dataclasses import replace
from pathlib import Path

import pytest

from agents.base import FilmView
from generation.audio.listen import semitones
from storage.schema import Character, FilmOptions, Line, Scene, Scope, Shot, Storyboard
from tests.conftest import tiny_board

KEEPER = "The lamp is lit tonight and the sea is calm."  # 10 words
WHALE = "I have sung to this light for a hundred years."
TITLE = 1.0


def sound_board(**film) -> Storyboard:
    def shot(i, lines=(), **kw):
        return Shot(shot_id=f"s{i}", prompt=f"A lighthouse, view {i}", duration=4.0, seed=i, dialogue=list(lines), **kw)

    return Storyboard(
        title="Sound",
        characters=[
            Character(name="Keeper", description="old man in a yellow coat"),
            Character(name="Whale", description="a grey whale"),
        ],
        scenes=[
            Scene(
                scene_id="a",
                music="low cello, slow and sad",
                shots=[
                    shot(1, [Line(character="Keeper", line=KEEPER)], characters=["Keeper"]),
                    shot(2, [Line(character="Whale", line=WHALE, delivery="softly")], characters=["Keeper"]),
                ],
            ),
            Scene(scene_id="b", shots=[shot(3)]),  # nothing said, no music, no sounds: silence
        ],
        fps=8,
        width=64,
        height=36,
        film=FilmOptions(**film),
    )


class Listener:
    """The offline critic, keeping what each screening gave it to hear (and whether the mix's WAV was there)."""

    def __init__(self, critic) -> None:
        self.critic, self.mode, self.films = critic, critic.mode, []
        self.wav_seconds: list[float | None] = []

    def critique(self, persona, film: FilmView, ctx=None):
        self.films.append(film)
        audio = film.hearing.audio if film.hearing else None
        if audio and Path(audio).is_file():
            with wave.open(audio) as w:
                self.wav_seconds.append(w.getnframes() / w.getframerate())
        else:
            self.wav_seconds.append(None)
        return self.critic.critique(persona, film, ctx)


@pytest.fixture
def listening(studio):
    listener = Listener(studio.agents.critic)
    studio.ctx._agents = replace(studio.agents, critic=listener)
    return studio, listener


def test_a_screening_hears_lines_cues_and_measured_facts(listening):
    st, heard = listening
    v = st.create_from_storyboard(sound_board(title_card=True, title_seconds=TITLE), panel=["teen_scroller"])
    render = st.render(v.project_id)
    assert render.audio is not None
    st.critique(v.project_id)
    h = heard.films[-1].hearing
    assert h is not None and [s.shot_id for s in h.shots] == ["s1", "s2", "s3"]
    s1, s2, s3 = h.shots
    print(h)
    # times on the film's timeline: the title card comes first
    assert (s1.start, s1.end, s2.start, s3.end) == (TITLE, TITLE + 4, TITLE + 4, TITLE + 12)
    (k,) = s1.lines
    assert (k.character, k.line, k.start, k.end, k.off_screen) == ("Keeper", KEEPER, TITLE, TITLE + 4, False)
    (w,) = s2.lines
    assert (w.character, w.delivery, w.off_screen) == ("Whale", "softly", True)  # not among s2's characters
    assert (s1.music, s1.music_label, s3.music, s3.lines) == ("low cello, slow and sad", "temp score", "", ())
    # measured on the film's sound: the ducked music is well under the lines, scene b is silent
    assert s1.facts is not None and s2.facts is not None and s3.facts is not None
    assert s1.facts.speech_to_music_db is not None and s1.facts.speech_to_music_db >= 10
    # Piper's installed voice says KEEPER's 10 words in 2.36 s (measured on its WAV: speech from 0.06 to 2.42 s)
    assert s1.facts.words_per_s == pytest.approx(10 / 2.36, rel=0.1)
    assert s1.facts.loudness_lufs is not None and s1.facts.loudness_lufs > -30
    assert s3.facts.loudness_lufs is None and s3.facts.longest_silence_s >= 3.8
    assert not any(s.facts.clipped for s in h.shots if s.facts)
    assert (h.loudness_lufs, h.target_lufs) == (render.audio.loudness_lufs, -14.0)
    assert "Piper voices" in h.label and "temp score" in h.label
    assert set(h.voice_pitch_hz) == {"Keeper", "Whale"}
    assert semitones(h.voice_pitch_hz["Keeper"], h.voice_pitch_hz["Whale"]) >= 3  # cast apart (app.services.audio)
    assert heard.wav_seconds[-1] == pytest.approx(TITLE + 12, abs=0.1)  # the mix, in the screening's folder
    assert not Path(h.audio).exists()  # gone with the screening

    st.critique(v.project_id, scope=Scope(scenes=["b"]))
    scoped = heard.films[-1].hearing
    assert [s.shot_id for s in scoped.shots] == ["s3"] and scoped.shots[0].start == TITLE + 8
    assert scoped.voice_pitch_hz == h.voice_pitch_hz  # voices are the film's


def test_a_render_without_sound_is_heard_as_written_and_a_film_with_nothing_to_hear_is_not(listening):
    st, heard = listening
    v = st.create_from_storyboard(sound_board(), panel=["teen_scroller"])
    render = st.render(v.project_id)
    v = st.version(v.project_id)
    older = render.model_copy(update={"audio": None})  # as a render made before films had sound
    h = st._watching.film_view(v, older).hearing
    assert h is not None and "no sound in this render" in h.label
    assert [len(s.lines) for s in h.shots] == [1, 1, 0] and h.shots[0].music == "low cello, slow and sad"
    assert all(s.facts is None for s in h.shots) and h.audio is None and h.voice_pitch_hz == {}
    assert h.shots[0].music_label == ""  # not heard: nothing made it

    quiet = st.create_from_storyboard(tiny_board(2), panel=["teen_scroller"])  # narration is off: nothing to hear
    assert st.render(quiet.project_id).audio is None
    st.critique(quiet.project_id)
    assert heard.films[-1].hearing is None
