"""How a film holds to its idea: who the idea names, where it happens, the things it turns on and what must happen
(its key event first), each looked for in what the film's shots show (their prompts and who is in them), say (lines,
narration) and what the frames measure (a shot too dark to make out shows nothing).

A part is found by the idea's own words in a shot (a name, a head noun's stem), else by meaning with the packaged
sentence embedder (all-MiniLM-L6-v2, `agents.diversity.embed`): a thing or place by its head word against each word a
shot shows, an event by its clause against each shot's picture text. The embedder loads only when a part is not found
by its words. Measured (MiniLM on short texts, the event's place words left out): a shot that shows an event in
other words scores 0.48-0.62 against it, the same films' other shots 0.30 at most (0.46 for a shot of the thing the
event moves, not moving it); synonymous nouns score 0.62-0.67 (ferry/boat, storm/thunder,
beehive/bees), unrelated nouns 0.46 at most.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from agents.offline.checks import Finding, _clip
from agents.offline.directions import Direction
from agents.offline.idea import MAX_IDEA, noun_kind, read_idea, verb_lemma, verbish, word_classes
from agents.offline.lexicon import STOP
from agents.offline.measure import ShotStats
from agents.offline.once import computed_once
from agents.offline.words import WORD, stem, without_shot_type
from storage.schema import Storyboard

EVENT_NEAR = 0.45  # an event's cosine to a shot's picture text from which the shot shows it
WORD_NEAR = 0.55  # a head word's cosine to a word a shot shows from which the two name the same thing
TOO_DARK = 0.15  # mean luma under which nothing in a shot can be made out (describe.py's "very dark")
WEIGHTS = {"event": 0.6, "who": 0.8, "where": 0.6, "object": 0.5}  # how much the idea rests on each kind of part
KEY = 0.95  # the key event's weight: the film is not this idea without it


@dataclass(frozen=True)
class Part:
    """One thing the idea says: `kind` who / drawn (what a named character is) / where / object / event, `label` as a comment names it, `words` the stems
    that show it when a shot says them (all of them for an event, any one otherwise), `text` what is embedded."""

    kind: str
    label: str
    words: tuple[str, ...]
    text: str
    weight: float
    key: bool = False


@dataclass(frozen=True)
class Held:
    """Where the film has a part: `how` is shown, told (only said or written), dark (only in shots too dark to see)
    or missing; `shot_id` the shot that has it, else the nearest (for a direction); `score` 1.0 by its words."""

    part: Part
    how: str
    shot_id: str
    score: float


def _stems(text: str) -> set[str]:
    return {stem(w) for w in WORD.findall(text.lower())}


def _meaning_words(text: str) -> list[str]:
    """The words of a text that name things (no stop words, nothing under four letters), in order, once."""
    return list(dict.fromkeys(w for w in WORD.findall(text.lower()) if len(w) > 3 and w not in STOP))


@computed_once(maxsize=64)
def parts(intent: str) -> tuple[Part, ...]:
    """What the idea says must be in its film, key event first. Empty for an empty idea."""
    text = " ".join(intent.split())[:MAX_IDEA]
    if not text:
        return ()
    idea = read_idea(text)
    names = {w.lower() for c in idea.cast for w in c.name.split() if c.name[:1].isupper()}
    names |= {c.head.lower() for c in idea.cast}
    out: list[Part] = []
    taken: set[str] = set()

    def add(kind: str, label: str, head: str, weight: float) -> None:
        key = stem(head)
        if len(key) < 3 or key in taken or key in names:
            return
        taken.add(key)
        out.append(Part(kind, label, (key,), label, weight))

    places = {stem(p.split()[-1]) for p in idea.places}
    for ev in _events(idea, names):  # its action alone is compared by meaning: a shot of the place is not the event
        action = (
            " ".join(w for w in ev.text.split() if stem(w) not in places) if not ev.label == idea.obstacle else ev.text
        )
        out.append(
            Part(ev.kind, ev.label, ev.words, action if len(action.split()) >= 2 else ev.text, ev.weight, ev.key)
        )
    for c in idea.cast:
        if c.invented:
            continue
        words = tuple(stem(w) for w in c.name.split() if w.lower() not in ("the", "two", "three"))
        proper = c.name[:1].isupper()
        head = words[-1] if proper or not words else stem(c.head)
        taken.add(head)
        out.append(Part("who", c.name, (head,) if not proper else words, c.head, WEIGHTS["who"]))
    for c in idea.cast:  # what a named character is, when it is no person: "Pip, a talking seagull" is drawn as one
        being = c.detail.split()[-1] if c.detail else ""
        if being and c.name[:1].isupper() and noun_kind(being) in ("animal", "creature", "machine"):
            out.append(Part("drawn", f"{c.name} as {c.detail}", (stem(being),), being, 0.7))
    for c in idea.cast:  # nouns that qualify a character name a place or a thing: "a lighthouse mechanic"
        described = f"{c.detail} {c.name if not c.name[:1].isupper() else ''}".split()
        for w in described[:-1]:
            if word_classes(w) == frozenset({"NOUN"}) and w.lower() not in names and stem(w) != stem(c.head):
                add("where" if w.lower().endswith(("house", "shop", "yard", "station")) else "object", f"the {w.lower()}",
                    w, WEIGHTS["object"])  # fmt: skip
    for p in idea.places:
        head = p.split()[-1]
        add("where", p if p[:1].isupper() else p.lower(), head, WEIGHTS["where"])
    if idea.thing:
        add("object", idea.thing, idea.thing_head, 0.7)
    if idea.threat:
        add("object", idea.threat, idea.threat_head or idea.threat.split()[-1], 0.6)
    for o in idea.objects:
        if not word_classes(o.split()[-1]) <= {"NOUN"} and "NOUN" not in word_classes(o.split()[-1]):
            continue
        if word_classes(o.split()[-1]) & {"ADJ"} and len(o.split()) == 1:
            continue  # "blind": a trait, not a thing
        add("object", f"the {o}", o.split()[-1], WEIGHTS["object"])
    return tuple(out)


def _events(idea, names: set[str]) -> list[Part]:
    """What must happen: the goal's clause (the key event), then the idea's other clauses, without their subjects
    (who does it is the cast's part); an obstacle with a verb of its own ("the ferry hits the rocks") is one too."""
    clauses = list(idea.events)
    if idea.obstacle and any(verbish(w) for w in idea.obstacle.split()[1:]):
        clauses.append(idea.obstacle)
    goal_verb = idea.goal.split()[0] if idea.goal else ""
    out: list[Part] = []
    for clause in clauses:
        if clause == idea.obstacle:  # what stands in the way, whole: "the ferry hits the rocks"
            out.append(Part("event", clause, tuple(stem(w) for w in _meaning_words(clause)), clause, WEIGHTS["event"]))
            continue
        words = clause.split()
        at = next((n for n, w in enumerate(words) if n and (verb_lemma(w) or "") == goal_verb and goal_verb), None)
        if at is None:
            at = next((n for n, w in enumerate(words) if n and verbish(w.strip(",")) and w.lower() not in names), 0)
        if not at:  # no verb found after the subject: drop the names it opens with ("Pip relight the lamp")
            at = next((n for n, w in enumerate(words) if w.lower().strip(",") not in names | {"and"}), 0)
        action = " ".join(words[at:]).strip(" ,")
        if len(action.split()) < 2:
            continue
        key = not out and (not goal_verb or at is not None and verb_lemma(words[at]) == goal_verb)
        stems = tuple(s for s in (stem(w) for w in _meaning_words(action)) if s not in {stem(n) for n in names})
        out.append(Part("event", action, stems, action, KEY if key else WEIGHTS["event"], key))
    if out and not any(p.key for p in out):
        first = out[0]
        out[0] = Part(first.kind, first.label, first.words, first.text, KEY, True)
    return sorted(out, key=lambda p: not p.key)


_VECTORS: dict[str, np.ndarray] = {}
_VLOCK = threading.Lock()


def _vectors(texts: list[str]) -> np.ndarray:
    """Unit-norm sentence vectors, each text embedded once per process (the embedder loads on first need). The lock is
    held while embedding: the panel's critics ask for the same shots' texts together, and the embedder runs one batch
    at a time anyway (`generation.minilm`)."""
    from agents.diversity import embed

    with _VLOCK:
        new = [t for t in dict.fromkeys(texts) if t not in _VECTORS]
        if new:
            _VECTORS.update(zip(new, embed(new)))
        return np.stack([_VECTORS[t] for t in texts])


def _picture(board: Storyboard, shot) -> str:
    scene = next((sc for sc in board.scenes if any(s.shot_id == shot.shot_id for s in sc.shots)), None)
    where = scene.location if scene and scene.location else ""
    return f"{without_shot_type(shot.prompt)} {' '.join(shot.characters)} {where}".strip()


def _said(shot) -> str:
    return f"{shot.narration} {shot.spoken()}".strip()


def hold(board: Storyboard, intent: str, stats: list[ShotStats] | None = None) -> list[Held]:
    """Each of the idea's parts, where the film has it. `stats` (the measured frames, in film order) mark shots too
    dark to show anything; without them every shot is taken as seen. Whether a part is shown or said reads only the
    storyboard, so it does not depend on what a renderer draws."""
    idea_parts = parts(intent or board.logline)
    if not idea_parts:
        return []
    shots = board.shots()
    measured = {s.shot_id: s for s in stats or []}
    picture = {s.shot_id: _picture(board, s) for s in shots}
    said = {s.shot_id: _said(s) for s in shots}
    dark = {sid for sid, st in measured.items() if st.brightness < TOO_DARK}
    out = []
    for part in idea_parts:
        if part.kind == "drawn":  # how the film describes the character, and the shots they are in
            name = part.label.split(" as ")[0]
            bible = next((c.description for c in board.characters if c.name == name), None)
            theirs = {s.shot_id: picture[s.shot_id] for s in shots if name in s.characters}
            if bible is None and not theirs:
                continue  # never in the film: the character's own part says so
            found = _found(part, {"": bible or "", **theirs})
            out.append(Held(part, "shown" if found else "missing", "", 0.0 if not found else found[0][1]))
            continue
        shown = _found(part, picture)
        lit = [(sid, sc) for sid, sc in shown if sid not in dark]
        if lit:
            out.append(Held(part, "shown", lit[0][0], lit[0][1]))
        elif shown:
            out.append(Held(part, "dark", shown[0][0], shown[0][1]))
        elif told := _found(part, said):  # looked for in the lines only when no picture has it
            out.append(Held(part, "told", told[0][0], told[0][1]))
        else:
            out.append(Held(part, "missing", _nearest(part, picture), 0.0))
    return out


def _found(part: Part, texts: dict[str, str]) -> list[tuple[str, float]]:
    """The shots whose text has the part, best first: by its words, else by meaning."""
    need = set(part.words)
    if part.kind == "event":
        by_words = [(sid, 1.0) for sid, t in texts.items() if need and need <= _stems(t)]
    else:
        by_words = [(sid, 1.0) for sid, t in texts.items() if need & _stems(t)]
    if by_words:
        return by_words
    live = {sid: t for sid, t in texts.items() if t.strip()}
    if not live:
        return []
    if part.kind == "event":
        v = _vectors([part.text, *live.values()])
        sims = v[1:] @ v[0]
        hits = [(sid, float(s)) for sid, s in zip(live, sims) if s >= EVENT_NEAR]
    elif part.kind == "who" and part.label[:1].isupper():
        return []  # a name is there by its name or not at all
    else:
        head = part.words[-1]
        words = {sid: _meaning_words(t) for sid, t in live.items()}
        vocab = sorted({w for ws in words.values() for w in ws})
        if not vocab:
            return []
        v = _vectors([head, *vocab])
        near = dict(zip(vocab, (v[1:] @ v[0]).tolist()))
        hits = [(sid, max(near[w] for w in ws)) for sid, ws in words.items() if ws]
        hits = [(sid, s) for sid, s in hits if s >= WORD_NEAR]
    return sorted(hits, key=lambda h: -h[1])


def _nearest(part: Part, picture: dict[str, str]) -> str:
    """The shot a missing part would go in: for an event the shot nearest it in meaning, else none."""
    live = [sid for sid, t in picture.items() if t.strip()]
    if part.kind != "event" or not live:
        return ""
    v = _vectors([part.text, *(picture[s] for s in live)])
    return live[int(np.argmax(v[1:] @ v[0]))]


KIND_DIMENSION = {
    "who": "character_consistency",
    "drawn": "character_consistency",
    "where": "visual_quality",
    "object": "visual_quality",
}


def missing(held: list[Held], weights: dict[str, float] | None = None, limit: int = 2) -> str:
    """What the film lacks of its idea in a few words ('' when nothing): the key event first, then what matters most
    to a viewer with these dimension `weights`, each with how it falls short when it is not plain absence."""
    w = weights or {}
    gone = sorted(
        (h for h in held if h.how != "shown"),
        key=lambda h: (not h.part.key, -w.get(KIND_DIMENSION.get(h.part.kind, "story_clarity"), 1.0) * h.part.weight),
    )
    how = {"missing": "", "told": " (only said)", "dark": " (too dark to see)"}
    named = [f"{h.part.label}{how[h.how]}" for h in gone[:limit]]
    if len(gone) > limit:
        named.append(f"{len(gone) - limit} more")
    return " and ".join([", ".join(named[:-1]), named[-1]]) if len(named) > 1 else "".join(named)


def findings(board: Storyboard, held: list[Held], stats: list[ShotStats] | None = None) -> list[Finding]:
    """What the idea check finds, as the critic's findings (`intent_faithfulness`): each event not shown (the key
    event weighs most), the idea's characters, then its places and things, not on screen, each naming what it misses.
    One only said or written counts half; one only in shots too dark to see is a picture finding."""
    shots = board.shots()
    if not shots:
        return []
    luma = {s.shot_id: s.brightness for s in stats or []}
    here = {s.shot_id for s in shots}
    free = [s for s in shots[len(shots) // 2 :] if not s.locked] or shots[-1:]
    out = []
    for h in held:
        if h.how == "shown" or h.part.kind != "event":
            continue
        p = h.part
        which = "the idea's key event" if p.key else "what the idea says happens"
        sid = h.shot_id if h.shot_id in here else free[0].shot_id
        if h.how == "missing":
            what = f"no shot shows {which}: {p.label}"
        elif h.how == "told":
            what = f"{which}, {p.label}, is only said (in {h.shot_id}), never shown"
        else:
            what = f"{which}, {p.label}, happens only in {h.shot_id}, too dark to see (mean luma {luma[sid]:.2f})"
        scale = 1.0 if h.how == "missing" else 0.55
        out.append(
            Finding(
                "missing",
                "picture" if h.how == "dark" else "story",
                "intent_faithfulness",
                _clip(p.weight * scale),
                (sid,),
                what,
                (Direction("include", sid, p.label),) if h.how != "dark" else (),
            )
        )
    for h in held:
        if h.part.kind == "drawn" and h.how == "missing":
            name, what = h.part.label.split(" as ", 1)
            bible = next((c.description for c in board.characters if c.name == name), "")
            described = f" (described as '{bible[:60]}')" if bible else ""
            sid = next((s.shot_id for s in shots if name in s.characters), free[0].shot_id)
            out.append(
                Finding(
                    "missing",
                    "story",
                    "intent_faithfulness",
                    h.part.weight,
                    (sid,),
                    f"the idea's {name} is {what}, but nothing in the film draws {name} as one{described}",
                )
            )
    for kinds, noun in ((("who",), "characters"), (("where", "object"), "places and things")):
        for level, hows in (("story", ("missing", "told")), ("picture", ("dark",))):
            gone = [h for h in held if h.part.kind in kinds and h.how in hows]
            if not gone:
                continue
            named = ", ".join(h.part.label for h in gone[:4])
            are = "is" if len(gone) == 1 else "are"
            if level == "picture":
                shot_ids = tuple(dict.fromkeys(h.shot_id for h in gone if h.shot_id in luma))[:3]
                lumas = ", ".join(f"{luma[s]:.2f}" for s in shot_ids)
                what = f"the idea's {noun} {named} {are} only in shots too dark to see ({', '.join(shot_ids)}: luma {lumas})"
                out.append(
                    Finding(
                        "missing",
                        level,
                        "intent_faithfulness",
                        _clip(0.55 * max(h.part.weight for h in gone)),
                        shot_ids,
                        what,
                    )
                )
                continue
            absent = [h for h in gone if h.how == "missing"]
            how = (
                "never on screen"
                if len(absent) == len(gone)
                else "only said, never shown"
                if not absent
                else "not shown"
            )
            weight = max(h.part.weight for h in gone) * (1.0 if absent else 0.55)
            picks = [free[(i * 2) % len(free)] for i in range(len(gone))]
            out.append(
                Finding(
                    "missing",
                    "story",
                    "intent_faithfulness",
                    _clip(weight + 0.05 * (len(gone) - 1)),
                    tuple(dict.fromkeys(s.shot_id for s in picks))[:3],
                    f"the idea's {noun} {named} {are} {how}",
                    tuple(Direction("include", s.shot_id, h.part.label) for s, h in zip(picks, gone[:3])),
                )
            )
    return out
