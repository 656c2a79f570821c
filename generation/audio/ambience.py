"""Temp effects: procedural ambience from words (rain, wind, sea, room tone, crowd), labelled "temp effects".

Each kind is noise shaped in the frequency domain (a spectral tilt and a band) and modulated in time (gusts,
swells, droplets, babble), seeded, so the same words and seed give identical samples. Words naming none of
the kinds give room tone, and the result says which kinds it heard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .pcm import RATE, Sound, fade

LABEL = "temp effects"
KINDS = {  # kind → the words that ask for it
    "rain": ("rain", "raining", "rainy", "drizzle", "downpour", "storm", "stormy"),
    "wind": ("wind", "windy", "gust", "gusts", "gale", "breeze", "storm", "stormy"),
    "sea": ("sea", "ocean", "waves", "wave", "surf", "shore", "beach", "harbour", "harbor", "tide"),
    "crowd": ("crowd", "market", "bar", "cafe", "party", "people", "street", "station", "busy", "chatter"),
    "room": ("room", "tone", "interior", "inside", "indoors", "silence", "quiet", "office", "house", "hum"),
}


@dataclass(frozen=True)
class Ambience:
    sound: Sound
    kinds: tuple[str, ...]


def kinds_in(words: str) -> tuple[str, ...]:
    tokens = set(re.findall(r"[a-z]+", words.lower()))
    return tuple(k for k, ws in KINDS.items() if tokens & set(ws)) or ("room",)


def ambience(words: str, seconds: float, seed: int, rate: int = RATE) -> Ambience:
    """`seconds` of temp effects for the words; deterministic for words, seconds, seed and rate."""
    if seconds <= 0:
        raise ValueError(f"ambience needs a positive length, got {seconds}")
    kinds = kinds_in(words)
    n = round(seconds * rate)
    out = np.zeros(n, np.float64)
    for i, kind in enumerate(kinds):
        rng = np.random.default_rng([seed, i, sum(map(ord, kind))])
        out += _MAKERS[kind](rng, n, rate)
    peak = np.abs(out).max()
    out = out / peak * 0.5 if peak > 0 else out
    return Ambience(Sound(fade(out.astype(np.float32), rate, 0.3, 0.3), rate, LABEL), kinds)


def _shaped(rng, n, rate, tilt: float, low: float, high: float) -> np.ndarray:
    """White noise with a 1/f^tilt spectrum between `low` and `high` Hz (smooth edges), unit RMS."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / rate)
    f[0] = f[1] if n > 1 else 1.0
    shape = f ** (-tilt / 2) / (1 + (low / f) ** 4) / (1 + (f / high) ** 4)
    x = np.fft.irfft(spectrum * shape, n)
    return x / (np.sqrt(np.mean(x**2)) or 1.0)


def _slow(rng, n, rate, hz: float) -> np.ndarray:
    """A smooth random control signal in [0, 1] varying at about `hz`."""
    points = max(2, int(n / rate * hz) + 2)
    knots = rng.random(points)
    return np.interp(np.linspace(0, points - 1, n), np.arange(points), knots)


def _rain(rng, n, rate):
    hiss = _shaped(rng, n, rate, 0.0, 800, 9000) * 0.5
    drops = np.zeros(n)
    count = int(n / rate * 60)
    at = rng.integers(0, n, count)
    drops[at] = rng.uniform(0.5, 2.0, count)
    kernel = np.exp(-np.arange(int(0.004 * rate)) / (0.0008 * rate))
    return hiss + np.convolve(drops, kernel)[:n] * _shaped(rng, n, rate, 0.0, 2000, 12000)


def _wind(rng, n, rate):
    return _shaped(rng, n, rate, 2.0, 60, 900) * (0.25 + 0.75 * _slow(rng, n, rate, 0.4))


def _sea(rng, n, rate):
    swell = 0.5 - 0.5 * np.cos(2 * np.pi * (np.arange(n) / rate) / rng.uniform(6.0, 9.0) + rng.uniform(0, 6.28))
    return _shaped(rng, n, rate, 1.0, 100, 4000) * (0.15 + 0.85 * swell**2)


def _room(rng, n, rate):
    return _shaped(rng, n, rate, 1.0, 40, 400) * 0.2


def _crowd(rng, n, rate):
    voices = sum(_shaped(rng, n, rate, 0.5, 250, 2500) * _slow(rng, n, rate, 4.0) for _ in range(6))
    return voices / 3


_MAKERS = {"rain": _rain, "wind": _wind, "sea": _sea, "room": _room, "crowd": _crowd}
