"""Listening by measurement: what a film's sound does in each window of its timeline (a shot), and how each speaker
sounds, measured on the film's own decoded mix and the dialogue and music stems the render keeps.

Per window:
- **loudness**: integrated loudness of the mix over the window, ITU-R BS.1770-4 done here in full: K-weighting
  (the standard's two biquads, designed for the rate as libebur128 does), 400 ms blocks overlapping by 75 % on a
  100 ms grid from the film's start, the absolute gate at -70 LUFS, then the relative gate 10 LU under the gated
  mean. Every channel weighs 1 (mono, or a stereo mix's left and right summed, as ffmpeg's `ebur128` reads them;
  tests check the two agree).
  The window is read on the 100 ms grid (its edges rounded inwards); one shorter than a block is one block of
  the sub-blocks it has. None when every block is under the absolute gate (silence).
- **speech to music**: while a line is spoken — the 10 ms frames of the dialogue stem louder than `SPEECH_DBFS`
  within the line's span — the dialogue stem's mean power over the music stem's on the same frames, in dB. The
  stems are the render's levelled (and ducked) stems before normalisation, which moves the whole mix by one gain,
  so their ratio is the ratio in the film. None with no speech or no music under it.
- **longest silence**: the longest run of 50 ms frames of the mix whose RMS (over its channels) is under
  `SILENCE_DBFS`.
- **clipping**: samples of the mix at full scale in any channel (|x| >= `FULL_SCALE`; a decoded AAC stream can
  exceed 1.0).
- **words per second**: the lines' words over the time they are spoken: a line's span starts at its first
  speech frame in its window and runs while speech goes on with pauses shorter than `MAX_PAUSE`, up to the next
  line's start (a line longer than its window spills on, as the voice does).

Per speaker, the **median pitch** (f0) of their lines: YIN (de Cheveigné & Kawahara 2002: the cumulative-mean-
normalised difference, threshold 0.15, 50-400 Hz) on 40 ms frames of the dialogue stem within their lines' spans.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .pcm import RATE, resample

ABSOLUTE_GATE = -70.0  # LUFS, BS.1770-4
RELATIVE_GATE = -10.0  # LU under the absolutely gated loudness
BLOCK = 0.4  # s, gating block
STEP = 0.1  # s, the blocks' hop (75 % overlap)
SILENCE_DBFS = -50.0  # a 50 ms frame of the mix under this is silence: well under a quiet room's tone in a mix
# normalised to -14 or -23 LUFS, over the noise AAC leaves in digital silence
SILENCE_FRAME = 0.05  # s
FULL_SCALE = 0.999  # |sample| at or over this is at full scale (-0.009 dBFS)
SPEECH_DBFS = -45.0  # a 10 ms frame of the dialogue stem over this is speech (the stem is silent between lines)
SPEECH_FRAME = 0.01  # s
MAX_PAUSE = 0.7  # s: a longer pause ends a line's span
PITCH_RATE = 16_000  # YIN runs here: enough for f0 up to 400 Hz, a third of the work of 48 kHz
PITCH_FRAME = 0.04  # s
PITCH_MIN, PITCH_MAX = 50.0, 400.0  # Hz: the range of speaking voices (a cast voice 8 semitones under
# the installed Piper speaker measures 58 Hz)
YIN_THRESHOLD = 0.15
MAX_PITCH_FRAMES = 3000  # per speaker (a minute of speech at a 20 ms hop), spread over their lines


@dataclass(frozen=True)
class Spoken:
    """A line on the film's timeline: who says it, its word count, and its window (the subtitle's)."""

    speaker: str
    words: int
    start: float
    end: float


@dataclass(frozen=True)
class Window:
    """A stretch of the film to measure (a shot's window), with the lines placed in it."""

    key: str
    start: float
    end: float
    lines: tuple[Spoken, ...] = ()


@dataclass(frozen=True)
class Facts:
    """What was measured over one window (see the module's docstring for each definition)."""

    loudness_lufs: float | None
    speech_to_music_db: float | None
    longest_silence_s: float
    clipped_samples: int
    words_per_s: float | None
    spoken_s: float  # the lines' spans, summed

    @property
    def clipped(self) -> bool:
        return self.clipped_samples > 0


@dataclass(frozen=True)
class Listening:
    windows: dict[str, Facts]  # window key -> its facts
    pitch_hz: dict[str, float] = field(default_factory=dict)  # speaker -> median f0 of their voiced frames
    loudness_lufs: float | None = None  # the whole mix, integrated, by this module's BS.1770


# ---------------------------------------------------------------------------------------------- loudness (BS.1770)
def k_weighting(rate: int) -> np.ndarray:
    """The K-weighting filter as second-order sections (a high-shelf then a high-pass), for any rate; at 48 kHz the
    coefficients are the standard's own."""
    f0, gain, q = 1681.974450955533, 3.999843853973347, 0.7071752369554196
    k = math.tan(math.pi * f0 / rate)
    vh = 10 ** (gain / 20)
    vb = vh**0.4996667741545416
    a0 = 1 + k / q + k * k
    shelf = [(vh + vb * k / q + k * k) / a0, 2 * (k * k - vh) / a0, (vh - vb * k / q + k * k) / a0]
    shelf += [1.0, 2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0]
    f0, q = 38.13547087602444, 0.5003270373238773
    k = math.tan(math.pi * f0 / rate)
    a0 = 1 + k / q + k * k
    high = [1.0, -2.0, 1.0, 1.0, 2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0]
    return np.array([shelf, high])


CHUNK_BLOCKS = 100  # 100-ms blocks filtered at a time (10 s), the filter's state carried from one to the next
# A DC offset added to the samples filtered, 400 dB under full scale, so that the filter's state never decays into
# subnormal numbers: after a sound ends in digital silence the recursive filter's state shrinks towards zero, and
# once under ~1e-308 every operation on it is dozens of times slower (a minute of stereo, a burst then silence:
# 2.4 s of CPU, against 0.07 s for a minute of noise). The high-pass removes the offset; the figures move by under
# 1e-14 of a sound's, and a silence's blocks stay far under the absolute gate (~1e-66, not 0).
SUBNORMAL_GUARD = 1e-20


def sub_blocks(samples: np.ndarray, rate: int = RATE) -> np.ndarray:
    """Mean square of the K-weighted signal per 100 ms from the start (the last partial one dropped); of `(n, c)`
    samples, the channels' mean squares summed (BS.1770: left and right weigh 1 each).

    Filtered 10 s at a time with the filter's state carried over (the same figures as one pass, to rounding): a
    10-minute stereo film made three float64 copies of itself at once (1.4 GB) and took 1.1-1.8 s of CPU, 0.7 s so.
    The samples are offset by `SUBNORMAL_GUARD` as they are converted."""
    from scipy.signal import sosfilt

    sos = k_weighting(rate)
    x = samples.reshape(len(samples), -1)
    n = round(STEP * rate)
    m = len(x) // n
    z = np.empty(m)
    state = np.zeros((len(sos), 2, x.shape[1]))
    for first in range(0, m, CHUNK_BLOCKS):
        k = min(CHUNK_BLOCKS, m - first)
        chunk = np.add(x[first * n : (first + k) * n], SUBNORMAL_GUARD, dtype=np.float64)
        weighted, state = sosfilt(sos, chunk, axis=0, zi=state)
        z[first : first + k] = np.square(weighted).reshape(k, n, -1).mean(axis=1).sum(axis=1)
    return z


def gated_loudness(z: np.ndarray) -> float | None:
    """Integrated loudness (LUFS) of 100 ms sub-block mean squares `z`: 400 ms blocks on the 100 ms grid, gated
    absolutely then relatively. None when nothing passes the absolute gate."""
    per = round(BLOCK / STEP)
    if len(z) == 0:
        return None
    blocks = np.convolve(z, np.ones(per) / per, mode="valid") if len(z) >= per else np.array([z.mean()])
    with np.errstate(divide="ignore"):
        levels = -0.691 + 10 * np.log10(blocks)
    kept = blocks[levels > ABSOLUTE_GATE]
    if len(kept) == 0:
        return None
    relative = -0.691 + 10 * math.log10(kept.mean()) + RELATIVE_GATE
    kept = blocks[levels > max(ABSOLUTE_GATE, relative)]
    return round(-0.691 + 10 * math.log10(kept.mean()), 2)


def integrated(samples: np.ndarray, rate: int = RATE) -> float | None:
    """BS.1770-4 integrated loudness of mono `(n,)` or multichannel `(n, c)` samples (LUFS; None: silent)."""
    return gated_loudness(sub_blocks(samples, rate))


# ---------------------------------------------------------------------------------------------- levels in frames
def frame_power(samples: np.ndarray, rate: int, seconds: float) -> np.ndarray:
    """Mean square per frame of `seconds` from the start (the last partial frame dropped; of `(n, c)` samples, the
    mean over the channels too)."""
    n = round(seconds * rate)
    m = len(samples) // n
    x = samples[: m * n].astype(np.float64).reshape(m * n, -1)
    return np.mean(np.square(x).reshape(m, -1), axis=1)


def _db(power: float) -> float:
    return 10 * math.log10(power) if power > 0 else float("-inf")


def longest_run(mask: np.ndarray) -> int:
    """The longest run of True in `mask`."""
    if not mask.any():
        return 0
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max())


