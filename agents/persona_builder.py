"""Personas from real audiences: a Persona built from one viewer's comments (agents/comments.py reads them).

`build_persona(comments, name, client=...)` asks the LLM for a structured persona whose every trait cites
the comments it came from; without a client an offline builder does keyword and sentiment statistics over
the comments (and says so in `who`). Either way the persona carries `evidence` (trait -> quoted comments)
and keeps no user names, handles, emails, links or phone numbers: comments are sanitized when loaded and
everything the builder writes is sanitized again.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import Field, create_model

from agents.comments import Comment, sanitize
from agents.json_answer import Closed as _Closed
from storage.schema import DIMENSIONS, Persona, Tastes

if TYPE_CHECKING:
    from agents.llm import LLMClient

TASTE_DEFAULTS: dict[str, float] = Tastes().model_dump()  # the one set of defaults (storage.schema.Tastes)
MAX_LLM_COMMENTS = 300  # comments sent to the LLM (the first ones); their indices are what it cites
MAX_QUOTES = 3  # quotes kept per trait in `evidence`


# ------------------------------------------------------------------------------------------ vocabulary

POSITIVE = set(
    """love loved loves lovely amazing awesome beautiful beautifully brilliant gorgeous great good best
excellent fantastic wonderful stunning masterpiece perfect perfectly enjoyed enjoy fun funny hilarious moving touching
incredible impressive favourite favorite superb solid charming delightful clever smart gripping captivating
breathtaking nice like liked likes recommend recommended memorable powerful haunting sublime epic cool wow
satisfying fresh engaging immersive well-made heartfelt sweet tense thrilling exciting""".split()
)
NEGATIVE = set(
    """hate hated hates boring bored awful terrible bad worst poor weak dull disappointing disappointed
