"""The offline critic: one persona watches a film as far as rules can — what `checks.py` finds in the storyboard,
the measured frames and the measured sound — and raises what this viewer would notice, weighted by their weights,
tastes, loves and hates, in their own voice. A persona says out loud only the findings that touch its own concerns
(a hate, a love, what it notices first, its two heaviest dimensions); the rest stay in its issues, so a panel repeats
little. Heuristic: rules over measurements, not a viewer's judgment. Its
`sound` score is given only when it heard the film (its hearing has measured facts); otherwise it is None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.base import FilmView, Result
from agents.offline.checks import Finding, measured_sound, picture, sound, story
from agents.offline.critic_idea import Held, hold
from agents.offline.critic_idea import findings as idea_findings
from agents.offline.critic_idea import missing as idea_missing
from agents.offline.directions import write
from agents.offline.measure import Measurer
from agents.offline.voice import TERMS, Voice, sentence
from storage.run import RunContext, WatchProgress
from storage.schema import DIMENSIONS, Critique, CritiqueIssue, Persona, Scores, ShotNote, Storyboard, Tastes

RAISE = 0.18  # salience from which a viewer mentions a finding


@dataclass(frozen=True)
class Topic:
    """Which loves and hates a finding touches: `hurts` (a hate it is, or a love it denies), `pleases` (a love it
    serves: the viewer will not complain), `gated` (raised only by a viewer it hurts)."""

    hurts: str
    pleases: str = ""
    gated: bool = False


TOPICS = {
    "drags": Topic(r"slow|drag|build-?up|outlast|homework|boredom|gets to the point", r"breathe|long take|patien"),
    "rushed": Topic(r"breathe|pause|quiet|\bma\b|enough time|time to read|steady framing", r"fast cuts|quick"),
    "slow_start": Topic(r"hook|first (two|few) seconds|slow opening|establishing shots|gets to the point"),
    "same_lengths": Topic(r"rhythm|random cutting|on the beat|\bcut\b"),
    "repeat": Topic(r"generic|repeat|lazy|random cutting|homework|boredom|designed"),
    "look_alike": Topic(r"generic|repeat|lazy|designed|texture"),
    "dense_line": Topic(r"caption|vanish|subtitle|over-explained|read"),
    "silent_stretch": Topic(r"caption|sound off|without sound|needing sound|text on screen|carried only by sound"),
    "explains": Topic(r"explains? what|exposition|narration that|over-explained|explained through|subtext", gated=True),
    "burned_captions": Topic(r"caption|sound (is )?off|needing sound|text on screen|only by sound", gated=True),
    "camera_same": Topic(
        r"static|nothing happening|big motion|movement",
        r"steady framing|stillness|quiet|\bma\b|breathe|motivated camera",
    ),
    "camera_restless": Topic(r"unmotivated|random cutting|steady framing|motivated camera|restraint", gated=True),
    "absent": Topic(r"character|recognisable|on-model|designs|meme"),
    "never_seen": Topic(r"character|recognisable|on-model|designs|meme"),
    "missing": Topic(r"story|retell|follow|point|lore|twist|confusing"),
    "unestablished": Topic(r"confusing|jumps in time or place|at a glance|geography"),
    "wide_heavy": Topic(r"small screen|tiny details|one subject|big, simple", gated=True),
    "no_closeups": Topic(r"faces|lip-reading|emotion"),
    "dark": Topic(r"dark|murky|glare|legib|readab|clear, bright|bright", r"\bdark\b|shadow|dread|silhouette"),
    "washed_out": Topic(r"flat lighting|bright flat|glossy|silhouette|shadow|high-contrast", r"bright"),
    "flat": Topic(r"contrast|flat|silhouette|legib|bold colour"),
    "static": Topic(
        r"static|nothing happening|big motion|swipe",
        r"stillness|quiet|\bma\b|steady framing|breathe|motivated camera|deliberate composition",
    ),
    "flash": Topic(r"flash|strob|bright-dark|photosensitiv|migraine"),
    "colour_jump": Topic(r"inconsistent lighting|colour between|drift|consistent|continuity"),
    "masked": Topic(
        r"drown|loud music|music (over|too loud|louder)|hear (the|every) (line|word)|mumbl|by ear|intelligib|said clearly"
    ),
    "no_sound": Topic(
        r"silence|dead air|nothing (to hear|is heard)|sound drops", r"\bsilence\b|\bquiet\b|\bma\b|stillness"
    ),
    "silence": Topic(
        r"silence|dead air|nothing (to hear|is heard)|sound drops|by ear", r"\bsilence\b|\bquiet\b|\bma\b|stillness"
    ),
    "clipping": Topic(r"distort|crackl|clipp|harsh sound"),
    "loudness_off": Topic(r"volume|too (quiet|loud)|loudness|sudden(ly)? loud"),
    "fast_lines": Topic(r"too fast|gabbl|rushed (lines|dialogue)|can't follow|mumbl|said clearly"),
    "voices_alike": Topic(r"voices?|who is speaking|who's talking|tell .{0,20}apart|sound alike"),
}
QUESTIONS = {  # picture findings a rule cannot fix: what to ask the creator, about the shots
    "dark": "if the darkness is not meant, let the audience see who is in {ids}",
    "washed_out": "if the glare is not meant, give {ids} something in shade",
    "flat": "give {ids} one clear subject against its background",
    "colour_jump": "make {ids} continue from the shot before",
    "burned_captions": "burn the subtitles into the picture (a film option)",
    "missing": "give the story what its logline promises",
    "masked": "bring the music down under the lines in {ids} (its level, or ducking on)",
    "no_sound": "give {ids} a sound: room tone, an effect or the score",
    "silence": "fill the gap in {ids} with room tone, an effect or the score, unless the silence is meant",
    "clipping": "lower the level in {ids} so it stops clipping",
    "loudness_off": "mix the film to its loudness target",
    "fast_lines": "give the lines in {ids} a slower delivery",
    "voices_alike": "make the voices in {ids} further apart (pitch or pace)",
}
BEST = {
    "story_clarity": "story",
    "visual_quality": "framing",
    "character_consistency": "characters",
    "pacing": "pacing",
    "emotional_impact": "feeling",
    "intent_faithfulness": "premise",
    "sound": "sound",
}


def taste_scale(kind: str, t: Tastes) -> float:
    """How much this viewer's tastes make a finding matter (1: as measured)."""
    scales = {
        "drags": 1.3 - t.patience,
        "slow_start": 1.3 - t.patience,
        "rushed": 0.5 + t.patience,
        "dense_line": 0.4 + t.captions,
        "silent_stretch": 0.4 + t.captions,
        "burned_captions": 0.4 + t.captions,
        "camera_same": 0.3 + t.motion,
        "static": 0.3 + t.motion,
        "camera_restless": 1.3 - t.motion,
        "absent": 0.4 + t.continuity,
        "never_seen": 0.4 + t.continuity,
        "colour_jump": 0.4 + t.continuity,
        "dark": 0.3 + t.brightness,
        "washed_out": (1.3 - t.brightness) * (0.5 + t.contrast),
        "flat": 0.3 + t.contrast,
        "flash": 0.2 + 1.5 * t.flash_sensitivity,
        "masked": 0.4 + t.captions,  # who follows the lines minds most when they are drowned
        "fast_lines": 0.4 + t.captions,
        "no_sound": 1.3 - t.patience,  # silence tries the impatient
        "silence": 1.3 - t.patience,
    }
    return scales.get(kind, 1.0)


