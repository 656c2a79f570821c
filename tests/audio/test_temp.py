"""The temp score and temp effects: read from words, deterministic for their seed, varied per cue, labelled."""

import numpy as np
import pytest

from generation.audio.ambience import EFFECTS, ambience, choose, kinds_in
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


@pytest.mark.parametrize(
    "words", ["melancholy piano, slow", "frantic drums and brass, 150 bpm", "harp arpeggio, 96 bpm"]
)
def test_a_note_made_once_per_cue_sounds_as_made_anew(monkeypatch, words):
    """Each note's samples are made once per cue and added wherever it sounds again: the cue is the one made with
    every note made anew, to the bit (over a cut-off last bar, at two rates)."""
    from generation.audio import score

    made = {rate: compose(words, 9.3, seed=5, rate=rate).samples for rate in (48000, 22050)}
    add, kick = score._add, score._kick
    monkeypatch.setattr(score, "_add", lambda out, notes, *a: add(out, {}, *a))
    monkeypatch.setattr(score, "_kick", lambda out, notes, *a: kick(out, {}, *a))
    for rate, samples in made.items():
        assert np.array_equal(samples, compose(words, 9.3, seed=5, rate=rate).samples)


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
    assert kinds_in("a storm at sea") == ("sea", "rain", "wind", "thunder")
    rain = ambience("rain", 3.0, seed=1)
    wind = ambience("wind", 3.0, seed=1)
    assert rain.sound.label == wind.sound.label == "temp effects"
    assert spectrum_band(rain.sound.samples, 48000, 2000, 12000) > 0.5  # hiss and droplets: high
    assert spectrum_band(wind.sound.samples, 48000, 0, 500) > 0.8  # wind: low rumble
    again = ambience("rain", 3.0, seed=1)
    assert np.array_equal(again.sound.samples, rain.sound.samples)
    assert not np.array_equal(ambience("rain", 3.0, seed=2).sound.samples, rain.sound.samples)


def centroid(x, rate=48000):
    s = np.abs(np.fft.rfft(x)) ** 2
    return float((np.fft.rfftfreq(len(x), 1 / rate) * s).sum() / s.sum())


def flatness(x):
    """Spectral flatness (geometric over arithmetic mean power, 0 tonal … 1 noise), on 4096-sample frames."""
    frames = x[: len(x) // 4096 * 4096].reshape(-1, 4096) * np.hanning(4096)
    p = np.abs(np.fft.rfft(frames, axis=1)) ** 2 + 1e-12
    return float(np.mean(np.exp(np.mean(np.log(p), axis=1)) / np.mean(p, axis=1)))


def envelope_period(x, rate=48000, low=0.2, high=2.0):
    """The strongest period (s) of the 100-Hz envelope between `low` and `high` seconds, and its strength (0-1)."""
    env = np.abs(x[: len(x) // (rate // 100) * (rate // 100)]).reshape(-1, rate // 100).mean(axis=1)
    env = env - env.mean()
    ac = np.correlate(env, env, "full")[len(env) - 1 :]
    ac = ac / ac[0]
    lags = np.arange(round(low * 100), round(high * 100))
    best = lags[np.argmax(ac[lags])]
    return best / 100, float(ac[best])


def effect(words, seconds=6.0, seed=3):
    a = ambience(words, seconds, seed)
    assert a.sound.label == "temp effects"
    return a.sound.samples


def test_each_effect_sounds_like_its_words():
    """Measured, not listened to: where the energy sits, whether it has a pitch, what rhythm it has."""
    static, gulls_water = effect("radio static"), effect("gulls; gentle water")
    print(f"static: centroid {centroid(static):.0f} Hz; gulls and water: {centroid(gulls_water):.0f} Hz")
    assert centroid(static) > 1500 and spectrum_band(static, 48000, 0, 300) < 0.15  # hiss and crackle, no rumble
    assert 600 < centroid(gulls_water) < 3000 and spectrum_band(gulls_water, 48000, 0, 300) < 0.3
    assert flatness(gulls_water) < 0.5 * flatness(static)  # the cries have a pitch
    assert centroid(static) > 1.5 * centroid(gulls_water)
    rain, wind = effect("rain"), effect("wind")
    assert centroid(rain) > 2 * centroid(wind)  # rain's hiss is high, the wind's body low
    thunder = effect("thunder", 8.0)
    assert spectrum_band(thunder, 48000, 0, 200) > 0.5
    steps = effect("footsteps on gravel")
    period, strength = envelope_period(steps)
    assert 0.45 <= period <= 0.65 and strength > 0.3  # a walking pace
    engine = effect("a boat engine idling")
    assert spectrum_band(engine, 48000, 0, 500) > 0.8 and flatness(engine) < 0.1  # low and periodic
    bells = effect("a church bell")
    assert flatness(bells) < 0.05 and 200 < centroid(bells) < 2000  # ringing partials
    birds = effect("birdsong")
    assert centroid(birds) > 2500 and spectrum_band(birds, 48000, 2000, 7000) > 0.8  # chirps, high


def test_the_effects_are_told_apart_by_their_spectra():
    """Every pair of effects differs in where its energy sits or how tonal it is."""
    features = {}
    for kind in EFFECTS:
        x = ambience(kind, 6.0, 1).sound.samples
        features[kind] = (np.log2(centroid(x)), flatness(x), spectrum_band(x, 48000, 0, 300))
    kinds = list(features)
    for i, a in enumerate(kinds):
        for b in kinds[i + 1 :]:
            fa, fb = features[a], features[b]
            apart = abs(fa[0] - fb[0]) > 0.3 or abs(fa[1] - fb[1]) > 0.1 or abs(fa[2] - fb[2]) > 0.15
            assert apart, f"{a} and {b} measure alike: {fa} / {fb}"


def test_words_choose_effects_by_their_stems_and_say_how():
    assert kinds_in("Seagulls crying; waves lapping") == ("gulls", "sea")
    assert kinds_in("crackling wireless") == ("static",)
    assert kinds_in("boots on the stairs and a ringing bell") == ("footsteps", "bells")
    assert kinds_in("traffic outside") == ("engine",)
    assert choose("rain")[0] == ("rain", "rain", "words")