mess messy confusing confused annoying annoyed stupid ugly cheap lazy predictable cliche cliched pointless waste
wasted meh overrated tedious drags dragged dragging slog unwatchable cringe cringey forgettable flat bland painful
headache nauseating dislike disliked hated frustrating frustrated unbearable sloppy rushed muddy murky""".split()
)
NEGATORS = {
    "not",
    "no",
    "never",
    "isn't",
    "wasn't",
    "didn't",
    "don't",
    "doesn't",
    "hardly",
    "nothing",
    "without",
    "isnt",
    "wasnt",
    "didnt",
    "dont",
    "doesnt",
    "can't",
    "cant",
    "couldn't",
    "couldnt",
    "nor",
}

# Topics a viewer talks about: label -> keywords (single words, or phrases matched in the text).
TOPICS: dict[str, tuple[str, ...]] = {
    "visuals and cinematography": (
        "visual",
        "visuals",
        "cinematography",
        "gorgeous",
        "colour",
        "colours",
        "color",
        "colors",
        "lighting",
        "framing",
        "composition",
        "shots",
        "imagery",
        "look",
        "looks",
    ),
    "animation and art style": ("animation", "animated", "art", "artwork", "drawn", "style", "anime", "backgrounds"),
    "special effects": ("cgi", "effects", "vfx", "practical"),
    "story and plot": ("story", "plot", "storyline", "narrative", "writing", "script", "premise"),
    "twists and surprises": ("twist", "twists", "surprise", "surprising", "predictable", "unexpected"),
    "the ending": ("ending", "ended", "finale", "conclusion"),
    "characters": ("character", "characters", "protagonist", "villain", "hero", "heroine"),
    "acting and performances": ("acting", "actor", "actors", "actress", "performance", "performances", "cast"),
    "dialogue": ("dialogue", "dialog", "lines", "conversation", "talky", "exposition"),
    "pacing": ("pace", "pacing", "slow", "fast", "drags", "dragged", "rushed", "long", "length", "boring", "tedious"),
    "editing and cuts": ("editing", "edit", "cuts", "cut", "montage", "transitions", "choppy"),
    "music and sound": ("music", "soundtrack", "score", "sound", "song", "songs", "audio"),
    "emotional moments": ("cried", "tears", "emotional", "heart", "touching", "moving", "feels", "heartbreaking"),
    "humour": ("funny", "hilarious", "humor", "humour", "jokes", "laughed", "comedy"),
    "action scenes": ("action", "fight", "fights", "chase", "explosions", "stunts"),
    "scares and tension": ("scary", "horror", "creepy", "tension", "tense", "suspense", "jump scares", "dread"),
    "atmosphere and mood": ("atmosphere", "atmospheric", "mood", "moody", "vibe", "tone", "quiet", "calm"),
    "world-building": ("world", "world-building", "worldbuilding", "lore", "setting"),
    "captions and subtitles": ("captions", "subtitles", "subs", "captioned", "subtitled"),
    "flashing lights": ("flashing", "strobe", "strobing", "flicker", "flickering", "flashes"),
    "darkness of the image": ("dark", "too dark", "murky", "dim", "couldn't see", "underlit"),
    "continuity": ("continuity", "inconsistent", "consistency", "consistent", "off-model", "plot holes"),
}

DIMENSION_WORDS: dict[str, tuple[str, ...]] = {
    "story_clarity": (
        "story",
        "plot",
        "confusing",
        "confused",
        "follow",
        "understand",
        "clear",
        "makes sense",
        "lost",
        "explained",
        "coherent",
        "narrative",
        "storyline",
        "what happened",
        "captions",
        "subtitles",
    ),
    "visual_quality": (
        "visual",
        "visuals",
        "cinematography",
        "gorgeous",
        "beautiful",
        "ugly",
        "lighting",
        "colour",
        "colours",
        "color",
        "colors",
        "cgi",
        "effects",
        "framing",
        "animation",
        "dark",
        "bright",
        "looks",
        "image",
        "shots",
        "art",
    ),
    "character_consistency": (
        "character",
        "characters",
        "consistent",
        "inconsistent",
        "continuity",
        "design",
        "off-model",
        "acting",
        "performance",
        "actor",
        "actors",
        "cast",
        "same person",
    ),
    "pacing": (
        "pace",
        "pacing",
        "slow",
        "fast",
        "boring",
        "drags",
        "dragged",
        "long",
        "rushed",
        "cuts",
        "editing",
        "length",
        "tedious",
        "quick",
        "too short",
        "minutes",
    ),
    "emotional_impact": (
        "cried",
        "tears",
        "moving",
        "emotional",
        "felt",
        "heart",
        "touching",
        "scary",
        "funny",
        "laughed",
        "chills",
        "goosebumps",
        "powerful",
        "haunting",
        "feel",
    ),
    "intent_faithfulness": (
        "faithful",
        "adaptation",
        "book",
        "source",
        "promised",
        "trailer",
        "expected",
        "premise",
        "vision",
        "meant",
        "tone",
        "original",
        "supposed to",
        "advertised",
    ),
    "sound": (
        "sound",
        "audio",
        "music",
        "soundtrack",
        "mix",
        "voice",
        "voices",
        "hear",
        "loud",
        "volume",
        "mumbling",
        "mumbled",
    ),
}

NOTICES: dict[str, str] = {
    "story_clarity": "whether they can follow what is happening and why",
    "visual_quality": "how the images look: light, colour and composition",
    "character_consistency": "the characters, and whether they stay the same from shot to shot",
    "pacing": "the pace: whether the film drags or rushes",
    "emotional_impact": "whether the film makes them feel something",
    "intent_faithfulness": "whether the film delivers what it promised",
    "sound": "the sound: whether they can hear the lines over the music",
}

# Taste cues: taste -> (phrases that push it up, phrases that push it down). Matched in any comment.
TASTE_CUES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # a lower shot length: they complain of slowness; a higher one: they complain of speed or love slow cinema
    "shot_seconds": (
        (
            "too fast",
            "fast cuts",
            "rushed",
            "frantic",
            "choppy",
            "hard to follow",
            "long takes",
            "slow burn",
            "contemplative",
            "took its time",
            "let it breathe",
            "quick cuts",
        ),
        (
            "slow",
            "boring",
            "drags",
            "dragged",
            "too long",
            "tedious",
            "snappy",
            "fast-paced",
            "fast paced",
            "get to the point",
            "bored",
        ),
    ),
    "patience": (
        ("slow burn", "long takes", "contemplative", "took its time", "let it breathe", "patient", "quiet"),
        ("slow", "boring", "drags", "dragged", "too long", "tedious", "bored", "get to the point", "skipped"),
    ),
    "motion": (
        (
            "action",
            "dynamic",
            "energetic",
            "fast-paced",
            "fast paced",
            "static",
            "nothing happens",
            "snappy",
            "kinetic",
        ),
        ("shaky", "shaky cam", "nauseating", "motion sickness", "too much movement", "frantic", "calm", "still"),
    ),
    "brightness": (
        ("too dark", "couldn't see", "could not see", "murky", "underlit", "dim", "can't see", "cant see"),
        ("too bright", "washed out", "overexposed", "blinding", "moody", "noir", "shadows"),
    ),
    "contrast": (
        ("flat", "washed out", "muddy", "grey", "gray", "dull colours", "dull colors", "vivid", "punchy"),
        ("harsh", "garish", "oversaturated", "too saturated", "soft"),
    ),
    "captions": (
        (
            "captions",
            "subtitles",
            "subs",
            "couldn't hear",
            "could not hear",
            "mumbled",
            "mumbling",
            "inaudible",
            "deaf",
            "hard of hearing",
            "captioned",
            "subtitled",
            "lip-read",
        ),
        (),
    ),
    "flash_sensitivity": (
        (
            "flashing",
            "strobe",
            "strobing",
            "flicker",
            "flickering",
            "epilepsy",
            "epileptic",
            "seizure",
            "migraine",
            "headache",
            "flashes",
            "photosensitive",
        ),
        (),
    ),
    "continuity": (
        (
            "continuity",
            "inconsistent",
            "off-model",
            "changed between",
            "changes between",
            "plot hole",
            "plot holes",
            "doesn't match",
            "didn't match",
            "jumped",
            "different face",
            "consistency",
        ),
        (),
    ),
}
TASTE_STEP = {
    "shot_seconds": 1.2,
    "patience": 0.12,
    "motion": 0.12,
    "brightness": 0.08,
    "contrast": 0.08,
    "captions": 0.15,
    "flash_sensitivity": 0.2,
    "continuity": 0.12,
}
TASTE_RANGE = {"shot_seconds": (2.0, 9.0)}


def words(text: str) -> list[str]:
    return re.findall(r"[a-z][a-z'\-]*", text.lower())


def has_phrase(text_lower: str, tokens: set[str], phrase: str) -> bool:
    return phrase in tokens if " " not in phrase else phrase in text_lower


def sentiment(comment: Comment) -> float:
    """-1..1 from the rating when there is one, else from the lexicon (with negation: "not good" is negative)."""
    if comment.rating is not None:
        return max(-1.0, min(1.0, (comment.rating - 5.5) / 3.5))
    toks = words(comment.text)
    score = 0
    for i, w in enumerate(toks):
        s = (w in POSITIVE) - (w in NEGATIVE)
        if s and any(t in NEGATORS for t in toks[max(0, i - 3) : i]):
            s = -s
        score += s
    if not score:
        return 0.0
    return max(-1.0, min(1.0, score / 2))


# ------------------------------------------------------------------------------------------- offline


def quote(c: Comment, limit: int = 160) -> str:
    text = c.text if len(c.text) <= limit else c.text[: limit - 1].rsplit(" ", 1)[0] + "…"
    return f"#{c.index}: {text}"


def _quotes(cs: list[Comment]) -> list[str]:
    return [quote(c) for c in cs[:MAX_QUOTES]]


def _matches(c: Comment, keywords: tuple[str, ...]) -> bool:
    low = c.text.lower()
    toks = set(words(c.text))
    return any(has_phrase(low, toks, k) for k in keywords)


def _ranked_topics(cs: list[Comment]) -> list[tuple[str, list[Comment]]]:
    hits = [(label, [c for c in cs if _matches(c, kws)]) for label, kws in TOPICS.items()]
    return sorted((h for h in hits if h[1]), key=lambda h: (-len(h[1]), list(TOPICS).index(h[0])))


def persona_id(name: str) -> str:
    """A persona id from a display name: lowercase words joined by '_' (at most 40 characters)."""
    pid = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:40].strip("_")
    return pid or "viewer"


def _offline(comments: list[Comment], name: str, pid: str) -> Persona:
    n = len(comments)
    evidence: dict[str, list[str]] = {}
    senti = {c.index: sentiment(c) for c in comments}
    positive = [c for c in comments if senti[c.index] > 0.15]
    negative = [c for c in comments if senti[c.index] < -0.15]

    loves, hates = [], []
    for label, cs in _ranked_topics(positive)[:4]:
        loves.append(label)
        evidence[f"loves: {label}"] = _quotes(cs)
    for label, cs in _ranked_topics(negative)[:4]:
        item = label if label not in loves else f"{label} (when done badly)"
        hates.append(item)
        evidence[f"hates: {item}"] = _quotes(cs)

    by_title: dict[str, list[Comment]] = {}
    for c in comments:
        if c.title:
            by_title.setdefault(c.title, []).append(c)
    history = []
    for title, cs in sorted(by_title.items(), key=lambda kv: -len(kv[1]))[:8]:
        rated = [c.rating for c in cs if c.rating is not None]
        item = f"{title} (rated {sum(rated) / len(rated):.1f}/10)" if rated else title
        history.append(item)
        evidence[f"viewing_history: {item}"] = _quotes(cs)

    counts = {d: [c for c in comments if _matches(c, kws)] for d, kws in DIMENSION_WORDS.items()}
    top = max(len(cs) for cs in counts.values())
    weights = {d: round(0.6 + 1.0 * len(counts[d]) / top, 2) if top else 1.0 for d in DIMENSIONS}
    for d in DIMENSIONS:
        if counts[d]:
            evidence[f"weights.{d}"] = _quotes(counts[d])

    tastes = dict(TASTE_DEFAULTS)
    for taste, (up, down) in TASTE_CUES.items():
        ups = [c for c in comments if _matches(c, up)]
        downs = [c for c in comments if _matches(c, down)]
        if not ups and not downs:
            continue
        lo, hi = TASTE_RANGE.get(taste, (0.0, 1.0))
        value = tastes[taste] + TASTE_STEP[taste] * (min(len(ups), 4) - min(len(downs), 4))
        tastes[taste] = round(min(hi, max(lo, value)), 2)
        evidence[f"tastes.{taste}"] = _quotes(ups + downs)

    notice_dim = max(DIMENSIONS, key=lambda d: (len(counts[d]), -DIMENSIONS.index(d)))
    notices = NOTICES[notice_dim] if counts[notice_dim] else "nothing in particular yet (too few comments)"
    if counts[notice_dim]:
        evidence["notices_first"] = _quotes(counts[notice_dim])

    lengths = [len(words(c.text)) for c in comments]
    avg = sum(lengths) / n
    exclaim = sum("!" in c.text for c in comments) / n
    question = sum("?" in c.text for c in comments) / n
    share_pos, share_neg = len(positive) / n, len(negative) / n
    style = (
        "short, punchy comments"
        if avg < 12
        else "long, considered comments"
        if avg > 35
        else "comments of a few sentences"
    )
    tone = (
        "mostly enthusiastic"
        if share_pos >= 0.6
        else "mostly critical"
        if share_neg >= 0.6
        else "mixed: praises and complaints in equal measure"
        if positive and negative
        else "mostly neutral"
    )
    marks = "; often exclaims" if exclaim >= 0.3 else ""
    marks += "; asks questions" if question >= 0.25 else ""
    voice = f"Writes {style} (about {avg:.0f} words), {tone}{marks}."
    evidence["voice"] = _quotes(sorted(comments, key=lambda c: -abs(senti[c.index])))

    cares = sorted(DIMENSIONS, key=lambda d: -weights[d])[:2]
    watched = f"; has watched {', '.join(list(by_title)[:3])}" if by_title else ""
    who = (
        f"A real viewer, built offline from {n} comment{'s' if n != 1 else ''} by keyword and sentiment statistics "
        f"(no LLM){watched}. Positive in {share_pos:.0%} and negative in {share_neg:.0%} of the comments; "
        f"talks most about {cares[0].replace('_', ' ')} and {cares[1].replace('_', ' ')}."
    )
    return Persona(
        id=pid,
        name=name,
        who=who,
        viewing_history=history,
        loves=loves,
        hates=hates,
        notices_first=notices,
        voice=voice,
        weights=weights,
        tastes=Tastes.model_validate(tastes),
        source="built",
        evidence=evidence,
    )


# ------------------------------------------------------------------------------------------------ LLM


class Trait(_Closed):
    text: str
    comments: list[int] = Field(description="indices of the comments this trait comes from")


class Weight(_Closed):
    value: float = Field(description="0.5 (cares little) .. 2.0 (cares a lot); 1.0 = average")
    comments: list[int]


class Taste(_Closed):
    value: float
    comments: list[int]


# The answer's weights and tastes, generated from the one definition of each vocabulary (storage.schema).
# create_model's field arguments are (type, default-or-Field) pairs, typed Any by pydantic itself.
_weight_fields: dict[str, Any] = {d: (Weight, ...) for d in DIMENSIONS}
_taste_fields: dict[str, Any] = {k: (Taste, Field(description=f.description)) for k, f in Tastes.model_fields.items()}
if TYPE_CHECKING:  # models built at run time: to the checker, closed models whose fields are read with getattr
    Weights = _Closed
    TastesOut = _Closed
else:
    Weights = create_model("Weights", __base__=_Closed, **_weight_fields)
    TastesOut = create_model("TastesOut", __base__=_Closed, **_taste_fields)


class PersonaOut(_Closed):
    """What the LLM answers; mapped to storage.schema.Persona with evidence from the cited comments."""

    who: Trait
    viewing_history: list[Trait]
    loves: list[Trait]
    hates: list[Trait]
    notices_first: Trait
    voice: Trait
    weights: Weights
    tastes: TastesOut


def _traits(out: PersonaOut) -> list[tuple[str, Trait]]:
    single = [("who", out.who), ("notices_first", out.notices_first), ("voice", out.voice)]
    lists = [(f"{field}: {t.text}", t) for field in ("viewing_history", "loves", "hates") for t in getattr(out, field)]
    return single + lists


def _check(out: PersonaOut, n: int) -> list[str]:
    problems = []
    cited = [(k, t.comments) for k, t in _traits(out)]
    cited += [(f"weights.{d}", getattr(out.weights, d).comments) for d in DIMENSIONS]
    cited += [(f"tastes.{k}", getattr(out.tastes, k).comments) for k in TASTE_DEFAULTS]
    for key, idx in cited:
        bad = [i for i in idx if not 1 <= i <= n]
        if bad:
            problems.append(f"{key.split(':')[0]} cites comment(s) {bad}, but comments are numbered 1..{n}")
    if not out.loves and not out.hates:
        problems.append("give at least one love or hate")
    for d in DIMENSIONS:
        if not 0.1 <= getattr(out.weights, d).value <= 3.0:
            problems.append(f"weights.{d} must be within 0.1..3.0")
    for k in TASTE_DEFAULTS:
        lo, hi = (1.0, 30.0) if k == "shot_seconds" else (0.0, 1.0)
        if not lo <= getattr(out.tastes, k).value <= hi:
            problems.append(f"tastes.{k} must be within {lo:g}..{hi:g}")
    return problems


def build_messages(comments: list[Comment], name: str) -> list[dict]:
    """The chat messages the LLM builder sends (comments already sanitized, numbered by their index)."""
    from prompts import render

    shown = comments[:MAX_LLM_COMMENTS]
    return [
        {
            "role": "user",
            "content": render(
                "persona_build.j2", display_name=name, comments=shown, total=len(comments), dimensions=list(DIMENSIONS)
            ),
        }
    ]


def _from_llm(out: PersonaOut, comments: list[Comment], name: str, pid: str) -> Persona:
    by_index = {c.index: c for c in comments}

    def cite(key: str, idx: list[int]) -> None:
        cs = [by_index[i] for i in dict.fromkeys(idx) if i in by_index]
        if cs:
            evidence[key] = _quotes(cs)

    evidence: dict[str, list[str]] = {}
    clean = lambda s: sanitize(s).strip()  # noqa: E731 — the model may echo something identifying
    lists: dict[str, list[str]] = {"viewing_history": [], "loves": [], "hates": []}
    for field in lists:
        for t in getattr(out, field):
            text = clean(t.text)
            if text:
                lists[field].append(text)
                cite(f"{field}: {text}", t.comments)
    for key in ("who", "notices_first", "voice"):
        cite(key, getattr(out, key).comments)
    weights = {}
    for d in DIMENSIONS:
        w = getattr(out.weights, d)
        weights[d] = round(float(w.value), 2)
        cite(f"weights.{d}", w.comments)
    tastes: dict[str, float] = {}
    for k in TASTE_DEFAULTS:
        t = getattr(out.tastes, k)
        tastes[k] = round(float(t.value), 2)
        cite(f"tastes.{k}", t.comments)
    return Persona(
        id=pid,
        name=name,
        who=clean(out.who.text),
        viewing_history=lists["viewing_history"],
        loves=lists["loves"],
        hates=lists["hates"],
        notices_first=clean(out.notices_first.text),
        voice=clean(out.voice.text),
        weights=weights,
        tastes=Tastes.model_validate(tastes),
        source="built",
        evidence=evidence,
    )


# ---------------------------------------------------------------------------------------------- entry


def build_persona(
    comments: list[Comment],
    name: str,
    *,
    client: LLMClient | None = None,
    model: str | None = None,
    pid: str | None = None,
) -> Persona:
    """A persona (source="built") from one viewer's comments, each trait citing its comments in `evidence`.

    With `client` (agents.llm.LLMClient) the LLM builds it (`model`, default the client's critic model);
    otherwise the offline builder does, and `who` says so. Raises ValueError on no comments, AgentError when
    the LLM cannot produce a valid persona.
    """
    name = " ".join(sanitize(name).split()) or "Viewer"
    comments = [
        replace(c, text=sanitize(c.text), title=sanitize(c.title), description=sanitize(c.description))
        for c in comments
    ]
    comments = [c for c in comments if c.text]
    if not comments:
        raise ValueError("no comments to build a persona from")
    pid = pid or persona_id(name)
    if client is None:
        return _offline(comments, name, pid)
    model = model or client.config.critic_model
    shown = comments[:MAX_LLM_COMMENTS]
    out, _usage = client.structured(
        f"persona builder {pid}",
        model,
        build_messages(comments, name),
        PersonaOut,
        check=lambda o: _check(o, max(c.index for c in shown)),
    )
    return _from_llm(out, comments, name, pid)


def topic_words(label: str) -> set[str]:
    """The keywords behind a topic label (the offline builder's loves/hates), else the label's own words."""
    base = label.removesuffix(" (when done badly)")
    return set(TOPICS.get(base, ())) | {w for w in words(base) if len(w) > 3}
