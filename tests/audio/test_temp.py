"""The temp score and temp effects: read from words, deterministic for their seed, varied per cue, labelled."""

import numpy as np
import pytest

from generation.audio.ambience import ambience, kinds_in
from generation.audio.score import compose, plan


def spectrum_band(samples, rate, low, high):
    s = np.abs(np.fft.rfft(samples)) ** 2
    f = np.fft.rfftfreq(len(samples), 1 / rate)
    return s[(f >= low) & (f < high)].sum() / s.sum()


def test_words_set_mode_tempo_and_instruments():
    p = plan("tense, slow strings with a heartbeat drum", 1)
    assert (p.mode, p.bpm, p.instruments, p.percussion) == ("minor", 70, ("strings",), True)
    q = plan("hopeful piano, 128 bpm", 1)
    assert (q.mode, q.bpm, q.instruments, q.percussion) == ("major", 128, ("piano",), False)


def test_a_cue_is_deterministic_for_its_seed_and_varies_with_cue_and_seed():
    a = compose("melancholy piano, slow", 4.0, seed=7)
    b = compose("melancholy piano, slow", 4.0, seed=7)
    assert a.label == "temp score" and a.rate == 48000 and len(a.samples) == 4 * 48000
    assert np.array_equal(a.samples, b.samples)
    other_cue = compose("triumphant brass, fast", 4.0, seed=7)
    other_seed = compose("melancholy piano, slow", 4.0, seed=8)
    for other in (other_cue, other_seed):
        assert np.abs(other.samples - a.samples).mean() > 0.01
    assert np.abs(a.samples).max() > 0.2


def test_tempo_words_change_the_pulse():
    """Percussion hits once a beat: the onset envelope's strongest period is the BPM asked for."""
    for words, bpm in (("slow drums", 70), ("frantic drums", 168)):
        s = compose(words, 8.0, seed=1, rate=8000)
        env = np.abs(s.samples).reshape(-1, 80).mean(axis=1)  # 100 Hz envelope
        env = env - env.mean()
        ac = np.correlate(env, env, "full")[len(env) - 1 :]
        lags = np.arange(len(ac))
        window = (lags >= 100 * 60 / 200) & (lags <= 100 * 60 / 50)
        strong = ac[window] >= 0.7 * ac[window].max()  # the first strong period (the bar's is as strong)
        period = lags[window][np.argmax(strong)]
        assert 6000 / period == pytest.approx(bpm, rel=0.05)


def test_ambience_kinds_are_shaped_differently_and_labelled():
    assert kinds_in("rain on the tin roof") == ("rain",)
    assert kinds_in("a quiet afternoon") == ("room",)
    assert kinds_in("a storm at sea") == ("rain", "wind", "sea")
    rain = ambience("rain", 3.0, seed=1)
    wind = ambience("wind", 3.0, seed=1)
    assert rain.sound.label == wind.sound.label == "temp effects"
    assert spectrum_band(rain.sound.samples, 48000, 2000, 12000) > 0.5  # hiss and droplets: high
    assert spectrum_band(wind.sound.samples, 48000, 0, 500) > 0.8  # wind: low rumble
    again = ambience("rain", 3.0, seed=1)
    assert np.array_equal(again.sound.samples, rain.sound.samples)
    assert not np.array_equal(ambience("rain", 3.0, seed=2).sound.samples, rain.sound.samples)
