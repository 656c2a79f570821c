"""Watching a film like a viewer, in parts: which shots go in each request, what each request shows, and how a
shot's frames become one picture.

A part is a window of consecutive shots, as many as one request may carry (a scene, several, or a scene's part).
Parts are sized to the endpoint: images per request (each shot is one picture: its sampled frames tiled
in order, so a request carries more shots than frames), context tokens, and the answer budget (a note per shot).
In video input a part is one clip of its shots (FilmView.join_clips) under a length bound; in text input (a model
that takes no images) each shot is its storyboard line plus a description of its frames.

Every part also says what is heard in its shots (FilmView.hearing): each shot's transcript, cue sheet and measured
mix as text (`heard_texts`, counted in the part's tokens), and, for a critic that hears audio, the part's own
window of the film's mix (`audio_window`), which bounds the part's length like a clip does.
"""

from __future__ import annotations

import base64
import functools
import io
import math
import os
from dataclasses import dataclass, field
from typing import Literal

from agents.base import FilmView, Hearing, SampledFrame
from agents.content import AUDIO_TOKENS_PER_SECOND
from prompts import render
from storage.schema import Persona, Shot, ShotNote

Input = Literal["frames", "video", "text"]
NOTE_TOKENS = 45  # a shot note in the answer
ANSWER_BASE = 700  # scores, issues, memory and summary of one answer
CARRY_RESERVE = 900  # the running memory and the issues carried from part to part
ISSUES_CARRIED = 8


@dataclass
class Part:
    """Consecutive shots watched in one request (indexes into the watched storyboard's shots)."""

    shots: list[int]
    first_refs: list[str] = field(default_factory=list)  # characters whose references this part shows first


@dataclass
class Limits:
    images: int  # pictures in one request
    tokens: int  # prompt tokens one request may carry
    answer: int  # answer tokens
    image_tokens: int  # what one picture costs
    video_seconds: float = 30.0
    audio_seconds: float = 0.0  # the sound one request carries (0: no audio input)


def timecode(seconds: float) -> str:
    m, s = divmod(max(0.0, seconds), 60)
    return f"{int(m):02d}:{s:04.1f}"


def shot_line(shot: Shot) -> str:
    return " ".join([shot.prompt, shot.narration, shot.spoken()])


