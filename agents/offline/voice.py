"""How an offline critic speaks: a register read from the persona's `voice` text (polite, blunt, professorial, …),
its quoted phrases ("lowkey", "it might be better if...", "the little one") used where they fit, and reasons that
follow: a persona's hate or love is cited only for a finding that matches it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.words import capitalise, stable_hash
from storage.schema import Persona

# (register, words in the voice text that select it), first match wins
REGISTERS = (
    ("blunt", r"\b(blunt|slang|lowercase|casual)"),
    ("plain", r"\b(plain|tired|short verdicts)"),
    ("gentle", r"\b(polite|gentl\w*|understated)"),
    ("professorial", r"\b(professorial|measured|film vocabulary|precise)"),
    ("enthusiastic", r"\b(enthusiastic|nerdy|excited)"),
    ("warm", r"\b(warm|protective)"),
    ("listening", r"\b(producer's ear|by ear|radio)"),
    ("direct", r"\b(direct|specific)"),
)
TEMPLATES = {  # opener (keep / stop watching), an issue, a hate, a love, a suggestion, the verdict, the idea check (what is missing; all there)
    "blunt": (
        "ok {score}/10, {slang} i'd keep watching",
        "{score}/10. {slang} i'd swipe at {second}s",
        "{what}",
        "{hate} is such an ick",
        "i came for {love}",
        "just {do}",
        "{best} carried it tho",
        "vs the idea: {missing} never actually show up, {shown}/{total} do",
        "vs the idea: all {total} bits are there fr",
    ),
    "plain": (
        "Watched it on the train: {score}/10, it held me",
        "Watched it on the train: {score}/10, I'd put it away around {second}s",
        "{what}",
        "I can't be doing with {hate}",
        "I want {love}",
        "{Do}",
        "{best} was fine",
        "It was meant to have {missing}, and I never saw that",
        "It had what it said it would, all {total} of them",
    ),
    "gentle": (
        "I enjoyed this quietly, {score}/10",
        "I'm sorry to say I drifted away around {second}s ({score}/10)",
        "I noticed that {what}",
        "I find {hate} difficult",
        "{love} matters a great deal to me",
        "{opener} {do}",
        "I liked the {best}",
        "I kept waiting for {missing} from the idea",
        "I was glad to find everything the idea promised",
    ),
    "professorial": (
        "A film with a spine: {score}/10",
        "It loses its grip at {second}s: {score}/10",
        "Consider the {term}: {what}",
        "I have little patience for {hate}",
        "I look for {love}",
        "I would {do}",
        "The {best} is the film's strength",
        "Held against its premise, {shown} of its {total} elements reach the screen; {missing} do not",
        "Held against its premise, all {total} of its elements reach the screen",
    ),
    "enthusiastic": (
        "Okay, I'm in! {score}/10",
        "Argh, it lost me at {second}s! {score}/10",
        "{what} — that kills it",
        "{hate} is my nemesis",
        "give me {love}",
        "Pro tip: {do}!",
        "The {best} rules",
        "Where is {missing}?! The premise promised it",
        "Premise check: every one of the {total} things, on screen!",
    ),
    "warm": (
        "We watched it on the sofa and {who} stayed with it: {score}/10",
        "We watched it on the sofa; {who} wandered off at {second}s ({score}/10)",
        "{who} noticed it: {what}",
        "we don't want {hate}",
        "we love {love}",
        "Could you {do}?",
        "the {best} was lovely",
        "The kids kept asking where {missing} had gone",
        "The kids spotted everything the idea promised",
    ),
    "direct": (
        "Access first: {score}/10, and I'd keep watching",
        "Access first: {score}/10, I stopped at {second}s",
        "{what}",
        "this is the kind of thing I can't use: {hate}",
        "what I need is {love}",
        "Fix: {do}",
        "Done well: the {best}",
        "Checked against the idea: {missing} not on screen ({shown} of {total} parts are)",
        "Checked against the idea: all {total} parts on screen",
    ),
    "listening": (
        "By ear it held me: {score}/10",
        "By ear I lost the thread at {second}s: {score}/10",
        "What I heard: {what}",
        "{hate} is what I dread",
        "I listen for {love}",
        "Please {do}",
        "The {best} carried me",
        "Listening for the idea, I waited for {missing} in vain",
        "Listening for the idea, I found all of it",
    ),
    "neutral": (
        "{score}/10, I'd keep watching",
        "{score}/10, I stopped at {second}s",
        "{what}",
        "I dislike {hate}",
        "I wanted {love}",
        "Suggestion: {do}",
        "The {best} works",
        "Against the idea: {missing} missing ({shown} of {total} there)",
        "Against the idea: all {total} parts there",
    ),
}
TERMS = {
    "repeat": "coverage",
    "look_alike": "coverage",
    "same_lengths": "rhythm of the cut",
    "drags": "pacing",
    "rushed": "pacing",
    "camera_restless": "camera's motivation",
    "camera_same": "camera grammar",
    "unestablished": "geography",
    "explains": "exposition",
    "dense_line": "sound design",
    "absent": "blocking",
    "never_seen": "blocking",
    "missing": "dramaturgy",
    "dark": "exposure",
    "washed_out": "exposure",
    "flat": "lighting",
    "colour_jump": "continuity",
    "flash": "lighting",
    "static": "mise-en-scene",
    "wide_heavy": "shot scale",
    "no_closeups": "shot scale",
    "slow_start": "opening",
    "silent_stretch": "sound",
    "burned_captions": "subtitling",
    "masked": "mix",
    "no_sound": "sound",
    "silence": "sound",
    "clipping": "mix",
    "loudness_off": "loudness",
    "fast_lines": "delivery",
    "voices_alike": "casting of the voices",
}


@dataclass(frozen=True)
class Voice:
    register: str
    slang: tuple[str, ...]  # short quoted words to drop in ("lowkey", "no cap")
    opener: str  # a quoted way to start a suggestion ("it might be better if")
    companions: tuple[str, ...]  # who watches with them ("the little one", "my eldest")

    @classmethod
    def of(cls, persona: Persona) -> Voice:
        text = persona.voice or ""
        register = next((name for name, pattern in REGISTERS if re.search(pattern, text, re.I)), "neutral")
        quoted = re.findall(r"[\"“]([^\"”]{1,40})[\"”]", text)
        slang = tuple(q for q in quoted if len(q.split()) <= 2 and not q.lower().startswith(("the ", "my ")))
        opener = next((q.rstrip(". …") for q in quoted if q.endswith(("...", "…"))), "")
        companions = tuple(q for q in quoted if q.lower().startswith(("the ", "my ")))
        return cls(register, slang, opener, companions)

    def say(self, slot: int, persona: Persona, **values: str) -> str:
        """One sentence from this register's template `slot` (0 open-keep .. 6 praise, 7 what the idea lacks, 8 all there)."""
        key = f"{persona.id}|{slot}|{values.get('what', '')}"
        values.setdefault("slang", self.slang[stable_hash(key) % len(self.slang)] if self.slang else "honestly")
        values.setdefault(
            "who", self.companions[stable_hash(key) % len(self.companions)] if self.companions else "everyone"
        )
        opener = self.opener + (" you" if self.opener.endswith(" if") else "") if self.opener else "perhaps you could"
        values.setdefault("opener", capitalise(opener))
        if "do" in values:
            values["Do"] = capitalise(values["do"])
        text = TEMPLATES[self.register][slot].format_map(_Blank(values))
        text = text if self.register == "blunt" else capitalise(text)
        return text.lower() if self.register == "blunt" else text


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return ""


def sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."
