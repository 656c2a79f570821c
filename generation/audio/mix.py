"""One mix: dialogue, music and effects stems, each levelled; music ducked under speech; normalised to a target.

Stems are built in memory at 48 kHz (each piece placed at its start; music and effects cut to their window and
faded at its edges, which are the scene boundaries), written as WAVs, then one ffmpeg filter graph levels them,
compresses the dialogue, ducks the music with `sidechaincompress` keyed by the dialogue stem, sums them and normalises the sum with
two-pass `loudnorm`. The result carries the loudness ebur128 measured on the written mix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from generation.video_io import run_ffmpeg

from .loudness import TARGETS, Loudness, Target, loudnorm_filter, loudnorm_json, measure
from .pcm import RATE, decode, fade, read_wav, resample, write_wav

STEMS = ("dialogue", "music", "effects")
# Ducking: the key at +9.5 dB against a -40 dBFS threshold, ratio 20: a line at -25 dBFS RMS pulls the music down by
# about 23 dB; release long enough to hold between words, short enough to come back between lines.
DUCK = "sidechaincompress=level_sc=3:threshold=0.01:ratio=20:attack=10:release=350:detection=rms:makeup=1"
# Dialogue is compressed (4:1 above -26 dBFS) as a dialogue editor would: speech's crest factor is what makes a
# -14 LUFS target need loudnorm's limiter; a steadier dialogue stem is limited less.
DIALOGUE = "acompressor=threshold=0.05:ratio=4:attack=5:release=150:makeup=2"
TOP_UP_TOLERANCE = 0.5  # LU: a mix further than this from its target gets a gain into the limiter
TOP_UP_TRIES = 4  # each try measures again: the limiter takes back part of the gain
EDGE_FADE = 0.005  # dialogue pieces: a 5 ms ramp so a line never clicks in


@dataclass(frozen=True)
class Placed:
    """A sound file placed at `start` seconds; with `length`, cut to that window (music and effects are faded at
    its edges)."""

    start: float
    path: Path
    length: float | None = None


@dataclass(frozen=True)
class MixSettings:
    target: Target = TARGETS["web"]
    dialogue_db: float = 0.0
    music_db: float = -8.0
    effects_db: float = -14.0
    ducking: bool = True
    fade: float = 1.0  # seconds of fade in and out at each music and effects window's edges
    # dB the last limiter stays under the true-peak ceiling: 1 for a WAV; a lossy codec after the mix (the film's
    # AAC) overshoots by up to about 1.6 dB (measured), so the film's mix keeps more (app/audio.py)
    headroom: float = 1.0


@dataclass(frozen=True)
class MixResult:
    path: Path
    seconds: float
    loudness: Loudness  # measured on the written mix by ebur128
    normalisation: str  # "linear" (one gain) or "dynamic" (loudnorm had to limit to keep the true-peak ceiling)
    target: Target
    stems: dict[str, Path] = field(default_factory=dict)  # levelled (and ducked) stems before normalisation
    graph: str = ""  # the filter graph, as ffmpeg ran it


def build_stem(pieces: list[Placed], seconds: float, edge_fade: float) -> np.ndarray:
    """Sum pieces into one mono track `seconds` long at RATE; a piece past the end is cut there."""
    n = round(seconds * RATE)
    stem = np.zeros(n, np.float32)
    for piece in pieces:
        samples = _load(piece.path)
        if piece.length is not None:
            samples = samples[: round(piece.length * RATE)]
        samples = fade(samples, RATE, edge_fade, edge_fade)
        i = max(0, round(piece.start * RATE))
        seg = samples[: max(0, n - i)]
        stem[i : i + len(seg)] += seg
    return stem


def _load(path: Path) -> np.ndarray:
    path = Path(path)
    if path.suffix.lower() == ".wav":
        try:
            samples, rate = read_wav(path)
            return resample(samples, rate, RATE)
        except Exception:  # a WAV this package did not write (float, 24-bit): ffmpeg reads it
            pass
    return decode(path, RATE)


def graph(settings: MixSettings, loudnorm: str) -> str:
    """The filter graph over inputs 0 dialogue, 1 music, 2 effects; outputs [mix], [d], [m], [e]."""
    duck = f"[m0][key]{DUCK}[mduck]" if settings.ducking else "[m0]anull[mduck];[key]anullsink"
    return ";".join(
        [
            f"[0:a]{DIALOGUE},volume={settings.dialogue_db}dB,asplit=3[dmix][key][d]",
            f"[1:a]volume={settings.music_db}dB[m0]",
            duck,
            "[mduck]asplit=2[mmix][m]",
            f"[2:a]volume={settings.effects_db}dB,asplit=2[emix][e]",
            f"[dmix][mmix][emix]amix=inputs=3:normalize=0:duration=first,{loudnorm},aresample={RATE},{_ceiling(settings)}[mix]",
        ]
    )


def _ceiling(settings: MixSettings) -> str:
    """A last sample-peak limiter `headroom` dB under the true-peak ceiling: loudnorm limits at 192 kHz, and coming
    back to 48 kHz can overshoot its limit by a few tenths of a dB, and so can a sample-peak limiter between
    samples."""
    limit = 10 ** ((settings.target.true_peak - settings.headroom) / 20)
    return f"alimiter=limit={limit:.4f}:attack=1:release=50:level=false"


def _top_up(path: Path, loudness: Loudness, settings: MixSettings, cancel=None) -> tuple[Loudness, float]:
    """Bring a mix that loudnorm left off its target (short speech in a short film: its dynamic mode works on
    3-second windows and cannot limit a sub-second line's peaks enough) to it: a gain into the ceiling limiter,
    oversampled 4× so the true peak holds, measured by ebur128 after each try (at most `TOP_UP_TRIES`)."""
    target = settings.target
    source = path.with_name(f".{path.stem}.normalised.wav")
    path.replace(source)
    gain = 0.0
    try:
        for _ in range(TOP_UP_TRIES):
            gain += target.lufs - loudness.integrated_lufs
            limit = _ceiling(settings)
            run_ffmpeg(
                [
                    "-nostats",
                    "-i",
                    str(source),
                    "-af",
                    f"volume={gain:.2f}dB,aresample={4 * RATE},{limit},aresample={RATE},{limit}",
                    "-c:a",
                    "pcm_s16le",
                    "-y",
                    str(path),
                ],
                cancel=cancel,
            )
            loudness = measure(path, cancel=cancel)
            if abs(loudness.integrated_lufs - target.lufs) <= TOP_UP_TOLERANCE:
                break
    finally:
        source.unlink(missing_ok=True)
    return loudness, gain


def ffmpeg_args(stems: dict[str, Path], filters: str, out: Path | None, stems_out: dict[str, Path] | None) -> list[str]:
    args = ["-nostats"]
    for name in STEMS:
        args += ["-i", str(stems[name])]
    args += ["-filter_complex", filters]
    if out is None:
        args += ["-map", "[mix]", "-f", "null", "-"]
        for label in ("d", "m", "e"):
            args += ["-map", f"[{label}]", "-f", "null", "-"]
        return args
    if stems_out is None:
        raise ValueError("writing a mix writes its stems too: give stems_out")
    args += ["-map", "[mix]", "-ac", "1", "-c:a", "pcm_s16le", "-y", str(out)]
    for name, label in zip(STEMS, ("d", "m", "e"), strict=True):
        args += ["-map", f"[{label}]", "-c:a", "pcm_s16le", "-y", str(stems_out[name])]
    return args


def mix(
    dialogue: list[Placed],
    music: list[Placed],
    effects: list[Placed],
    seconds: float,
    out: Path,
    work_dir: Path,
    settings: MixSettings = MixSettings(),
    cancel=None,
) -> MixResult:
    """Mix the three stems into `out` (48 kHz mono WAV, `seconds` long) at `settings.target`."""
    if seconds <= 0:
        raise ValueError(f"a mix needs a positive length, got {seconds}")
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    raw = {
        "dialogue": write_wav(work_dir / "dialogue.raw.wav", build_stem(dialogue, seconds, EDGE_FADE), RATE),
        "music": write_wav(work_dir / "music.raw.wav", build_stem(music, seconds, settings.fade), RATE),
        "effects": write_wav(work_dir / "effects.raw.wav", build_stem(effects, seconds, settings.fade), RATE),
    }
    if cancel is not None:
        cancel.raise_if_cancelled()
    measured = loudnorm_json(
        run_ffmpeg(ffmpeg_args(raw, graph(settings, loudnorm_filter(settings.target)), None, None), cancel=cancel)
    )
    if float(measured["input_i"]) == float("-inf") or measured["input_i"] in ("-inf", "inf"):
        raise ValueError("the mix is silent: nothing to normalise")
    filters = graph(settings, loudnorm_filter(settings.target, measured))
    stems = {name: work_dir / f"{name}.wav" for name in STEMS}
    out = Path(out)
    tmp = out.with_name(f".{out.stem}.part.wav")
    applied = loudnorm_json(run_ffmpeg(ffmpeg_args(raw, filters, tmp, stems), cancel=cancel))
    loudness, mode = measure(tmp, cancel=cancel), applied.get("normalization_type", "?")
    if abs(loudness.integrated_lufs - settings.target.lufs) > TOP_UP_TOLERANCE:
        loudness, gain = _top_up(tmp, loudness, settings, cancel)
        mode += f", then {gain:+.1f} dB into the limiter"
    tmp.replace(out)
    return MixResult(
        path=out,
        seconds=seconds,
        loudness=loudness,
        normalisation=mode,
        target=settings.target,
        stems=stems,
        graph=filters,
    )
