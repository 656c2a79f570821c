"""The timeline's sound lanes: peaks computed from a stem's samples (a burst is found where it is, silence is
zero, a 10-minute stem is 600 columns), kept by the stem's hash, and drawn as an SVG of bounded size."""

from __future__ import annotations

import re
import wave

import numpy as np

from app.ui import timeline
from generation.audio.pcm import RATE, write_wav


def stem(path, seconds: float, bursts=()) -> object:
    x = np.zeros(round(seconds * RATE), np.float32)
    for t0, t1, amp in bursts:
        x[round(t0 * RATE) : round(t1 * RATE)] = amp * np.sin(np.arange(round((t1 - t0) * RATE)) * 0.05)
    return write_wav(path, x, RATE)


def test_a_burst_is_found_in_its_columns_and_silence_is_zero(tmp_path):
    p = stem(tmp_path / "d.wav", 10.0, [(4.0, 5.0, 0.5)])
    peaks = timeline._peaks(p, 100)  # a column is 0.1 s
    assert peaks.shape == (100,)
    loud = np.flatnonzero(peaks > 0.1)
    assert loud.min() == 40 and loud.max() == 49  # 4.0-5.0 s, nowhere else
    assert abs(peaks[45] - 0.5) < 0.01  # the burst's peak, not its mean
    assert peaks[:40].max() == 0 and peaks[50:].max() == 0


def test_a_stem_shorter_than_the_columns_has_a_column_a_sample(tmp_path):
    x = np.array([0.0, 0.5, -0.25], np.float32)
    p = write_wav(tmp_path / "tiny.wav", x, RATE)
    assert np.allclose(timeline._peaks(p, 600), [0.0, 0.5, 0.25], atol=1e-3)


def test_peaks_are_kept_by_the_stems_hash(tmp_path):
    p = stem(tmp_path / "a.wav", 2.0, [(0.5, 1.0, 0.3)])
    first = timeline.peaks("sha-a", p)
    p.unlink()  # the samples are not read again: the hash names them
    assert timeline.peaks("sha-a", p) is first


def test_a_ten_minute_film_draws_a_bounded_svg(tmp_path):
    p = stem(tmp_path / "long.wav", 600.0, [(300.0, 301.0, 0.8)])
    peaks = timeline._peaks(p, timeline.LANE_COLUMNS)
    assert peaks.shape == (600,) and peaks[300] > 0.7 and peaks[299] == 0 and peaks[301] == 0
    svg = timeline.lane_svg(peaks, 600.0, "music")
    assert len(svg) < 30_000  # 600 columns whatever the length: one SVG per lane stays small
    points = re.search(r"points='([^']*)'", svg)[1].split()
    assert len(points) == 2 * 600 + 2
    assert "data-peak-db='-1.9'" in svg  # 0.8 of full scale


def test_the_lanes_scale_is_decibels_so_ducked_music_still_shows(tmp_path):
    quiet = timeline.lane_svg(np.array([10 ** (-55 / 20)] * 4, np.float32), 4.0, "music")
    loud = timeline.lane_svg(np.array([10 ** (-25 / 20)] * 4, np.float32), 4.0, "dialogue")
    half = lambda svg: 0.5 - float(re.search(r"points='0,0.5 [\d.]+,([\d.]+)", svg)[1])  # noqa: E731
    assert abs(half(quiet) - 0.5 * 5 / 60) < 0.002 and abs(half(loud) - 0.5 * 35 / 60) < 0.002


def test_a_wav_that_is_not_16_bit_is_refused(tmp_path):
    p = tmp_path / "8bit.wav"
    with wave.open(str(p), "wb") as w:
        w.setnchannels(1), w.setsampwidth(1), w.setframerate(8000), w.writeframes(b"\x80" * 100)
    try:
        timeline._peaks(p, 10)
    except ValueError as e:
        assert "not 16-bit PCM" in str(e)
    else:
        raise AssertionError("an 8-bit WAV was read as 16-bit")