@dataclass(frozen=True)
class Judged:
    finding: Finding
    salience: float
    hate: str  # the persona's hate this finding is ("" if none)
    love: str  # the persona's love this finding denies ("" if none)
    concern: str = (
        ""  # the persona's own words this finding touches (a hate, a love, what they notice first, who they are)
    )


def judge(persona: Persona, findings: list[Finding], heard: bool = False) -> list[Judged]:
    """Each finding weighed for this persona, most salient first; findings a love of theirs enjoys are dropped.
    A finding's weight is its dimension's against the mean of the dimensions scored (`sound` only when `heard`)."""
    dims = [d for d in DIMENSIONS if heard or d != "sound"]
    mean_w = sum(persona.weights[d] for d in dims) / len(dims)
    out = []
    for f in findings:
        topic = TOPICS[f.kind]
        hate = next((h for h in persona.hates if re.search(topic.hurts, h, re.I)), "")
        love = next((lv for lv in persona.loves if re.search(topic.hurts, lv, re.I)), "")
        pleased = topic.pleases and any(re.search(topic.pleases, lv, re.I) for lv in persona.loves)
        if pleased or (topic.gated and not (hate or love)):
            continue
        s = f.severity * taste_scale(f.kind, persona.tastes) * persona.weights[f.dimension] / mean_w
        noticed = persona.notices_first if re.search(topic.hurts, persona.notices_first or "", re.I) else ""
        first = sorted(dims, key=lambda d: -persona.weights[d])[:2]  # what matters most to them
        concern = hate or love or noticed or (f"their {f.dimension.replace('_', ' ')}" if f.dimension in first else "")
        out.append(Judged(f, round(s * (1.6 if hate or love else 1.0), 3), hate, love, concern))
    return sorted(out, key=lambda j: -j.salience)


