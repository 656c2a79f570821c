"""What a noun names — a person, an animal, a machine, a creature, a group, a place, a time, a thing — by a general
method, not by word lists: the packaged sentence embedder (all-MiniLM-L6-v2, `agents.diversity.embed`) compares the
word with short descriptions of each kind (the prototypes below), and lemminflect's lexicon says whether the word is a
noun at all and whether an agent noun ("farmer", "beekeeper") is built on a verb or a noun. A word whose best kind
does not stand clear of the others by MARGIN is read as a thing, never as a character. Where WordNet knows the word
(agents/offline/wordnet.py), only the kinds its senses can name are compared ("octopus": an animal or a food).

The embedder is loaded once per process on first use (`agents.diversity`); nothing is loaded at import time.
"""

from __future__ import annotations

from functools import lru_cache

from agents.offline import wordnet
from agents.offline.once import computed_once

# Short descriptions of each kind, the prototypes a word is compared with: its score for a kind is the mean of its
# two best cosines against that kind's descriptions.
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "person": (
        "a person",
        "a man",
        "a woman",
        "a child",
        "a worker who does a job",
        "a human with a profession or trade",
        "a craftsman",
        "a ruler, a noble",
        "a person who plays music or sport",
        "a relative in a family",
    ),
    "animal": ("an animal", "a wild animal", "a pet", "a bird", "a fish", "an insect", "a farm animal", "a mammal"),
    "machine": ("a machine", "a robot", "a mechanical device", "an electronic appliance", "a vehicle"),
    "creature": ("a magical creature", "a mythical monster", "a ghost or a spirit", "a fairy-tale being", "a toy doll"),
    "group": ("a group of people", "a crowd", "a team", "a gang"),
    "place": ("a place", "a building", "a room", "a landscape", "a city", "a body of water", "a shop", "a ship"),
    "time": ("a time of day", "a season", "a holiday", "a date", "a festival"),
    "thing": ("an object", "a thing", "a tool", "food", "a plant", "a material", "furniture", "clothing"),
    "idea": ("an abstract idea", "a feeling", "a quality", "an event", "an activity", "a number"),
    "weather": ("weather", "a storm", "a natural disaster"),
}
AGENTS = ("person", "animal", "machine", "creature")  # the kinds a character can be (a group is a crowd of people)
MARGIN = 0.02  # how far an agent kind must stand above the best other kind for the word to name a character
# Agent-noun endings: a noun built on a verb or a noun with one of these names someone who does it ("farmer",
# "beekeeper", "violinist", "fisherman"). Morphology, not examples: the stem must be a word lemminflect knows.
PERSON_ENDINGS = ("keeper", "maker", "man", "woman", "smith", "monger", "ist", "ian", "eer", "grapher")
DOER_ENDINGS = ("er", "or", "ar")


@computed_once(maxsize=4)
def _described(descriptions: tuple[str, ...]):
    """The embeddings of a fixed set of descriptions (kinds, verbs of making, traits), computed once."""
    from agents.diversity import embed

    return embed(list(descriptions))


def _closeness(text: str, groups: dict[str, tuple[str, ...]]) -> dict[str, float]:
    """For each group of descriptions, the mean of the text's two best cosines with them (the packaged embedder)."""
    import numpy as np

    from agents.diversity import embed

    sims = _described(tuple(d for ds in groups.values() for d in ds)) @ embed([text])[0]
    out, start = {}, 0
    for name, ds in groups.items():
        out[name] = float(np.sort(sims[start : start + len(ds)])[-2:].mean())
        start += len(ds)
    return out


def scores(phrase: str) -> dict[str, float]:
    """The phrase's score for each kind (cosine with that kind's prototypes, mean of the best two)."""
    return dict(_scores(phrase.lower().strip()))


@lru_cache(maxsize=8192)
def _scores(phrase: str) -> tuple[tuple[str, float], ...]:
    return tuple(_closeness(f"a {phrase}", PROTOTYPES).items())


def _is_noun(word: str) -> bool:
    """A noun, or a word lemminflect does not know at all ("seagull", "barista"); never one it knows only as a verb,
    an adjective or an adverb."""
    from lemminflect import getAllLemmas

    classes = getAllLemmas(word)
    return not classes or "NOUN" in classes or "PROPN" in classes


def _doer(word: str) -> str:
    """'maker' for a noun with a person's ending ("clockmaker", "fisherman", "violinist"); 'doer' for an agent noun
    built on a verb lemminflect knows ("farmer" from farm, "diver" from dive); '' otherwise."""
    from lemminflect import getAllLemmas

    if any(word.endswith(end) and len(word) > len(end) + 2 for end in PERSON_ENDINGS):
        return "maker"
    for end in DOER_ENDINGS:
        if word.endswith(end) and len(word) > len(end) + 2:
            base = word[: -len(end)]
            for b in (base, base + "e", base[:-1] if len(base) > 3 and base[-1] == base[-2] else base):
                if "VERB" in getAllLemmas(b):
                    return "doer"
    return ""


@lru_cache(maxsize=8192)
def lemma(word: str) -> str:
    """A noun's singular from lemminflect's lexicon ("elves" -> "elf"), else the word (kept per word: lemminflect
    copies its answer for each call)."""
    from lemminflect import getAllLemmas

    forms = getAllLemmas(word.lower()).get("NOUN")
    return forms[0] if forms else word.lower()


