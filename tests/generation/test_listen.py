"""generation.audio.listen on synthetic signals whose answers are known: a sine's loudness (BS.1770: a full-scale
997 Hz sine in one channel is -3.01 LUFS), the relative gate, agreement with ffmpeg's ebur128, speech over music
at a set ratio, a silence of a set length, clipped samples, words over the time a line is spoken, and the pitch of
two harmonic 'voices'."""

from __future__ import annotations

import numpy as np
import pytest

from generation.audio.listen import (
    MAX_PAUSE,
    Spoken,
    Window,
    integrated,
    k_weighting,
    listen,
    median_pitch,
    semitones,
)
from generation.audio.loudness import measure
from generation.audio.pcm import RATE, write_wav


def tone(freq: float, seconds: float, amp: float) -> np.ndarray:
    t = np.arange(round(seconds * RATE)) / RATE
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def voice(f0: float, seconds: float, rms: float) -> np.ndarray:
    """A harmonic 'voice' (a band-limited sawtooth at f0) at a given RMS."""
    t = np.arange(round(seconds * RATE)) / RATE
    x = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 12))
    return (x * rms / np.sqrt(np.mean(x**2))).astype(np.float32)


def noise(seconds: float, rms: float, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(round(seconds * RATE)) * rms).astype(np.float32)


def put(track: np.ndarray, at: float, piece: np.ndarray) -> None:
    i = round(at * RATE)
    track[i : i + len(piece)] += piece


def test_k_weighting_is_the_standards_at_48khz():
    sos = k_weighting(48_000)
    assert sos[0, :3] == pytest.approx([1.53512485958697, -2.69169618940638, 1.19839281085285], abs=1e-9)
    assert sos[0, 4:] == pytest.approx([-1.69065929318241, 0.73248077421585], abs=1e-9)
    assert sos[1, 4:] == pytest.approx([-1.99004745483398, 0.99007225036621], abs=1e-9)


def test_filtered_in_chunks_the_blocks_are_one_passes():
    """sub_blocks filters 10 s at a time, carrying the filter's state: the blocks are those of one pass over the whole
    (an impulse just after a chunk's edge rings on into the next chunk), mono or stereo, at any rate; under one block
    of sound there is no block, and no loudness."""
    from scipy.signal import sosfilt

    from generation.audio.listen import CHUNK_BLOCKS, STEP, sub_blocks

    def one_pass(x, rate):
        weighted = sosfilt(k_weighting(rate), x.astype(np.float64).reshape(len(x), -1), axis=0)
        n = round(STEP * rate)
        m = len(weighted) // n
        return np.square(weighted[: m * n]).reshape(m, n, -1).mean(axis=1).sum(axis=1)

    rng = np.random.default_rng(7)
    for shape, rate in (((RATE * 25 + 123, 2), RATE), ((22050 * 13 + 5,), 22050)):
        x = (rng.standard_normal(shape) * 0.1).astype(np.float32)
        x[round(CHUNK_BLOCKS * STEP * rate) + 3] = 1.0
        assert len(sub_blocks(x, rate)) == int(len(x) / (STEP * rate)) > CHUNK_BLOCKS
        np.testing.assert_allclose(sub_blocks(x, rate), one_pass(x, rate), rtol=1e-12)
    assert len(sub_blocks(np.zeros(100, np.float32))) == 0 and integrated(np.zeros(100, np.float32)) is None


