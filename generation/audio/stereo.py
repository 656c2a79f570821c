"""The mix's stereo image: where a piece sits between the speakers, and how wide a span measures.

Dialogue (lines, narration, the described track's descriptions) is centred: the same samples in both channels.
Music and effects are wide: a stereo source (an uploaded track, a clip's own stereo sound) keeps its two channels;
a mono one (the temp score, the temp effects, a model's mono output) is decorrelated by a pair of all-pass filters:
at each frequency the left channel is the source turned by a phase θ(f), the right by -θ(f). Over the bass the
bands (a major third each, a third of an octave) lean left and right by turns (θ = ±atan(`width`)); their edges
sit on quarter tones (between the notes of an A440 scale), each turn over a fifth of a band centred on its edge,
so a note of the temp score (or any source tuned near it) leans fully one way, a chord's notes and a sound's bands
spread across the image by their phase (interaural time) differences. Under the first edge (180 Hz) θ is 0: the
bass stays centred, as a mixer keeps it. Being all-pass, each channel has the source's level at every frequency (a
single sine stays in the middle: left and right within a hundredth of a dB), so the balance of dialogue and music
is the mono mix's; the channels' correlation is cos 2θ ((1 - w²)/(1 + w²) = 0.6 at w 0.5, 1 in the bass); a mono
fold-down ((L + R)/2) is the source at cos θ (-0.97 dB over the bass, no comb). The right filter is the left one
reversed in time, so their magnitudes are equal however the kernel is cut. Music and effects start their bands on
opposite sides, so their images differ.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .pcm import RATE

WIDTH = 0.5  # tan θ: the side (L-R)/2 at half the mid (L+R)/2, correlation (1 - w²)/(1 + w²) = 0.6
BAND = 4  # semitones a band spans (a third of an octave)
FIRST_EDGE = -15.5  # semitones from A440 (179.7 Hz): the bass under it stays centred; every edge a quarter tone
RAMP = 0.2  # of a band: the turn from one side to the other, centred on an edge (±0.4 semitone: the notes miss it)
TAPS = 16383  # the filters' length (341 ms at 48 kHz), centred: no delay; |H| within 0.3 dB of 1 at the turns
MUSIC_SIDE, EFFECTS_SIDE = 1, -1  # the side the first band over the bass leans to (1 left)


@functools.lru_cache(maxsize=8)
def _kernel(side: int, width: float, rate: int) -> np.ndarray:
    """The left filter's taps (the right's are these reversed): the all-pass e^{iθ(f)} of the module's doc, cut to
    TAPS by a Hann window around its centre."""
    size = 1 << 17
    f = np.fft.rfftfreq(size, 1 / rate)
    pos = (12 * np.log2(np.maximum(f, 1e-9) / 440.0) - FIRST_EDGE) / BAND  # bands over the first edge

    def lean_of(band):  # the bands under the first edge are centred; over it, `side` then the other by turns
        return np.where(band < 0, 0.0, np.where(band % 2 == 0, side, -side))

    edge = np.round(pos)
    turn = np.clip((pos - edge) / RAMP + 0.5, 0.0, 1.0)
    turn = 0.5 - 0.5 * np.cos(np.pi * turn)  # raised cosine from the band under the edge to the band over it
    lean = lean_of(edge - 1) + (lean_of(edge) - lean_of(edge - 1)) * turn
    h = np.fft.irfft(np.exp(1j * math.atan(width) * lean), size)
    return (np.roll(h, TAPS // 2)[:TAPS] * np.hanning(TAPS + 2)[1:-1]).astype(np.float32)


def widen(samples: np.ndarray, side: int = MUSIC_SIDE, width: float = WIDTH, rate: int = RATE) -> np.ndarray:
    """Mono `(n,)` samples as a wide stereo `(n, 2)` pair (see the module's doc); `width` 0: centred."""
    from scipy.signal import oaconvolve

    x = np.asarray(samples, np.float32).reshape(-1)
    if width == 0 or len(x) == 0:
        return np.stack([x, x], axis=1)
    h = _kernel(side, width, rate)
    pair = [oaconvolve(x, k, mode="same") for k in (h, h[::-1])]
    return np.stack(pair, axis=1).astype(np.float32)


def centred(samples: np.ndarray, channels: int) -> np.ndarray:
    """`(n,)` or `(n, c)` samples as `(n, channels)`: a mono source the same in every channel; a stereo one folded
    to mono (the mean) when `channels` is 1."""
    x = np.asarray(samples, np.float32)
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[1] == channels:
        return x
    if channels == 1:
        return x.mean(axis=1, keepdims=True)
    return np.repeat(x[:, :1], channels, axis=1) if x.shape[1] == 1 else x[:, :channels]


def placed(samples: np.ndarray, channels: int, side: int | None, width: float = WIDTH) -> np.ndarray:
    """A piece's samples as they sit on a stem of `channels`: `side` None (dialogue) centred; else a stereo source
    kept, a mono one widened on a stereo stem (`widen`, its bands starting on `side`)."""
    x = np.asarray(samples, np.float32)
    mono = x.ndim == 1 or x.shape[1] == 1
    if channels == 2 and side is not None and mono and width > 0:
        return widen(x, side, width)
    return centred(x, channels)


@dataclass(frozen=True)
class Image:
    """How a stereo span measures: the channels' correlation (Pearson, 1: the same samples), left over right in dB,
    and the side signal ((L-R)/2) under the mid ((L+R)/2) in dB (-inf: none)."""

    correlation: float
    balance_db: float
    side_db: float


def image(frames: np.ndarray) -> Image:
    """The stereo image of `(n, 2)` samples (see `Image`)."""
    x = np.asarray(frames, np.float64)
    if x.ndim != 2 or x.shape[1] != 2:
        raise ValueError(f"a stereo image needs two channels, got shape {x.shape}")
    left, right = x[:, 0], x[:, 1]
    pl, pr = float(np.mean(left**2)), float(np.mean(right**2))
    if pl == 0 or pr == 0:
        raise ValueError("a stereo image needs sound in both channels")
    corr = float(np.mean((left - left.mean()) * (right - right.mean())) / (left.std() * right.std()))
    mid, side = float(np.mean(((left + right) / 2) ** 2)), float(np.mean(((left - right) / 2) ** 2))
    side_db = float("-inf") if side == 0 else float("inf") if mid == 0 else 10 * math.log10(side / mid)
    return Image(round(corr, 4), round(10 * math.log10(pl / pr), 3), round(side_db, 2))
