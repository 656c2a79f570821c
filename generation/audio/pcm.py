"""Samples in memory and on disk: mono float32 at one rate, 16-bit WAV files, decoding anything through ffmpeg.

Every module of the sound package speaks `Sound` (samples, rate, label): the label says what made it
("temp score", "temp effects", "Piper", a model family), so nothing generated is shown unlabelled.
"""

from __future__ import annotations

import hashlib
import json
import os
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

RATE = 48_000  # the mix's rate; everything placed on a stem is resampled to it


@dataclass(frozen=True)
class Sound:
    """Mono float32 samples in [-1, 1] at `rate`, and what made them."""

    samples: np.ndarray
    rate: int
    label: str

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate


def key(**parts) -> str:
    """A content address: sha256 of the parts as canonical JSON (same parts, same key)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def write_wav(path: Path, samples: np.ndarray, rate: int) -> Path:
    """16-bit mono WAV, written under a temporary name and renamed (a crash never leaves half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.part{os.getpid()}")
    pcm = (np.clip(np.nan_to_num(samples), -1.0, 1.0) * 32767).round().astype("<i2")
    with wave.open(str(tmp), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    os.replace(tmp, path)
    return path


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """(float32 mono samples, rate) of a 16-bit WAV this package wrote (channels are averaged)."""
    with wave.open(str(path), "rb") as w:
        channels, rate = w.getnchannels(), w.getframerate()
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32767
    return pcm.reshape(-1, channels).mean(axis=1), rate


def resample(samples: np.ndarray, rate: int, to: int = RATE) -> np.ndarray:
    """Band-limited resampling by FFT (exact length round(n * to / rate)); no-op at the same rate."""
    if rate == to or len(samples) == 0:
        return samples.astype(np.float32)
    n = round(len(samples) * to / rate)
    spectrum = np.fft.rfft(samples)
    m = n // 2 + 1
    out = np.zeros(m, complex)
    k = min(m, len(spectrum))
    out[:k] = spectrum[:k]
    return (np.fft.irfft(out, n) * (n / len(samples))).astype(np.float32)


def decode(path: Path, rate: int = RATE, seconds: float | None = None, timeout: float = 60.0) -> np.ndarray:
    """An audio file (or a video's sound) → float32 mono at `rate` (at most `seconds` of it). Opened as a file CHIEF
    may not have written (`generation.ffmpeg_input`): a manifest or list is refused (InputRefused, a ValueError)."""
    import subprocess

    from generation.ffmpeg_input import input_args
    from generation.video_io import ffmpeg_exe

    cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", *input_args(path)]
    if seconds is not None:
        cmd += ["-t", f"{seconds:.3f}"]
    cmd += ["-map", "0:a:0", "-ac", "1", "-ar", str(rate), "-f", "f32le", "-"]
    proc = subprocess.run(cmd, capture_output=True, timeout=timeout)
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        raise ValueError(f"could not decode {Path(path).name}: {tail[0]}")
    return np.frombuffer(proc.stdout, "<f4").copy()


def fade(samples: np.ndarray, rate: int, fade_in: float, fade_out: float) -> np.ndarray:
    """Raised-cosine fades at both ends (in seconds; each at most half the sound)."""
    out = samples.astype(np.float32).copy()
    for seconds, head in ((fade_in, True), (fade_out, False)):
        n = min(len(out) // 2, round(seconds * rate))
        if n <= 0:
            continue
        ramp = (0.5 - 0.5 * np.cos(np.linspace(0, np.pi, n))).astype(np.float32)
        if head:
            out[:n] *= ramp
        else:
            out[-n:] *= ramp[::-1]
    return out


def rms_db(samples: np.ndarray) -> float:
    """RMS level in dBFS (-inf for silence)."""
    r = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
    return 20 * np.log10(r) if r > 0 else float("-inf")
