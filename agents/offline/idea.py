"""Reading an idea: who is in it and what they are, where and when it happens, the things it names, what happens
(its own clauses, in order: the goal, the obstacle, the turn), and what threatens them.

Rules over word lists (`lexicon.py`) for who can be a character, and over a real English lexicon for the rest:
lemminflect (its word classes and lemmas ship inside the package) says whether a word can be a verb or a noun and
gives a verb's base form, so a clause's verb and a phrase's head are found without hand lists. A word it does not
know is never made a character. lemminflect is imported on first use, never at import time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from agents.offline.kinds import acting_kind, agent_kind, kind_of, lemma, makes, scores, trait_of
from agents.offline.lexicon import (
    ANIMATING,
    CAPITALISED_NOT_NAMES,
    DETERMINERS,
    PLACE_PREPOSITIONS,
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
    "conflict": "fight battle face confront defy argue",
    "contest": "challenge compete race",
    "loss": "lose miss grieve forget leave mourn",
    "return": "return come go",
}
VERB_RELATION = {v: kind for kind, verbs in RELATIONS.items() for v in verbs.split()}
# A verb after "must", "has to", "needs to", "tries to": a task with a deadline or an obstacle, not a bond or a quest.
MODALS = frozenset(("must", "tries", "try", "needs", "need", "wants", "want", "has", "have"))
TASK_MODALS = ("must", "has to", "have to", "needs to", "need to", "tries to", "try to", "wants to", "want to")
# What splits an idea's sentence into its events: "; ", ", and", " while ", " but ", " until ", " so ".
CLAUSE = re.compile(r"\s*(?:;|,\s*(?:and|but|so|then)\b|\bwhile\b|\bbut\b|\buntil\b|\bso that\b|\band then\b)\s*", re.I)
OBSTACLE = re.compile(
    r"\b(before|despite|against|from)\s+((?:an?|the|his|her|their|(?:she|he|they|it)(?=\s+[a-z]+s?\b))\s+[^,;.]{3,60}?"
    r"(?=\s+(?:before|despite|against|from)\b|\s*[,;.]|$)|"
    r"(?:dawn|dusk|nightfall|midnight|sunrise|sunset|noon|morning|night)\b)",
    re.I,
)
PURPOSE = re.compile(r"\bto\s+([a-z]+)\s+(.{3,80})$", re.I)  # "race across the rooftops to deliver a letter"


@lru_cache(maxsize=4096)
def word_classes(word: str) -> frozenset[str]:
    """The universal POS classes an English word can take ('race' -> NOUN, VERB), from lemminflect's lexicon."""
    from lemminflect import getAllLemmas  # lazy: the CLI never pays for it at start

    return frozenset(getAllLemmas(word.lower()))


@lru_cache(maxsize=4096)
def verb_lemma(word: str) -> str:
    """The base form of a verb ('befriends' -> 'befriend', 'naps' -> 'nap'), or '' when it cannot be a verb."""
    from lemminflect import getAllLemmas

    forms = getAllLemmas(word.lower()).get("VERB")
    return forms[0] if forms else ""


@dataclass
class Cast:
    """A character the idea introduces: `name` as the film calls them, `kind` person/animal/creature/thing."""

    name: str
    kind: str  # person, animal, creature, machine
    head: str  # the noun that names them ("keeper", "whale"), or the proper name
    detail: str = ""  # what the idea says about them ("a retired pilot", "in a red coat")
    invented: bool = False  # True: the idea names nobody, so a role its place suggests stands in
    traits: list[str] = field(default_factory=list)  # what shapes how they are filmed: "deaf" (they sign), "mute"

    @property
    def signs(self) -> bool:
        """They sign their lines (captioned, never voiced): the idea says they are deaf or mute."""
        return bool({"deaf", "mute"} & set(self.traits))


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
    objects: list[str] = field(default_factory=list)  # things it names: "a letter", "only potatoes"
    events: list[str] = field(default_factory=list)  # its own clauses, in order, as present-tense actions
    goal: str = ""  # what the lead must do, base form: "repair the frozen clock tower"
    winner: str = ""  # who the idea says wins ("the tortoise wins"): a cast name, or "" when it does not say
    obstacle: str = ""  # what stands in the way: "the ice storm", "the spring festival", "the ferry hits the rocks"
    earlier: str = ""  # what happened first ("after the oven breaks" -> "the oven breaks"): the setup pictures it
    wanted_by: list[str] = field(default_factory=list)  # the cast members whose goal it is (the goal's subject)