def speech_spans(active: np.ndarray, lines: list[Spoken], film_end: float) -> list[tuple[int, int]]:
    """Each line's span in speech frames [i, j): from its first speech frame in its window, while speech goes on
    with pauses under MAX_PAUSE, up to the next line's start (lines in film order). (0, 0) for a line not heard."""
    spans = []
    pause = round(MAX_PAUSE / SPEECH_FRAME)
    for n, line in enumerate(lines):
        limit = lines[n + 1].start if n + 1 < len(lines) else film_end
        a, b = math.ceil(line.start / SPEECH_FRAME - 1e-6), min(len(active), int(limit / SPEECH_FRAME + 1e-6))
        w_end = min(b, max(a + 1, int(line.end / SPEECH_FRAME + 1e-6)))
        first = np.flatnonzero(active[a:w_end])
        if len(first) == 0:
            spans.append((0, 0))
            continue
        i = j = a + int(first[0])
        gap = 0
        for k in range(i, b):
            if active[k]:
                j, gap = k + 1, 0
            else:
                gap += 1
                if gap > pause:
                    break
        spans.append((i, j))
    return spans


# ---------------------------------------------------------------------------------------------- pitch (YIN)
def yin_frames(samples: np.ndarray, rate: int) -> np.ndarray:
    """f0 (Hz) of each voiced 40 ms frame (20 ms hop) of `samples`, by YIN at PITCH_RATE; unvoiced frames dropped."""
    x = resample(samples.astype(np.float32), rate, PITCH_RATE).astype(np.float64)
    w = round(PITCH_FRAME * PITCH_RATE)
    tmin, tmax = int(PITCH_RATE / PITCH_MAX), int(PITCH_RATE / PITCH_MIN) + 1
    hop = w // 2
    count = (len(x) - w - tmax) // hop + 1
    if count <= 0:
        return np.zeros(0)
    idx = np.arange(count)[:, None] * hop
    frames = x[idx + np.arange(w)[None, :]]  # (count, w)
    segs = x[idx + np.arange(w + tmax)[None, :]]  # (count, w + tmax)
    size = 1 << math.ceil(math.log2(w + tmax + w))
    # cross-correlation r(t) = sum_j frame_j seg_{j+t}, by FFT
    r = np.fft.irfft(np.conj(np.fft.rfft(frames, size)) * np.fft.rfft(segs, size), size)[:, :tmax]
    energy = np.cumsum(np.square(segs), axis=1)
    shifted = energy[:, w - 1 : w - 1 + tmax] - np.concatenate([np.zeros((count, 1)), energy[:, : tmax - 1]], axis=1)
    d = np.sum(np.square(frames), axis=1)[:, None] + shifted - 2 * r  # YIN's difference function
    d[:, 0] = 0.0
    cum = np.cumsum(d[:, 1:], axis=1)
    cmnd = np.ones_like(d)
    cmnd[:, 1:] = d[:, 1:] * np.arange(1, tmax) / np.maximum(cum, 1e-12)
    out = []
    for row in cmnd:
        below = np.flatnonzero(row[tmin:] < YIN_THRESHOLD)
        if len(below) == 0:
            continue
        t = tmin + int(below[0])
        while t + 1 < tmax and row[t + 1] < row[t]:
            t += 1
        if 0 < t < tmax - 1:  # parabolic interpolation of the dip
            a, b, c = row[t - 1], row[t], row[t + 1]
            denom = a - 2 * b + c
            t = t + 0.5 * (a - c) / denom if denom > 0 else t
        out.append(PITCH_RATE / t)
    return np.array(out)


