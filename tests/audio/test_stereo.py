"""The stereo mix, listened to by numbers: two channels; the dialogue centred (left and right the same samples, the
mix over a spoken window correlated near 1 and balanced within half a dB); music and effects wide (correlation
clearly under 1, side energy a few dB under the mid); the loudness target and the true-peak ceiling met on the
stereo signal (ebur128 over both channels); ducking measured in a line's window; a mono delivery one channel at
the same balance; a stereo source kept as its two channels; the parts' cache working on stereo parts."""

from __future__ import annotations

import wave

import numpy as np
import pytest

from generation.audio.listen import integrated
from generation.audio.loudness import TARGETS, measure
from generation.audio.mix import MixSettings, Placed, mix
from generation.audio.pcm import RATE, decode, read_frames, rms_db, write_wav
from generation.audio.stereo import EFFECTS_SIDE, MUSIC_SIDE, WIDTH, image, placed, widen
from tests.audio.test_mix import AGREES_WITH_EBUR128, SECONDS, film, windows  # noqa: F401  (the module's pieces: real Piper lines)

GAP = slice(round(3.5 * RATE), round(5.0 * RATE))  # between the two lines, inside scene 1: music and rain only


def noise(seconds: float, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(round(seconds * RATE)) * 0.1).astype(np.float32)


def channels(path) -> int:
    with wave.open(str(path), "rb") as w:
        return w.getnchannels()


# ---------------------------------------------------------------------------------------------- the image
def sine(hz: float, seconds: float) -> np.ndarray:
    return (0.3 * np.sin(2 * np.pi * hz * np.arange(round(seconds * RATE)) / RATE)).astype(np.float32)