def base_form(word: str) -> str:
    """'befriends' -> 'befriend', 'discovers' -> 'discover', 'carries' -> 'carry'."""
    w = word.lower()
    if verb_lemma(w):
        return verb_lemma(w)
    for suffix, repl in (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("sses", "ss"), ("xes", "x"), ("oes", "o")):
        if w.endswith(suffix) and len(w) > len(suffix) + 1:
            return w[: -len(suffix)] + repl
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w


def noun_kind(word: str) -> str:
    """person, animal, creature, machine, or '' (not a character noun): what the embedder reads the word as
    (`kinds.py`), never a pronoun or a function word."""
    w = word.lower().removesuffix("'s")
    if w in STOP or len(w) < 3 or not w.replace("-", "").isalpha():
        return ""
    return agent_kind(lemma(w))


def is_place(word: str) -> bool:
    """A noun that names a place ("lighthouse", "meadow"), as the embedder reads it; never a pronoun."""
    w = word.lower().removesuffix("'s")
    return w not in STOP and len(w) > 2 and kind_of(lemma(w)) == "place"


def is_time(word: str) -> bool:
    """A noun that names a time, a season or a holiday ("midnight", "winter", "New Year")."""
    w = word.lower()
    return w in TIMES or w in SEASONS or (w not in STOP and len(w) > 2 and kind_of(w) == "time")


@lru_cache(maxsize=8192)
def verbish(word: str) -> bool:
    """A word that reads as a present-tense verb ("discovers", "races", "follow") rather than a noun (kept per word:
    the planner asks it of every word of every action it writes: 1,405 times, of 87 words, for a 10-minute plan)."""
    w = word.lower()
    if w in STOP or noun_kind(w) or is_place(w):
        return False
    classes = word_classes(w)
    if classes and "VERB" not in classes:
        return False  # the lexicon knows it, and never as a verb ("boastful", "tower")
    if classes and w.endswith("s") and verb_lemma(w) != w:
        return True  # a third-person verb form ("challenges", "naps")
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
    _things_that_act(idea, TOKEN.findall(idea.sentences[0] if idea.sentences else text))
    for c in idea.cast:  # "Ada, a deaf mechanic": the describing words that change how she is filmed
        words = [w for w in TOKEN.findall(f"{c.name} {c.detail}") if w.lower() not in STOP]
        describing = [w for w in words if "ADJ" in word_classes(w) or w.lower().endswith("ing")]  # "talking" too
        c.traits = list(dict.fromkeys(t for w in describing if (t := trait_of(w))))
    idea.places = _places(tokens)
    for c in idea.cast:  # "a deaf lighthouse mechanic", "an old station engineer": the place their noun names
        phrase = c.detail or c.name
        for place in _places_in(phrase, phrase.split()[-1]):
            if len(idea.places) < 3 and place not in idea.places:
                idea.places.append(place)
    lowered = [t.lower() for t in tokens]
    idea.times = list(dict.fromkeys(w for w in lowered if w in TIMES or w in SEASONS))
    idea.styles = list(dict.fromkeys(w for w in lowered if w in STYLES))
    idea.threat, idea.threat_head = _threat(tokens)
    _plot(idea, tokens)
    _events(idea)
    _objects(idea, tokens)
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
        after_t = tokens[j + 1].lower() if j + 1 < len(tokens) else ""
        if words and "VERB" in word_classes(t) and after_t in DETERMINERS:
            # a word that can be a verb, after a noun and before a determiner, is the clause's verb: "a brave field
            # mouse guard the mill" (a being acts), "the river swallows the village" (a thing does: no one is cast)
            if acting_kind(lemma(words[-1])):
                head, end = words[-1], j
            break
        words.append(t.lower())
        nxt_word = tokens[j + 1] if j + 1 < min(i + limit, len(tokens)) else ""
        later = []
        for w in tokens[j + 1 : i + limit]:
            if not w[:1].isalpha() or w.lower() in STOP or verbish(w):
                break
            later.append(w)
        modifier = (
            "ADJ" in word_classes(t)
            and nxt_word[:1].isalpha()
            and any(noun_kind(w) or acting_kind(lemma(w)) for w in later)
        )  # "a brave field mouse", "a patient tortoise": an adjective before the noun it describes
        if noun_kind(t) and not modifier:
            head, end = t.lower(), j + 1
            nxt = tokens[j + 1] if j + 1 < len(tokens) else ""
            after = tokens[j + 2].lower() if j + 2 < len(tokens) else ""
            takes_object = "VERB" in word_classes(nxt) and after in DETERMINERS  # "a field mouse guard the mill"
            if nxt and noun_kind(nxt) and not takes_object:  # "dog walker", "robot apprentice", "baby whale"
                continue
            break
    if not head:
        return i, "", ""
    return end, " ".join(words[: end - i]), head


