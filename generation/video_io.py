"""Reading and writing video files through the ffmpeg binary that imageio-ffmpeg ships.

Everything written is H.264 / yuv420p mp4 with the moov atom up front, so browsers play it. Every file read here is
opened through `generation.ffmpeg_input` (the container from its bytes, an allow-listed demuxer, local files only).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from storage.fileio import atomic_path

from .ffmpeg import ffmpeg_exe as ffmpeg_exe  # the runner lives in generation.ffmpeg; importable here too
from .ffmpeg import run
from .ffmpeg import run_ffmpeg as run_ffmpeg
from .ffmpeg_input import AUDIO, VIDEO, input_args, refuse_references

# imageio-ffmpeg starts its ffmpeg in a process group of its own (preexec_fn=os.setpgrp: Ctrl-C does not reach it),
# which makes Python fork the whole process instead of vfork-ing: 12 ms of CPU and 30-40 ms per clip written from a
# 740 MB process (bench: 0.6 ms and ~20 ms without), more from a server holding a pipeline. Its own switch turns that
# off; Ctrl-C then stops the writer with the render it belongs to, whose unfinished clip is never kept (atomic_path).
os.environ.setdefault("IMAGEIO_FFMPEG_NO_PREVENT_SIGINT", "1")

H264_ARGS = ["-preset", "veryfast", "-crf", "20", "-movflags", "+faststart"]
PROBE_SECONDS = 60.0  # reading a file's header (`ffmpeg -i`): far longer than any real one takes
INSPECTED_MOST = 1024  # files whose `inspect` facts a process keeps (a few hundred bytes each)
_inspected: OrderedDict[tuple, dict] = OrderedDict()
_inspected_lock = threading.Lock()


def write_video(frames: Iterable[np.ndarray], path: Path, fps: int) -> int:
    """Encode RGB uint8 frames (H, W, 3) to `path`; returns the frame count.

    Width and height must be even (yuv420p). Writes to a temporary name and renames, so a
    crash never leaves a truncated file under the final name.
    """
    import imageio_ffmpeg

    path = Path(path)
    it = iter(frames)
    first = next(it)
    h, w = first.shape[:2]
    if h % 2 or w % 2:
        raise ValueError(f"frame size {w}x{h} must be even for yuv420p")
    with atomic_path(path, ".mp4") as tmp:
        writer = imageio_ffmpeg.write_frames(
            str(tmp),
            (w, h),
            fps=fps,
            codec="libx264",
            pix_fmt_out="yuv420p",
            macro_block_size=1,
            output_params=H264_ARGS,
            ffmpeg_log_level="quiet",  # failures are detected below, in one clear line
        )
        writer.send(None)
        n = 0
        try:
            for frame in _chain(first, it):
                writer.send(np.ascontiguousarray(frame, dtype=np.uint8))
                n += 1
        finally:
            writer.close()
        _check_written(tmp, n, path.name)
    return n


def _check_written(tmp: Path, n: int, name: str) -> None:
    """ffmpeg's exit status is not checked by imageio-ffmpeg: check the file holds every frame."""
    import errno
    import shutil

    track = mp4_video_track(tmp) if tmp.exists() else None
    if track is not None and track["frames"] == n:
        return
    if shutil.disk_usage(tmp.parent).free < (4 << 20):
        raise OSError(errno.ENOSPC, f"No space left on device while writing {name}")
    raise OSError(
        errno.EIO, f"ffmpeg wrote an incomplete video for {name} ({track['frames'] if track else 0}/{n} frames)"
    )


