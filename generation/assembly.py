"""Clips → film with the bundled ffmpeg.

The fast path is ffmpeg's concat demuxer with `-c copy`: when every clip (and the title card) has
the same codec, profile, size, frame rate, pixel format, time base and H.264 parameter sets, the film
is the clips' packets back to back, with no decode and no quality loss. Anything that changes
pixels (crossfades, burned-in subtitles) or clips that disagree force one re-encode of the whole
film to the first clip's size and rate, and `AssemblyResult.reencoded` says why. Audio (the mix, and the
described track when asked) is always muxed as AAC next to the video, never forcing a video re-encode; the
clips' own audio streams, if any, are dropped. Subtitles not burned in are muxed as a soft `mov_text` stream
(players list it; it changes no pixels).

Timing: audio and subtitles are timed against the final film. With a title card or crossfades the
clips do not start where their storyboard durations say; `timeline()` gives each clip's start.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .ffmpeg import run, run_ffmpeg
from .ffmpeg_input import VIDEO, input_args
from .video_io import H264_ARGS, inspect, mp4_video_track, stream_stats, write_video

log = logging.getLogger(__name__)

# What must be equal across inputs for the concat demuxer's stream copy to give a valid file.
COPY_KEYS = ("codec", "profile", "pix_fmt", "width", "height", "fps", "tbn", "extradata")


@dataclass
class AssemblyResult:
    path: Path
    duration: float
    num_frames: int
    stream_copied: bool  # the video packets were copied, not re-encoded
    reencoded: list[str] = field(default_factory=list)  # why the video was re-encoded (empty when copied)
    fps: float = 0.0
    width: int = 0
    height: int = 0
    starts: list[float] = field(default_factory=list)  # start of each clip in the film (seconds)


def timeline(durations: list[float], *, title_seconds: float = 0.0, crossfade: float = 0.0) -> list[float]:
    """Start time of each clip in the assembled film (a title card and crossfades shift them)."""
    starts, t = [], title_seconds - (crossfade if title_seconds else 0.0)
    for d in durations:
        starts.append(max(0.0, t))
        t += d - crossfade
    return starts


def assemble(
    clips: list[Path],
    out: Path,
    *,
    audio: Path | None = None,
    described: Path | None = None,
    language: str = "und",
    subtitles_srt: Path | None = None,
    burn_subtitles: bool = False,
    soft_subtitles: Path | None = None,
    subtitles_title: str = "Subtitles",
    title: str | None = None,
    crossfade: float = 0.0,
    title_seconds: float = 2.0,
    cancel=None,
    picture: Path | None = None,
) -> AssemblyResult:
    """Concatenate `clips` into `out` (H.264/yuv420p mp4, +faststart), by stream copy when possible.

    `audio` (any format ffmpeg reads, e.g. the narration WAV) is padded/trimmed to the film and muxed
    as AAC. `described` (with `audio`) is a second AAC track, the audio description: both are labelled with
    `language` (ISO 639-2) and their role (title and handler name "Main" / "Audio description"; the first is the
    default track, the second has the `descriptions` disposition, which players list as described). `subtitles_srt` is
    burned into the picture when `burn_subtitles`. `soft_subtitles` (WebVTT: its text is escaped, where an SRT's
    angle brackets would be read as markup and dropped) is muxed as a subtitle stream (`mov_text`, labelled with
    `language` and `subtitles_title`) that a player turns on. `title` prepends a `title_seconds` card. `cancel` (a
    CancelToken) stops the ffmpeg run and raises Cancelled. `picture`: a film cut before from these same clips with
    these same picture options (title card, crossfade, burned subtitles): its video stream is copied as it is, so a
    change to the sound alone never cuts or re-encodes the picture again.
    """
    clips = [Path(c) for c in clips]
    out = Path(out)
    if not clips:
        raise ValueError("nothing to assemble: no clips")
    if crossfade < 0:
        raise ValueError(f"crossfade must be >= 0, got {crossfade}")
    if burn_subtitles and subtitles_srt is None:
        raise ValueError("burn_subtitles needs subtitles_srt")
    if described is not None and audio is None:
        raise ValueError("a described track needs the main audio track")
    for track in (audio, described):
        if track is not None and not Path(track).is_file():
            raise FileNotFoundError(f"no such audio file: {track}")
    base = inspect(clips[0])
    w, h, fps = base["width"], base["height"], base["fps"]
    reasons, frames = _compare(clips, base)
    if base["codec"] != "h264" or base["pix_fmt"] != "yuv420p":
        reasons.append(f"{clips[0].name}: {base['codec']}/{base['pix_fmt']} is not h264/yuv420p")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".assemble-", dir=out.parent) as tmpdir:
        tmp = Path(tmpdir)
        inputs = list(clips)
        if title:
            card = _title_card(title, w, h, fps, title_seconds, tmp / "title.mp4")
            if r := _mismatch("title card", inspect(card), base):
                reasons.append(r)
            inputs.insert(0, card)
            frames.insert(0, _frames(card))
        durations = [n / fps for n in frames]
        if crossfade > 0:
            if crossfade >= min(durations):
                raise ValueError(
                    f"crossfade {crossfade}s is not shorter than the shortest clip ({min(durations):.2f}s)"
                )
            reasons.append(f"crossfade of {crossfade}s (xfade filter)")
        if burn_subtitles:
            reasons.append("subtitles burned into the picture")
        film_seconds = sum(durations) - crossfade * (len(inputs) - 1)
        part = tmp / ("film" + (out.suffix or ".mp4"))
        if picture is not None:
            ins, outs = ["-i", str(Path(picture).resolve())], ["-map", "0:v:0", "-c:v", "copy"]
        elif reasons:
            ins, outs = _reencode_args(
                inputs, durations, w, h, fps, crossfade, subtitles_srt if burn_subtitles else None, tmp
            )
        else:
            ins, outs = _concat_args(inputs, tmp)
        first = len(inputs) if reasons and picture is None else 1  # the first input after the picture's
        tracks = [(t, role) for t, role in ((audio, "Main"), (described, "Audio description")) if t is not None]
        for k, (track, role) in enumerate(tracks):
            ins += ["-i", str(Path(track).resolve())]
            outs += ["-map", f"{first + k}:a:0"]
            if described is not None:
                outs += [f"-metadata:s:a:{k}", f"language={language}", f"-metadata:s:a:{k}", f"title={role}"]
                outs += [f"-metadata:s:a:{k}", f"handler_name={role}"]
                outs += [f"-disposition:a:{k}", "descriptions" if k else "default"]
        if soft_subtitles is not None:
            ins += ["-i", str(Path(soft_subtitles).resolve())]
            outs += ["-map", f"{first + len(tracks)}:s:0", "-c:s", "mov_text"]
            outs += ["-metadata:s:s:0", f"language={language}", "-metadata:s:s:0", f"title={subtitles_title}"]
            outs += ["-metadata:s:s:0", f"handler_name={subtitles_title}"]
        if tracks:
            outs += [
                "-c:a",
                "aac",
                "-b:a",
                "128k",
                "-af",
                f"apad=whole_dur={film_seconds:.6f},atrim=end={film_seconds:.6f}",
            ]
        run_ffmpeg(["-y", *ins, *outs, "-movflags", "+faststart", str(part)], cwd=tmp, cancel=cancel)
        os.replace(part, out)
    n = _frames(out)
    title_len = durations[0] if title else 0.0
    return AssemblyResult(
        out,
        n / fps,
        n,
        not reasons,
        reasons,
        fps,
        w,
        h,
        timeline(durations[1:] if title else durations, title_seconds=title_len, crossfade=crossfade),
    )


def _compare(clips: list[Path], base: dict) -> tuple[list[str], list[int]]:
    """(why stream copy is impossible, frames per clip), running `ffmpeg -i` only where needed.

    Clips whose mp4 signature (H.264 config, time base, frame duration, size) equals the first
    clip's are copy-compatible without asking ffmpeg; the others are inspected to say why not.
    """
    first = mp4_video_track(clips[0])
    reasons, frames = [], []
    for k, clip in enumerate(clips):
        track = first if k == 0 else mp4_video_track(clip)
        if first is not None and track is not None and {**track, "frames": 0} == {**first, "frames": 0}:
            frames.append(track["frames"])
            continue
        info = base if k == 0 else inspect(clip)
        frames.append(_frames(clip, info))
        if k > 0:
            reasons.append(
                _mismatch(clip.name, info, base)
                or f"{clip.name}: not stream-copy compatible (mp4 sample timing differs, or not mp4)"
            )
    return reasons, frames


def _frames(path: Path, info: dict | None = None) -> int:
    if info is None and (track := mp4_video_track(path)) is not None:
        return track["frames"]
    info = info or inspect(path)
    return info["frames"] if info["frames"] is not None else stream_stats(path)[0]


def _mismatch(name: str, info: dict, base: dict) -> str:
    diffs = [k for k in COPY_KEYS if info[k] != base[k]]
    if not diffs:
        return ""
    shown = ", ".join(f"{k} {info[k]} vs {base[k]}" if k != "extradata" else "H.264 parameter sets" for k in diffs)
    return f"{name} differs from the first clip ({shown})"


def _concat_args(inputs: list[Path], tmp: Path) -> tuple[list[str], list[str]]:
    listing = tmp / "clips.txt"
    listing.write_text("".join("file '" + str(p.resolve()).replace("'", "'\\''") + "'\n" for p in inputs))
    return ["-f", "concat", "-safe", "0", "-i", str(listing)], ["-map", "0:v:0", "-c:v", "copy"]


def _reencode_args(
    inputs: list[Path],
    durations: list[float],
    w: int,
    h: int,
    fps: float,
    crossfade: float,
    srt: Path | None,
    tmp: Path,
) -> tuple[list[str], list[str]]:
    args, graph = [], []
    for i, p in enumerate(inputs):
        args += ["-i", str(p.resolve())]
        graph.append(
            f"[{i}:v]scale={w}:{h}:force_original_aspect_ratio=decrease,pad={w}:{h}:(ow-iw)/2:(oh-ih)/2,"
            f"setsar=1,fps={fps},format=yuv420p,setpts=PTS-STARTPTS,settb=AVTB[v{i}]"
        )
    if crossfade > 0 and len(inputs) > 1:
        last, acc = "v0", durations[0]
        for i in range(1, len(inputs)):
            graph.append(f"[{last}][v{i}]xfade=transition=fade:duration={crossfade}:offset={acc - crossfade:.6f}[x{i}]")
            last, acc = f"x{i}", acc + durations[i] - crossfade
    else:
        graph.append("".join(f"[v{i}]" for i in range(len(inputs))) + f"concat=n={len(inputs)}:v=1:a=0[cat]")
        last = "cat"
    if srt is not None:
        if "subtitles" not in _filters():
            raise RuntimeError("this ffmpeg build has no libass `subtitles` filter: cannot burn in subtitles")
        # Run with cwd=tmp so the filter sees plain relative names (no filtergraph escaping of paths);
        # the font Pillow ships is written next to it, so burn-in works without system fonts.
        shutil.copyfile(srt, tmp / "subs.srt")
        (tmp / "fonts").mkdir()
        (tmp / "fonts" / "Aileron.ttf").write_bytes(_font(12).font_bytes)
        graph.append(
            f"[{last}]subtitles=filename=subs.srt:fontsdir=fonts:"
            "force_style='FontName=Aileron,FontSize=18,Outline=2'[sub]"
        )
        last = "sub"
    return args, [
        "-filter_complex",
        ";".join(graph),
        "-map",
        f"[{last}]",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        "-r",
        f"{fps}",
        *[a for a in H264_ARGS if a not in ("-movflags", "+faststart")],
    ]


@functools.lru_cache(maxsize=1)
def _filters() -> str:
    """The names of the filters this ffmpeg build has (its `-filters` listing)."""
    return run(["-filters"], capture=True).stdout.decode(errors="replace")


def _font(size: int):
    from PIL import ImageFont

    font = ImageFont.load_default(size=size)
    if not isinstance(font, ImageFont.FreeTypeFont):  # a Pillow without FreeType has only a fixed bitmap font
        raise RuntimeError("Pillow has no FreeType support: no font to draw or burn in text")
    return font


def _title_card(text: str, w: int, h: int, fps: float, seconds: float, out: Path) -> Path:
    """A still clip of white text on black, encoded like the clips so it can be stream-copied."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (w, h), (0, 0, 0))
    draw = ImageDraw.Draw(img)
    font = _font(max(8, h // 10))
    lines = textwrap.wrap(text, width=max(8, int(w / (h // 10 * 0.55 + 1))))
    draw.multiline_text(
        (w / 2, h / 2), "\n".join(lines), fill=(255, 255, 255), font=font, anchor="mm", align="center", spacing=h // 40
    )
    frame = np.asarray(img)
    # write_video takes whole rates: at 23.976 fps the card differs and the film is re-encoded
    write_video((frame for _ in range(max(1, round(seconds * fps)))), out, round(fps))
    return out


def film_info(path: Path) -> dict:
    """frames, fps, duration, width, height, has_audio, audio_duration (0.0 without audio) of a film."""
    info = inspect(path)
    n = _frames(path, info)
    audio_seconds = 0.0
    if info["has_audio"]:
        import re

        err = run_ffmpeg([*input_args(path, VIDEO, "a video file"), "-map", "0:a:0", "-f", "null", "-"])
        t = re.findall(r"time=\s*(\d+):(\d+):([\d.]+)", err)[-1]
        audio_seconds = int(t[0]) * 3600 + int(t[1]) * 60 + float(t[2])
    return {
        "frames": n,
        "fps": info["fps"],
        "duration": n / info["fps"],
        "width": info["width"],
        "height": info["height"],
        "has_audio": info["has_audio"],
        "audio_duration": audio_seconds,
    }


def under_ceiling(
    film: Path,
    main: Path,
    described: Path | None,
    ceiling: float,
    recut: Callable[[Path, Path | None], object],
    scratch: Path,
    cancel=None,
):
    """The cut `film`'s sound measured (ebur128 over every channel: the louder channel's true peak) and, where the AAC
    encoder took its true peak over `ceiling` dBTP, the sound tracks (`main`, and `described` when there is one:
    16-bit WAVs) lowered by the overshoot and half a dB, every channel alike (the image holds), `recut(main,
    described)` with the lowered tracks to make the film again, and the film measured again. Returns the film's
    Loudness (its own figures, whichever cut it is)."""
    from .audio.loudness import measure
    from .audio.pcm import read_frames, write_wav

    heard = measure(film, cancel=cancel)
    over = heard.true_peak_dbtp - ceiling
    if over <= 0:
        return heard
    gain = 10 ** (-(over + 0.5) / 20)
    lowered: dict[str, Path] = {}
    for name, track in (("main", main), ("described", described)):
        if track is not None:
            samples, rate = read_frames(track)
            lowered[name] = write_wav(Path(scratch) / f"{name}.lowered.wav", samples * gain, rate)
    recut(lowered["main"], lowered.get("described"))
    log.info("the film's sound went %.1f dB over %.1f dBTP in AAC: lowered %.1f dB", over, ceiling, over + 0.5)
    return measure(film, cancel=cancel)