def _acting(tokens: list[str], i: int, limit: int = 4) -> tuple[int, str, str]:
    """From tokens[i]: a noun phrase whose last noun is followed by its verb ("a tiny mouse frees", "a hungry troll
    lives", "the guards change"), when that noun can name a being (`kinds.acting_kind`: WordNet allows it): (end,
    phrase, head), else (i, '', '')."""
    words: list[str] = []
    for j in range(i, min(i + limit, len(tokens))):
        t = tokens[j]
        if not t[:1].isalpha() or t.lower() in STOP:
            return i, "", ""
        words.append(t.lower())
        nxt = tokens[j + 1] if j + 1 < len(tokens) else ""
        if not nxt[:1].isalpha() and nxt != ",":
            break
        acts = (
            nxt.lower() in MODALS
            or (verbish(nxt) and nxt.lower().endswith("s"))
            or ("VERB" in word_classes(nxt) and "NOUN" not in word_classes(nxt) and nxt.lower() not in STOP)
        )
        if nxt.lower() in ("and", ","):  # "a brave field mouse and a sleepy owl guard ...": a shared verb follows
            acts = any(x.lower() in MODALS or verbish(x) for x in tokens[j + 2 : j + 8] if x[:1].isalpha())
        if acts and ("NOUN" in word_classes(t) or not word_classes(t)) and acting_kind(lemma(t)):
            return j + 1, " ".join(words), t.lower()
    return i, "", ""


def phrase_kind(phrase: str) -> str:
    """What a character phrase names: its head noun's kind ("a shepherd girl" is a person, "a lost baby whale" an
    animal), except that a machine or a creature before a person's or an animal's noun decides ("her clumsy brass
    robot apprentice" is a machine). Only nouns count (and words the lexicon does not know): "talking" or "retired" never decides."""
    words = phrase.lower().split()
    nouns = [  # a describing word before the head ("a brave field mouse") is not a noun here
        w
        for n, w in enumerate(words)
        if (not word_classes(w) or "NOUN" in word_classes(w))
        and (n == len(words) - 1 or ("ADJ" not in word_classes(w) and not w.endswith("'s")))  # "the ogre's cat"
    ]
    kinds = [k for k in map(noun_kind, nouns) if k]
    if not kinds:
        return acting_kind(lemma(nouns[-1])) if nouns else ""  # a noun read as acting ("a tiny mouse frees")
    made = next((k for k in ("machine", "creature") if k in kinds[:-1]), "")
    return made if made and kinds[-1] in ("person", "animal") else kinds[-1]


# Prepositions whose object is where something is or goes (in, on, into, through): a noun after them is a place or
# what is worn, never a character; after the others (from, near, behind, toward) it may be one.
WHERE_IN = frozenset("in inside into on onto at within under beneath over above below across through along".split())