@pytest.mark.parametrize("source", ["noise", "440 Hz", "3 kHz", "a chord"])
def test_a_mono_piece_is_widened_balanced_at_its_own_power(source):
    """Noise, a single sine, a chord: each channel at the source's level (a sine is not panned), correlated at
    (1 - w²)/(1 + w²) where a band leans fully, the side measurable, and the mono fold-down the source at cos θ (no
    comb)."""
    x = {
        "noise": noise(4.0),
        "440 Hz": sine(440, 4.0),
        "3 kHz": sine(3000, 4.0),
        "a chord": sine(262, 4.0) + sine(330, 4.0) + sine(392, 4.0),
    }[source]
    pair = widen(x, MUSIC_SIDE)
    inner = slice(RATE // 2, -RATE // 2)  # the filters' 171-ms reach at the ends left out
    seen = image(pair[inner])
    expected = (1 - WIDTH**2) / (1 + WIDTH**2)  # 0.6
    print(f"{source} widened: {seen}")
    # never narrower than the bass and the turns between bands make it (a sine inside a band: exactly `expected`)
    assert expected - 0.01 <= seen.correlation <= 0.8 and abs(seen.balance_db) < 0.05
    assert seen.side_db >= 20 * np.log10(WIDTH) - 3  # the side within 3 dB of its -6 dB under the mid
    for c in (0, 1):  # each channel keeps the source's power: the mix's balance is the mono mix's
        assert rms_db(pair[inner, c]) == pytest.approx(rms_db(x[inner]), abs=0.1)
    fold = pair[inner].mean(axis=1)  # (L + R) / 2: the source at cos θ = 1/sqrt(1 + w²), no comb
    assert rms_db(fold - x[inner] / np.sqrt(1 + WIDTH**2)) < rms_db(x) - 25
    assert image(widen(x, MUSIC_SIDE, width=0.0)).correlation == pytest.approx(1.0)


def test_the_bass_stays_centred_and_music_and_effects_lean_apart():
    low = widen(sine(100, 3.0), MUSIC_SIDE)[RATE // 2 : -RATE // 2]
    assert image(low).correlation > 0.999  # under BASS: centred
    x = sine(200, 3.0)  # in the first band over the bass: music leans one way, effects the other
    music, effects = widen(x, MUSIC_SIDE), widen(x, EFFECTS_SIDE)
    assert np.allclose(music[:, 0], effects[:, 1], atol=1e-4) and not np.allclose(music[:, 0], music[:, 1], atol=1e-2)


def test_dialogue_is_centred_and_a_stereo_source_is_kept():
    x = noise(1.0)
    assert np.array_equal(placed(x, 2, None)[:, 0], placed(x, 2, None)[:, 1])  # a line: the same both sides
    two = np.stack([x, noise(1.0, 1)], axis=1)
    assert np.array_equal(placed(two, 2, MUSIC_SIDE), two)  # a stereo cue: its own channels, not widened again
    assert placed(two, 1, MUSIC_SIDE).shape == (len(x), 1)  # a mono delivery: folded down


def test_decoding_keeps_a_sources_channels(tmp_path):
    t = np.arange(RATE) / RATE
    left, right = 0.5 * np.sin(2 * np.pi * 440 * t), 0.25 * np.sin(2 * np.pi * 660 * t)
    pair = write_wav(tmp_path / "pair.wav", np.stack([left, right], axis=1).astype(np.float32), RATE)
    one = write_wav(tmp_path / "one.wav", left.astype(np.float32), RATE)
    got = decode(pair, RATE, stereo=True)
    assert got.shape == (RATE, 2)
    assert rms_db(got[:, 0]) - rms_db(got[:, 1]) == pytest.approx(6.02, abs=0.1)
    mono = decode(one, RATE, stereo=True)  # one channel at its own level (ffmpeg's -ac 2 would be 3 dB down)
    assert mono.shape == (RATE, 1) and rms_db(mono[:, 0]) == pytest.approx(rms_db(left), abs=0.05)


def test_loudness_sums_the_channels_as_ebur128_does(tmp_path):
    pair = np.stack([noise(5.0), 0.5 * noise(5.0, 1)], axis=1)
    path = write_wav(tmp_path / "pair.wav", pair, RATE)
    heard = measure(path).integrated_lufs
    mine = integrated(pair)
    print(f"stereo noise: listen {mine} LUFS, ebur128 {heard} LUFS; the left alone {integrated(pair[:, 0])}")
    assert mine == pytest.approx(heard, abs=0.1)
    assert mine - integrated(pair[:, 0]) == pytest.approx(10 * np.log10(1.25), abs=0.05)  # + the right's quarter


# ---------------------------------------------------------------------------------------------- the mix
# The tests below mix real Piper lines (marked slow).
def run(film, tmp_path, **settings):  # noqa: F811
    return mix(
        film["dialogue"], film["music"], film["effects"], SECONDS, tmp_path / "mix.wav", tmp_path / "work",
        MixSettings(**settings),
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["web", "ebu"])
def test_the_stereo_mix_centres_the_lines_and_spreads_the_music(film, tmp_path, preset):  # noqa: F811
    target = TARGETS[preset]
    result = run(film, tmp_path, target=target)
    assert channels(result.path) == 2 and all(channels(p) == 2 for p in result.stems.values())
    heard = measure(result.path)  # ebur128 over both channels
    print(f"{preset}: {heard} (blocks: {result.loudness}; {result.normalisation})")
    assert abs(heard.integrated_lufs - target.lufs) <= 1.0 and heard.true_peak_dbtp <= -1.0
    assert abs(result.loudness.integrated_lufs - heard.integrated_lufs) <= AGREES_WITH_EBUR128  # blocks of both
    assert abs(result.loudness.true_peak_dbtp - heard.true_peak_dbtp) <= 0.2
    mixed, _ = read_frames(result.path)
    dialogue, _ = read_frames(result.stems["dialogue"])
    assert np.array_equal(dialogue[:, 0], dialogue[:, 1])  # the dialogue stem: the same samples left and right
    for w in windows(film):
        spoken = image(mixed[w])
        print(f"over a line: {spoken}")
        assert spoken.correlation >= 0.97 and abs(spoken.balance_db) < 0.5
    between = image(mixed[GAP])
    music = image(read_frames(result.stems["music"])[0][GAP])
    effects = image(read_frames(result.stems["effects"])[0][GAP])
    print(f"between the lines: mix {between}; music {music}; effects {effects}")
    assert between.correlation < 0.85 and between.side_db > -15
    assert music.correlation < 0.85 and effects.correlation < 0.85
    assert abs(between.balance_db) < 0.5  # wide, not pushed to one side


@pytest.mark.slow
def test_ducking_is_measured_on_the_stereo_stems(film, tmp_path):  # noqa: F811
    ducked, plain = run(film, tmp_path / "on"), run(film, tmp_path / "off", ducking=False)
    line, _ = read_frames(ducked.stems["dialogue"])
    on, _ = read_frames(ducked.stems["music"])
    off, _ = read_frames(plain.stems["music"])
    for w in windows(film):
        for c in (0, 1):  # each channel ducked alike: the image does not move under a line
            said, under, unducked = rms_db(line[w, c]), rms_db(on[w, c]), rms_db(off[w, c])
            print(f"channel {c}: line {said:.1f}, music {under:.1f} ducked / {unducked:.1f} not")
            assert said - under >= 10 and unducked - under >= 6


@pytest.mark.slow
def test_a_mono_delivery_is_one_channel_at_the_same_balance(film, tmp_path):  # noqa: F811
    stereo, mono = run(film, tmp_path / "s"), run(film, tmp_path / "m", channels=1)
    assert channels(mono.path) == 1 and all(channels(p) == 1 for p in mono.stems.values())
    heard = measure(mono.path)
    assert abs(heard.integrated_lufs + 14.0) <= 1.0 and heard.true_peak_dbtp <= -1.0
    for name in ("dialogue", "music", "effects"):  # widening keeps each channel's power: the balance is the same
        s, m = read_frames(stereo.stems[name])[0], read_frames(mono.stems[name])[0]
        print(f"{name}: stereo L {rms_db(s[:, 0]):.2f} R {rms_db(s[:, 1]):.2f} dBFS, mono {rms_db(m[:, 0]):.2f}")
        for c in (0, 1):
            assert rms_db(s[:, c]) == pytest.approx(rms_db(m[:, 0]), abs=0.5)


@pytest.mark.slow
def test_a_stereo_cue_keeps_its_channels_and_a_changed_part_alone_is_mixed_again(film, tmp_path):  # noqa: F811
    """A stereo cue (a different tone in each channel, as an uploaded stereo track) plays as it is; stereo parts
    are cached: a changed line re-mixes its scene's part only."""
    t = np.arange(round(6.0 * RATE)) / RATE
    pair = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.3 * np.sin(2 * np.pi * 660 * t)], axis=1)
    cue = write_wav(tmp_path / "pair.wav", pair.astype(np.float32), RATE)
    music = [film["music"][0], Placed(6.0, cue, 6.0)]
    cache = tmp_path / "cache"
    first = mix(film["dialogue"], music, [], SECONDS, tmp_path / "a.wav", tmp_path / "a", bounds=[6.0], cache=cache)
    stem, _ = read_frames(first.stems["music"])
    span = stem[round(9.5 * RATE) : round(11.5 * RATE)]
    peaks = [float(np.argmax(np.abs(np.fft.rfft(span[:, c])))) * RATE / len(span) for c in (0, 1)]
    print(f"scene 2's music: left peaks at {peaks[0]:.0f} Hz, right at {peaks[1]:.0f} Hz")
    assert peaks == [pytest.approx(440, abs=2), pytest.approx(660, abs=2)]
    other = film["dialogue"][0].path
    moved = [film["dialogue"][0], Placed(film["dialogue"][1].start, other)]  # the second line in the other voice
    second = mix(moved, music, [], SECONDS, tmp_path / "b.wav", tmp_path / "b", bounds=[6.0], cache=cache)
    assert (first.parts_mixed, second.parts_mixed, second.parts_reused) == (2, 1, 1)
    assert channels(second.path) == 2 and abs(measure(second.path).integrated_lufs + 14.0) <= 0.1


@pytest.mark.slow
def test_a_stereo_models_sound_keeps_its_two_channels(audio_folders):
    """A model that makes two channels (Stable Audio, tiny and random-weight here) gives a stereo cue, also when
    its calls are crossfaded to a length longer than one call makes; the mix keeps it as it is."""
    from generation.audio.families import make
    from generation.pipelines import PipelineModel

    model = PipelineModel(audio_folders("stable_audio"), device="cpu")
    sound = make(model, "rain on a tin roof", 3.0, seed=3, steps=2)  # the tiny model makes 2 s a call: two calls
    assert sound.samples.shape == (round(3.0 * RATE), 2)
    assert not np.allclose(sound.samples[:, 0], sound.samples[:, 1], atol=1e-4)
    assert np.array_equal(placed(sound.samples, 2, MUSIC_SIDE), sound.samples)
