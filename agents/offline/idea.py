"""Reading an idea: who is in it, where and when it happens, what happens between them, and what threatens them.

Rules over a word list (`lexicon.py`), not a language model: a word it does not know is never made a character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline.lexicon import (
    ANIMALS,
    ANIMATING,
    CAPITALISED_NOT_NAMES,
    CREATURES,
    DETERMINERS,
    NOT_AGENTS,
    PEOPLE,
    PLACE_PREPOSITIONS,
    PLACES,
    ROLE_OF_PLACE,
    SEASONS,
    STOP,
    STYLES,
    THREATS,
    TIMES,
)
from agents.offline.words import TOKEN, sentences, stem

AGENT_SUFFIXES = (
    "grapher",
    "keeper",
    "maker",
    "seller",
    "monger",
    "smith",
    "ologist",
    "ist",
    "ian",
    "eer",
    "man",
    "woman",
    "girl",
    "boy",
)
MAX_IDEA = 20_000  # characters: longer ideas are refused before any parsing
# What the idea's main verb says the story is about.
RELATIONS = {
    "bond": "befriend meet help rescue save adopt protect love fall teach guide hide shelter nurse find-friend",
    "discovery": "discover find uncover notice stumble learn receive inherit open decode",
    "making": "build make invent cook bake paint write repair fix plant grow design compose sew carve",
    "quest": "search look seek hunt chase follow travel journey try want dream climb cross deliver",
    "escape": "escape flee run hide sneak",
    "conflict": "fight battle face confront challenge compete race defy argue",
    "loss": "lose miss grieve forget leave mourn",
    "return": "return come go",
}
VERB_RELATION = {v: kind for kind, verbs in RELATIONS.items() for v in verbs.split()}


@dataclass
class Cast:
    """A character the idea introduces: `name` as the film calls them, `kind` person/animal/creature/thing."""

    name: str
    kind: str
    head: str  # the noun that names them ("keeper", "whale"), or the proper name
    detail: str = ""  # what the idea says about them ("a retired pilot", "in a red coat")
    invented: bool = False  # True: the idea names nobody, so a role its place suggests stands in


@dataclass
class Idea:
    text: str
    cast: list[Cast]
    places: list[str] = field(default_factory=list)
    times: list[str] = field(default_factory=list)  # "night", "autumn"
    threat: str = ""  # "the autumn storms" (only when the idea names one)
    threat_head: str = ""  # "storm"
    relation: str = "quest"
    verb: str = ""  # the idea's main verb, base form ("befriend")
    thing: str = ""  # what the story turns on when it is not a character ("a map of a city")
    thing_head: str = ""  # "map"
    styles: list[str] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)


def base_form(word: str) -> str:
    """'befriends' -> 'befriend', 'discovers' -> 'discover', 'carries' -> 'carry'."""
    w = word.lower()
    for suffix, repl in (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("sses", "ss"), ("xes", "x"), ("oes", "o")):
        if w.endswith(suffix) and len(w) > len(suffix) + 1:
            return w[: -len(suffix)] + repl
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w


def noun_kind(word: str) -> str:
    """person, animal, creature, or '' (not a character noun)."""
    w = stem(word)
    if w in PEOPLE:
        return "person"
    if w in ANIMALS:
        return "animal"
    if w in CREATURES:
        return "creature"
    raw = word.lower().removesuffix("'s")
    if w in NOT_AGENTS or w in PLACES or len(raw) < 6 or raw.endswith("s"):
        return ""
    if raw.endswith(AGENT_SUFFIXES):  # a cartographer, a toymaker, a violinist, a fisherman
        return "person"
    return ""


def verbish(word: str) -> bool:
    """A word that reads as a present-tense verb ("discovers", "races", "follow") rather than a noun."""
    w = word.lower()
    if w in STOP or noun_kind(w) or stem(w) in PLACES:
        return False
    return base_form(w) in VERB_RELATION or (w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3)


def read_idea(text: str) -> Idea:
    """What the idea says. Raises ValueError for an empty idea or one over MAX_IDEA characters."""
    text = " ".join(text.split())
    if not text:
        raise ValueError("the idea is empty")
    if len(text) > MAX_IDEA:
        raise ValueError(f"the idea is {len(text):,} characters long; at most {MAX_IDEA:,} are read")
    tokens = TOKEN.findall(text)
    idea = Idea(text=text, cast=_cast(tokens), sentences=sentences(text))
    idea.places = _places(tokens)
    lowered = [t.lower() for t in tokens]
    idea.times = list(dict.fromkeys(w for w in lowered if w in TIMES or w in SEASONS))
    idea.styles = list(dict.fromkeys(w for w in lowered if w in STYLES))
    idea.threat, idea.threat_head = _threat(tokens)
    _plot(idea, tokens)
    if not idea.cast:  # nobody named: a role the place suggests ("the keeper" of a lighthouse)
        role = next(
            (ROLE_OF_PLACE[stem(w)] for p in idea.places for w in p.split() if stem(w) in ROLE_OF_PLACE), "the wanderer"
        )
        idea.cast = [Cast(name=role, kind="person", head=role.split()[-1], invented=True)]
    return idea


def _np(tokens: list[str], i: int, limit: int = 4) -> tuple[int, str, str]:
    """From tokens[i] (a word after a determiner): (end index, phrase, head) of a character noun phrase, or (i, '', '')."""
    words: list[str] = []
    head, end = "", i
    for j in range(i, min(i + limit, len(tokens))):
        t = tokens[j]
        if not t[0].isalpha() or t.lower() in STOP:
            break
        words.append(t.lower())
        if noun_kind(t):
            head, end = t.lower(), j + 1
            if j + 1 < len(tokens) and noun_kind(tokens[j + 1]) == "person":  # "dog walker"
                continue
            break
    if not head:
        return i, "", ""
    return end, " ".join(words[: end - i]), head


def _cast(tokens: list[str]) -> list[Cast]:
    cast: list[Cast] = []
    seen: set[str] = set()

    def add(c: Cast) -> None:
        key = stem(c.head)
        if key not in seen and len(cast) < 4:
            seen.add(key)
            cast.append(c)

    i = 0
    while i < len(tokens):
        t = tokens[i]
        low = t.lower()
        prev = tokens[i - 1].lower() if i else ""
        sentence_start = i == 0 or tokens[i - 1] in ".!?"
        if low in DETERMINERS and prev not in PLACE_PREPOSITIONS:
            end, phrase, head = _np(tokens, i + 1)
            if phrase:
                name_tok = tokens[end] if end < len(tokens) else ""
                if name_tok[:1].isupper() and name_tok not in CAPITALISED_NOT_NAMES:  # "his dog Biscuit"
                    add(Cast(name=name_tok, kind=noun_kind(head), head=name_tok, detail=f"{low} {phrase}"))
                    i = end + 1
                    continue
                words = phrase.split()
                words[-1] = words[-1].removesuffix("'s")  # "the king's birthday": the king
                count = f"{low} " if low in ("two", "three") else ""
                add(
                    Cast(
                        name=f"the {count}{' '.join(words)}",
                        kind=noun_kind(head),
                        head=stem(head),
                        detail=_detail(tokens, end),
                    )
                )
                i = end
                continue
            nxt = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
            if nxt in ANIMATING and i + 2 < len(tokens) and tokens[i + 2][0].isalpha():  # "a talking teapot"
                j = i + 2
                while (
                    j + 1 < len(tokens)
                    and j < i + 4
                    and tokens[j + 1][0].isalpha()
                    and tokens[j + 1].lower() not in STOP
                    and not verbish(tokens[j + 1])
                ):
                    j += 1
                add(
                    Cast(
                        name="the " + " ".join(w.lower() for w in tokens[i + 1 : j + 1]),
                        kind="creature",
                        head=stem(tokens[j]),
                    )
                )
                i = j + 1
                continue
        elif (
            t[0].isupper()
            and t not in CAPITALISED_NOT_NAMES
            and prev not in PLACE_PREPOSITIONS
            and stem(t) not in PLACES
            and (not sentence_start or _looks_like_name(tokens, i))
        ):
            j = i
            while j + 1 < len(tokens) and tokens[j + 1][:1].isupper() and tokens[j + 1] not in CAPITALISED_NOT_NAMES:
                j += 1
            name = " ".join(tokens[i : j + 1])
            detail, after = "", j + 1
            if j + 2 < len(tokens) and tokens[j + 1] == "," and tokens[j + 2].lower() in ("a", "an", "the"):
                end, phrase, _ = _np(tokens, j + 3)  # "Mara, a retired pilot," describes Mara
                if phrase:
                    detail, after = f"{tokens[j + 2].lower()} {phrase}", end
            add(Cast(name=name, kind="person", head=name, detail=detail))
            i = after
            continue
        i += 1
    return cast


def _looks_like_name(tokens: list[str], i: int) -> bool:
    """A capitalised word opening a sentence is a name when a comma or a verb-like word follows ("Mara flies")."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
    return nxt in (",", "and") or (nxt[:1].isupper() and nxt not in CAPITALISED_NOT_NAMES) or verbish(nxt)


