"""The described track (WCAG 2.2 SC 1.2.5): the film's mix with each shot's description said in a gap between the
lines of its shot, the mix ducked under it.

Where lines are said is measured on the dialogue stem (`spoken_spans`: runs of 20-ms frames over SPEECH_FLOOR_DB); a
description goes where the caller's `fit` says (the product's rule: `storage.schema.fit_gap`, its margins and ramps),
or is left out, never said over a line. A description is as loud as the film's own lines where each speaks, centred
(the same samples in every channel), and turned down, never clipped, where it and the ducked mix would pass the
ceiling.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .loudness import Loudness, Target, measure
from .pcm import RATE, read_frames, read_wav, resample, rms_db, write_wav

DESCRIPTION_DUCK_DB = -12.0  # the mix under a description (it is said in a gap between lines: music and effects)
SPEECH_FLOOR_DB = -50.0  # a 20-ms frame of the dialogue stem above this is speech
# where a description `seconds` long goes in [start, end] away from the `busy` spans: (its start or None, the
# longest gap's room in seconds)
Fit = Callable[[float, float, list[tuple[float, float]], float], tuple[float | None, float]]


@dataclass(frozen=True)
class Description:
    """A shot's description, said: the shot's window on the film's timeline and the spoken WAV."""

    shot_id: str
    start: float
    end: float
    path: Path
    seconds: float


@dataclass(frozen=True)
class DescribedTrack:
    path: Path  # 48 kHz WAV with the mix's channels, as long as the film
    placed: list[tuple[str, float, float]]  # (shot id, start, end) of each description said, on the film's timeline
    left_out: list[tuple[Description, float]]  # what fit no gap, with the room its shot's longest gap had
    loudness: Loudness  # the track as ebur128 measured it


def spoken_spans(samples: np.ndarray, rate: int, frame: float = 0.02) -> list[tuple[float, float]]:
    """(start, end) in seconds of every run of 20-ms frames above SPEECH_FLOOR_DB: where the dialogue stem speaks."""
    size = max(1, round(frame * rate))
    m = len(samples) // size
    if m == 0:
        return []
    power = np.mean(np.square(samples[: m * size].reshape(m, size), dtype=np.float64), axis=1)
    loud = np.concatenate([[False], power > 10 ** (SPEECH_FLOOR_DB / 10), [False]])
    edges = np.flatnonzero(np.diff(loud.astype(np.int8)))
    return [(a * frame, b * frame) for a, b in zip(edges[::2], edges[1::2])]


def described_track(
    descriptions: list[Description],
    mix: Path | None,
    dialogue: Path | None,
    total: float,
    channels: int,
    target: Target,
    headroom: float,
    ramp: float,
    fit: Fit,
    out: Path,
    cancel=None,
) -> DescribedTrack:
    """The described track written to `out`: `mix` (None: silence of `channels` channels) with each description, in
    order, said where `fit` finds it room among the lines (measured on `dialogue`, the dialogue stem) and the
    descriptions placed before it, the mix ducked DESCRIPTION_DUCK_DB under it with `ramp`-second ramps. Each is as
    loud as the lines where they speak (without lines: `target`'s loudness 4 dB down), and kept with the ducked mix
    under `target`'s ceiling less `headroom`."""
    n = round(total * RATE)
    main = np.zeros((n, channels), np.float32)
    speech: list[tuple[float, float]] = []
    if mix is not None:
        samples, rate = read_frames(mix)
        main = np.zeros((n, samples.shape[1]), np.float32)
        main[: min(n, len(samples))] = resample(samples, rate, RATE)[:n]
    if dialogue is not None:
        stem, rate = read_wav(dialogue)
        speech = spoken_spans(resample(stem, rate, RATE), RATE)
    spoken_main = np.concatenate([main[round(a * RATE) : round(b * RATE)] for a, b in speech] or [main[:0]])
    level = rms_db(spoken_main) if len(spoken_main) else target.lufs - 4.0
    ceiling = 10 ** ((target.true_peak - headroom) / 20)
    voices, gain = np.zeros(n, np.float32), np.ones(n, np.float32)
    duck, ramp_n = np.float32(10 ** (DESCRIPTION_DUCK_DB / 20)), round(ramp * RATE)
    busy = list(speech)
    placed: list[tuple[str, float, float]] = []
    left_out: list[tuple[Description, float]] = []
    for said in descriptions:
        if cancel is not None:
            cancel.raise_if_cancelled()
        at, room = fit(said.start, said.end, busy, said.seconds)
        if at is None:
            left_out.append((said, room))
            continue
        samples, rate = read_wav(said.path)
        voice = resample(samples, rate, RATE)
        words = [voice[round(a * RATE) : round(b * RATE)] for a, b in spoken_spans(voice, RATE)]
        if words:  # as loud as the film's own lines, where each speaks
            voice = voice * np.float32(10 ** ((level - rms_db(np.concatenate(words))) / 20))
        i = round(at * RATE)
        voice = voice[: max(0, n - i)]
        j, k = max(0, i - ramp_n), min(n, i + len(voice) + ramp_n)
        envelope = np.full(k - j, duck, np.float32)
        envelope[: i - j] = np.linspace(1.0, duck, i - j, endpoint=False)
        if (tail := k - i - len(voice)) > 0:
            envelope[-tail:] = np.linspace(duck, 1.0, tail)
        gain[j:k] = np.minimum(gain[j:k], envelope)
        under = float(np.max(np.abs(main[i : i + len(voice)] * gain[i : i + len(voice), None]), initial=0.0))
        if (peak := float(np.max(np.abs(voice), initial=0.0))) + under > ceiling:  # turned down, never clipped
            voice = voice * np.float32(max(0.0, ceiling - under) / peak)
        voices[i : i + len(voice)] += voice
        busy.append((at, at + said.seconds))
        placed.append((said.shot_id, round(at, 3), round(at + said.seconds, 3)))
    path = write_wav(out, main * gain[:, None] + voices[:, None], RATE)
    return DescribedTrack(path, placed, left_out, measure(path, cancel))
