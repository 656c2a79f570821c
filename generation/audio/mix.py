"""One mix: dialogue, music and effects stems, each levelled; music ducked under speech; normalised to a target by
one gain, mixed in parts so that a change re-mixes the part it is in.

The film is cut into parts (at the boundaries the caller gives, its scenes, and at most `MAX_PART` long), each
starting on BS.1770's 100-ms block hop. A part's stems are built in memory at 48 kHz over the part (each piece
placed at its start; music and effects cut to their window and faded at its edges, which are the scene
boundaries; where one cue or shot's sounds follows another they crossfade across the cut, `joined`), then one
ffmpeg filter graph levels them, compresses the dialogue and ducks the music with `sidechaincompress` keyed by the
dialogue stem; numpy sums them. A part depends on nothing before it (no pre-roll: a
line ending near a scene's end would make the next scene depend on it), so its compressors start at rest, as they
are after a silence; only a line running across a boundary differs from one pass over the film, for the
compressors' attack (5-10 ms). Each part keeps its stems, its sum before normalisation (float) and its K-weighted
100-ms mean squares, cached by the content of what it holds (`cache`), so a changed line re-mixes its part only. The film's integrated loudness is the BS.1770 gating over the parts' blocks concatenated (exactly the
film's blocks, since parts start on the hop), so normalising is one gain computed without reading the audio again;
the true-peak limiter (`limit`, 4× oversampled, look-ahead) runs only on the parts whose peak the gain takes over
the ceiling, and those parts' blocks are measured again (at most `TRIES` gains). The figures returned (integrated,
true peak, LRA) are computed from the blocks and peaks; ffmpeg's ebur128 agrees (tests/audio/test_mix.py).

Stereo by default (`MixSettings.channels` 2; 1 for a mono delivery): every stem and the sum have the mix's channels.
Dialogue is centred (the same samples left and right); music and effects are wide (`stereo.placed`: a stereo source
kept, a mono one decorrelated by `stereo.widen`). Loudness sums the channels' K-weighted mean squares (BS.1770, weight 1 each); the
true peak and the limiter take the louder channel at each sample, one gain for both, so the image does not move.
"""

from __future__ import annotations

import json
import os
import shutil
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from generation.ffmpeg import run_ffmpeg

from .listen import STEP, sub_blocks
from .loudness import TARGETS, Loudness, Target, db, integrated_of, lra_of
from .pcm import RATE, decode, fade, key, read_frames, resample, write_wav
from .stereo import EFFECTS_SIDE, MUSIC_SIDE, WIDTH, placed

STEMS = ("dialogue", "music", "effects")
# Ducking: the key at +9.5 dB against a -40 dBFS threshold, ratio 20: a line at -25 dBFS RMS pulls the music down by
# about 23 dB; release long enough to hold between words, short enough to come back between lines.
DUCK = "sidechaincompress=level_sc=3:threshold=0.01:ratio=20:attack=10:release=350:detection=rms:makeup=1"
# Dialogue is compressed (4:1 above -26 dBFS) as a dialogue editor would: speech's crest factor is what makes a
# -14 LUFS target need loudnorm's limiter; a steadier dialogue stem is limited less.
DUCK_PAD = 0.5  # s of silence after both of the ducker's inputs, so it never drops the music's end (`graph`)
DIALOGUE = "acompressor=threshold=0.05:ratio=4:attack=5:release=150:makeup=2"
GRID = round(STEP * RATE)  # 4800 samples: parts start on BS.1770's block hop, so their blocks are the film's
MAX_PART = 30.0  # s: a longer stretch between the caller's boundaries is cut into parts of at most this
MIN_PART = 1.0  # s: a shorter part joins the one before it
TOLERANCE = 0.05  # LU: a limited mix further than this from its target gets the gain again
TRIES = 8  # gains tried: the limiter takes back part of each
LIMIT_ATTACK = 0.003  # s: the limiter looks this far ahead, its gain a moving mean over as long
LIMIT_HOLD = 0.003  # s: and holds a reduction this long after the peak that asked for it (longer holds make it an
# AGC on speech: on a Piper dialogue at -26 LUFS, -6.9 dBTP, -14 LUFS under -4 dBTP took +19.8 dB with 3 ms,
# +24.8 with 10 ms, and 30 ms never reached it)
EDGE_FADE = 0.005  # dialogue pieces: a 5 ms ramp so a line never clicks in
CROSSFADE = 1.0  # s: music and effects pieces that follow one another crossfade this long across the cut (`joined`)
JOIN = 0.05  # s: a piece that starts within this of the last one's end follows it
SIDES = (None, MUSIC_SIDE, EFFECTS_SIDE)  # per stem: dialogue centred, music and effects widened (`stereo`)