def test_after_a_sound_ends_in_digital_silence_the_filter_stays_out_of_subnormal_numbers():
    """A recursive filter's state decays towards zero after a sound stops; under ~1e-308 (subnormal numbers) every
    operation on it is dozens of times slower (bench/loudness_silence.py). The samples carry a DC offset far under
    any sound, so the K-weighted blocks of the silence stay normal numbers (the unguarded filter's are subnormal, or
    zero once squared); the loudness is the unguarded filter's, and the silence's blocks are far under the absolute
    gate."""
    from scipy.signal import sosfilt

    from generation.audio.listen import ABSOLUTE_GATE, STEP, gated_loudness, sub_blocks

    x = np.zeros((RATE * 30, 2), np.float32)
    x[: RATE // 2] = np.random.default_rng(3).standard_normal((RATE // 2, 2)) * 0.2
    z = sub_blocks(x)
    tail = z[round(3 / STEP) :]  # from 3 s on: the filter's ringing has long died away
    assert tail.min() >= np.finfo(np.float64).tiny
    assert tail.max() < 10 ** ((ABSOLUTE_GATE - 100) / 10)
    plain = sosfilt(k_weighting(RATE), x.astype(np.float64), axis=0)  # one pass, no offset
    n = round(STEP * RATE)
    z_plain = np.square(plain[: len(z) * n]).reshape(len(z), n, 2).mean(axis=1).sum(axis=1)
    assert np.abs(z_plain[round(3 / STEP) :]).max() < np.finfo(np.float64).tiny  # what the offset avoids
    assert gated_loudness(z) == gated_loudness(z_plain) == integrated(x)
    np.testing.assert_allclose(z[:5], z_plain[:5], rtol=1e-12)


@pytest.mark.parametrize("amp", [1.0, 0.5, 0.1, 0.01])
def test_a_sines_loudness(amp):
    assert integrated(tone(997, 5.0, amp)) == pytest.approx(20 * np.log10(amp) - 3.01, abs=0.05)


def test_the_relative_gate_leaves_out_the_quiet_part():
    loud, quiet = tone(997, 5.0, 0.1), tone(997, 5.0, 0.001)  # -23 and -63 LUFS: the quiet part is under -33
    # kept: the 47 blocks inside the loud part and the 3 across the edge (3/4, 2/4 and 1/4 of it loud: over -33)
    edge = 10 * np.log10((47 + 0.75 + 0.5 + 0.25) / 50)
    assert integrated(np.concatenate([loud, quiet])) == pytest.approx(-23.01 + edge, abs=0.02)
    ungated = 10 * np.log10(np.mean(np.concatenate([np.ones(50), np.full(50, 1e-4)])))
    assert ungated < edge - 2.5  # what no gate would say
    assert integrated(np.zeros(RATE * 3)) is None  # under the absolute gate: silence
    assert integrated(np.concatenate([loud, np.zeros(5 * RATE)])) == pytest.approx(-23.01 + edge, abs=0.02)


def test_agrees_with_ffmpegs_ebur128(tmp_path):
    x = np.concatenate([noise(4.0, 0.05), voice(150, 3.0, 0.2), noise(3.0, 0.003, seed=1), tone(60, 2.0, 0.4)])
    path = write_wav(tmp_path / "x.wav", x, RATE)
    ours, ffmpeg = integrated(x), measure(path).integrated_lufs
    print(f"BS.1770 here {ours:.2f} LUFS, ebur128 {ffmpeg:.2f} LUFS")
    assert ours == pytest.approx(ffmpeg, abs=0.15)


def film():
    """12 s: s1 a line (A, 120 Hz, with a 0.3 s pause) 10 dB over the music; s2 a line (B, 200 Hz) with the music
    as loud as it, and a clipped burst; s3 no line, a 1.5 s silence between sounds, and a sound on the dialogue stem
    after a long pause (narration, not B's line)."""
    n = 12 * RATE
    dialogue, music, effects = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    put(dialogue, 0.5, voice(120, 1.0, 0.1))
    put(dialogue, 1.8, voice(120, 0.7, 0.1))
    put(music, 0.0, noise(4.0, 0.1 / 10 ** (10 / 20)))
    put(dialogue, 4.2, voice(200, 2.0, 0.1))
    put(music, 4.0, noise(4.0, 0.1, seed=2))
    put(effects, 7.0, np.clip(tone(440, 0.2, 1.5), -1, 1))
    put(effects, 8.0, noise(0.5, 0.05, seed=3))
    put(effects, 11.5, noise(0.5, 0.05, seed=4))
    put(dialogue, 10.0, voice(300, 1.0, 0.1))
    mix = np.clip(dialogue + music + effects, -1, 1)
    windows = [
        Window("s1", 0.0, 4.0, (Spoken("A", 6, 0.0, 4.0),)),
        Window("s2", 4.0, 8.0, (Spoken("B", 5, 4.0, 8.0),)),
        Window("s3", 8.0, 12.0),
    ]
    return mix, dialogue, music, windows


def test_a_films_windows_measured():
    mix, dialogue, music, windows = film()
    heard = listen(mix, windows, dialogue, music)
    s1, s2, s3 = (heard.windows[k] for k in ("s1", "s2", "s3"))
    print(heard)
    assert s1.speech_to_music_db == pytest.approx(10.0, abs=0.5)
    assert s2.speech_to_music_db == pytest.approx(0.0, abs=0.5)
    assert s3.speech_to_music_db is None and s3.words_per_s is None  # no line
    # A's line runs 0.5-2.5 s (its 0.3 s pause kept): 6 words in 2.0 s; B's 4.2-6.2 s, then the sound at 10 s
    # comes after more than MAX_PAUSE of quiet and is not B's
    assert 10.0 - 6.2 > MAX_PAUSE
    assert (s1.spoken_s, s1.words_per_s) == (pytest.approx(2.0, abs=0.03), pytest.approx(3.0, abs=0.05))
    assert (s2.spoken_s, s2.words_per_s) == (pytest.approx(2.0, abs=0.03), pytest.approx(2.5, abs=0.05))
    assert s3.longest_silence_s == pytest.approx(1.5, abs=0.06)  # 8.5-10.0; 11.0-11.5 is shorter
    assert s1.longest_silence_s == 0.0  # the music never stops
    assert s2.clipped and s2.clipped_samples > 100 and not s1.clipped and not s3.clipped
    assert heard.pitch_hz == {"A": pytest.approx(120, rel=0.01), "B": pytest.approx(200, rel=0.01)}
    assert s1.loudness_lufs is not None and s3.loudness_lufs is not None
    assert s1.loudness_lufs == pytest.approx(integrated(mix[: 4 * RATE]), abs=0.01)
    assert heard.loudness_lufs == pytest.approx(integrated(mix), abs=0.01)


def test_without_stems_or_music_speech_is_not_guessed():
    mix, dialogue, _, windows = film()
    alone = listen(mix, windows, dialogue, None)
    assert alone.windows["s1"].speech_to_music_db is None  # no music under the line: no ratio
    assert alone.windows["s1"].words_per_s == pytest.approx(3.0, abs=0.05)
    blind = listen(mix, windows)
    assert blind.pitch_hz == {} and blind.windows["s1"].words_per_s is None
    assert blind.windows["s1"].loudness_lufs == pytest.approx(alone.windows["s1"].loudness_lufs)


def test_a_silent_window_and_a_line_spilling_past_its_window():
    n = 8 * RATE
    dialogue = np.zeros(n, np.float32)
    put(dialogue, 1.0, voice(110, 3.0, 0.1))  # 1.0-4.0 s, its window ends at 2.0
    windows = [
        Window("s1", 0.0, 2.0, (Spoken("A", 9, 1.0, 2.0),)),
        Window("s2", 2.0, 5.0),
        Window("s3", 5.0, 8.0),
    ]
    heard = listen(dialogue, windows, dialogue, np.zeros(n, np.float32))
    assert heard.windows["s1"].words_per_s == pytest.approx(3.0, abs=0.05)  # 9 words over the 3 s it is said
    assert heard.windows["s3"].loudness_lufs is None and heard.windows["s3"].longest_silence_s == pytest.approx(3.0)


def test_pitch_of_voices_and_their_distance():
    assert median_pitch([voice(98, 1.0, 0.1), voice(98, 0.5, 0.2)], RATE) == pytest.approx(98, rel=0.005)
    assert median_pitch([voice(131, 1.0, 0.1)], RATE) == pytest.approx(131, rel=0.005)
    assert median_pitch([noise(0.05, 0.1)], RATE) is None  # too short to say
    assert semitones(100, 200) == pytest.approx(12.0) and semitones(200, 100) == pytest.approx(12.0)
