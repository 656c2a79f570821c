"""Samples in memory and on disk: float32 at one rate (mono `(n,)`, or `(n, channels)`), 16-bit WAV files,
decoding anything through ffmpeg.

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
    """Float32 samples in [-1, 1] at `rate` (mono `(n,)`, or `(n, 2)` from a stereo source), and what made them."""

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
    """16-bit WAV (mono for `(n,)` samples, else one channel per column), written under a temporary name and renamed
    (a crash never leaves half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.part{os.getpid()}")
    pcm = (np.clip(np.nan_to_num(samples), -1.0, 1.0) * 32767).round().astype("<i2")
    with wave.open(str(tmp), "wb") as w:
        w.setnchannels(1 if pcm.ndim == 1 else pcm.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    os.replace(tmp, path)
    return path


def read_frames(path: Path) -> tuple[np.ndarray, int]:
    """(float32 samples `(n, channels)`, rate) of a 16-bit WAV this package wrote."""
    with wave.open(str(path), "rb") as w:
        channels, rate = w.getnchannels(), w.getframerate()
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32767
    return pcm.reshape(-1, channels), rate


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """(float32 mono samples, rate) of a 16-bit WAV this package wrote (channels are averaged)."""
    frames, rate = read_frames(path)
    return frames.mean(axis=1), rate


def resample(samples: np.ndarray, rate: int, to: int = RATE) -> np.ndarray:
    """Band-limited resampling by FFT along time (exact length round(n * to / rate); each channel of `(n, channels)`
    alike); no-op at the same rate."""
    if rate == to or len(samples) == 0:
        return samples.astype(np.float32)
    n = round(len(samples) * to / rate)
    spectrum = np.fft.rfft(samples, axis=0)
    m = n // 2 + 1
    out = np.zeros((m, *spectrum.shape[1:]), complex)
    k = min(m, len(spectrum))
    out[:k] = spectrum[:k]
    return (np.fft.irfft(out, n, axis=0) * (n / len(samples))).astype(np.float32)


def decode(
    path: Path, rate: int = RATE, seconds: float | None = None, timeout: float = 60.0, *, stereo: bool = False
) -> np.ndarray:
    """An audio file (or a video's sound) → float32 mono at `rate` (at most `seconds` of it); with `stereo`, its own
    channels as `(n, 1)` or `(n, 2)` (a mono source stays one channel, never spread at -3 dB as ffmpeg's `-ac 2`
    would; more than two are mixed down to two). Opened as a file CHIEF may not have written
    (`generation.ffmpeg_input`): a manifest or list is refused (InputRefused, a ValueError)."""
    from generation.ffmpeg import FfmpegTimeout, run
    from generation.ffmpeg_input import input_args

    args = ["-v", "error", *input_args(path)]
    if seconds is not None:
        args += ["-t", f"{seconds:.3f}"]
    args += ["-map", "0:a:0", "-ar", str(rate)]
    if stereo:  # a WAV stream: its header says how many channels the negotiation kept
        args += ["-af", "aformat=channel_layouts=mono|stereo", "-c:a", "pcm_f32le", "-f", "wav", "-"]
    else:
        args += ["-ac", "1", "-f", "f32le", "-"]
    # at most `seconds` of float samples in two channels (and a WAV header): more is not this file's sound
    limit = None if seconds is None else round(seconds * rate + rate) * 8 + (1 << 16)
    try:
        proc = run(args, timeout=timeout, capture=True, max_output=limit, check=False)
    except FfmpegTimeout:
        raise ValueError(f"could not decode {Path(path).name}: it took over {timeout:g} s") from None
    if proc.code != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["?"]
        raise ValueError(f"could not decode {Path(path).name}: {tail[0]}")
    if not stereo:
        return np.frombuffer(proc.stdout, "<f4").copy()
    channels, data = _wav_stream(proc.stdout)
    return np.frombuffer(data[: len(data) // (4 * channels) * 4 * channels], "<f4").reshape(-1, channels).copy()


def _wav_stream(data: bytes) -> tuple[int, bytes]:
    """(channels, the sample bytes) of a WAV ffmpeg wrote to a pipe (its sizes unset): its chunks walked to `data`."""
    import struct

    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("ffmpeg wrote no WAV stream")
    i, channels = 12, 0
    while i + 8 <= len(data):
        tag, size = data[i : i + 4], struct.unpack("<I", data[i + 4 : i + 8])[0]
        if tag == b"fmt ":
            channels = struct.unpack("<H", data[i + 10 : i + 12])[0]
        elif tag == b"data":
            if channels not in (1, 2):
                raise ValueError(f"ffmpeg wrote {channels} channels, not one or two")
            return channels, data[i + 8 :]
        i += 8 + size + (size & 1)
    raise ValueError("ffmpeg's WAV stream has no samples")


def fade(samples: np.ndarray, rate: int, fade_in: float, fade_out: float, power: bool = False) -> np.ndarray:
    """Raised-cosine fades at both ends (in seconds; each at most half the sound; every channel alike). `power`:
    equal-power ramps instead (a quarter sine), for a crossfade between unrelated sounds: the two ramps' squares sum
    to one, so the level holds across the overlap where raised cosines dip 3 dB in its middle."""
    out = samples.astype(np.float32).copy()
    for seconds, head in ((fade_in, True), (fade_out, False)):
        n = min(len(out) // 2, round(seconds * rate))
        if n <= 0:
            continue
        x = np.linspace(0, np.pi, n)
        shape = np.sin(x / 2) if power else 0.5 - 0.5 * np.cos(x)
        ramp = shape.astype(np.float32).reshape(-1, *[1] * (out.ndim - 1))
        if head:
            out[:n] *= ramp
        else:
            out[-n:] *= ramp[::-1]
    return out


def rms_db(samples: np.ndarray) -> float:
    """RMS level in dBFS (-inf for silence)."""
    r = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
    return 20 * np.log10(r) if r > 0 else float("-inf")


def louder(sound: Sound, db: float) -> Sound:
    """`sound` `db` louder (a scene's level over the film's; written to a 16-bit file, a raise past its headroom
    clips)."""
    from dataclasses import replace

    return replace(sound, samples=sound.samples * 10 ** (db / 20)) if db else sound


def silence(path: Path, seconds: float, channels: int) -> Path:
    """A silent 48 kHz 16-bit WAV `seconds` long with `channels` channels."""
    return write_wav(path, np.zeros((round(seconds * RATE), channels), np.float32), RATE)