@lru_cache(maxsize=8192)
def kind_of(word: str) -> str:
    """person, animal, machine, creature, group, place, time, thing, idea or weather for one noun ('' when
    lemminflect does not know it as a noun)."""
    w = word.lower().strip()
    if not w or not _is_noun(w.split()[-1]):
        return ""
    s = scores(w)
    allowed = wordnet.kinds(w)
    if allowed is None and " " in w:  # "clockwork mouse": what its head noun can name
        allowed = wordnet.kinds(w.split()[-1])
    if allowed:  # WordNet knows the word: choose among what its senses can name
        s = {k: v for k, v in s.items() if k in allowed} or s
    best = max(s, key=s.__getitem__)
    ranked = sorted(s, key=s.__getitem__, reverse=True)
    doer = _doer(w.split()[-1])
    if doer == "maker" and best != "creature":
        return "person"  # "clockmaker", "fisherman": a person's ending, whatever the word sounds near
    if doer == "doer" and best not in ("machine", "creature", "time") and "person" in ranked[:2]:
        return "person"  # "farmer", "diver": someone who does what the stem says
    if best in AGENTS:
        others = [v for k, v in s.items() if k not in AGENTS]
        return best if not others or s[best] - max(others) >= MARGIN else "thing"
    return best


@lru_cache(maxsize=8192)
def acting_kind(word: str) -> str:
    """The kind of being a noun names when the sentence makes it act ("a tiny mouse frees a lion", "a hungry troll
    lives under the bridge"): its own kind if that is a being's, else the best-scored being's kind among those
    WordNet's senses allow ("mouse": an animal or a device), '' when no sense names a being."""
    w = word.lower().strip()
    own = agent_kind(w)
    if own or not w or not _is_noun(w.split()[-1]):
        return own
    allowed = wordnet.kinds(w)
    beings = [k for k in AGENTS if allowed and k in allowed]
    if not beings:
        return ""
    if "creature" in beings:
        return "creature"  # a sense that is a being of myth ("troll", "giant"): what a story that makes it act means
    s = scores(w)
    return max(beings, key=s.__getitem__)


def agent_kind(word: str) -> str:
    """The kind of character a noun names (person, animal, machine, creature), or '' when it names none."""
    k = kind_of(word)
    return k if k in AGENTS else ""


# What a verb does to its object, for the one question the cast reader asks: does the object come out of it as a
# made thing ("builds a glider", "carves a bird", "sews a doll": never a character, whatever the noun could name)?
MAKING = (
    "to build something",
    "to make an object",
    "to create or craft something by hand",
    "to assemble or construct a thing",
    "to carve, sew, knit or paint something",
    "to cook or bake food",
    "to design or invent a device",
)
NOT_MAKING = (
    "to meet someone",
    "to help or rescue someone",
    "to find or search for someone",
    "to discover, notice or come upon something",
    "to chase, follow or hunt",
    "to love, befriend or adopt",
    "to feed or care for",
    "to fight or escape from",
    "to see, hear or watch",
    "to ride or steer",
    "to carry, pull or push",
)


@lru_cache(maxsize=4096)
def makes(verb: str) -> bool:
    """Whether a verb (its base form) makes its object: the mean of its two best cosines with MAKING's descriptions
    is above NOT_MAKING's (the packaged embedder, as for nouns)."""
    v = verb.lower().strip()
    if not v.isalpha():
        return False
    near = _closeness(f"to {v}", {"making": MAKING, "other": NOT_MAKING})
    return near["making"] > near["other"]


# Traits that change how a character is filmed, each with a description the embedder compares a word with; OTHER
# is what most describing words are near instead (age, mood, size, trade), so a trait needs to beat them.
TRAITS: dict[str, str] = {
    "deaf": "deaf, unable to hear, hard of hearing",  # signs: captioned, never voiced
    "mute": "mute, unable to speak, without a voice",  # signs too
    "blind": "blind, unable to see, without sight",  # never shown looking: listens, feels the way
    "young": "young, a small child, a youth",  # a child's look
    "old": "old, elderly, aged, retired",  # an old person's look
    "talking": "talking, able to speak like a person",  # an animal or a thing that speaks its lines
}
OTHER_TRAITS = (
    "happy or sad, a mood",
    "big or small",
    "a trade or a job",
    "a colour",
    "brave or afraid, a temper",
    "hungry, tired or sick",
    "clever or foolish",
    "rich or poor",
)
TRAIT_FLOOR = 0.45  # the cosine a word must reach with a trait's description to carry it (measured: "old" 0.51,
# "chatty" 0.49 carry theirs; "little" and "tiny" are nearest "big or small", "singing" reaches 0.43)


@lru_cache(maxsize=4096)
def trait_of(word: str) -> str:
    """The trait a describing word gives a character ('deaf', 'mute'), or ''."""
    from agents.diversity import embed

    w = word.lower().strip()
    if len(w) < 3 or not w.isalpha():
        return ""
    sims = _described((*TRAITS.values(), *OTHER_TRAITS)) @ embed([w])[0]
    best = int(sims.argmax())
    return list(TRAITS)[best] if best < len(TRAITS) and sims[best] >= TRAIT_FLOOR else ""
