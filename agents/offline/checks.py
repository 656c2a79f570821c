"""What a previz can show, checked: the storyboard's story and cut (pacing, repeats, spoken lines, camera, who is on
screen, what the logline promises), the measured frames (light, movement, flashes, look-alike shots) and the
measured sound (lines masked by music, scenes without sound, clipping, loudness, lines too fast, voices alike).

Story findings read only the storyboard, so they are the same whatever a renderer draws; picture findings read
the measured frames; sound findings read what generation.audio.listen measured on the film's own sound
(`FilmView.hearing`). Thresholds follow one viewer's tastes (`Tastes`); `critic.py` decides who raises what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations, groupby

import numpy as np

from agents.base import Hearing
from agents.offline.directions import Direction
from agents.offline.measure import ShotStats, flashes_per_second
from agents.offline.words import LISTEN_WPS, READ_WPS, content_words, shot_type, similarity
from storage.schema import Dimension, Storyboard, Tastes

REPEAT = 0.8  # prompts sharing this much of their content words are the same shot
# Sound, as measured (generation.audio.listen):
MASKED_DB = 10.0  # a line whose dialogue is less than this over the music under it is masked (speech-to-music, dB)
LOUDNESS_TOLERANCE = 1.0  # LU off the mix's target (EBU R128's tolerance for live programmes)
FAST_WPS = 5.0  # words a second spoken: over 300 a minute is too fast to follow (conversation runs 2.5-3)
ALIKE_SEMITONES = 2.0  # two characters whose median voice pitches are closer than this sound alike
SILENCE_S = 3.0  # a stretch this long under the silence threshold (50 ms frames under -50 dBFS) in a shot with sound


@dataclass(frozen=True)
class Finding:
    kind: str
    level: str  # "story" (from the storyboard), "picture" (from the measured frames) or "sound" (the measured mix)
    dimension: Dimension
    severity: float  # 0..1, how strong, as measured
    shot_ids: tuple[str, ...]
    what: str  # one plain sentence with the numbers
    directions: tuple[Direction, ...] = field(default=())


def _clip(x: float) -> float:
    return round(float(min(1.0, max(0.0, x))), 3)


def story(board: Storyboard, intent: str, t: Tastes) -> list[Finding]:
    """Findings from the storyboard alone, judged against one viewer's tastes."""
    shots = board.shots()
    out: list[Finding] = []
    durs = np.array([s.duration for s in shots])
    avg = float(durs.mean())
    ratio = avg / t.shot_seconds
    if ratio > 1.3 + 0.6 * t.patience:
        long = sorted((s for s in shots if s.duration > 1.5 * t.shot_seconds), key=lambda s: -s.duration)[:3]
        out.append(
            Finding(
                "drags",
                "story",
                "pacing",
                _clip((ratio - 1) / 2),
                tuple(s.shot_id for s in long),
                f"shots average {avg:.1f} s against the {t.shot_seconds:g} s I am used to",
                tuple(Direction("duration", s.shot_id, f"{max(1.0, t.shot_seconds * 1.2):.1f}") for s in long),
            )
        )
    elif ratio < 0.6:
        short = sorted(shots, key=lambda s: s.duration)[:3]
        out.append(
            Finding(
                "rushed",
                "story",
                "pacing",
                _clip(1 - ratio),
                tuple(s.shot_id for s in short),
                f"shots average {avg:.1f} s, too quick to take in",
                tuple(Direction("duration", s.shot_id, f"{t.shot_seconds * 0.9:.1f}") for s in short),
            )
        )
    hook = next((start for s, start, _ in board.timeline() if s.characters), board.duration())
    if t.patience < 0.5 and hook > 3 * t.shot_seconds:
        first = shots[0]
        out.append(
            Finding(
                "slow_start",
                "story",
                "pacing",
                _clip(hook / (10 * t.shot_seconds)),
                (first.shot_id,),
                f"nobody is on screen for the first {hook:.0f} s",
                (Direction("duration", first.shot_id, f"{max(1.0, t.shot_seconds):.1f}"),),
            )
        )
    if len(shots) >= 5:
        cv = float(durs.std() / avg)
        if cv < 0.12:
            out.append(
                Finding(
                    "same_lengths",
                    "story",
                    "pacing",
                    _clip(0.5 + (0.12 - cv) * 4),
                    tuple(s.shot_id for s in shots[:3]),
                    f"every shot runs about {avg:.1f} s, so the cutting has no rhythm",
                    tuple(
                        Direction("duration", s.shot_id, f"{s.duration * f:.1f}")
                        for s, f in zip(shots[1:4], (0.6, 1.5, 0.7))
                    ),
                )
            )
    out += _repeats(shots)
    out += _spoken(board, t)
    out += _camera(shots, t)
    out += _presence(board, t)
    out += _promises(board, intent)
    out += _places(board)
    kinds = [shot_type(s.prompt) for s in shots]
    wide = [s for s, k in zip(shots, kinds) if k in ("wide", "establishing")]
    firsts = {sc.shots[0].shot_id for sc in board.scenes}
    inner = [s for s in wide if s.shot_id not in firsts]  # a scene's first wide shot shows where we are: keep it
    if len(shots) >= 5 and len(wide) / len(shots) > 0.4:
        out.append(
            Finding(
                "wide_heavy",
                "story",
                "visual_quality",
                _clip(len(wide) / len(shots)),
                tuple(s.shot_id for s in (inner or wide)[:3]),
                f"{len(wide)} of {len(shots)} shots are wide, where one subject is small in the frame",
                tuple(Direction("reframe", s.shot_id, "medium") for s in inner[:2]),
            )
        )
    if len(shots) >= 6 and "close-up" not in kinds:
        mid = shots[len(shots) * 2 // 3]
        out.append(
            Finding(
                "no_closeups",
                "story",
                "emotional_impact",
                0.5,
                (mid.shot_id,),
                "there is not one close-up, so no face carries the feeling",
                (Direction("reframe", mid.shot_id, "close-up"),),
            )
        )
    return out


def _repeats(shots) -> list[Finding]:
    out, seen = [], set()
    for a, b in combinations(shots, 2):
        if b.shot_id in seen or similarity(a.prompt, b.prompt) < REPEAT:
            continue
        seen.add(b.shot_id)
        other = next(k for k in ("close-up", "medium", "wide", "insert") if k != shot_type(a.prompt))
        out.append(
            Finding(
                "repeat",
                "story",
                "pacing",
                0.7,
                (b.shot_id, a.shot_id),
                f"the shot {b.shot_id} repeats {a.shot_id}",
                (Direction("reframe", b.shot_id, other),),
            )
        )
    return out[:4]


def _spoken(board: Storyboard, t: Tastes) -> list[Finding]:
    """Lines too fast to hear or read; long stretches with nothing to read; narration that says what is seen."""
    out = []
    limit = LISTEN_WPS - (LISTEN_WPS - READ_WPS) * t.captions
    for s in board.shots():
        words = len(f"{s.narration} {s.spoken()}".split())
        if words and words / s.duration > limit:
            out.append(
                Finding(
                    "dense_line",
                    "story",
                    "story_clarity",
                    _clip(words / s.duration / limit - 0.8),
                    (s.shot_id,),
                    f"the line on {s.shot_id} has {words} words for {s.duration:.1f} s",
                    (Direction("duration", s.shot_id, f"{words / limit + 0.5:.1f}"),),
                )
            )
    if t.captions >= 0.5:
        gap, start, worst = 0.0, None, (0.0, None)
        for s, a, b in board.timeline():
            if s.narration or s.dialogue:
                gap, start = 0.0, None
                continue
            start = start or s
            gap += b - a
            worst = max(worst, (gap, start), key=lambda g: g[0])
        allowed = 70 * (1.2 - t.captions)
        if worst[1] is not None and worst[0] > allowed:
            out.append(
                Finding(
                    "silent_stretch",
                    "story",
                    "story_clarity",
                    _clip(worst[0] / allowed - 0.7),
                    (worst[1].shot_id,),
                    f"{worst[0]:.0f} s go by with nothing said or written on screen",
                    (Direction("narrate", worst[1].shot_id),),
                )
            )
    spoken = [s for s in board.shots() if s.narration]
    names = content_words(" ".join(c.name for c in board.characters))
    told = [s for s in spoken if len((content_words(s.narration) - names) & content_words(s.prompt)) >= 2]
    if spoken and len(spoken) / len(board.shots()) > 0.3 and told:
        out.append(
            Finding(
                "explains",
                "story",
                "emotional_impact",
                _clip(len(told) / len(spoken)),
                tuple(s.shot_id for s in told[:3]),
                f"the narration on {len(told)} shot(s) says what the picture already shows",
                tuple(Direction("unsay", s.shot_id) for s in told[:3]),
            )
        )
    if (spoken or any(s.dialogue for s in board.shots())) and not board.film.burn_subtitles and t.captions >= 0.8:
        out.append(
            Finding(
                "burned_captions",
                "story",
                "story_clarity",
                0.5,
                (),
                "the lines are only in a subtitle file, not in the picture",
            )
        )
    return out


def _camera(shots, t: Tastes) -> list[Finding]:
    out = []
    moves = [s.camera for s in shots]
    if len(shots) >= 5:
        top = max(set(moves), key=moves.count)
        run = max(len(list(g)) for _, g in groupby(moves))
        if moves.count(top) / len(moves) > 0.6 or run >= 4:
            idle = [s for s in shots if s.camera == top][1::2][:3]
            alt = "dolly_in" if top == "static" else "static"
            out.append(
                Finding(
                    "camera_same",
                    "story",
                    "emotional_impact",
                    _clip(moves.count(top) / len(moves)),
                    tuple(s.shot_id for s in idle),
                    f"{moves.count(top)} of {len(shots)} shots use the same camera ({top.replace('_', ' ')})",
                    tuple(Direction("camera", s.shot_id, alt) for s in idle),
                )
            )
        moving = [s for s in shots if s.camera != "static"]
        if len(moving) / len(shots) > 0.75 and len(set(moves)) >= 5:
            out.append(
                Finding(
                    "camera_restless",
                    "story",
                    "visual_quality",
                    _clip(len(moving) / len(shots)),
                    tuple(s.shot_id for s in moving[:3]),
                    f"the camera moves in {len(moving)} of {len(shots)} shots, in {len(set(moves))} different ways",
                    tuple(Direction("camera", s.shot_id, "static") for s in moving[1:4:2]),
                )
            )
    return out


def _appears(shot, name: str) -> bool:
    return name in shot.characters or name.lower() in shot.prompt.lower()


def _presence(board: Storyboard, t: Tastes) -> list[Finding]:
    """A character from the bible never on screen, or gone for too long."""
    out = []
    timeline = board.timeline()
    total = board.duration()
    for c in board.characters:
        seen = [(s, a, b) for s, a, b in timeline if _appears(s, c.name)]
        if not seen:
            mid = timeline[len(timeline) // 2][0]
            out.append(
                Finding(
                    "never_seen",
                    "story",
                    "character_consistency",
                    0.8,
                    (mid.shot_id,),
                    f"{c.name} is in the character list but never on screen",
                    (Direction("include", mid.shot_id, c.name),),
                )
            )
            continue
        edges = [0.0] + [x for _, a, b in seen for x in (a, b)] + [total]
        gaps = [(edges[i + 1] - edges[i], edges[i]) for i in range(0, len(edges), 2)]
        gap, at = max(gaps)
        allowed = max(20.0, total * (0.55 - 0.25 * t.continuity))
        if gap > allowed and at > 0:
            inside = [s for s, a, b in timeline if at <= a < at + gap]
            pick = inside[len(inside) // 2]
            out.append(
                Finding(
                    "absent",
                    "story",
                    "character_consistency",
                    _clip(gap / total + 0.2),
                    (pick.shot_id,),
                    f"{c.name} is gone for {gap:.0f} s",
                    (Direction("include", pick.shot_id, c.name),),
                )
            )
    return out


def _promises(board: Storyboard, intent: str) -> list[Finding]:
    """Beats the scenes name without a climax or a resolution. (What the idea itself promises, who, where and what
    must happen, is `critic_idea.py`'s check, which reads the measured frames too.)"""
    out = []
    beats = [sc.purpose for sc in board.scenes if sc.purpose]
    if beats and len(board.scenes) >= 3:
        for beat in ("climax", "resolution"):
            if beat not in beats:
                out.append(
                    Finding(
                        "missing",
                        "story",
                        "story_clarity",
                        0.6,
                        (board.scenes[-1].shots[0].shot_id,),
                        f"the scenes name their beats but none is the {beat}",
                    )
                )
    return out


def _places(board: Storyboard) -> list[Finding]:
    """A scene that moves to another place without a wide shot first."""
    out = []
    for prev, sc in zip(board.scenes, board.scenes[1:]):
        first = sc.shots[0]
        if (
            sc.location
            and prev.location
            and sc.location != prev.location
            and shot_type(first.prompt) not in ("establishing", "wide")
        ):
            out.append(
                Finding(
                    "unestablished",
                    "story",
                    "story_clarity",
                    0.5,
                    (first.shot_id,),
                    f"the cut to {first.shot_id} jumps to {sc.location} without showing where we are",
                    (Direction("reframe", first.shot_id, "establishing"),),
                )
            )
    return out[:3]


def picture(board: Storyboard, stats: list[ShotStats], t: Tastes) -> list[Finding]:
    """Findings from the measured frames, judged against one viewer's tastes."""
    out: list[Finding] = []
    shots = board.shots()
    dark = [(s, st) for s, st in zip(shots, stats) if st.brightness < min(0.3, t.brightness - 0.2)]
    if dark:
        worst = min(st.brightness for _, st in dark)
        out.append(
            Finding(
                "dark",
                "picture",
                "visual_quality",
                _clip((t.brightness - worst) * 1.5 * len(dark) ** 0.3),
                tuple(s.shot_id for s, _ in dark[:4]),
                f"{len(dark)} shot(s) are too dark to make out who is there (mean luma down to {worst:.2f})",
            )
        )
    bright = [(s, st) for s, st in zip(shots, stats) if st.brightness > max(0.72, t.brightness + 0.3)]
    if bright:
        out.append(
            Finding(
                "washed_out",
                "picture",
                "visual_quality",
                _clip(0.3 + 0.1 * len(bright)),
                tuple(s.shot_id for s, _ in bright[:4]),
                f"{len(bright)} shot(s) are washed out, with nothing in deep shade",
            )
        )
    flat = [s for s, st in zip(shots, stats) if st.contrast < 0.05 + 0.08 * t.contrast]
    if flat and len(flat) / len(shots) > 0.3:
        out.append(
            Finding(
                "flat",
                "picture",
                "visual_quality",
                _clip(len(flat) / len(shots)),
                tuple(s.shot_id for s in flat[:4]),
                f"{len(flat)} shot(s) look flat, with no strong shapes",
            )
        )
    still = [s for s, st in zip(shots, stats) if st.change < 0.03 and st.frames > 1]
    if still:
        out.append(
            Finding(
                "static",
                "picture",
                "pacing",
                _clip(1.5 * (len(still) / len(shots) - 0.15)),
                tuple(s.shot_id for s in still[:4]),
                f"hardly anything moves in {len(still)} shot(s)",
                tuple(Direction("camera", s.shot_id, "dolly_in") for s in still if s.camera == "static")[:3],
            )
        )
    rates = flashes_per_second(stats)
    flashing = [(sid, r) for sid, r in rates.items() if r > 3]
    if flashing:
        top = max(r for _, r in flashing)
        out.append(
            Finding(
                "flash",
                "picture",
                "visual_quality",
                _clip(top / 6),
                tuple(sid for sid, _ in flashing),
                f"the picture flashes {top:.0f} times a second in "
                f"{', '.join(sid for sid, _ in flashing[:4])} (safe is at most 3)",
                tuple(Direction("steady", sid) for sid, _ in flashing[:4]),
            )
        )
    for (a, sa), (b, sb) in combinations(zip(shots, stats), 2):
        if similarity(a.prompt, b.prompt) >= REPEAT or b.continuity:
            continue  # a repeated prompt is a story finding; a continuity shot is meant to look alike
        if float(sa.thumb.ravel() @ sb.thumb.ravel()) > 0.97 and float(np.abs(sa.hist_last - sb.hist_last).sum()) < 0.2:
            other = "close-up" if shot_type(b.prompt) != "close-up" else "wide"
            out.append(
                Finding(
                    "look_alike",
                    "picture",
                    "visual_quality",
                    0.5,
                    (b.shot_id, a.shot_id),
                    f"the shot {b.shot_id} looks just like {a.shot_id}",
                    (Direction("reframe", b.shot_id, other),),
                )
            )
            break
    for (prev, ps), (s, st) in zip(zip(shots, stats), list(zip(shots, stats))[1:]):
        if s.continuity and float(np.abs(ps.hist_last - st.hist_first).sum()) / 2 > 0.5:
            out.append(
                Finding(
                    "colour_jump",
                    "picture",
                    "character_consistency",
                    0.5,
                    (s.shot_id,),
                    f"the cut from {prev.shot_id} to {s.shot_id} should flow, but the picture jumps",
                )
            )
    return out


def sound(board: Storyboard, hearing: Hearing | None) -> list[Finding]:
    """Findings from the film's measured sound (none when it was not heard or not measured)."""
    if hearing is None:
        return []
    shots = [s for s in hearing.shots if s.facts is not None]
    if not shots:
        return []
    out: list[Finding] = []
    masked = [
        (s, s.facts.speech_to_music_db)
        for s in shots
        if s.facts and s.facts.speech_to_music_db is not None and s.facts.speech_to_music_db < MASKED_DB
    ]
    if masked:
        worst, db = min(masked, key=lambda m: m[1])
        who = next((ln.character for ln in worst.lines if ln.character), "")
        line = f"{who}'s line" if who else "the line"
        level = f"{abs(db):.0f} dB over" if db < 0 else f"only {db:.0f} dB under"
        out.append(
            Finding(
                "masked",
                "sound",
                "sound",
                _clip((MASKED_DB - db) / 20 + 0.3),
                tuple(s.shot_id for s, _ in sorted(masked, key=lambda m: m[1])[:4]),
                f"the music is {level} {line} in {worst.shot_id}"
                + (f" ({len(masked)} shots with lines under {MASKED_DB:.0f} dB)" if len(masked) > 1 else ""),
            )
        )
    by_shot = {s.shot_id: s for s in shots}
    for sc in board.scenes:
        heard = [by_shot[s.shot_id] for s in sc.shots if s.shot_id in by_shot]
        if heard and all(s.facts and s.facts.loudness_lufs is None for s in heard):
            seconds = heard[-1].end - heard[0].start
            out.append(
                Finding(
                    "no_sound",
                    "sound",
                    "sound",
                    _clip(0.3 + seconds / 20),
                    tuple(s.shot_id for s in heard[:4]),
                    f"the scene from {heard[0].shot_id} has no sound at all for {seconds:.0f} s",
                )
            )
            break
    gaps = [
        (s, s.facts.longest_silence_s)
        for s in shots
        if s.facts and s.facts.loudness_lufs is not None and s.facts.longest_silence_s >= SILENCE_S
    ]
    if gaps:  # dead air inside a shot that has sound (a scene with none at all is `no_sound`)
        worst, gap = max(gaps, key=lambda g: g[1])
        out.append(
            Finding(
                "silence",
                "sound",
                "sound",
                _clip(0.25 + gap / 12),
                tuple(s.shot_id for s, _ in sorted(gaps, key=lambda g: -g[1])[:4]),
                f"the sound drops out for {gap:.1f} s in {worst.shot_id} (under -50 dBFS)"
                + (f", and for {SILENCE_S:.0f} s or more in {len(gaps) - 1} other shot(s)" if len(gaps) > 1 else ""),
            )
        )
    clipped = [s for s in shots if s.facts and s.facts.clipped]
    if clipped:
        out.append(
            Finding(
                "clipping",
                "sound",
                "sound",
                _clip(0.4 + 0.1 * len(clipped)),
                tuple(s.shot_id for s in clipped[:4]),
                f"the sound clips (samples at full scale) in {len(clipped)} shot(s), first in {clipped[0].shot_id}",
            )
        )
    if hearing.loudness_lufs is not None and hearing.target_lufs is not None:
        off = hearing.loudness_lufs - hearing.target_lufs
        if abs(off) > LOUDNESS_TOLERANCE:
            out.append(
                Finding(
                    "loudness_off",
                    "sound",
                    "sound",
                    _clip(abs(off) / 6),
                    (),
                    f"the film plays at {hearing.loudness_lufs:.1f} LUFS, {abs(off):.1f} LU "
                    f"{'over' if off > 0 else 'under'} its {hearing.target_lufs:.0f} LUFS target",
                )
            )
    fast = [
        (s, s.facts.words_per_s)
        for s in shots
        if s.facts and s.facts.words_per_s is not None and s.facts.words_per_s > FAST_WPS
    ]
    if fast:
        worst, wps = max(fast, key=lambda f: f[1])
        who = next((ln.character for ln in worst.lines if ln.character), "")
        out.append(
            Finding(
                "fast_lines",
                "sound",
                "sound",
                _clip(wps / FAST_WPS - 0.8),
                tuple(s.shot_id for s, _ in sorted(fast, key=lambda f: -f[1])[:4]),
                f"{who or 'the line'} speaks at {wps:.1f} words a second in {worst.shot_id}, too fast to follow",
            )
        )
    pitches = sorted(hearing.voice_pitch_hz.items())
    alike = [
        (a, b, abs(12 * np.log2(fb / fa)))
        for (a, fa), (b, fb) in combinations(pitches, 2)
        if abs(12 * np.log2(fb / fa)) < ALIKE_SEMITONES
    ]
    if alike:
        a, b, st = min(alike, key=lambda x: x[2])
        said = [s.shot_id for s in shots for ln in s.lines if ln.character in (a, b)]
        out.append(
            Finding(
                "voices_alike",
                "sound",
                "sound",
                _clip(0.8 - st / (2 * ALIKE_SEMITONES)),
                tuple(dict.fromkeys(said))[:4],
                f"{a} and {b} sound alike: their voices are {st:.1f} semitones apart "
                f"({hearing.voice_pitch_hz[a]:.0f} and {hearing.voice_pitch_hz[b]:.0f} Hz)",
            )
        )
    return out


def measured_sound(hearing: Hearing) -> str:
    """What the mix measured, in one clause with its figures: the lines over the music at their worst, the film's
    loudness against its target, the longest silence, how far apart the voices are."""
    shots = [s for s in hearing.shots if s.facts is not None]
    parts = []
    stm = [(s.facts.speech_to_music_db, s.shot_id) for s in shots if s.facts and s.facts.speech_to_music_db is not None]
    if stm:
        db, sid = min(stm)
        parts.append(f"the lines stand {db:.0f} dB over the music at worst ({sid})")
    if hearing.loudness_lufs is not None:
        target = f" against its {hearing.target_lufs:.0f}" if hearing.target_lufs is not None else ""
        parts.append(f"the mix plays at {hearing.loudness_lufs:.1f} LUFS{target}")
    quiet = max((s.facts.longest_silence_s, s.shot_id) for s in shots if s.facts) if shots else None
    if quiet and quiet[0] >= 0.5:
        parts.append(f"the longest silence is {quiet[0]:.1f} s ({quiet[1]})")
    pitches = sorted(hearing.voice_pitch_hz.items())
    if len(pitches) >= 2:
        st = min(abs(12 * np.log2(fb / fa)) for (_, fa), (_, fb) in combinations(pitches, 2))
        parts.append(f"the closest two voices are {st:.1f} semitones apart")
    return "; ".join(parts) if parts else "nothing in the mix was measured"