@dataclass(frozen=True)
class Placed:
    """A sound file placed at `start` seconds; with `length`, cut to that window (music and effects are faded at
    its edges)."""

    start: float
    path: Path
    length: float | None = None
    # seconds of an equal-power crossfade with the piece before / after it on the stem (`joined`); None: the stem's
    # own fade at that edge
    fade_in: float | None = None
    fade_out: float | None = None


@dataclass(frozen=True)
class MixSettings:
    target: Target = TARGETS["web"]
    dialogue_db: float = 0.0
    music_db: float = -8.0
    effects_db: float = -14.0
    ducking: bool = True
    fade: float = 1.0  # seconds of fade in and out at each music and effects window's edges
    # dB the last limiter stays under the true-peak ceiling: 1 for a WAV; a lossy codec after the mix (the film's
    # AAC) overshoots by up to about 1.6 dB (measured), so the film's mix keeps more (app/services/audio.py)
    headroom: float = 1.0
    channels: int = 2  # 2: stereo (dialogue centred, music and effects wide); 1: mono
    width: float = WIDTH  # how wide a mono cue or effect is made (`stereo.widen`; 0: centred)


@dataclass(frozen=True)
class MixResult:
    path: Path
    seconds: float
    loudness: Loudness  # computed from the parts' blocks and peaks (ffmpeg's ebur128 agrees within 0.05 LU)
    normalisation: str  # "one gain +x.x dB", and in how many parts the limiter ran
    target: Target
    stems: dict[str, Path] = field(default_factory=dict)  # levelled (and ducked) stems before normalisation
    graph: str = ""  # a part's filter graph, as ffmpeg ran it
    parts_mixed: int = 0  # parts mixed now
    parts_reused: int = 0  # parts the cache held
    gain_db: float = 0.0  # the one gain the mix got
    limited: int = 0  # parts the limiter ran on


@dataclass(frozen=True)
class Part:
    """A span of the film mixed before normalisation. `folder` holds its stems (16-bit WAVs), its sum (`mix.f32`,
    float, channels interleaved: before normalisation it may pass full scale), its reach (the louder channel's) and
    `part.json` (its channels, blocks and true peak)."""

    start: int  # first sample on the film (a multiple of GRID)
    end: int
    folder: Path
    z: np.ndarray  # K-weighted mean square per 100 ms of the span
    peak: float  # true peak (linear) of the span's sum, its louder channel
    made: bool  # mixed now (else found in the cache)
    channels: int = 1

    def raw(self) -> np.ndarray:
        """The sum, `(samples, channels)`."""
        return np.fromfile(self.folder / "mix.f32", "<f4").reshape(-1, self.channels)

    def reach(self) -> np.ndarray:
        return np.fromfile(self.folder / "reach.f16", "<f2").astype(np.float32)


@dataclass(frozen=True)
class Window:
    """Where a piece of a stem sounds on the film (seconds), and how it meets its neighbours (`joined`)."""

    start: float
    end: float
    fade_in: float | None = None  # an equal-power crossfade this long with the window before; None: none
    fade_out: float | None = None

    @property
    def seconds(self) -> float:
        return round(self.end - self.start, 3)

    @property
    def fades(self) -> tuple[float | None, float | None]:
        return self.fade_in, self.fade_out


def joined(windows: list[tuple[float, float]], seconds: float, crossfade: float = CROSSFADE) -> list[Window]:
    """Windows (start, end) of pieces that follow one another on a stem (each scene's cue, each shot's sounds), made
    to crossfade where one ends as the next begins (within `JOIN`, or overlapping): each is widened past the cut by
    half the crossfade (a crossfade at most as long as the shorter window), so one fades out while the next fades in over the
    same stretch, centred on the cut, with equal-power ramps; the level holds across the cut instead of falling to
    silence between a fade-out and a fade-in. An edge that meets no window keeps the stem's own fade. Widening stays
    within the film (0 to `seconds`); the pieces are made as long as their widened windows."""
    order = sorted(range(len(windows)), key=lambda i: windows[i][0])
    out: dict[int, Window] = {i: Window(*windows[i]) for i in order}
    for i, j in zip(order, order[1:], strict=False):
        a, b = out[i], out[j]
        (a0, a1), (b0, b1) = windows[i], windows[j]
        if b0 > a1 + JOIN:
            continue
        c = min(crossfade, a1 - a0, b1 - b0)
        if c <= 0:
            continue
        end, start = min(seconds, a1 + c / 2), max(0.0, b0 - c / 2)
        overlap = round(end - start, 3)
        out[i] = Window(a.start, round(end, 3), a.fade_in, overlap)
        out[j] = Window(round(start, 3), b.end, overlap, b.fade_out)
    return [out[i] for i in range(len(windows))]