def _cast(tokens: list[str]) -> list[Cast]:
    cast: list[Cast] = []
    seen: set[str] = set()

    def add(c: Cast) -> None:
        key = stem(c.head)
        if key not in seen and len(cast) < 4:
            seen.add(key)
            cast.append(c)

    verbs: set[int] = set()  # where a character's phrase ended at its verb
    i = 0
    while i < len(tokens):
        t = tokens[i]
        low = t.lower()
        prev = tokens[i - 1].lower() if i else ""
        sentence_start = i == 0 or tokens[i - 1] in ".!?"
        if low in DETERMINERS:
            end, phrase, head = _np(tokens, i + 1)
            if (
                phrase
                and prev in PLACE_PREPOSITIONS
                and (prev in WHERE_IN or phrase_kind(phrase) not in ("person", "animal", "creature"))
            ):
                phrase = ""  # "in a red coat", "on the night train": where or what is worn; "from a greedy mayor": who
            if phrase and _in_time_clause(tokens, i) and (not noun_kind(head) or phrase_kind(phrase) == "machine"):
                phrase = ""  # "before the ferry hits the rocks", "before the bus reaches town": a thing then, not cast
            if phrase and end < len(tokens) and "VERB" in word_classes(tokens[end]):
                verbs.add(end)
            subject = not i or not tokens[i - 1][:1].isalpha() or prev in STOP  # not the object of a verb
            if (
                not phrase and subject and prev not in PLACE_PREPOSITIONS and not _in_time_clause(tokens, i)
            ):  # "a tiny mouse frees ...": a noun that
                end, phrase, head = _acting(
                    tokens, i + 1
                )  # acts is a being if it can name one (not "before the ferry")
            acted_on = (
                i
                and prev not in STOP  # "while the robot argues": a conjunction, not a verb acting on the robot
                and "VERB" in word_classes(prev)
                and (not noun_kind(prev) or i - 1 in verbs)  # "a mouse guard the mill": the verb _np stopped at
                and not head.endswith("'s")  # "escape the witch's house": the witch owns what is acted on
            )
            made = acted_on and makes(verb_lemma(prev))
            if (
                phrase
                and (made or phrase_kind(phrase) in ("machine", "creature"))
                and acted_on
                and not tokens[end : end + 1] == [","]
            ):
                phrase = ""  # "pull a snowbound train": a machine acted on; "builds a glider": a thing made
            if phrase:
                kind = phrase_kind(phrase)
                name_tok = tokens[end] if end < len(tokens) else ""
                if name_tok.lower() in ("named", "called") and end + 1 < len(tokens) and tokens[end + 1][:1].isupper():
                    end, name_tok = end + 1, tokens[end + 1]  # "a keeper named Tomas", "a girl called Priya"
                if name_tok[:1].isupper() and name_tok not in CAPITALISED_NOT_NAMES:  # "his dog Biscuit"
                    add(Cast(name=name_tok, kind=kind, head=name_tok, detail=f"{_a(low)} {phrase}"))
                    i = end + 1
                    continue
                names = _apposed(tokens, end)  # "two rival chefs, Marco and Lucia,"
                if names:
                    one = " ".join(w for w in phrase.split()[:-1] if w not in ("two", "three")) + " " + stem(head)
                    for name in names:
                        add(Cast(name=name, kind=kind, head=name, detail=_a("a") + " " + one.strip()))
                    i = end + 2 * len(names)
                    continue
                words = phrase.split()
                words[-1] = words[-1].removesuffix("'s")  # "the king's birthday": the king
                count = f"{low} " if low in ("two", "three") else ""
                add(
                    Cast(
                        name=f"the {count}{' '.join(words)}",
                        kind=kind,
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
            and prev != "of"
            and not is_place(t)
            and not _names_a_time(tokens, i)
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
            kind = phrase_kind(detail) if detail else ""  # "Pip, a talking seagull," is a seagull
            add(Cast(name=name, kind=kind or "person", head=name, detail=detail))
            i = after
            continue
        i += 1
    return cast


def _things_that_act(idea: Idea, toks: list[str]) -> None:
    """A thing named beside a character as the subject of the first verb acts in the story ("a talking kettle and
    a cracked teacup must escape"): it is a character too, drawn as the thing it is (a creature)."""
    if not idea.cast:
        return
    v = next((n for n, t in enumerate(toks) if n and (t.lower() in ("must", "try", "tries") or verbish(t))), 0)
    parts: list[list[str]] = [[]]
    for t in toks[:v]:
        if t.lower() in ("and", ","):
            parts.append([])
        else:
            parts[-1].append(t)
    if len(parts) < 2:
        return
    named = " ".join(f"{c.name} {c.detail}" for c in idea.cast).lower()
    for words in parts:
        if len(words) < 2 or words[0].lower() not in DETERMINERS or words[-1].lower() in named.split():
            continue
        last = words[-1].lower()
        if lemma(last) in {lemma(w) for w in named.split()} or noun_kind(last):
            continue  # already in the cast, or a being the cast reader left out on purpose
        if ("NOUN" in word_classes(last) or not word_classes(last)) and not is_place(last) and not is_time(last):
            if len(idea.cast) < 4:
                name = "the " + " ".join(w.lower() for w in words[1:])
                idea.cast.append(Cast(name=name, kind="creature", head=lemma(last)))


def _names_a_time(tokens: list[str], i: int) -> bool:
    """The capitalised words from tokens[i] name a time or a holiday ("New Year", "Midsummer Eve"), not someone."""
    j = i
    while j + 1 < len(tokens) and tokens[j + 1][:1].isupper():
        j += 1
    words = tokens[i : j + 1]
    return is_time(" ".join(words)) if len(words) > 1 else is_time(words[0]) and bool(word_classes(words[0]))


def _a(det: str) -> str:
    """A possessive or a number before a character becomes an article in their description ("her" -> "a")."""
    return det if det in ("a", "an", "the") else "a"


def _apposed(tokens: list[str], i: int) -> list[str]:
    """Names set beside a plural phrase: ", Marco and Lucia" -> ['Marco', 'Lucia']."""
    if i + 1 >= len(tokens) or tokens[i] != ",":
        return []
    names, j = [], i + 1
    while j < len(tokens) and tokens[j][:1].isupper() and tokens[j] not in CAPITALISED_NOT_NAMES:
        names.append(tokens[j])
        if j + 1 < len(tokens) and tokens[j + 1].lower() in ("and", ","):
            j += 2
        else:
            break
    return names if len(names) >= 2 else []


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
    if len(words) < 2 or (words[0] == "in" and any(is_place(w) for w in words)):
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
            k
            for k, w in enumerate(words)
            if not ("ADJ" in word_classes(w) and k + 1 < len(words) and words[k + 1].lower() not in STOP)
            and (
                w.lower() not in STOP
                and (is_place(w) or ("ADJ" not in word_classes(w) and kind_of(w.lower()) == "place"))
            )
            or (w[0].isupper() and (w not in CAPITALISED_NOT_NAMES or w.lower() not in STOP))
        ]
        timed = any(is_time(w) for w in words) or any(is_time(" ".join(words[: k + 1])) for k in range(len(words)))
        if heads and not timed and not noun_kind(words[0]) and not _in_time_clause(tokens, i):
            last = heads[0] + 2 if heads[0] + 2 < len(words) and words[heads[0] + 1].lower() == "of" else heads[0]
            while last + 1 < len(words) and words[last].lower() in ("a", "an", "the"):
                last += 1  # "the branch of an oak"
            while last + 1 < len(words) and _place_noun(words[last + 1]):
                last += 1  # "a restaurant kitchen", "the museum vault": the compound's last noun is the place
            phrase = " ".join(words[: last + 1]).replace("'s", "")  # "the rooftops of Mumbai", "her village's"
            if words[0].lower() not in ("a", "an", "the") and not phrase[0].isupper():
                phrase = "the " + phrase
            phrase = re.sub(r"^(a|an)\s", "the ", phrase, flags=re.I)
            if phrase.lower() not in (p.lower() for p in out):
                out.append(phrase)
    if not out:  # "The city wakes up": a place named without a preposition
        for i, t in enumerate(tokens[:-1]):
            if (
                t.lower() in DETERMINERS
                and tokens[i + 1].lower() not in STOP
                and is_place(tokens[i + 1])
                and "ADJ" not in word_classes(tokens[i + 1])  # "the thick fog": a describing word, not a place
                and not _in_time_clause(tokens, i)
                and not tokens[i + 1].endswith("'s")  # "the ship's robot": the robot's, not a place of the story
            ):
                out.append("the " + tokens[i + 1].lower().removesuffix("'s"))
                break
    return out[:3]


def _place_noun(word: str) -> bool:
    """A noun that can name a place, by WordNet's senses or by the embedder ("kitchen": a room)."""
    from agents.offline import wordnet

    w = lemma(word.lower())
    if w in STOP or "NOUN" not in word_classes(w):
        return False
    if is_place(w):
        return True
    allowed, s = wordnet.kinds(w), scores(w)  # WordNet allows a place, and the embedder nearly reads one
    return allowed is not None and "place" in allowed and not noun_kind(w) and s["place"] >= max(s.values()) - 0.03


def _places_in(phrase: str, head: str) -> list[str]:
    """The places a character's own phrase names before its head noun ("a deaf lighthouse mechanic" -> the
    lighthouse): a noun modifying the noun that says who they are, read as a place by `kinds.kind_of`."""
    words = [w.lower().removesuffix("'s") for w in TOKEN.findall(phrase) if w[:1].isalpha()]
    head_at = max((n for n, w in enumerate(words) if stem(w) == stem(head.lower().split()[-1])), default=len(words))
    out = []
    for w in words[:head_at]:
        if w in STOP or len(w) < 3 or "ADJ" in word_classes(w) or "NOUN" not in word_classes(w):
            continue
        if _place_noun(w):  # what WordNet lets the word name, as the compound's place: "mine", "harbour"
            out.append(f"the {lemma(w)}")
    return out


TIME_WORDS = frozenset(("before", "after", "until", "till", "once", "when", "whenever", "since"))


def _in_time_clause(tokens: list[str], i: int) -> bool:
    """Whether tokens[i] is inside a clause of time ("before the ferry hits the rocks", "after the oven breaks"):
    what such a clause names happens then, it is not where the story is."""
    for t in reversed(tokens[:i]):
        if t in ",;.!?" or t.lower() in ("and", "but", "while", "so"):
            return False
        if t.lower() in TIME_WORDS:
            return True
    return False


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
    # a verb no kind of story lists ("leads the rats", "cries wolf"): the idea's own action is the task, never a
    # search for someone
    idea.relation = VERB_RELATION.get(idea.verb, "task")
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
        if is_place(head):
            continue  # a place ("search the beach"): what is searched for may follow
        if head in ("time", "way", "day", "moment", "thing"):
            return  # "one last time": how, not what the story turns on
        idea.thing, idea.thing_head = "the " + " ".join(words), head
        return


def _clauses(sentence: str) -> list[list[str]]:
    """A sentence's clauses as tokens: split at ';', ', and', 'while', 'but', and at an 'and' that starts a new
    subject or a new verb ("the hare naps and the tortoise wins", "are trapped ... and must cook")."""
    out: list[list[str]] = []
    parts: list[str] = []
    pieces = re.split(f"({CLAUSE.pattern})", sentence, flags=re.I)
    for n in range(0, len(pieces), 2):  # a part with no verb of its own before ", and" is a subject going on
        sep = pieces[n - 1] if n else ""  # in the next part: "Ada, a mechanic, and Pip, a seagull, must ..."
        if parts and re.fullmatch(r"\s*,\s*and\s*", sep, re.I) and not _has_verb(TOKEN.findall(parts[-1])):
            parts[-1] = f"{parts[-1]}, and {pieces[n]}"
        else:
            parts.append(pieces[n])
    for part in parts:
        toks = TOKEN.findall(part)
        cur: list[str] = []
        for k, t in enumerate(toks):
            nxt = [w.lower() for w in toks[k + 1 : k + 5]]
            new_subject = nxt[:1] and nxt[0] in ("the", "a", "an") and any(verbish(w) for w in nxt[2:4])
            new_verb = nxt[:1] and (nxt[0] in ("must", "then") or (verbish(nxt[0]) and nxt[0].endswith("s")))
            if t.lower() == "and" and cur and (new_subject or new_verb):
                out.append(cur)
                cur = [] if new_subject else ["@"]  # "@": the clause shares the previous clause's subject
                continue
            cur.append(t)
        if cur:
            out.append(cur)
    return [c for c in out if any(w[0].isalpha() for w in c)]


EARLIER = re.compile(
    r"(?:,\s*)?\b(?:long\s+|just\s+|soon\s+|right\s+)?after\s+((?:an?|the|his|her|their|its)\s+[^,;]{3,80})", re.I
)


def _the(phrase: str) -> str:
    """'an ice storm' -> 'the ice storm', 'her oven breaks' -> 'the oven breaks' (a phrase the story refers back to)."""
    return re.sub(r"^(an?|his|her|their|its)\s", "the ", phrase, flags=re.I)


def _oov_verb(word: str) -> str:
    """A verb form the lexicon does not list, by lemminflect's rules for unknown words ("relights" -> "relight")."""
    from lemminflect import getAllLemmasOOV

    w = word.lower()
    return getAllLemmasOOV(w, "VERB").get("VERB", ("",))[0] if w.isalpha() and not word_classes(w) else ""


def _plain_subject(subject: str) -> str:
    """A subject without the appositions that describe its names: "Ada, a deaf mechanic, and Pip, a seagull," ->
    "Ada and Pip"."""
    text = " ".join(subject.replace(" ,", ",").replace(" '", "'").split())
    out = re.sub(r"\b([A-Z][\w'-]*),\s+(?:an?|the)\s+[^,]+(?:,|$)", r"\1", text)
    return " ".join(out.replace(" ,", ",").split()).strip(" ,")


def _named_in(idea: Idea, subject: str) -> list[str]:
    """The cast members a subject names ("Ada and Pip" -> ['Ada', 'Pip'])."""
    words = {stem(w) for w in re.findall(r"[\w'-]+", subject.lower())}
    return [c.name for c in idea.cast if stem(c.head.split()[-1].lower()) in words]


def _has_verb(toks: list[str]) -> bool:
    """Whether a clause's tokens hold a verb after its first word (a modal, "is"/"are", or a verb form)."""
    return any(
        t.lower() in MODALS or t.lower() in ("is", "are", "was", "were") or verbish(t.strip(","))
        for t in toks[1:]
        if t[:1].isalpha()
    )


def _events(idea: Idea) -> None:
    """The idea's own clauses as present-tense actions ("the boastful hare naps halfway"), its goal (the first
    clause's verb phrase, base form) and its obstacle ("before an ice storm" -> "the ice storm")."""
    subject = ""
    for sentence in idea.sentences or [idea.text]:
        for toks in _clauses(sentence.rstrip(".!?")):
            text = " ".join(toks).replace(" ,", ",").replace(" '", "'").strip(" ,")
            danger = next((m for m in OBSTACLE.finditer(text) if m.group(1).lower() == "from"), None)
            guarded = (
                danger
                and re.search(  # a verb of guarding before the danger, never a noun ("the guards")
                    r"(?<!\bthe )(?<!\ban )(?<!\ba )\b(save|protect|rescue|shield|guard|defend)s?\b",
                    text[: danger.start()],
                )
            )
            if danger and not idea.threat and guarded:
                idea.threat = re.sub(r"^(an?|his|her|their)\s", "the ", danger.group(2).strip(), flags=re.I)
                idea.threat_head = stem(idea.threat.split()[-1])  # "save the hives from a strange frost"
            earlier = EARLIER.search(text)  # "after the oven breaks": what happened first, never a place or the goal
            if earlier:
                idea.earlier = idea.earlier or _the(earlier.group(1).strip(" ,"))
                rest = text[earlier.end() :]  # ", before the bus reaches town" stays: the obstacle
                rest = rest if re.match(r"\s*,?\s*(before|despite|against)\b", rest, re.I) else ""
                text = f"{text[: earlier.start()].strip(' ,')} {rest.strip(' ,')}".strip()
            m = next((m for m in OBSTACLE.finditer(text) if m.group(1).lower() != "from"), None)
            if m:
                idea.obstacle = idea.obstacle or _the(m.group(2).strip())
                text = text[: m.start()].strip(" ,")
            words = text.split()
            if not words:
                continue
            k = next((n for n, w in enumerate(words) if w.lower() in ("must", "tries", "try", "needs", "wants")), None)
            heads = {stem(c.head.split()[-1].lower()) for c in idea.cast}
            verb_at = next(
                (
                    n
                    for n, w in enumerate(words)
                    if n
                    and (
                        verbish(w.strip(","))
                        or w.lower() in ("is", "are")
                        or ("VERB" in word_classes(w) and stem(words[n - 1]) in heads)  # "... a field mouse guard"
                    )
                ),
                None,
            )
            if words[0] == "@":
                words = [*subject.split(), *words[1:]]
                verb_at = len(subject.split())
                k = verb_at if words[verb_at].lower() in ("must", "tries", "try", "needs", "wants") else None
            if verb_at is None and k is None:
                continue
            start = k if k is not None else verb_at
            subject = " ".join(words[:start])
            if words[0] in ("A", "An", "a", "an"):
                subject = "the " + " ".join(words[1:start])
            rest = words[start:]
            if rest and rest[0].lower() == "must" and len(rest) > 1:
                rest = rest[1:]  # "must repair" reads as the action itself in a picture: "repairs"
                plain = _plain_subject(subject).split()
                plural = " and " in f" {' '.join(plain)} " or bool(plain and lemma(plain[-1]) != plain[-1].lower())
                if not plural and (verb_lemma(rest[0]) or _oov_verb(rest[0])) == rest[0].lower():
                    from lemminflect import getInflection

                    rest[0] = (getInflection(rest[0], "VBZ") or (rest[0],))[0]
            elif len(rest) > 1 and rest[0].lower() in ("needs", "need", "has", "have") and rest[1].lower() == "to":
                rest = rest[2:]
            if k is not None and not idea.goal:
                after = list(rest)
                while after and after[0].lower() in ("tries", "try", "wants", "want", "to"):
                    after = after[1:]
                # after "must" or "tries to" comes a verb, whether or not the lexicon knows it ("relight")
                verb = (verb_lemma(after[0]) or _oov_verb(after[0])) if after and after[0][:1].isalpha() else ""
                if verb:
                    idea.goal = " ".join([verb, *after[1:]])
                    idea.relation = "task"
                    idea.wanted_by = _named_in(idea, _plain_subject(" ".join(words[:start])))
            purpose = PURPOSE.search(" ".join(rest))
            if (
                not idea.goal
                and " and " in f" {subject} "
                and purpose
                and verb_lemma(purpose.group(1)) == purpose.group(1).lower()
            ):  # two characters doing one thing for a purpose: a task they share, not a quarrel between them
                idea.goal, idea.relation = f"{purpose.group(1).lower()} {purpose.group(2)}", "task"
            subject = _plain_subject(subject)  # "Mara, a pilot," -> "Mara"
            event = f"{subject} {' '.join(rest)}".strip()
            if len(event.split()) >= 3 and event.lower() not in (e.lower() for e in idea.events):
                idea.events.append(event)
    for event in idea.events:  # "the tortoise wins", "the hare beats the fox": who the idea says wins
        words = event.lower().split()
        at = next((n for n, w in enumerate(words) if verb_lemma(w) in ("win", "beat") and w != verb_lemma(w)), None)
        if at:
            subject = set(words[:at])
            idea.winner = next((c.name for c in idea.cast if stem(c.head.split()[-1].lower()) in subject), "")
    if not idea.goal and idea.events and idea.verb:
        first = idea.events[0].split()
        at = next((n for n, w in enumerate(first) if base_form(w) == idea.verb), None)
        if at is not None:
            idea.goal = " ".join([idea.verb, *first[at + 1 :]])
    if not idea.verb and idea.events and idea.relation == "quest":
        # A verb no story kind lists ("guard the old windmill"): the idea's own action is the task, never a search.
        first = idea.events[0].split()
        heads = {stem(c.head.split()[-1].lower()) for c in idea.cast}
        at = next((n for n, w in enumerate(first) if n and verb_lemma(w) and stem(first[n - 1]) in heads), None)
        if at is not None and verb_lemma(first[at]) not in VERB_RELATION:
            idea.verb, idea.relation = verb_lemma(first[at]), "task"
            idea.goal = idea.goal or " ".join([idea.verb, *first[at + 1 :]])
    if idea.obstacle and not idea.threat and any(stem(w) in THREATS for w in idea.obstacle.split()):
        idea.threat, idea.threat_head = idea.obstacle, stem(idea.obstacle.split()[-1])


def _objects(idea: Idea, tokens: list[str]) -> None:
    """The things the idea names that are neither characters nor places nor its danger: a noun phrase after a
    determiner or 'only', ending in a word the lexicon knows as a noun ("a letter", "a sunken piano")."""
    taken = {stem(w) for c in idea.cast for w in (c.name + " " + c.head + " " + c.detail).split()}
    taken = {w for w in taken if not w.endswith("'")}
    taken |= {stem(w) for p in idea.places for w in p.split()} | {idea.threat_head}
    for i, t in enumerate(tokens):
        if t.lower() not in DETERMINERS and t.lower() not in ("only", "with"):
            continue
        words: list[str] = []
        for w in tokens[i + 1 : i + 5]:
            if not w[0].isalpha() or w.lower() in STOP or (words and verbish(w)):
                break
            words.append(w.lower())
        while words and (
            "NOUN" not in word_classes(words[-1]) or (len(words) > 1 and "ADV" in word_classes(words[-1]))
        ):
            words.pop()  # "the cottage first": the cottage
        owned = [w for w in words if not w.endswith(("'s", "'"))]  # "the witch's house": the witch owns it
        if (
            not words
            or any(stem(w) in taken for w in owned)
            or kind_of(lemma(words[-1])) in ("idea", "time")
            or words[-1] in TIMES
            or words[-1] in SEASONS
        ):
            continue
        if noun_kind(words[-1]) or words[-1] in ("race", "way", "time", "day", "thing"):
            continue
        if is_place(words[-1]) and not _in_time_clause(tokens, i):  # "before the ferry hits": a thing, not a place
            place = "the " + " ".join(words)
            idea.places = [p for p in idea.places if not place.startswith(p)]  # "the snowbound mountain inn"
            if place not in idea.places:
                idea.places.append(place)
            continue
        phrase = " ".join(words)
        if phrase not in idea.objects and len(idea.objects) < 4:
            idea.objects.append(phrase)