class OfflineCritic:
    """Critic role without a model (agents.base.Critic). Measures each clip once (every frame, low resolution)."""

    mode = "offline"

    def __init__(self) -> None:
        self.measurer = Measurer()

    def findings(self, persona: Persona, film: FilmView) -> list[Finding]:
        """Every finding this viewer's tastes make of the film: story, the idea's parts it lacks, picture, sound."""
        return self._watch(persona, film)[0]

    def _watch(self, persona: Persona, film: FilmView) -> tuple[list[Finding], list[Held]]:
        board = film.storyboard
        stats = self.measurer.film(film)
        held = hold(film.whole, film.intent, stats)  # a scoped view: the idea is held against the whole film
        found = (
            story(board, film.intent, persona.tastes)
            + idea_findings(board, held, stats)
            + picture(board, stats, persona.tastes)
            + sound(board, film.hearing)
        )
        return found, held

    def critique(self, persona: Persona, film: FilmView, ctx: RunContext | None = None) -> Result[Critique]:
        """One persona's critique; `ctx.cancel` is checked before and after measuring the frames (the slow part)."""
        ctx = ctx or RunContext()
        ctx.cancel.raise_if_cancelled(f"critic {persona.id} (offline): cancelled")
        ctx.progress(WatchProgress(persona=persona.id, chunk=1, chunks=1, status="watching"))
        board = film.storyboard
        findings, held = self._watch(persona, film)
        ctx.cancel.raise_if_cancelled(f"critic {persona.id} (offline): cancelled")
        heard = heard_film(film)
        judged = judge(persona, findings, heard)
        raised = [j for j in judged if j.salience >= RAISE][:6]
        scores = _scores(board, judged, heard)
        w = persona.weights
        overall = round(sum(v * w[d] for d, v in scores.items()) / sum(w[d] for d in scores), 2)
        keep = overall >= 3.5 + 3.5 * (1 - persona.tastes.patience)
        voice = Voice.of(persona)
        starts = {s.shot_id: a for s, a, _ in board.timeline()}
        key_gone = any(h.part.key and h.how != "shown" for h in held)  # no praise for a story that misses its event
        best = max((d for d in scores if not (key_gone and d in ("story_clarity", "intent_faithfulness"))),
                   key=lambda d: (scores[d], d))  # fmt: skip
        lost = next((j.finding.shot_ids[0] for j in raised if j.finding.shot_ids), None)  # where they lose interest
        second = (
            starts[lost] + min(board.shot(lost).duration, 1.5 * persona.tastes.shot_seconds)
            if lost
            else board.duration() / 2
        )
        score = f"{overall:.1f}"
        lines = [voice.say(0 if keep else 1, persona, score=score, second=f"{second:.0f}")]
        if held:  # every critique holds the film to its idea and says what is missing
            lacks = idea_missing(held, persona.weights)
            shown = str(sum(h.how == "shown" for h in held))
            lines.append(voice.say(7 if lacks else 8, persona, missing=lacks, shown=shown, total=str(len(held))))
        # what this viewer says out loud: the findings that touch their own concerns (others stay in the issues)
        # (the idea's missing parts are said once, in the idea check)
        own = [j for j in raised if j.concern and not (held and j.finding.dimension == "intent_faithfulness")]
        voiced = own[:2]
        for j in voiced:
            lines.append(voice.say(2, persona, what=j.finding.what, term=TERMS.get(j.finding.kind, "film")))
            if j.hate:
                lines.append(voice.say(3, persona, hate=j.hate))
            elif j.love:
                lines.append(voice.say(4, persona, love=j.love))
            if j.finding.directions:
                lines.append(voice.say(5, persona, do=j.finding.directions[0].text()))
        if heard and film.hearing and not any(j.finding.level == "sound" for j in voiced):
            if persona.weights["sound"] >= max(persona.weights[d] for d in DIMENSIONS) or any(
                j.finding.level == "sound" for j in raised
            ):  # who listens most, or who has a sound finding, says what the mix measured
                lines.append(voice.say(2, persona, what=measured_sound(film.hearing), term="mix"))
        lines.append(voice.say(6, persona, best=BEST[best]))
        if not voiced:
            lines.insert(1, voice.say(2, persona, what="nothing got in my way", term="film"))
        reason = (
            voice.say(6, persona, best=BEST[best])
            if keep or not raised
            else voice.say(2, persona, what=raised[0].finding.what, term=TERMS.get(raised[0].finding.kind, "film"))
        )
        issues = [
            CritiqueIssue(
                summary=j.finding.what,
                dimension=j.finding.dimension,
                shot_ids=list(j.finding.shot_ids),
                urgency=_urgency(j, persona.tastes),
                suggestion=_suggestion(j.finding),
            )
            for j in raised
        ]
        notes: dict[str, str] = {}
        for j in raised:
            for sid in j.finding.shot_ids[:3]:
                notes.setdefault(sid, j.finding.what)
        critique = Critique(
            persona_id=persona.id,
            overall=overall,
            scores=Scores(**scores),
            shot_notes=[ShotNote(shot_id=k, note=v) for k, v in notes.items()],
            top_issues=issues,
            keep_watching=keep,
            keep_watching_reason=sentence(reason),
            summary=" ".join(sentence(x) for x in lines),
        )
        return Result(critique, model="offline")


