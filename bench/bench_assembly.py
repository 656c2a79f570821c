"""Film assembly: our assemble() against a moviepy re-encode and a bare `ffmpeg -f concat -c copy`.

    .venv/bin/python bench/bench_assembly.py                 # 10-minute film: 120 clips x 5 s, 640x360, 24 fps
    .venv/bin/python bench/bench_assembly.py --minutes 2 --json

Clips are generated once (H.264 through generation.video_io, like a backend writes them) and cached
under the temp folder, so later runs only time the assembly. Prints seconds and ratios.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generation.assembly import assemble, film_info  # noqa: E402
from generation.video_io import ffmpeg_exe, write_video  # noqa: E402


def make_clips(n: int, seconds: float, w: int, h: int, fps: int, folder: Path) -> list[Path]:
    """n clips with a per-clip colour field, a moving bar and mild texture (cached by name)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    texture = rng.integers(0, 24, (h, w, 1), dtype=np.uint8)
    yy, xx = np.mgrid[0:h, 0:w]
    paths = []
    for i in range(n):
        path = folder / f"clip{i:04d}.mp4"
        paths.append(path)
        if path.exists():
            continue
        hue = np.array([(i * 53) % 200, (i * 97) % 200, (i * 151) % 200], np.uint8)
        base = (hue + ((xx + yy) // 8 % 32)[..., None] + texture).astype(np.uint8)

        def frames(base=base, n_frames=round(seconds * fps)):
            for f in range(n_frames):
                frame = base.copy()
                x = (f * 7) % w
                frame[:, x : x + 12] = 240
                yield frame

        write_video(frames(), path, fps)
    return paths


def time_ours(clips: list[Path], out: Path, **kw) -> float:
    t = time.perf_counter()
    res = assemble(clips, out, **kw)
    elapsed = time.perf_counter() - t
    assert kw or res.stream_copied, res.reencoded
    return elapsed


def time_bare_ffmpeg(clips: list[Path], out: Path) -> float:
    listing = out.with_suffix(".txt")
    listing.write_text("".join(f"file '{p.resolve()}'\n" for p in clips))
    t = time.perf_counter()
    subprocess.run(
        [
            ffmpeg_exe(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "concat",
            "-safe",
            "0",
            "-i",
            str(listing),
            "-c",
            "copy",
            str(out),
        ],
        check=True,
    )
    return time.perf_counter() - t


def time_moviepy(clips: list[Path], out: Path, fps: int) -> float:
    from moviepy import VideoFileClip, concatenate_videoclips

    t = time.perf_counter()
    sources = [VideoFileClip(str(p), audio=False) for p in clips]
    try:
        film = concatenate_videoclips(sources)
        film.write_videofile(str(out), fps=fps, codec="libx264", audio=False, logger=None)
    finally:
        for s in sources:
            s.close()
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--clip-seconds", type=float, default=5.0)
    ap.add_argument("--size", default="640x360", help="WxH")
    ap.add_argument("--fps", type=int, default=24)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "chief-bench" / "clips")
    ap.add_argument("--skip-moviepy", action="store_true", help="moviepy re-encodes the whole film (slow)")
    ap.add_argument("--reencode", action="store_true", help="also time our re-encode path (a 0.5 s crossfade)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)

    w, h = (int(v) for v in args.size.lower().split("x"))
    n = max(1, round(args.minutes * 60 / args.clip_seconds))
    folder = args.cache / f"{w}x{h}-{args.fps}fps-{args.clip_seconds}s"
    t = time.perf_counter()
    clips = make_clips(n, args.clip_seconds, w, h, args.fps, folder)
    gen = time.perf_counter() - t
    work = Path(tempfile.mkdtemp(prefix="chief-bench-out-"))

    seconds = {
        "ours (assemble, stream copy)": time_ours(clips, work / "ours.mp4"),
        "bare ffmpeg concat -c copy": time_bare_ffmpeg(clips, work / "bare.mp4"),
    }
    if args.reencode:
        seconds["ours (re-encode: 0.5 s crossfade)"] = time_ours(clips, work / "xfade.mp4", crossfade=0.5)
    if not args.skip_moviepy:
        seconds["moviepy concatenate + libx264"] = time_moviepy(clips, work / "moviepy.mp4", args.fps)
    ours = seconds["ours (assemble, stream copy)"]
    info = film_info(work / "ours.mp4")
    result = {
        "clips": n,
        "clip_seconds": args.clip_seconds,
        "size": f"{w}x{h}",
        "fps": args.fps,
        "film_seconds": info["duration"],
        "film_frames": info["frames"],
        "clip_generation_seconds": round(gen, 2),
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
        "ratio_vs_ours": {k: round(v / ours, 2) for k, v in seconds.items()},
        "output_mb": {p.stem: round(p.stat().st_size / 1e6, 2) for p in sorted(work.glob("*.mp4"))},
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{n} clips x {args.clip_seconds}s at {w}x{h} {args.fps} fps -> {info['duration']:.1f}s film "
            f"({info['frames']} frames); clip generation {gen:.1f}s (cached: {folder})"
        )
        for k, v in seconds.items():
            print(f"  {k:<36} {v:8.2f} s   x{v / ours:7.1f} ours")
    for p in work.iterdir():
        p.unlink()
    work.rmdir()
    return result


if __name__ == "__main__":
    main()