def _chain(first: np.ndarray, rest: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    yield first
    yield from rest


def read_frames(path: Path) -> tuple[list[np.ndarray], float]:
    """Decode every frame (RGB uint8) and return (frames, fps)."""
    import imageio_ffmpeg

    file, options = _imageio_input(path)
    reader = imageio_ffmpeg.read_frames(file, pix_fmt="rgb24", input_params=options)
    meta = next(reader)
    w, h = meta["size"]
    frames = [np.frombuffer(buf, np.uint8).reshape(h, w, 3) for buf in reader]
    return frames, float(meta["fps"])


def probe(path: Path) -> dict:
    """Basic stream facts without decoding: size, fps, duration (from ffmpeg's header parse)."""
    import imageio_ffmpeg

    file, options = _imageio_input(path)
    reader = imageio_ffmpeg.read_frames(file, input_params=options)
    meta = next(reader)
    reader.close()
    return {
        "width": meta["size"][0],
        "height": meta["size"][1],
        "fps": float(meta["fps"]),
        "duration": float(meta["duration"]),
        "codec": meta.get("codec", ""),
    }


def _imageio_input(path: Path) -> tuple[str, list[str]]:
    """(the file, its input options) for imageio-ffmpeg, which puts the options before its own `-i`."""
    args = input_args(path, VIDEO, "a video file")
    return args[-1], args[:-2]


def inspect(path: Path) -> dict:
    """Stream parameters parsed from `ffmpeg -i` (there is no ffprobe): what must match for `-c copy`.

    Returns codec, profile, pix_fmt, width, height, fps, tbn, duration, has_audio, `extradata`
    (the H.264 avcC box, i.e. the SPS/PPS the decoder is configured with) and `frames` (the video
    packet count from the mp4 sample table); the last two are None for other codecs/containers.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such video: {path}")
    st = path.stat()
    # The same file, unchanged: CHIEF writes media by renaming a finished file into place (a new inode) and never
    # changes one in place, so its identity, size and times name its bytes. A render and its critics ask for a clip's
    # facts several times (assembly, frame sampling, measurement), each an ffmpeg run of ~20 ms of CPU.
    key = (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _inspected_lock:
        if key in _inspected:
            _inspected.move_to_end(key)
            return dict(_inspected[key])
    info = _inspect(path)
    with _inspected_lock:
        _inspected[key] = dict(info)
        while len(_inspected) > INSPECTED_MOST:
            _inspected.popitem(last=False)
    return info


def _inspect(path: Path) -> dict:
    import re

    err = run(input_args(path, VIDEO, "a video file"), timeout=PROBE_SECONDS, check=False).stderr  # no output: exit 1
    refuse_references(path, err)
    video = re.search(
        r"Stream #\d+:\d+.*?: Video: (\w+)(?: \(([^)]*)\))?.*?, (\w+)(?:\([^)]*\))?, "
        r"(\d+)x(\d+).*?, ([\d.]+k?) fps, .*?([\d.]+k?) tbn",
        err,
    )
    if video is None:
        raise ValueError(f"no video stream found in {path.name}")
    dur = re.search(r"Duration: (\d+):(\d+):([\d.]+)", err)
    codec, profile, pix_fmt, w, h, fps, tbn = video.groups()
    track = mp4_video_track(path) if codec == "h264" else None
    return {
        "codec": codec,
        "profile": profile or "",
        "pix_fmt": pix_fmt,
        "width": int(w),
        "height": int(h),
        "fps": _kfloat(fps),
        "tbn": _kfloat(tbn),
        "duration": (int(dur[1]) * 3600 + int(dur[2]) * 60 + float(dur[3])) if dur else 0.0,
        "has_audio": re.search(r"Stream #\d+:\d+.*?: Audio: ", err) is not None,
        "extradata": track and track["avcc"],
        "frames": track and track["frames"],
    }


def _kfloat(s: str) -> float:
    return float(s[:-1]) * 1000 if s.endswith("k") else float(s)


def mp4_video_track(path: Path) -> dict | None:
    """The H.264 track's stream-copy signature read from mp4 boxes, without running ffmpeg.

    Returns avcc (the decoder configuration: SPS/PPS, hence profile, level, size and chroma
    format), timescale, delta (ticks per frame), width, height and frames (the sample count);
    None when the file is not an mp4 with an H.264 track. Within a trak the boxes come in a fixed
    order (mdhd … avc1 ⊃ avcC … stts … stsz), so each is found by searching from its neighbour.
    """
    import mmap

    if Path(path).stat().st_size < 16:
        return None
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        start, end = _top_level_box(m, b"moov")
        i = m.find(b"avcC", start, end)
        if i < 4:
            return None
        avc1, mdhd = m.rfind(b"avc1", start, i), m.rfind(b"mdhd", start, i)
        stts, stsz = m.find(b"stts", i, end), m.find(b"stsz", i, end)
        if min(avc1, mdhd, stts, stsz) < 0:
            return None
        u32 = lambda at: int.from_bytes(m[at : at + 4], "big")  # noqa: E731
        return {
            "avcc": bytes(m[i + 4 : i - 4 + u32(i - 4)]),
            "timescale": u32(mdhd + 4 + (20 if m[mdhd + 4] == 1 else 12)),
            "delta": u32(stts + 16) if u32(stts + 8) else 0,
            "width": int.from_bytes(m[avc1 + 28 : avc1 + 30], "big"),
            "height": int.from_bytes(m[avc1 + 30 : avc1 + 32], "big"),
            "frames": u32(stsz + 12),
        }


def written_facts(path: Path) -> dict | None:
    """fps, width, height and frames of an H.264 mp4 that CHIEF wrote itself (`write_video`: one frame length
    throughout), read from its boxes: what `inspect` reports for them, without running ffmpeg (~25 ms of CPU a clip).
    None for any other file. Only for a file CHIEF has just written: a file from elsewhere goes through `inspect`,
    which refuses one that names another file."""
    track = mp4_video_track(path)
    if track is None or not track["delta"]:
        return None
    return {
        "fps": track["timescale"] / track["delta"],
        "width": track["width"],
        "height": track["height"],
        "frames": track["frames"],
    }


def mp4_has_sound(path: Path) -> bool:
    """Whether an mp4 holds a sound track (a `trak` whose handler is `soun`): its `moov` box read through a memory
    map, never the whole file (an LTX-2 clip has one; the animatic's and most models' clips do not)."""
    import mmap

    if Path(path).stat().st_size < 16:
        return False
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        start, end = _top_level_box(m, b"moov")
        i = m.find(b"hdlr", start, end)
        while 0 <= i:  # hdlr: version and flags (4 bytes), pre_defined (4), then the handler type
            if m[i + 12 : i + 16] == b"soun":
                return True
            i = m.find(b"hdlr", i + 4, end)
    return False


def _top_level_box(m, kind: bytes) -> tuple[int, int]:
    """(start, end) of a top-level mp4 box's contents; (0, 0) when absent. Walks box headers only."""
    pos, total = 0, len(m)
    while pos + 8 <= total:
        size, typ, header = int.from_bytes(m[pos : pos + 4], "big"), m[pos + 4 : pos + 8], 8
        if size == 1:
            size, header = int.from_bytes(m[pos + 8 : pos + 16], "big"), 16
        elif size == 0:
            size = total - pos
        if size < header:
            break
        if typ == kind:
            return pos + header, min(pos + size, total)
        pos += size
    return 0, 0


def stream_stats(path: Path, stream: str = "v") -> tuple[int, float]:
    """(packets, seconds) of the first video ("v") or audio ("a") stream, counted without decoding."""
    import re

    opened = input_args(path, VIDEO if stream == "v" else AUDIO, "a video file" if stream == "v" else "an audio file")
    err = run_ffmpeg([*opened, "-map", f"0:{stream}:0", "-c", "copy", "-f", "null", "-"])
    frames = re.findall(r"frame=\s*(\d+)", err)
    times = re.findall(r"time=\s*(-?\d+):(\d+):([\d.]+)", err)
    secs = (int(times[-1][0]) * 3600 + int(times[-1][1]) * 60 + float(times[-1][2])) if times else 0.0
    return (int(frames[-1]) if frames else 0), secs
