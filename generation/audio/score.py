"""The temp score: procedural music from a cue's words, labelled "temp score" wherever it is shown.

A cue in words ("tense, slow strings", "hopeful piano, 100 bpm") is read for a mode (major or minor from mood
words), a tempo (tempo words or an explicit BPM) and instruments (each a timbre: harmonics and an envelope).
The seed picks the key and the chord progression, so two scenes with the same words still differ, and the same
cue with the same seed gives identical samples. No weights: chords, a bass line, an arpeggio or a pad, and
percussion only when the words ask for it. It sketches the intended mood; it is not a composition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .pcm import RATE, Sound, fade

LABEL = "temp score"

MINOR_WORDS = (
    "sad tense dark melancholy melancholic eerie ominous grief grim lonely mournful sombre somber suspense "
    "suspenseful menacing bleak haunting fear afraid tragic dread mysterious cold"
).split()
MAJOR_WORDS = "happy bright hopeful triumphant warm playful joyful cheerful uplifting tender romantic sunny".split()
TEMPO_WORDS = {  # word → beats per minute
    "adagio": 66,
    "slow": 70,
    "calm": 76,
    "gentle": 80,
    "moderate": 96,
    "walking": 100,
    "upbeat": 120,
    "lively": 126,
    "fast": 140,
    "driving": 140,
    "urgent": 150,
    "frantic": 168,
}
# instrument → (harmonic amplitudes, attack s, decay per s, role)
INSTRUMENTS = {
    "piano": ((1.0, 0.5, 0.25, 0.12, 0.06), 0.005, 2.5, "arpeggio"),
    "strings": ((1.0, 0.7, 0.5, 0.35, 0.25, 0.18), 0.35, 0.0, "pad"),
    "pad": ((1.0, 0.3, 0.1), 0.6, 0.0, "pad"),
    "synth": ((1.0, 0.6, 0.45, 0.35, 0.3, 0.25, 0.2), 0.05, 0.3, "pad"),
    "guitar": ((1.0, 0.6, 0.3, 0.2, 0.1), 0.003, 4.0, "arpeggio"),
    "harp": ((1.0, 0.4, 0.15), 0.003, 3.0, "arpeggio"),
    "bells": ((1.0, 0.0, 0.6, 0.0, 0.4, 0.0, 0.3), 0.002, 1.5, "arpeggio"),
    "brass": ((1.0, 0.8, 0.7, 0.6, 0.5, 0.4), 0.08, 0.2, "pad"),
    "flute": ((1.0, 0.2, 0.05), 0.06, 0.1, "melody"),
    "choir": ((1.0, 0.5, 0.3, 0.1), 0.4, 0.0, "pad"),
}
ALIASES = {"violin": "strings", "cello": "strings", "orchestra": "strings", "keys": "piano", "horn": "brass"}
PERCUSSION_WORDS = ("drums", "drum", "percussion", "beat", "pulse", "heartbeat")
PROGRESSIONS = {  # scale degrees (0-based) per bar
    "major": ((0, 4, 5, 3), (0, 5, 3, 4), (0, 3, 4, 3), (0, 3, 0, 4)),
    "minor": ((0, 5, 2, 6), (0, 3, 4, 0), (0, 5, 3, 4), (0, 6, 5, 4)),
}
SCALES = {"major": (0, 2, 4, 5, 7, 9, 11), "minor": (0, 2, 3, 5, 7, 8, 10)}


@dataclass(frozen=True)
class Plan:
    """What the words asked for, read back (shown beside the temp score so the creator sees what was heard)."""

    mode: str
    bpm: int
    instruments: tuple[str, ...]
    percussion: bool
    key: int  # semitones above A2 (110 Hz)
    progression: tuple[int, ...]


def plan(words: str, seed: int) -> Plan:
    """Read a cue's words; the seed picks the key and the progression."""
    text = words.lower()
    tokens = re.findall(r"[a-z]+", text)
    minor = sum(t in MINOR_WORDS for t in tokens)
    major = sum(t in MAJOR_WORDS for t in tokens)
    mode = "minor" if minor > major else "major"
    bpm_match = re.search(r"(\d{2,3})\s*bpm", text)
    if bpm_match:
        bpm = min(200, max(40, int(bpm_match[1])))
    else:
        tempos = [TEMPO_WORDS[t] for t in tokens if t in TEMPO_WORDS]
        bpm = round(sum(tempos) / len(tempos)) if tempos else (84 if mode == "minor" else 100)
    named = [ALIASES.get(t, t) for t in tokens]
    instruments = tuple(dict.fromkeys(t for t in named if t in INSTRUMENTS)) or (
        ("strings", "piano") if mode == "minor" else ("piano", "pad")
    )
    rng = np.random.default_rng([seed, _words_hash(text)])
    return Plan(
        mode=mode,
        bpm=bpm,
        instruments=instruments,
        percussion=any(t in PERCUSSION_WORDS for t in tokens),
        key=int(rng.integers(0, 12)),
        progression=PROGRESSIONS[mode][int(rng.integers(0, len(PROGRESSIONS[mode])))],
    )


