"""Offline planner, critic and refiner: deterministic, no network, and they use their inputs.

They return the same types as the LLM roles, and say what they are (`mode = "offline"`):
- the planner structures an idea into five beats with shots that add up to the target length;
- the critic measures the sampled frames (brightness, contrast, motion, flashes, colour continuity
  between shots) and the cut (pacing, captions), and weighs what it measured by the persona's tastes;
- the refiner turns creator notes into edits of the shots they name (or match), then applies the
  panel's most agreed, most urgent issues, never touching a locked shot.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from PIL import Image

from agents.base import FilmView, Result
from storage.schema import (DIMENSIONS, Character, Critique, CritiqueIssue, Edit, Note, Persona, Proposal, RemoveShot,
                            Scene, Scores, SetShot, SetStory, Shot, ShotNote, Storyboard, Unchanged)

STOPWORDS = set(
    "a an the and or but of to in on at for with from by into onto over under about as is are was were be been it its "
    "this that these those he she they them his her their our your my we you i me make makes more less very much "
    "please lets let's so too can could should would will just shot scene film".split()
)


def _h(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z'\-]+", text.lower()) if len(w) > 3 and w not in STOPWORDS}


# ----------------------------------------------------------------------------------------- planner

BEATS = (  # (scene title, share of the running time, shot patterns, camera moves)
    ("Setup", 0.18, ("Wide establishing shot, {place}, {light}", "{a} in their everyday world, {place}, {light}",
                     "Close-up of {a}'s face, quiet and watchful, {light}"), ("static", "pan_right", "zoom_in")),
    ("The encounter", 0.17, ("{b} appears for the first time, {place}", "{a} notices {b}, surprised, {light}",
                             "Two-shot of {a} and {b}, keeping their distance"), ("dolly_in", "static", "pan_left")),
    ("Growing closer", 0.3, ("{a} and {b} share a small moment of trust, {light}", "Montage: {a} and {b} together, {place}",
                             "{b} does something unexpected; {a} laughs", "Detail shot of hands and small gestures, {light}"),
     ("handheld", "pan_right", "zoom_in", "static")),
    ("The storm", 0.2, ("The danger arrives: a storm, {place}, dark and violent", "{a} struggles against the storm to reach {b}",
                        "Close-up: {b} in peril, rain and spray", "{a} makes a brave choice"),
     ("handheld", "tilt_up", "zoom_in", "dolly_in")),
    ("Afterwards", 0.15, ("Calm after the storm at dawn, {place}", "{a} and {b} part ways, changed",
                          "Final wide shot, {place}, {light}, the two friends remembered"), ("static", "pan_left", "zoom_out")),
)
LOOKS = ("weathered face, grey beard, yellow oilskin coat", "kind eyes, red knitted scarf, worn boots",
         "small and round, deep blue-grey skin, barnacle freckles", "tall, lean, dark green jacket, short cropped hair",
         "silver hair in a braid, patched brown sweater", "huge and gentle, pale belly, a notch in the left fin")


def characters_from_idea(idea: str) -> list[str]:
    """Noun phrases introduced by an article ("a lighthouse keeper", "a lost whale"), up to three."""
    words = re.findall(r"[A-Za-z'\-]+|[.,;:!?]", idea)
    stop = {"a", "an", "the", "and", "with", "in", "on", "at", "who", "that", "to", "of", "from", "during", "after",
            "before", "while", "his", "her", "their", "its", "is", "are", "was"}
    out: list[str] = []
    places = {"in", "on", "at", "near", "by", "during", "across", "under", "beneath", "inside", "through", "into", "to"}
    for i, w in enumerate(words):
        if w.lower() not in ("a", "an", "the") or (i > 0 and words[i - 1].lower() in places):
            continue  # not an article, or a place ("in a junkyard"), not a character
        phrase: list[str] = []
        for j in range(i + 1, min(i + 4, len(words))):
            nxt = words[j + 1].lower() if j + 1 < len(words) else ""
            if words[j].lower() in stop or not words[j][0].isalpha():
                break
            phrase.append(words[j].lower())
            if nxt in ("a", "an", "the", "his", "her", "their") and len(phrase) >= 1 and j > i + 1:
                phrase.pop()  # a verb before the next article ("keeper befriends a ...")
                break
        name = "the " + " ".join(phrase) if phrase else ""
        if name and name not in out:
            out.append(name)
    return out[:3]


def setting_from_idea(idea: str) -> str:
    """The first place or time phrase of the idea ("during the autumn storms", "on a remote island")."""
    m = re.search(r"\b(in|on|at|near|by|during|across|under|beneath|inside|through)\s+((?:the|a|an)\s+)?"
                  r"([A-Za-z'\-]+(?:\s+[A-Za-z'\-]+){0,2})", idea)
    if not m:
        return ""
    words = m.group(3).split()
    stop = {"and", "with", "who", "that", "to", "of", "while", "but"}
    kept = []
    for w in words:
        if w.lower() in stop:
            break
        kept.append(w)
    return " ".join([m.group(1), (m.group(2) or "").strip(), *kept]).replace("  ", " ").strip()


class OfflinePlanner:
    mode = "offline"

    def plan(self, idea: str, minutes: float) -> Result:
        idea = " ".join(idea.split())
        if not idea:
            raise ValueError("the idea is empty")
        if not 0.25 <= minutes <= 10:
            raise ValueError(f"target length must be between 0.25 and 10 minutes, got {minutes}")
        first = re.split(r"(?<=[.!?])\s", idea)[0].rstrip(".!?")
        title = first if len(first) <= 60 else first[:57].rsplit(" ", 1)[0] + "…"
        # the first shot's voice-over: the idea, cut at a word within the narration field's limit
        opening = idea if len(idea) <= 400 else idea[:399].rsplit(" ", 1)[0] + "…"
        names = characters_from_idea(idea) or ["the hero", "the stranger"]
        if len(names) == 1:
            names.append("the stranger")
        chars = [Character(name=n.title(), description=f"{n.capitalize()}: {LOOKS[_h(idea, n) % len(LOOKS)]}")
                 for n in names]
        a, b = chars[0].name, chars[1].name
        place = setting_from_idea(idea) or f"{a}'s world"
        total = round(minutes * 60, 3)
        n_shots = max(5, round(total / 5))
        counts = [max(1, round(n_shots * share)) for _, share, _, _ in BEATS]
        counts[2] += n_shots - sum(counts)
        shots_all: list[tuple[int, Shot]] = []
        scenes: list[Scene] = []
        k = 0
        for s_i, ((title_b, _, patterns, moves), count) in enumerate(zip(BEATS, counts)):
            light = ("soft morning light", "golden afternoon light", "warm lamplight", "dark stormy night", "pale dawn light")[s_i]
            shots = []
            for j in range(max(1, count)):
                prompt = patterns[j % len(patterns)].format(a=a, b=b, place=place, light=light)
                in_shot = [c.name for c in chars if c.name in prompt]
                narration = opening if k == 0 else (f"{title_b}." if j == 0 else "")
                shot = Shot(shot_id=f"s{k + 1:03d}", prompt=prompt, duration=5.0, seed=_h(idea, k) % 2**31,
                            camera=moves[j % len(moves)], narration=narration, characters=in_shot,
                            continuity=j > 0 and s_i == 3)
                shots.append(shot)
                shots_all.append((k, shot))
                k += 1
            scenes.append(Scene(scene_id=f"scene{s_i + 1}", title=title_b, shots=shots))
        per = total / k
        for i, (_, shot) in enumerate(shots_all):  # durations add up to the target exactly
            shot.duration = round(per, 3) if i < k - 1 else round(total - round(per, 3) * (k - 1), 3)
        board = Storyboard(
            title=title, logline=idea if len(idea) < 300 else idea[:297] + "…",
            style_guide="Painterly animated look, consistent colour grading, soft film grain, 16:9 framing",
            characters=chars, scenes=scenes,
        )
        return Result(board, model="offline")


# ------------------------------------------------------------------------------------------ critic

@dataclass
class ShotStats:
    shot_id: str
    brightness: float  # mean luma 0..1
    contrast: float  # std of luma, 0..1 (0.25 is already strong)
    motion: float  # mean abs change between sampled frames, 0..1
    flash: float  # largest luma jump between consecutive sampled frames, 0..1
    first_hist: np.ndarray
    last_hist: np.ndarray


def _luma(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("L").resize((96, 54)), dtype=np.float32) / 255.0


def _hist(img: Image.Image) -> np.ndarray:
    arr = np.asarray(img.convert("RGB").resize((64, 36)), dtype=np.float32)
    hist = np.concatenate([np.histogram(arr[..., c], bins=8, range=(0, 255))[0] for c in range(3)]).astype(np.float32)
    return hist / max(1.0, hist.sum())


def measure(film: FilmView) -> list[ShotStats]:
    """Real properties of the sampled frames, per shot in film order."""
    stats = []
    for shot in film.storyboard.shots():
        frames = sorted(film.frames_of(shot.shot_id), key=lambda f: f.index)
        if not frames:
            raise ValueError(f"no sampled frames for shot {shot.shot_id}")
        imgs = [Image.open(f.path) for f in frames]
        lumas = [_luma(i) for i in imgs]
        means = [float(l.mean()) for l in lumas]
        diffs = [float(np.abs(a - b).mean()) for a, b in zip(lumas, lumas[1:])]
        stats.append(ShotStats(
            shot_id=shot.shot_id, brightness=float(np.mean(means)), contrast=float(np.mean([l.std() for l in lumas])),
            motion=float(np.mean(diffs)) if diffs else 0.0,
            flash=max((abs(a - b) for a, b in zip(means, means[1:])), default=0.0),
            first_hist=_hist(imgs[0]), last_hist=_hist(imgs[-1]),
        ))
    return stats


def _clamp(x: float) -> float:
    return round(float(min(10.0, max(0.0, x))), 2)


class OfflineCritic:
    """Scores what it measures, as this persona would weigh it. Each issue carries a machine-readable
    suggestion (`prompt+=...`, `duration=...`, `camera=...`) that the offline refiner can apply."""

    mode = "offline"

    def critique(self, persona: Persona, film: FilmView) -> Result:
        t = persona.tastes.model_dump()
        board = film.storyboard
        shots = board.shots()
        stats = measure(film)
        issues: list[CritiqueIssue] = []
        notes: list[ShotNote] = []
        want_motion = 0.004 + 0.03 * t["motion"]  # mean abs luma change that feels "moving" to them
        visual_pen, pace_pen, flash_pen = [], [], []
        for shot, s in zip(shots, stats):
            if s.brightness < t["brightness"] - 0.22:
                visual_pen.append(min(1.0, (t["brightness"] - s.brightness) * 2.5))
                issues.append(CritiqueIssue(summary=f"{shot.shot_id} is too dark to read", urgency=4 if s.brightness < 0.2 else 3,
                                            dimension="visual_quality", shot_ids=[shot.shot_id],
                                            suggestion="prompt+=brighter, well-lit, clear key light"))
            elif s.brightness > t["brightness"] + 0.3:
                visual_pen.append(min(1.0, (s.brightness - t["brightness"]) * 2))
                issues.append(CritiqueIssue(summary=f"{shot.shot_id} is washed out", urgency=2, dimension="visual_quality",
                                            shot_ids=[shot.shot_id], suggestion="prompt+=rich colour, deeper shadows"))
            if s.contrast < 0.06 + 0.12 * t["contrast"]:
                visual_pen.append(0.5 * t["contrast"])
                if t["contrast"] >= 0.5:
                    issues.append(CritiqueIssue(summary=f"{shot.shot_id} looks flat", urgency=2, dimension="visual_quality",
                                                shot_ids=[shot.shot_id], suggestion="prompt+=high contrast, dramatic lighting"))
            if s.motion < want_motion and shot.camera == "static":
                pace_pen.append(t["motion"])
                if t["motion"] >= 0.5:
                    issues.append(CritiqueIssue(summary=f"nothing moves in {shot.shot_id}", urgency=3 if t["motion"] > 0.7 else 2,
                                                dimension="pacing", shot_ids=[shot.shot_id], suggestion="camera=dolly_in"))
            if shot.duration > t["shot_seconds"] * 1.6:
                pace_pen.append(min(1.0, shot.duration / t["shot_seconds"] / 4))
                new = round(max(1.0, t["shot_seconds"] * 1.2), 1)
                issues.append(CritiqueIssue(summary=f"{shot.shot_id} drags ({shot.duration:.1f}s)", urgency=3 if t["patience"] < 0.4 else 2,
                                            dimension="pacing", shot_ids=[shot.shot_id], suggestion=f"duration={new}"))
            if s.flash > 0.25:
                flash_pen.append(s.flash * t["flash_sensitivity"])
                if t["flash_sensitivity"] >= 0.5:
                    issues.append(CritiqueIssue(summary=f"flashing light in {shot.shot_id} is hard to watch", urgency=5,
                                                dimension="visual_quality", shot_ids=[shot.shot_id],
                                                suggestion="prompt+=steady light, no flashes or strobing"))
        # continuity between neighbouring shots
        jumps = []
        for (prev, ps), (shot, s) in zip(zip(shots, stats), list(zip(shots, stats))[1:]):
            d = float(np.abs(ps.last_hist - s.first_hist).sum()) / 2  # 0 same colours .. 1 disjoint
            jumps.append(d)
            if shot.continuity and d > 0.5 and t["continuity"] >= 0.4:
                issues.append(CritiqueIssue(summary=f"{prev.shot_id} → {shot.shot_id} should flow but the colours jump",
                                            urgency=3, dimension="character_consistency", shot_ids=[shot.shot_id],
                                            suggestion="prompt+=same colour palette and light as the previous shot"))
        # captions: narration/dialogue coverage
        spoken = [bool(s.narration or s.dialogue) for s in shots]
        coverage = sum(spoken) / len(shots)
        if t["captions"] >= 0.6 and coverage < 0.3:
            issues.append(CritiqueIssue(summary="too little narration or dialogue to follow the story", urgency=4,
                                        dimension="story_clarity", shot_ids=[s.shot_id for s, ok in zip(shots, spoken) if not ok][:3],
                                        suggestion="narration+=a short line saying what happens"))
        # intent: do the shots speak of what the creator set out to make?
        intent_words = content_words(film.intent or board.logline)
        shot_words = set().union(*(content_words(s.prompt) for s in shots))
        intent_cov = len(intent_words & shot_words) / len(intent_words) if intent_words else 1.0
        # characters: named characters described in the bible
        bible = {c.name for c in board.characters}
        named = [c for s in shots for c in s.characters]
        char_ok = (sum(c in bible for c in named) / len(named)) if named else 0.5
        mean_jump = float(np.mean(jumps)) if jumps else 0.0
        avg_len = board.duration() / len(shots)
        lum = [s.brightness for s in stats]
        scores = {
            "story_clarity": _clamp(4 + 3 * coverage * (0.5 + t["captions"]) + 2 * bool(board.logline) + 1 * (len(board.scenes) > 1)
                                    - 3 * np.mean([min(1, max(0, 0.25 - s.brightness) * 6) for s in stats])),
            "visual_quality": _clamp(9 - 4 * sum(visual_pen) / len(stats) - 10 * float(np.mean(flash_pen or [0]))),
            "character_consistency": _clamp(5 + 3 * char_ok - 4 * mean_jump * t["continuity"] + 1),
            "pacing": _clamp(9 - 4 * abs(np.log(avg_len / t["shot_seconds"])) - 3 * len(pace_pen) / len(stats)),
            "emotional_impact": _clamp(3 + 10 * float(np.std(lum)) + 60 * float(np.mean([s.motion for s in stats])) * t["motion"]
                                       + 2 * float(np.mean([s.contrast for s in stats])) * 10 * t["contrast"] / 2),
            "intent_faithfulness": _clamp(3 + 7 * intent_cov),
        }
        w = persona.weights
        overall = _clamp(sum(scores[d] * w[d] for d in DIMENSIONS) / sum(w.values()))
        issues.sort(key=lambda i: (-i.urgency, -w[i.dimension]))
        for s, st in zip(shots, stats):
            notes.append(ShotNote(shot_id=s.shot_id, note=_shot_note(s, st, t)))
        threshold = 3.5 + 3.5 * (1 - t["patience"])
        keep = overall >= threshold
        worst = min(DIMENSIONS, key=lambda d: scores[d] * w[d] / max(w.values()))
        best = max(DIMENSIONS, key=lambda d: scores[d])
        reason = (f"{best.replace('_', ' ')} holds me ({scores[best]:.1f}/10)" if keep else
                  f"{worst.replace('_', ' ')} loses me ({scores[worst]:.1f}/10)")
        loves = persona.loves[0] if persona.loves else "a good story"
        hates = persona.hates[0] if persona.hates else "boredom"
        summary = (f"[{persona.name}] I came in wanting {loves}. Overall {overall:.1f}/10: "
                   f"{'I would keep watching' if keep else 'I would stop here'} — {reason}. "
                   + (f"Top problem for me: {issues[0].summary} (I can't stand {hates})." if issues else "Nothing big bothered me."))
        critique = Critique(persona_id=persona.id, overall=overall, scores=Scores(**scores), shot_notes=notes,
                            top_issues=issues[:8], keep_watching=keep, keep_watching_reason=reason, summary=summary)
        return Result(critique, model="offline")


def _shot_note(shot: Shot, s: ShotStats, t: dict[str, float]) -> str:
    bits = []
    bits.append("dark" if s.brightness < 0.3 else "bright" if s.brightness > 0.7 else "balanced light")
    bits.append("lively" if s.motion > 0.02 else "still")
    if shot.duration > t["shot_seconds"] * 1.6:
        bits.append(f"long at {shot.duration:.1f}s")
    return ", ".join(bits) + f" (luma {s.brightness:.2f}, contrast {s.contrast:.2f}, motion {s.motion:.3f})"


# ----------------------------------------------------------------------------------------- refiner

SHORTER = re.compile(r"\b(shorter|faster|tighten|tighter|quicker|trim|snappier)\b", re.I)
LONGER = re.compile(r"\b(longer|slower|linger|breathe)\b", re.I)
CUT = re.compile(r"\b(cut|remove|delete|drop)\b.*\b(shot|this)\b", re.I)
SUGGESTION = re.compile(r"^(prompt|narration|camera|duration)(\+?=)(.+)$")


def _as_prompt_phrase(note: str) -> str:
    """'Make the storm scarier.' -> 'the storm scarier'"""
    text = note.strip().rstrip(".!")
    text = re.sub(r"^(please\s+)?(make|let's make|let|have|give|show|add)\s+", "", text, flags=re.I)
    return text[0].lower() + text[1:] if text else text


class OfflineRefiner:
    mode = "offline"

    def __init__(self, max_critic_edits: int = 8) -> None:
        self.max_critic_edits = max_critic_edits

    def refine(self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique]) -> Result:
        shots = {s.shot_id: s for s in storyboard.shots()}
        order = list(shots)
        # (shot_id, field) -> pending edit parts: new value, rationale pieces, sources
        pending: dict[tuple[str, str], dict] = {}
        not_changed: list[Unchanged] = []
        from_notes: set[tuple[str, str]] = set()
        story_edits: list[Edit] = []
        removes: list[Edit] = []

        def add(shot_id: str, field: str, value: str, why: str, source: str, append: bool, by_note: bool) -> None:
            shot = shots[shot_id]
            if shot.locked:
                not_changed.append(Unchanged(what=f"{shot_id} {field}", why=f"shot is locked ({why})"))
                return
            key = (shot_id, field)
            if key in from_notes and not by_note and not append:
                not_changed.append(Unchanged(what=f"{shot_id} {field}", why=f"the creator's note decides this ({why})"))
                return
            cur = pending.setdefault(key, {"new": str(getattr(shot, field)), "why": [], "src": []})
            if append:
                if value.lower() not in cur["new"].lower():
                    cur["new"] = f"{cur['new'].rstrip('. ')}, {value}" if cur["new"] else value
            else:
                cur["new"] = value
            cur["why"].append(why)
            if source not in cur["src"]:
                cur["src"].append(source)
            if by_note:
                from_notes.add(key)

        for note in notes:
            targets = [note.shot_id] if note.shot_id else [
                sid for sid in order if content_words(note.text) & content_words(shots[sid].prompt + " " + shots[sid].narration)]
            if note.shot_id and note.shot_id not in shots:
                not_changed.append(Unchanged(what=f"note {note.id}", why=f"shot {note.shot_id} is not in this version"))
                continue
            why = f"creator note: {note.text!r}"
            if note.shot_id and CUT.search(note.text):
                if shots[note.shot_id].locked:
                    not_changed.append(Unchanged(what=f"remove {note.shot_id}", why="shot is locked"))
                else:
                    removes.append(RemoveShot(shot_id=note.shot_id, rationale=why, sources=[note.id]))
                continue
            if not targets:
                new = f"{storyboard.style_guide.rstrip('. ')}; {_as_prompt_phrase(note.text)}".lstrip("; ")
                story_edits.append(SetStory(field="style_guide", old=storyboard.style_guide, new=new,
                                        rationale=f"{why} names no shot, so it applies to the whole film's style",
                                        sources=[note.id]))
                continue
            for sid in targets:
                if SHORTER.search(note.text) or LONGER.search(note.text):
                    factor = 0.75 if SHORTER.search(note.text) else 1.25
                    add(sid, "duration", f"{round(shots[sid].duration * factor, 2)}", why, note.id, False, True)
                else:
                    add(sid, "prompt", _as_prompt_phrase(note.text), why, note.id, True, True)

        # The panel's issues, grouped: how many personas raised the same fix, and how urgently.
        grouped: dict[tuple[str, str], dict] = defaultdict(lambda: {"personas": [], "urgency": 0, "summaries": []})
        for c in critiques:
            for issue in c.top_issues:
                for sid in issue.shot_ids or []:
                    if sid not in shots:
                        continue
                    g = grouped[(sid, issue.suggestion or issue.summary)]
                    if c.persona_id not in g["personas"]:
                        g["personas"].append(c.persona_id)
                    g["urgency"] = max(g["urgency"], issue.urgency)
                    g["summaries"].append(issue.summary)
        ranked = sorted(grouped.items(), key=lambda kv: (-len(kv[1]["personas"]), -kv[1]["urgency"], order.index(kv[0][0])))
        applied = 0
        for (sid, suggestion), g in ranked:
            who = ", ".join(g["personas"])
            if applied >= self.max_critic_edits:
                not_changed.append(Unchanged(what=f"{sid}: {g['summaries'][0]}", why="lower priority than the edits proposed"))
                continue
            if len(g["personas"]) < 2 and g["urgency"] < 3:
                not_changed.append(Unchanged(what=f"{sid}: {g['summaries'][0]}", why=f"only {who} raised it, at low urgency"))
                continue
            m = SUGGESTION.match(suggestion.strip())
            why = f"{len(g['personas'])} viewer(s) ({who}): {g['summaries'][0]}"
            if m:
                field, op, value = m.groups()
                value = value.strip()
                for pid in g["personas"]:
                    add(sid, field, value, why, pid, op == "+=", False)
            elif len(suggestion) <= 200:
                for pid in g["personas"]:
                    add(sid, "prompt", suggestion, why, pid, True, False)
            else:
                not_changed.append(Unchanged(what=f"{sid}: {g['summaries'][0]}", why="no concrete change suggested"))
                continue
            applied += 1

        edits: list[Edit] = []
        for (sid, field), p in sorted(pending.items(), key=lambda kv: order.index(kv[0][0])):
            old = str(getattr(shots[sid], field))
            if p["new"] == old:
                continue
            edits.append(SetShot(shot_id=sid, field=field, old=old, new=p["new"],
                              rationale="; ".join(dict.fromkeys(p["why"])), sources=p["src"]))
        edits += removes + story_edits
        summary = (f"{len(edits)} edit(s) from {len(notes)} creator note(s) and {len(critiques)} critique(s); "
                   f"{len(not_changed)} thing(s) left as they are")
        return Result(Proposal(summary=summary, edits=edits, not_changed=not_changed), model="offline")