def median_pitch(pieces: list[np.ndarray], rate: int) -> float | None:
    """Median f0 over the voiced frames of `pieces` (one speaker's speech); None under 5 voiced frames."""
    f0 = np.concatenate([yin_frames(p, rate) for p in pieces]) if pieces else np.zeros(0)
    if len(f0) > MAX_PITCH_FRAMES:
        f0 = f0[np.linspace(0, len(f0) - 1, MAX_PITCH_FRAMES).round().astype(int)]
    return round(float(np.median(f0)), 1) if len(f0) >= 5 else None


def semitones(a_hz: float, b_hz: float) -> float:
    """How far apart two pitches are, in semitones (always >= 0)."""
    return abs(12 * math.log2(b_hz / a_hz))


# ---------------------------------------------------------------------------------------------- the film
def listen(
    mix: np.ndarray,
    windows: list[Window],
    dialogue: np.ndarray | None = None,
    music: np.ndarray | None = None,
    rate: int = RATE,
) -> Listening:
    """Measure `windows` of a film: `mix` its decoded sound (mono `(n,)` or `(n, channels)`), `dialogue` and `music`
    its stems (mono, same rate,
    time 0 = the film's start; without `dialogue` nothing is known of speech: speech-to-music, words per second and
    pitches are None / absent)."""
    z = sub_blocks(mix, rate)
    silent = frame_power(mix, rate, SILENCE_FRAME) < 10 ** (SILENCE_DBFS / 10)
    full = np.any(np.abs(mix).reshape(len(mix), -1) >= FULL_SCALE, axis=1)
    film_end = len(mix) / rate
    line_of = {(w.key, n): ln for w in windows for n, ln in enumerate(w.lines)}
    placed = sorted(((w.key, n) for w in windows for n in range(len(w.lines))), key=lambda k: line_of[k].start)
    spans: dict[tuple[str, int], tuple[int, int]] = {}
    d_pow = m_pow = None
    if dialogue is not None:
        d_pow = frame_power(dialogue, rate, SPEECH_FRAME)
        m_pow = frame_power(music, rate, SPEECH_FRAME) if music is not None else np.zeros_like(d_pow)
        if len(m_pow) < len(d_pow):
            m_pow = np.concatenate([m_pow, np.zeros(len(d_pow) - len(m_pow))])
        active = d_pow > 10 ** (SPEECH_DBFS / 10)
        spans = dict(zip(placed, speech_spans(active, [line_of[k] for k in placed], film_end), strict=True))

    facts: dict[str, Facts] = {}
    for w in windows:
        a, b = math.ceil(w.start / STEP - 1e-6), int(w.end / STEP + 1e-6)
        loud = gated_loudness(z[a : max(a + 1, b)])
        sa, sb = math.ceil(w.start / SILENCE_FRAME - 1e-6), int(w.end / SILENCE_FRAME + 1e-6)
        quiet = longest_run(silent[sa:sb]) * SILENCE_FRAME
        clipped = int(full[round(w.start * rate) : round(w.end * rate)].sum())
        stm = wps = None
        spoken_s = 0.0
        if d_pow is not None and m_pow is not None and w.lines:
            mine = [spans[(w.key, n)] for n in range(len(w.lines))]
            frames = [k for i, j in mine for k in range(i, j) if d_pow[k] > 10 ** (SPEECH_DBFS / 10)]
            spoken_s = round(sum(j - i for i, j in mine) * SPEECH_FRAME, 3)
            if frames:
                under = float(m_pow[frames].mean())
                if under > 0:
                    stm = round(_db(float(d_pow[frames].mean())) - _db(under), 1)
            if spoken_s > 0:
                wps = round(sum(ln.words for ln in w.lines) / spoken_s, 2)
        facts[w.key] = Facts(loud, stm, round(quiet, 2), clipped, wps, spoken_s)

    pitch: dict[str, float] = {}
    if dialogue is not None:
        by_speaker: dict[str, list[np.ndarray]] = {}
        n = round(SPEECH_FRAME * rate)
        for k, (i, j) in spans.items():
            if line_of[k].speaker and j > i:
                by_speaker.setdefault(line_of[k].speaker, []).append(dialogue[i * n : j * n])
        for speaker, pieces in sorted(by_speaker.items()):
            f0 = median_pitch(pieces, rate)
            if f0 is not None:
                pitch[speaker] = f0
    return Listening(facts, pitch, gated_loudness(z))
