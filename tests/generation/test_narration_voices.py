"""The narration goes through the characters' `Voices`: its lines land in the same line cache, under the narrator's
voice at Piper's full level, and a render after it speaks nothing again."""

import numpy as np
import pytest

from generation import narration
from generation.audio.pcm import read_wav
from generation.audio.voices import Voices

pytestmark = pytest.mark.slow  # loads the 60 MB Piper voice


def test_narration_lines_are_voiced_once_in_the_line_cache(tmp_path):
    voices = Voices(tmp_path / "lines")
    items = [(0.2, "The storm came at dusk."), (2.0, "The boats came home.")]
    lengths = narration.narration_track(items, 4.0, tmp_path / "a.wav", voices=voices)
    cached = sorted(p.name for p in (tmp_path / "lines").iterdir())
    keys = sorted(f"{voices.line_key(t, narration.NARRATOR, '', narration.LEVEL)}.wav" for _, t in items)
    assert cached == keys  # one line each, keyed by the narrator's voice and level
    again = [voices.speak(t, narration.NARRATOR, "", level=narration.LEVEL) for _, t in items]
    assert not any(s.made for s in again) and [round(s.seconds, 3) for s in again] == [round(x, 3) for x in lengths]
    narration.narration_track(items, 4.0, tmp_path / "b.wav", voices=voices)
    first, rate = read_wav(tmp_path / "a.wav")
    second, _ = read_wav(tmp_path / "b.wav")
    assert rate == narration.sample_rate() and np.array_equal(first, second)  # the same lines, read back
    # said at Piper's full level: louder than the same words as a line without delivery words (0.8)
    plain = read_wav(voices.speak(items[0][1], narration.NARRATOR).path)[0]
    said = read_wav(again[0].path)[0]
    assert np.abs(said).max() == pytest.approx(np.abs(plain).max() / 0.8, rel=0.05)
