"""The mix's cost per minute of film against ffmpeg alone running the same filter graph over the whole film with
two-pass loudnorm, and the stereo mix (the default) against a mono one, in one run (medians of `--repeat`
interleaved runs).

A film of `--minutes` (scenes of 30 s, a Piper line every 5 s spoken by four cast voices, a temp-score cue per
scene, temp ambience under all of it) is mixed by `generation.audio.mix.mix` (in parts of a scene: placing pieces,
the filter graph per part, one gain from the parts' blocks, the limiter where it must), from an empty part cache;
then ffmpeg alone runs the same graph over the whole film's stems (placed as the mix places them: stereo) with
loudnorm measuring, then applying; then `mix` again with `channels=1`. Making the pieces (voices, cues) is timed
apart.

python -m bench.audio_mix [--minutes 1] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from generation.audio.ambience import ambience
from generation.audio.loudness import loudnorm_filter, loudnorm_json
from generation.audio.mix import EDGE_FADE, SIDES, STEMS, MixSettings, Placed, build_stem, graph, mix
from generation.audio.pcm import RATE, write_wav
from generation.audio.score import compose
from generation.audio.voices import Voices, cast
from generation.video_io import ffmpeg_exe

LINES = (
    "Where were you last night?",
    "At the lighthouse, watching the sea.",
    "The boats are late again.",
    "Hold the rope, and do not let go.",
    "I heard the bell before the storm.",
    "We leave at dawn, all of us.",
)
CUES = ("tense slow strings", "hopeful piano", "melancholy strings and harp", "driving drums and synth, 130 bpm")


def make_pieces(seconds: float, work: Path) -> tuple[list, list, list, dict]:
    names = ["Mara", "Tom", "Ines", "Oskar"]
    voices, c = Voices(work / "lines"), cast(names)
    times = {}
    t = time.perf_counter()
    dialogue = []
    for i, start in enumerate(range(1, int(seconds) - 3, 5)):
        spoken = voices.speak(LINES[i % len(LINES)], c[names[i % 4]], "")
        dialogue.append(Placed(float(start), spoken.path))
    times["voices (made once per distinct line)"] = time.perf_counter() - t
    t = time.perf_counter()
    music, scene = [], 30.0
    for k in range(int(-(-seconds // scene))):
        length = min(scene, seconds - k * scene)
        cue = compose(CUES[k % len(CUES)], length, seed=k)
        write_wav(work / f"cue{k}.wav", cue.samples, cue.rate)
        music.append(Placed(k * scene, work / f"cue{k}.wav", length))
    times["temp score"] = time.perf_counter() - t
    t = time.perf_counter()
    amb = ambience("rain and wind by the sea", seconds, seed=1).sound
    write_wav(work / "amb.wav", amb.samples, amb.rate)
    times["temp effects"] = time.perf_counter() - t
    return dialogue, music, [Placed(0.0, work / "amb.wav", seconds)], times


def bare_ffmpeg(stems: dict[str, Path], settings: MixSettings, out: Path) -> float:
    """The same filter graph over the whole film, loudnorm measuring then applying, by ffmpeg alone."""
    inputs = [a for name in STEMS for a in ("-i", str(stems[name]))]

    def run(loudnorm: str, to: list[str]) -> str:
        filters = f"{graph(settings)};[mix]{loudnorm}[n];[d]anullsink;[m]anullsink;[e]anullsink"
        cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", "-nostats", *inputs, "-filter_complex", filters, "-map", "[n]"]
        return subprocess.run([*cmd, *to], capture_output=True, text=True, check=True).stderr

    t = time.perf_counter()
    measured = loudnorm_json(run(loudnorm_filter(settings.target), ["-f", "null", "-"]))
    run(loudnorm_filter(settings.target, measured), ["-c:a", "pcm_s16le", "-y", str(out)])
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--quick", action="store_true", help="half a minute")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side; medians are reported")
    args = ap.parse_args(argv)
    seconds = 30.0 if args.quick else args.minutes * 60
    work = Path(tempfile.mkdtemp(prefix="chief-bench-audio-"))
    dialogue, music, effects, making = make_pieces(seconds, work)
    settings = MixSettings()
    raw = {
        name: write_wav(work / f"{name}.raw.wav", build_stem(pieces, seconds, edge, settings.channels, side), RATE)
        for name, pieces, edge, side in zip(
            STEMS, (dialogue, music, effects), (EDGE_FADE, settings.fade, settings.fade), SIDES, strict=True
        )
    }
    mono = MixSettings(channels=1)
    ours_runs, bare_runs, mono_runs = [], [], []
    for _ in range(args.repeat):  # interleaved, so a busy moment on a shared machine hits both sides
        t = time.perf_counter()
        shutil.rmtree(work / "mix", ignore_errors=True)  # an empty part cache: every part mixed
        result = mix(dialogue, music, effects, seconds, work / "mix.wav", work / "mix", settings)
        ours_runs.append(time.perf_counter() - t)
        bare_runs.append(bare_ffmpeg(raw, settings, work / "bare.wav"))
        t = time.perf_counter()
        shutil.rmtree(work / "mono", ignore_errors=True)
        mix(dialogue, music, effects, seconds, work / "mono.wav", work / "mono", mono)
        mono_runs.append(time.perf_counter() - t)
    ours, bare = sorted(ours_runs)[len(ours_runs) // 2], sorted(bare_runs)[len(bare_runs) // 2]
    single = sorted(mono_runs)[len(mono_runs) // 2]
    minutes = seconds / 60
    out = {
        "film_seconds": seconds,
        "lines": len(dialogue),
        "making_seconds": {k: round(v, 2) for k, v in making.items()},
        "repeats": args.repeat,
        "mix_seconds": round(ours, 2),
        "bare_ffmpeg_seconds": round(bare, 2),
        "mix_seconds_per_film_minute": round(ours / minutes, 2),
        "ratio_mix_vs_bare_ffmpeg": round(ours / bare, 2),
        "mono_mix_seconds": round(single, 2),
        "ratio_stereo_vs_mono_mix": round(ours / single, 2),
        "loudness": result.loudness.__dict__,
        "normalisation": result.normalisation,
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(
            f"film {seconds:.0f} s, {len(dialogue)} lines; making: "
            + ", ".join(f"{k} {v:.2f} s" for k, v in making.items())
        )
        print(
            f"mix {ours:.2f} s ({ours / minutes:.2f} s per film minute) vs ffmpeg alone {bare:.2f} s: ×{ours / bare:.2f}"
        )
        print(f"stereo mix {ours:.2f} s vs mono mix {single:.2f} s: ×{ours / single:.2f}")
        print(f"measured: {result.loudness} ({result.normalisation})")
    return out


if __name__ == "__main__":
    main()