def spans(bounds, seconds: float, max_part: float = MAX_PART) -> list[tuple[int, int]]:
    """(start, end) samples of the parts of a `seconds`-long film cut at `bounds` (seconds): each start on the
    100-ms grid, none shorter than MIN_PART (it joins the part before) nor longer than `max_part`."""
    n = round(seconds * RATE)
    cuts = sorted({round(b * RATE / GRID) * GRID for b in bounds} - {0})
    starts = [0]
    for c in cuts:
        if c - starts[-1] >= MIN_PART * RATE and n - c >= MIN_PART * RATE:
            starts.append(c)
    out = []
    for a, b in zip(starts, [*starts[1:], n], strict=True):
        pieces = max(1, -(-(b - a) // round(max_part * RATE)))
        step = -(-(b - a) // pieces // GRID) * GRID
        edges = [a + k * step for k in range(pieces) if a + k * step < b]
        out += list(zip(edges, [*edges[1:], b], strict=True))
    return out


class _Pieces:
    """Pieces' samples at RATE, `(n, channels)`, loaded once per mix, cut to their length, placed in the image
    (`stereo.placed`: centred, or kept, or made wide from `side`) and faded as they sound on their stem."""

    def __init__(self, identity: Callable[[Path], str], channels: int = 1, width: float = WIDTH) -> None:
        self.identity = identity
        self.channels, self.width = channels, width
        self._samples: dict[tuple, np.ndarray] = {}
        self._lengths: dict[tuple, int] = {}

    def samples(self, piece: Placed, edge: float, side: int | None = None) -> np.ndarray:
        k = (piece.path, piece.length, edge, side, piece.fade_in, piece.fade_out)
        if k not in self._samples:
            x = _load(piece.path)
            if piece.length is not None:
                x = x[: round(piece.length * RATE)]
            x = placed(x, self.channels, side, self.width)
            if piece.fade_in is None and piece.fade_out is None:
                x = fade(x, RATE, edge, edge)
            else:  # a crossfade at one edge or both: equal power there, the stem's own fade elsewhere
                x = fade(x, RATE, piece.fade_in or 0.0, 0.0, power=True) if piece.fade_in else fade(x, RATE, edge, 0.0)
                x = fade(x, RATE, 0.0, piece.fade_out, power=True) if piece.fade_out else fade(x, RATE, 0.0, edge)
            self._samples[k] = x
        return self._samples[k]

    def length(self, piece: Placed) -> int:
        """Samples the piece lasts at most (its window; a line's own length from its WAV header)."""
        if piece.length is not None:
            return round(piece.length * RATE)
        k = (piece.path, None)
        if k not in self._lengths:
            try:
                with wave.open(str(piece.path), "rb") as w:
                    self._lengths[k] = round(w.getnframes() * RATE / w.getframerate())
            except (wave.Error, EOFError):
                self._lengths[k] = len(_load(piece.path))
        return self._lengths[k]

    def within(self, pieces: list[Placed], s: int, b: int) -> list[Placed]:
        return [p for p in pieces if _at(p) < b and _at(p) + self.length(p) > s]

    def stem(self, pieces: list[Placed], edge: float, s: int, b: int, side: int | None = None) -> np.ndarray:
        """The pieces summed over samples [s, b) of the film, `(b - s, channels)`."""
        out = np.zeros((b - s, self.channels), np.float32)
        for p in self.within(pieces, s, b):
            x, i = self.samples(p, edge, side), _at(p)
            lo, hi = max(0, s - i), min(len(x), b - i)
            if hi > lo:
                out[i + lo - s : i + hi - s] += x[lo:hi]
        return out


def _at(piece: Placed) -> int:
    return max(0, round(piece.start * RATE))


def build_stem(
    pieces: list[Placed], seconds: float, edge_fade: float, channels: int = 1, side: int | None = None
) -> np.ndarray:
    """Sum pieces into one track `seconds` long at RATE, as the mix places them on a stem of `channels` (`side`: see
    `SIDES`); mono `(n,)` for one channel. A piece past the end is cut there."""
    out = _Pieces(str, channels).stem(pieces, edge_fade, 0, round(seconds * RATE), side)
    return out[:, 0] if channels == 1 else out


def _load(path: Path) -> np.ndarray:
    """A piece's samples at RATE with its own channels, `(n, 1)` or `(n, 2)`."""
    path = Path(path)
    if path.suffix.lower() == ".wav":
        try:
            samples, rate = read_frames(path)
            if samples.shape[1] <= 2:
                return resample(samples, rate, RATE)
        except Exception:  # a WAV this package did not write (float, 24-bit): ffmpeg reads it
            pass
    return decode(path, RATE, stereo=True)


def graph(settings: MixSettings) -> str:
    """The filter graph over inputs 0 dialogue, 1 music, 2 effects; outputs the levelled stems [d], [m], [e] (the
    ducked music may run past the part: `mix_part` cuts it). `sidechaincompress` ends when its first input does and
    drops what the other still holds: 50-150 ms of the music went missing at every part's end, which is a scene's cut
    (amix then summed a hole there, and the joined music stem ran early). Both its inputs are padded with silence, so
    what is dropped is the padding; the sum is taken in numpy (`mix_part`) from the stems themselves."""
    duck = (
        f"[m0]apad=pad_dur={DUCK_PAD}[mp];[key]apad=pad_dur={DUCK_PAD}[kp];[mp][kp]{DUCK}[m]"
        if settings.ducking
        else "[m0]anull[m];[key]anullsink"
    )
    return ";".join(
        [
            f"[0:a]{DIALOGUE},volume={settings.dialogue_db}dB,asplit=2[key][d]",
            f"[1:a]volume={settings.music_db}dB[m0]",
            duck,
            f"[2:a]volume={settings.effects_db}dB[e]",
        ]
    )


def ffmpeg_args(stems: dict[str, Path], filters: str, out: dict[str, Path]) -> list[str]:
    """Run `graph` over the raw stems: the levelled stems as raw float samples (channels interleaved) to `out`."""
    args = ["-nostats"]
    for name in STEMS:
        args += ["-i", str(stems[name])]
    args += ["-filter_complex", filters]
    for name, label in zip(STEMS, ("d", "m", "e"), strict=True):
        args += ["-map", f"[{label}]", "-c:a", "pcm_f32le", "-f", "f32le", "-y", str(out[name])]
    return args


def reach(samples: np.ndarray) -> np.ndarray:
    """Per sample, the largest |value| any channel reaches from it to the next (`loudness.oversampled`, 4×): what a
    true-peak limiter must keep under its ceiling."""
    from .loudness import oversampled

    x = samples.reshape(len(samples), -1)
    return np.max([oversampled(x[:, c]) for c in range(x.shape[1])], axis=0).astype(np.float32)


def limiter_gain(peaks: np.ndarray, ceiling: float) -> np.ndarray:
    """The limiter's gain for a signal whose `reach` is `peaks`: the gain each sample needs, its minimum over the
    LIMIT_HOLD before it and the LIMIT_ATTACK after it (it looks ahead, then holds), then the mean of that over
    LIMIT_ATTACK: smooth, and never above what any sample in reach needs (each mean is of minima whose windows all
    hold the sample's own need)."""
    from scipy.ndimage import minimum_filter1d, uniform_filter1d

    need = np.minimum(1.0, ceiling / np.maximum(peaks.astype(np.float64), 1e-12))
    if need.min() >= 1.0:
        return np.ones(len(peaks), np.float32)
    attack, hold = round(LIMIT_ATTACK * RATE), round(LIMIT_HOLD * RATE)
    held = minimum_filter1d(need, hold + attack + 1, mode="nearest", origin=(hold - attack) // 2)
    return uniform_filter1d(held, attack | 1, mode="nearest").astype(np.float32)


def limit(samples: np.ndarray, ceiling: float) -> np.ndarray:
    """`samples` with their true peak brought under `ceiling` (linear) by `limiter_gain`, one gain for every
    channel."""
    gain = limiter_gain(reach(samples), ceiling)
    return samples * (gain if samples.ndim == 1 else gain[:, None])


def mix_part(
    pieces: _Pieces,
    stems: tuple[list[Placed], list[Placed], list[Placed]],
    span: tuple[int, int],
    settings: MixSettings,
    folder: Path,
    cancel=None,
) -> None:
    """Mix samples `span` of the film into `folder` (see `Part`)."""
    a, b = span
    folder.mkdir(parents=True, exist_ok=True)
    edges = (EDGE_FADE, settings.fade, settings.fade)
    raw = {
        name: write_wav(folder / f"{name}.raw.wav", pieces.stem(stem, edge, a, b, side), RATE)
        for name, stem, edge, side in zip(STEMS, stems, edges, SIDES, strict=True)
    }
    if cancel is not None:
        cancel.raise_if_cancelled()
    levelled = {name: folder / f"{name}.f32" for name in STEMS}
    run_ffmpeg(ffmpeg_args(raw, graph(settings), levelled), cancel=cancel)
    for path in raw.values():
        path.unlink()
    summed = np.zeros((b - a, settings.channels), np.float32)
    for name, path in levelled.items():
        stem = np.fromfile(path, "<f4").reshape(-1, settings.channels)[: b - a]
        if len(stem) != b - a:
            raise RuntimeError(
                f"the part's {name} has {len(stem)} samples of {settings.channels} channels, not {b - a}"
            )
        summed += stem
        write_wav(folder / f"{name}.wav", stem, RATE)
        path.unlink()
    summed.astype("<f4").tofile(folder / "mix.f32")
    peaks = reach(summed)
    peaks.astype("<f2").tofile(folder / "reach.f16")  # half precision: 0.01 dB, the limiter's input
    facts = {
        "samples": b - a,
        "channels": settings.channels,
        "peak": float(peaks.max(initial=0.0)),
        "z": sub_blocks(summed).tolist(),
    }
    (folder / "part.json").write_text(json.dumps(facts))


def _part(folder: Path, span: tuple[int, int], made: bool) -> Part:
    facts = json.loads((folder / "part.json").read_text())
    return Part(span[0], span[1], folder, np.array(facts["z"]), facts["peak"], made, facts["channels"])


def part_key(pieces: _Pieces, stems, span: tuple[int, int], settings: MixSettings) -> str:
    """What a part's samples depend on: the pieces heard in it (by content, and where they sit relative to it), its
    length and the settings that shape it before normalisation."""
    a, b = span
    placed = [
        [[pieces.identity(p.path), _at(p) - a, p.length, p.fade_in, p.fade_out] for p in pieces.within(stem, a, b)]
        for stem in stems
    ]
    shape = {k: v for k, v in settings.__dict__.items() if k not in ("target", "headroom")}
    return key(kind="part", pieces=placed, samples=b - a, settings=shape, graph=graph(settings))


def mix_parts(
    stems: tuple[list[Placed], list[Placed], list[Placed]],
    seconds: float,
    cache: Path,
    settings: MixSettings = MixSettings(),
    bounds=(),
    identity: Callable[[Path], str] | None = None,
    max_part: float = MAX_PART,
    cancel=None,
) -> list[Part]:
    """The film's parts (see `spans`), each found in `cache` by `part_key` or mixed now into it. `identity` names a
    piece's file by its content (default: its sha256)."""
    from storage.fileio import file_sha256

    pieces = _Pieces(identity or file_sha256, settings.channels, settings.width)
    parts = []
    for span in spans(bounds, seconds, max_part):
        folder = Path(cache) / part_key(pieces, stems, span, settings)
        if (folder / "part.json").is_file():
            parts.append(_part(folder, span, False))
            continue
        work = folder.with_name(f".{folder.name}.part{os.getpid()}")
        shutil.rmtree(work, ignore_errors=True)
        try:
            mix_part(pieces, stems, span, settings, work, cancel)
            work.rename(folder)
        except OSError:  # another render stored the same part first
            if not (folder / "part.json").is_file():
                raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
        parts.append(_part(folder, span, True))
    return parts


def level(parts: list[Part], settings: MixSettings) -> tuple[float, dict[int, np.ndarray], Loudness]:
    """(the gain in dB, the limited parts' samples by index, the loudness) that bring the parts' sum to the target:
    one gain from the concatenated blocks; the limiter where that gain takes a part's true peak over the ceiling,
    then the gain again from the limited parts' blocks (the secant through the last two tries, at most TRIES)."""
    target = settings.target.lufs
    ceiling = 10 ** ((settings.target.true_peak - settings.headroom) / 20)
    raw = integrated_of(np.concatenate([p.z for p in parts]))
    if raw == float("-inf"):
        raise ValueError("the mix is silent: nothing to normalise")
    samples: dict[int, np.ndarray] = {}
    peaks_of: dict[int, np.ndarray] = {}  # a part's reach, computed once: each try only scales it
    tried: list[tuple[float, float]] = []
    gain = target - raw
    for _ in range(TRIES):
        g = 10 ** (gain / 20)
        limited: dict[int, np.ndarray] = {}
        zs, peaks = [], []
        for i, p in enumerate(parts):
            if p.peak * g <= ceiling:
                zs.append(p.z * g * g)
                peaks.append(p.peak * g)
                continue
            if i not in samples:
                samples[i] = p.raw()
                peaks_of[i] = p.reach()
            envelope = limiter_gain(peaks_of[i] * np.float32(g), ceiling) * np.float32(g)
            limited[i] = samples[i] * envelope[:, None]
            zs.append(sub_blocks(limited[i]))
            peaks.append(float(np.max(peaks_of[i] * envelope)))
        z = np.concatenate(zs)
        lufs = integrated_of(z)
        if not limited or abs(lufs - target) <= TOLERANCE:
            break
        tried.append((gain, lufs))
        slope = 1.0
        if len(tried) > 1 and tried[-1][1] != tried[-2][1]:
            slope = (tried[-1][1] - tried[-2][1]) / (tried[-1][0] - tried[-2][0])
        gain += min(12.0, (target - lufs) / min(1.0, max(slope, 0.1)))
    loudness = Loudness(round(lufs, 2), round(db(max(peaks)), 2), lra_of(z))
    return gain, limited, loudness


def _join_wavs(paths: list[Path], out: Path) -> Path:
    """16-bit WAVs (of the same channels) one after the other, without decoding them."""
    tmp = out.with_name(f".{out.name}.part{os.getpid()}")
    with wave.open(str(paths[0]), "rb") as first:
        channels = first.getnchannels()
    with wave.open(str(tmp), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(RATE)
        for path in paths:
            with wave.open(str(path), "rb") as r:
                w.writeframes(r.readframes(r.getnframes()))
    os.replace(tmp, out)
    return out


def mix(
    dialogue: list[Placed],
    music: list[Placed],
    effects: list[Placed],
    seconds: float,
    out: Path,
    work_dir: Path,
    settings: MixSettings = MixSettings(),
    cancel=None,
    *,
    bounds=(),
    cache: Path | None = None,
    identity: Callable[[Path], str] | None = None,
    max_part: float = MAX_PART,
) -> MixResult:
    """Mix the three stems into `out` (48 kHz WAV of `settings.channels`, `seconds` long) at `settings.target`, in
    parts cut at
    `bounds` (seconds) and kept in `cache` (default: `work_dir`, so nothing is reused); the stems go to `work_dir`."""
    if seconds <= 0:
        raise ValueError(f"a mix needs a positive length, got {seconds}")
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    stems = (dialogue, music, effects)
    parts = mix_parts(stems, seconds, cache or work_dir / "parts", settings, bounds, identity, max_part, cancel)
    if cancel is not None:
        cancel.raise_if_cancelled()
    gain, limited, loudness = level(parts, settings)
    g = np.float32(10 ** (gain / 20))
    total = np.empty((round(seconds * RATE), settings.channels), np.float32)
    for i, p in enumerate(parts):
        total[p.start : p.end] = limited[i] if i in limited else p.raw() * g
    out = Path(out)
    write_wav(out, total, RATE)
    paths = {name: _join_wavs([p.folder / f"{name}.wav" for p in parts], work_dir / f"{name}.wav") for name in STEMS}
    where = f", the limiter in {len(limited)} of {len(parts)} parts" if limited else ""
    return MixResult(
        path=out,
        seconds=seconds,
        loudness=loudness,
        normalisation=f"one gain {gain:+.1f} dB{where}",
        target=settings.target,
        stems=paths,
        graph=graph(settings),
        parts_mixed=sum(p.made for p in parts),
        parts_reused=sum(not p.made for p in parts),
        gain_db=round(gain, 2),
        limited=len(limited),
    )