def heard_film(film: FilmView) -> bool:
    """Whether the film's sound was heard and measured (else the critic gives no `sound` score)."""
    return film.hearing is not None and any(s.facts is not None for s in film.hearing.shots)


def _scores(board: Storyboard, judged: list[Judged], heard: bool = False) -> dict[str, float]:
    """7.5 on every dimension (`sound` only when the film was heard), less what this viewer weighed against it, plus
    what the structure earns."""
    scores = {d: 7.5 for d in DIMENSIONS if heard or d != "sound"}
    for j in judged:
        scores[j.finding.dimension] -= min(3.0, 3.5 * j.salience)
    shots = board.shots()
    if any(sc.purpose for sc in board.scenes) and any(s.narration or s.dialogue for s in shots):
        scores["story_clarity"] += 0.5
    peak = [s for sc in board.scenes if sc.purpose in ("crisis", "climax") for s in sc.shots]
    if peak and sum(s.duration for s in peak) / len(peak) < board.duration() / len(shots):
        scores["emotional_impact"] += 0.5  # the cutting quickens toward the climax
    return {d: round(min(10.0, max(0.0, v)), 2) for d, v in scores.items()}


def _urgency(j: Judged, t: Tastes) -> int:
    if j.finding.kind == "flash" and t.flash_sensitivity >= 0.5:
        return 5
    return int(min(5, max(1, 1 + j.salience * 2.5)))


def _suggestion(f: Finding) -> str:
    if f.directions:
        return write(list(f.directions))
    question = QUESTIONS.get(f.kind, "")
    return question.format(ids=", ".join(f.shot_ids[:4])) if question else ""
