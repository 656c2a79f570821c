"""Text helpers the offline roles share: tokens, stems, content words, a stable hash, and the shot grammar's words."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

from agents.offline.lexicon import STOP

TOKEN = re.compile(r"[A-Za-z][A-Za-z'\-]*|[.,;:!?]")
WORD = re.compile(r"[a-z][a-z'\-]*")
LISTEN_WPS = 2.7  # words a second a spoken line can be heard and read at
READ_WPS = 2.0  # ... and at which the slowest reader (a viewer who relies on captions) still reads it

# The shot grammar: each shot type, the words that open its prompt, and the words that recognise it in any prompt.
SHOT_TYPES: dict[str, tuple[str, re.Pattern[str]]] = {
    "establishing": ("Establishing wide shot", re.compile(r"\bestablishing\b", re.I)),
    "wide": ("Wide shot", re.compile(r"\b(wide|long|aerial|panoramic)\s+shot\b|\bwide\b", re.I)),
    "medium": ("Medium shot", re.compile(r"\bmedium\b|\bmid[- ]shot\b|\bwaist\b", re.I)),
    "two-shot": ("Two-shot", re.compile(r"\btwo[- ]shot\b", re.I)),
    "over-the-shoulder": ("Over-the-shoulder shot", re.compile(r"\bover[- ]the[- ]shoulder\b", re.I)),
    "close-up": ("Close-up", re.compile(r"\b(extreme\s+)?close[- ]?up\b|\bclose on\b", re.I)),
    "reaction": ("Reaction shot", re.compile(r"\breaction\b", re.I)),
    "insert": ("Insert shot", re.compile(r"\binsert\b|\bdetail shot\b", re.I)),
}
CAMERA_WORDS = {
    "static": "a locked-off frame",
    "pan_left": "a slow pan left",
    "pan_right": "a slow pan right",
    "tilt_up": "a tilt up",
    "tilt_down": "a tilt down",
    "zoom_in": "a slow zoom in",
    "zoom_out": "a slow zoom out",
    "dolly_in": "a slow push in",
    "handheld": "a handheld camera",
}


def stable_hash(*parts: object) -> int:
    """A hash that is the same in every run (Python's own is salted per process)."""
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16)


def stem(word: str) -> str:
    """A crude singular: 'storms' -> 'storm', 'ferries' -> 'ferry', "keeper's" -> 'keeper'."""
    w = word.lower().removesuffix("'s").strip("'-")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


@lru_cache(maxsize=8192)
def content_words(text: str) -> frozenset[str]:
    """Stems of the words that carry meaning (no stop words, nothing under four letters)."""
    return frozenset(stem(w) for w in WORD.findall(text.lower()) if len(w) > 3 and w not in STOP)


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of two texts' content words (1: the same words)."""
    wa, wb = content_words(a), content_words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def shot_type(prompt: str) -> str:
    """Which kind of shot a prompt asks for ("" when it does not say)."""
    for kind in ("establishing", "over-the-shoulder", "two-shot", "reaction", "insert", "close-up", "medium", "wide"):
        if SHOT_TYPES[kind][1].search(prompt):
            return kind
    return ""


def without_shot_type(prompt: str) -> str:
    """The prompt with its leading shot-type words removed ('Close-up of the keeper' -> 'the keeper')."""
    for lead, _ in SHOT_TYPES.values():
        if prompt.lower().startswith(lead.lower()):
            rest = prompt[len(lead) :].lstrip(" :,")
            return rest[3:] if rest.lower().startswith("of ") else rest
    return prompt


def clip_words(text: str, limit: int) -> str:
    """At most `limit` words, cut at a clause boundary when there is one."""
    words = text.split()
    if len(words) <= limit:
        return text.strip()
    cut = " ".join(words[:limit])
    head = re.split(r"[,;:](?=[^,;:]*$)", cut)[0]
    return (head if len(head.split()) >= limit // 2 else cut).rstrip(" ,;:") + "…"


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s.strip()]


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]