def _detail(tokens: list[str], i: int) -> str:
    """What follows a character and describes them: 'with a red scarf', 'in a yellow coat', 'wearing ...'."""
    if i >= len(tokens) or tokens[i].lower() not in ("with", "in", "wearing", "who"):
        return ""
    words = []
    for t in tokens[i : i + 7]:
        if not t[0].isalpha() or (len(words) >= 2 and verbish(t)):
            break
        words.append(t.lower())
    if len(words) < 2 or (words[0] == "in" and any(stem(w) in PLACES for w in words)):
        return ""
    return " ".join(words) if words[0] != "who" else ""


def _places(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for i, t in enumerate(tokens):
        if t.lower() not in PLACE_PREPOSITIONS:
            continue
        words = []
        for w in tokens[i + 1 : i + 6]:
            if not w[0].isalpha() or (w.lower() in STOP and w.lower() not in ("a", "an", "the", "of")):
                break
            words.append(w)
        while words and words[-1].lower() in ("a", "an", "the", "of"):
            words.pop()
        heads = [
            k for k, w in enumerate(words) if stem(w) in PLACES or (w[0].isupper() and w not in CAPITALISED_NOT_NAMES)
        ]
        if heads and not any(w.lower() in TIMES or w.lower() in SEASONS for w in words) and not noun_kind(words[0]):
            phrase = " ".join(words[: heads[0] + 1])
            if words[0].lower() not in ("a", "an", "the") and not phrase[0].isupper():
                phrase = "the " + phrase
            phrase = re.sub(r"^(a|an)\s", "the ", phrase, flags=re.I)
            if phrase.lower() not in (p.lower() for p in out):
                out.append(phrase)
    if not out:  # "The city wakes up": a place named without a preposition
        for i, t in enumerate(tokens[:-1]):
            if t.lower() in DETERMINERS and stem(tokens[i + 1]) in PLACES:
                out.append("the " + tokens[i + 1].lower())
                break
    return out[:3]


def _threat(tokens: list[str]) -> tuple[str, str]:
    for i, t in enumerate(tokens):
        if t.lower() in THREATS:
            j = i
            while j > 0 and j > i - 3 and tokens[j - 1][0].isalpha() and tokens[j - 1].lower() not in STOP:
                j -= 1
            return "the " + " ".join(w.lower() for w in tokens[j : i + 1]), stem(t)
    return "", ""


def _plot(idea: Idea, tokens: list[str]) -> None:
    """The first sentence's main verb (after its characters), and what it acts on when that is not a character."""
    toks = TOKEN.findall(idea.sentences[0] if idea.sentences else idea.text)
    cast_words = {w.lower() for c in idea.cast for w in (c.name + " " + c.detail).split()}
    lead = idea.cast[0].name.split()[-1].lower() if idea.cast else ""
    k = next((n + 1 for n, t in enumerate(toks) if t.lower() == lead), 0)
    while k < len(toks) and (
        toks[k].lower() in cast_words
        or toks[k].lower() in DETERMINERS
        or toks[k] in ","
        or toks[k].lower() in ("and", "old", "young")
        or toks[k].lower().endswith("ly")
    ):
        k += 1
    if k >= len(toks) or not (verbish(toks[k]) or base_form(toks[k]) in VERB_RELATION):
        return
    idea.verb = base_form(toks[k])
    idea.relation = VERB_RELATION.get(idea.verb, "quest")
    rest = toks[k + 1 :]
    for _ in range(2):  # "looks for a ...", "search the beach for a lost ring"
        if rest and rest[0].lower() in ("for", "upon", "to", "on", "after", "up", "in", "love"):
            rest = rest[1:]
        if not rest or rest[0].lower() not in DETERMINERS:
            return
        words: list[str] = []
        for t in rest[1:9]:
            after_of = bool(words) and words[-1] == "of" and t.lower() in ("a", "an", "the")
            if not t[0].isalpha() or (t.lower() in STOP - {"of"} and not after_of) or t.lower() in PLACE_PREPOSITIONS:
                break
            words.append(t.lower())
        while words and words[0].endswith("'s"):  # "his grandfather's old bicycle": the old bicycle
            words = words[1:]
        while words and words[-1] in ("of", "a", "an", "the"):
            words.pop()
        if not words:
            return
        if any(stem(w) in {stem(c.head.lower()) for c in idea.cast} for w in words):
            return  # the verb acts on a character
        rest = rest[1 + len(words) :]
        head = words[words.index("of") - 1] if "of" in words[1:] else words[-1]
        if stem(head) in PLACES:
            continue  # a place ("search the beach"): what is searched for may follow
        idea.thing, idea.thing_head = "the " + " ".join(words), head
        return