def plan_parts(
    film: FilmView, mode: Input, limits: Limits, base_tokens: int, refs_per_character: int, start: int = 0
) -> list[Part]:
    """Parts in film order from shot `start`: windows of consecutive shots, each as large as the request may be (a
    short film is one part; scenes run across parts, each part showing the headings of the scenes it touches).

    A part always holds at least one shot: a request that is still too large is the endpoint's to refuse, and the
    caller's to split."""
    shots = film.storyboard.shots()
    heard = heard_texts(film)
    refs = (
        {name: min(len(paths), refs_per_character) for name, paths in film.references.items()} if mode != "text" else {}
    )
    max_notes = max(1, int((limits.answer * 0.7 - ANSWER_BASE) // NOTE_TOKENS))
    room = limits.tokens - base_tokens - CARRY_RESERVE
    costs, shown = [], set()  # per shot: (pictures, tokens, seconds), and whose references it shows first
    for shot in shots:
        new = [c for c in dict.fromkeys(shot.characters) if refs.get(c) and c not in shown]
        shown.update(new)
        pics = (1 if mode == "frames" and film.frames_of(shot.shot_id) else 0) + sum(refs[c] for c in new)
        tokens = math.ceil(len(shot_line(shot)) / 4) + 40 + pics * limits.image_tokens + (60 if mode == "text" else 0)
        tokens += math.ceil(len(heard.get(shot.shot_id, "")) / 4)
        if limits.audio_seconds:  # its sound, at most the part's bound
            tokens += math.ceil(min(shot.duration, limits.audio_seconds) * AUDIO_TOKENS_PER_SECOND) + 30
        costs.append(((pics, tokens, shot.duration), new))

    def fits(indexes: list[int]) -> bool:
        pics, tokens, seconds = (sum(costs[i][0][k] for i in indexes) for k in range(3))
        return (
            pics <= limits.images
            and tokens <= room
            and len(indexes) <= max_notes
            and (mode != "video" or seconds <= limits.video_seconds)
            and (not limits.audio_seconds or seconds <= limits.audio_seconds)
        )

    parts: list[list[int]] = [[]]
    for j in range(start, len(shots)):
        if parts[-1] and not fits(parts[-1] + [j]):
            parts.append([])
        parts[-1].append(j)
    return [Part(p, [c for j in p for c in costs[j][1]]) for p in parts if p]


def split(part: Part) -> list[Part]:
    """A part in two halves (asking for less after an answer was cut off or a request refused)."""
    half = len(part.shots) // 2
    return [Part(part.shots[:half], part.first_refs), Part(part.shots[half:], [])]


# ---------------------------------------------------------------- what a request shows


def tile_order(k: int, w: int, h: int, side: int) -> tuple[int, int]:
    """(columns, rows) that give each of `k` frames of w x h the most room inside a side x side picture."""

    def scale(c: int) -> float:
        return min(side / (c * w), side / (math.ceil(k / c) * h))

    cols = max(range(1, k + 1), key=scale)
    return cols, math.ceil(k / cols)


def reading_order(cols: int, rows: int) -> str:
    if rows == 1:
        return "left to right"
    return "top to bottom" if cols == 1 else "left to right, row by row"


def tile_part(paths: list[str], detail: str, max_side: int) -> tuple[dict, str]:
    """One `image_url` part showing a shot's frames in order (a grid), and how to read it."""
    stamps = tuple((p, os.stat(p).st_mtime_ns, os.stat(p).st_size) for p in paths)
    data, order = _tiled(stamps, max_side)
    return {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}", "detail": detail}}, order


@functools.lru_cache(maxsize=1024)
def _tiled(stamps: tuple, max_side: int) -> tuple[str, str]:
    """Made once per set of frames: every critic of a panel sees the same pictures."""
    from PIL import Image

    frames = []
    for path, _, _ in stamps:
        with Image.open(path) as im:
            frames.append(im.convert("RGB"))
    w, h = frames[0].size
    cols, rows = tile_order(len(frames), w, h, max_side)
    gap = 4 if len(frames) > 1 else 0
    s = min(1.0, (max_side - gap * (cols - 1)) / (cols * w), (max_side - gap * (rows - 1)) / (rows * h))
    tw, th = max(1, int(w * s)), max(1, int(h * s))
    sheet = Image.new("RGB", (cols * tw + gap * (cols - 1), rows * th + gap * (rows - 1)), (16, 16, 16))
    for n, im in enumerate(frames):
        sheet.paste(im.resize((tw, th)), ((n % cols) * (tw + gap), (n // cols) * (th + gap)))
    buf = io.BytesIO()
    sheet.save(buf, format="JPEG", quality=85)
    return base64.b64encode(buf.getvalue()).decode("ascii"), reading_order(cols, rows)


# ---------------------------------------------------------------- what is heard


def heard_texts(film: FilmView) -> dict[str, str]:
    """Each watched shot's sound in words (critic_heard.j2): its lines with their times, the cue and what made it,
    the sounds, the mix measured over the shot. Shots the hearing does not cover are left out."""
    hearing = film.hearing
    if hearing is None:
        return {}
    ids = {s.shot_id for s in film.storyboard.shots()}
    return {
        ss.shot_id: render("critic_heard.j2", ss=ss, f=ss.facts, tc=timecode)
        for ss in hearing.shots
        if ss.shot_id in ids
    }


def audio_window(film: FilmView, part: Part, seconds: float) -> tuple[float, float] | None:
    """The part's window of the film's mix (seconds from the film's start), at most `seconds` long; None when there
    is no mix to cut or the hearing covers none of the part's shots."""
    hearing = film.hearing
    if hearing is None or not hearing.audio or seconds <= 0:
        return None
    shots = film.storyboard.shots()
    spans = [(ss.start, ss.end) for i in part.shots if (ss := hearing.of(shots[i].shot_id)) is not None]
    if not spans:
        return None
    start = min(a for a, _ in spans)
    end = min(max(b for _, b in spans), start + seconds)
    return (start, end) if end > start else None


def voices(hearing: Hearing) -> tuple[list[tuple[str, float]], list[tuple[str, str, float]]]:
    """The characters' measured median pitches, and the pairs within 2 semitones of each other (voices a listener
    may not tell apart by pitch), with the distance in semitones."""
    pitches = sorted((n, hz) for n, hz in hearing.voice_pitch_hz.items() if hz > 0)
    close = [
        (a, b, abs(12 * math.log2(ha / hb)))
        for i, (a, ha) in enumerate(pitches)
        for b, hb in pitches[i + 1 :]
        if abs(12 * math.log2(ha / hb)) < 2
    ]
    return pitches, close


@dataclass
class Carried:
    """What a viewer remembers from the parts watched so far."""

    so_far: str = ""
    engagement: int | None = None
    stopped_at: str | None = None
    issues: list[tuple[int, str]] = field(default_factory=list)  # (urgency, one line), most urgent first
    notes: list[ShotNote] = field(default_factory=list)


def part_text(
    film: FilmView,
    persona: Persona,
    part: Part,
    n: int,
    parts: int,
    carried: Carried,
    mode: Input,
    final: bool,
    descriptions: dict[str, str] | None = None,
    heard: dict[str, str] | None = None,
    audio: bool = False,
) -> str:
    """The text of one request: the film and the story so far, what the viewer remembers, this part's shots and what
    is heard in them (`heard`: heard_texts; `audio`: the part's sound follows as audio)."""
    whole = film.whole
    starts = {s.shot_id: (a, b) for s, a, b in whole.timeline()}
    shots = film.storyboard.shots()
    watched = [shots[i] for i in part.shots]
    ids = {s.shot_id for s in watched}
    scenes = [
        (sc, [s for s in sc.shots if s.shot_id in ids], sc.shots[0].shot_id not in ids) for sc in film.storyboard.scenes
    ]
    before = []
    if film.story is not None:  # a scoped screening: the scenes before the first watched shot, in one line each
        first = film.storyboard.shots()[0].shot_id
        for sc in whole.scenes:
            if any(s.shot_id == first for s in sc.shots):
                break
            before.append(sc)
    label = film.renderer_label
    hearing = film.hearing
    pitches, close = voices(hearing) if hearing is not None else ([], [])
    return render(
        "critic_watch.j2",
        film=film,
        storyboard=whole,
        persona=persona,
        n=n,
        parts=parts,
        final=final,
        scenes=[(sc, ss, cont) for sc, ss, cont in scenes if ss],
        timecodes={k: f"{timecode(a)}-{timecode(b)}" for k, (a, b) in starts.items()},
        before=before,
        carried=carried,
        mode=mode,
        descriptions=descriptions or {},
        watched_seconds=sum(s.duration for s in shots),
        scoped=film.story is not None,
        renderer_label=label,
        is_previz=any(w in label.lower() for w in ("animatic", "previz", "preview")),
        intent=film.intent,
        hearing=hearing,
        heard=heard if heard is not None else heard_texts(film),
        pitches=pitches,
        alike=close,
        audio=audio,
    )


def frames_by_shot(film: FilmView) -> dict[str, list[SampledFrame]]:
    out: dict[str, list[SampledFrame]] = {}
    for f in sorted(film.frames, key=lambda f: (f.time, f.index)):
        out.setdefault(f.shot_id, []).append(f)
    return out
