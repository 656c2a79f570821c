"""The narration track: the shots' narration said by the narrator (the installed Piper voice, its own pitch and
pace) through `generation.audio.voices.Voices`, the same engine, loader and line cache as the characters' lines.

A narration track is one mono 48 kHz WAV as long as the film, each line placed at its shot's start. Lines are never
cut or sped up: a line longer than its shot runs on into the next one (and overlapping lines are mixed), only the end
of the film cuts a line, and `narration_track` returns each line's spoken length so the caller can warn about
overruns.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np

from generation.audio.pcm import RATE, read_wav, write_wav
from generation.audio.voices import Voice, VoiceError, Voices, piper_voice

NARRATOR = Voice()  # the installed Piper voice as it is
LEVEL = 1.0  # Piper's volume for the narration (a line without delivery words is said at 0.8)


class NarrationUnavailable(RuntimeError):
    """Piper or its voice is not installed; narration cannot be made (the film is fine without it)."""


@functools.lru_cache(maxsize=1)
def voice():
    """The narrator's Piper voice (`voices.piper_voice`: loaded on first use, then kept for the process)."""
    try:
        return piper_voice("")
    except VoiceError as e:
        raise NarrationUnavailable(f"narration: {e}") from e


def sample_rate() -> int:
    """The rate narration is made at (the mix's)."""
    return RATE


def speak(text: str, cache_dir: Path | None = None, voices: Voices | None = None, cancel=None) -> np.ndarray:
    """Float32 mono samples in [-1, 1] at `sample_rate()` for `text`, said by the narrator.

    `voices` (or a `Voices` over `cache_dir`) keeps each line: a line already spoken is read back, so re-rendering a
    film only speaks the lines that changed. With neither, the line is made in a folder removed after."""
    if voices is None:
        if cache_dir is None:
            with tempfile.TemporaryDirectory(prefix="chief-narration-") as tmp:
                return speak(text, Path(tmp), cancel=cancel)
        voices = Voices(Path(cache_dir))
    try:
        spoken = voices.speak(text, NARRATOR, "", cancel, level=LEVEL)
    except VoiceError as e:
        raise NarrationUnavailable(f"narration: {e}") from e
    return read_wav(spoken.path)[0]  # Voices writes at RATE


def synthesize(text: str, out_wav: Path) -> float:
    """Speak `text` into a 16-bit mono WAV; returns its length in seconds."""
    audio = speak(text)
    write_wav(Path(out_wav), audio, sample_rate())
    return len(audio) / sample_rate()


def narration_track(
    items: list[tuple[float, str]],
    total_duration: float,
    out_wav: Path,
    cache_dir: Path | None = None,
    *,
    voices: Voices | None = None,
    cancel=None,
) -> list[float]:
    """Mix each (start, text) line at `start` into a WAV exactly `total_duration` long.

    Returns the spoken length of each line (in the order given); blank lines are silent (0.0). `voices` (or
    `cache_dir`) keeps each spoken line (see `speak`)."""
    rate = sample_rate()
    n = round(total_duration * rate)
    if n <= 0:
        raise ValueError(f"narration track needs a positive duration, got {total_duration}")
    track = np.zeros(n, np.float32)
    lengths = []
    for start, text in items:
        if not text or not text.strip():
            lengths.append(0.0)
            continue
        audio = speak(text, cache_dir, voices, cancel)
        lengths.append(len(audio) / rate)
        i = max(0, round(start * rate))
        seg = audio[: max(0, n - i)]
        track[i : i + len(seg)] += seg
    write_wav(Path(out_wav), np.clip(track, -1.0, 1.0), rate)
    return lengths