def _words_hash(text: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def compose(words: str, seconds: float, seed: int, rate: int = RATE) -> Sound:
    """`seconds` of temp score for the cue's words (deterministic for words, seconds, seed and rate)."""
    if seconds <= 0:
        raise ValueError(f"a cue needs a positive length, got {seconds}")
    p = plan(words, seed)
    n = round(seconds * rate)
    out = np.zeros(n, np.float64)
    notes: dict = {}  # each note's samples, made once per cue (see `_add`)
    beat = 60.0 / p.bpm
    bar = 4 * beat
    rng = np.random.default_rng([seed, _words_hash(words.lower()), 1])
    scale = SCALES[p.mode]
    t_bar, i = 0.0, 0
    while t_bar < seconds:
        degree = p.progression[i % len(p.progression)]
        chord = [_midi(p.key, scale, degree + k) for k in (0, 2, 4)]
        for name in p.instruments:
            harmonics, attack, decay, role = INSTRUMENTS[name]
            if role == "pad":
                for note in chord:
                    _add(out, notes, rate, t_bar, bar, note + 12, harmonics, attack, decay, 0.10)
            elif role == "arpeggio":
                pattern = rng.permutation(len(chord)).tolist() + [0]
                for j, step in enumerate((pattern * 2)[: 8 if p.bpm < 110 else 4]):
                    dt = bar / (8 if p.bpm < 110 else 4)
                    _add(out, notes, rate, t_bar + j * dt, dt * 2, chord[step] + 24, harmonics, attack, decay, 0.12)
            else:  # melody: one chord tone per beat, a step away from the last
                for j in range(4):
                    _add(
                        out,
                        notes,
                        rate,
                        t_bar + j * beat,
                        beat,
                        chord[int(rng.integers(0, 3))] + 24,
                        harmonics,
                        attack,
                        decay,
                        0.1,
                    )
        _add(out, notes, rate, t_bar, bar, chord[0] - 12, (1.0, 0.3), 0.02, 0.8, 0.16)  # bass
        if p.percussion:
            for j in range(4):
                _kick(out, notes, rate, t_bar + j * beat, 0.5 if j % 2 == 0 else 0.3)
        t_bar += bar
        i += 1
    peak = np.abs(out).max()
    out = out / peak * 0.5 if peak > 0 else out
    return Sound(fade(out.astype(np.float32), rate, 0.05, 0.05), rate, LABEL)


def _midi(key: int, scale: tuple[int, ...], degree: int) -> int:
    octave, step = divmod(degree, len(scale))
    return 45 + key + 12 * octave + scale[step]  # 45: A2


def _add(out, notes: dict, rate, start, length, note, harmonics, attack, decay, level) -> None:
    """Add a note at `start` s. A cue plays the same notes bar after bar: a note's samples are made once per cue
    (`notes`, keyed by everything they depend on) and added wherever it sounds again, the same figures as made anew."""
    i0 = round(start * rate)
    if i0 >= len(out):
        return
    m = min(round(length * rate), len(out) - i0)
    key = ("note", m, length, note, harmonics, attack, decay, level)
    if key not in notes:
        t = np.arange(m) / rate
        f0 = 440.0 * 2 ** ((note - 69) / 12)
        tone = sum(
            a * np.sin(2 * np.pi * f0 * (h + 1) * t) for h, a in enumerate(harmonics) if a and f0 * (h + 1) < rate / 2
        )
        env = np.minimum(1.0, t / max(attack, 1e-4)) * np.exp(-decay * t)
        release = np.minimum(1.0, (length - t) / 0.05).clip(0, 1)
        notes[key] = level * tone * env * release
    out[i0 : i0 + m] += notes[key]


def _kick(out, notes: dict, rate, start, level) -> None:
    i0 = round(start * rate)
    m = min(round(0.25 * rate), len(out) - i0)
    if m <= 0:
        return
    key = ("kick", m, level)
    if key not in notes:
        t = np.arange(m) / rate
        notes[key] = level * np.sin(2 * np.pi * (50 + 70 * np.exp(-t * 30)) * t) * np.exp(-t * 12)
    out[i0 : i0 + m] += notes[key]
