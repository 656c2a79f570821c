"""Reading a creator's note: which shots it is about (by shot id, scene, character, keyword, or the whole film) and
what it asks for (cut, pace, framing, camera, a spoken line, a look, things to avoid, things to add, a character's
traits), or for the sound (`Hearing`: the music's or the effects' level, the cue, effects to add or take out, how a
line is said, a character's voice). Rules over the note's words; a note they cannot read is reported, never
guessed. A note about the sound is read for the sound only: "quieter music" asks for no calmer picture.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline.directions import CAMERA_HINTS, LONGER, SHORTER
from agents.offline.lexicon import STOP, STYLES
from agents.offline.words import WORD, content_words, stem
from storage.schema import Note, Storyboard


@dataclass(frozen=True)
class Look:
    """A change of look or mood as prompt words: `phrase` to merge, `against` words it removes, and its direction
    on an `axis` (so a critic asking the opposite can be refused)."""

    phrase: str
    axis: str
    sign: int
    against: frozenset[str] = frozenset()


def _look(phrase: str, axis: str, sign: int, against: str = "") -> Look:
    return Look(phrase, axis, sign, frozenset(against.split()))


LOOKS = {  # name: (the note's words for it, the look)
    "scary": (
        r"scar(y|ier|iest)|frighten\w*|creep(y|ier)|spook(y|ier)|menac\w*|terrify\w*|eerie|sinister|threaten\w*",
        _look(
            "menacing, ominous atmosphere",
            "threat",
            1,
            "bright brighter well-lit sunny sunlit cheerful calm "
            "gentle soft friendly cosy cozy playful smiling happy peaceful golden warm",
        ),
    ),
    "gentle": (
        r"gentl(e|er)|soft(er)?|friendl(y|ier)|kind(er)?|harmless|peaceful",
        _look("gentle, soft", "threat", -1, "menacing threatening violent aggressive ominous sinister"),
    ),
    "dark": (
        r"dark(er)?|gloom(y|ier)|murk(y|ier)|moody|shadow(y|ier)?",
        _look("low-key lighting, deep shadows", "light", -1, "bright brighter sunny sunlit well-lit daylight"),
    ),
    "bright": (
        r"bright(er)?|light(er)|sunn(y|ier)|well-lit|clearer",
        _look("bright, clearly lit", "light", 1, "dark darker gloomy murky dim night shadow shadows"),
    ),
    "warm": (
        r"warm(er)?|cos(y|ier)|coz(y|ier)",
        _look("warm golden tones", "temperature", 1, "cold cool icy blue grey"),
    ),
    "cold": (
        r"cold(er)?|cool(er)|ic(y|ier)|bleak(er)?",
        _look("cold blue tones", "temperature", -1, "warm golden cosy"),
    ),
    "calm": (
        r"calm(er)?|still(er)|quiet(er)?|serene|slow(er)? paced",
        _look("calm and still", "energy", -1, "violent frantic chaotic storm-tossed"),
    ),
    "tense": (
        r"tens(e|er)|urgent|frantic|intense|exciting",
        _look("tense, urgent", "energy", 1, "calm relaxed serene"),
    ),
    "sad": (
        r"sad(der)?|melanchol\w*|sombre|somber|mournful",
        _look("melancholy, muted", "mood", -1, "happy cheerful joyful laughing"),
    ),
    "happy": (
        r"happ(y|ier)|cheerful|joyful|upbeat|fun(nier)?",
        _look("joyful, light-hearted", "mood", 1, "sad melancholy gloomy sombre"),
    ),
    "big": (
        r"big(ger)?|larg(e|er)|huge|enormous|giant",
        _look("towering, immense in the frame", "scale", 1, "small tiny"),
    ),
    "small": (r"small(er)|tin(y|ier)|little", _look("small in the frame", "scale", -1, "towering immense huge")),
    "lonely": (r"lonel(y|ier)|alone|isolated", _look("alone, in empty surroundings", "company", -1, "crowd crowded")),
    "mysterious": (r"myster\w*|secretive|uncanny", _look("half-hidden, mysterious", "clarity", -1)),
    "dramatic": (r"dramatic|epic|grand", _look("dramatic, sweeping composition", "energy", 1)),
    "colourful": (
        r"colou?rful|vivid|saturated",
        _look("vivid, saturated colours", "colour", 1, "muted grey washed-out"),
    ),
    "tender": (r"tender|intimate|loving", _look("tender, intimate", "mood", 1, "cold distant")),
}
OPPOSITE = {
    "scary": "gentle",
    "gentle": "scary",
    "dark": "bright",
    "bright": "dark",
    "warm": "cold",
    "cold": "warm",
    "calm": "tense",
    "tense": "calm",
    "sad": "happy",
    "happy": "sad",
    "big": "small",
    "small": "big",
}
INSTRUCTION = set(
    """make keep want wish feel look looks seem show should could would needs need must please maybe
more less much bit little lot too really very whole entire everything everywhere thing things overall again also
shot shots scene scenes film movie frame part moment sequence version beginning opening ending end start""".split()
)
CUT = re.compile(r"\b(cut|remove|delete|drop|lose)\b(\s+(this|that|the|it))?\s*(shot|it|this)?\b", re.I)
CLOSER = re.compile(r"\b(closer|close-?up|tighter framing|get in close)\b", re.I)
WIDER = re.compile(r"\b(wider|wide shot|pull back|show more of)\b", re.I)
QUOTED = re.compile(r"[\"“']([^\"”']{2,300})[\"”']")
NO_LINE = re.compile(r"\b(no|without|remove|drop|cut|less)\s+(the\s+)?(narration|voice-?over|line|dialogue)\b", re.I)
AVOID = re.compile(
    r"\b(?:never|not|no|without|avoid)\s+(?:be\s+|too\s+|any\s+|a\s+)?([a-z][a-z\- ]{2,30}?)"
    r"(?=\s*(?:[,.;!]|$|\band\b|\bbut\b))",
    re.I,
)
WEAR = re.compile(
    r"\b(?:wear|wears|wearing|dressed in)\s+((?:an?\s+|the\s+|some\s+)?[a-z][a-z\- ]{2,30}?)"
    r"(?=\s*(?:[,.;!]|$|\band\b|\bin\b))",
    re.I,
)
MORE = re.compile(
    r"\b(?:more|lots of|plenty of|some)\s+([a-z][a-z\- ]{2,30}?)(?=\s*(?:[,.;!]|$|\bon\b|\bin\b|\bfor\b|"
    r"\baround\b|\band\b))",
    re.I,
)
ADD = re.compile(
    r"\badd(?:ing)?\s+(?:an?\s+|the\s+|some\s+)?([a-z][a-z\- ]{2,40}?)(?=\s*(?:[,.;!]|$|\bto\b|\bin\b))", re.I
)


_NP = r"((?:an?\s+|the\s+|all\s+the\s+|some\s+)?[a-z][a-z\-' ]{1,40}?)"
_END = r"(?=\s*(?:[,.;:!?\u2014\u2013]|\s-\s|$|\bhere\b|\bin (?:this|that|the) (?:shot|scene)\b|\band\b|\bbut\b|\bplease\b))"
# Intent: replace X with Y ("replace the meadow with a muddy track", "Not rain: an ice storm", "Y instead of X").
REPLACE = (
    re.compile(rf"\breplace\s+{_NP}\s+(?:with|by)\s+(.{{2,200}}?)\s*(?:[.;!]|$)", re.I),
    re.compile(
        r"^\s*(?:not|no)\s+([a-z][a-z\-' ]{1,40}?)\s*[:\u2014\u2013]\s*(?:but\s+)?(.{2,200}?)\s*(?:[.;!]|$)", re.I
    ),
    re.compile(rf"\binstead of\s+{_NP}\s*,\s*(.{{2,200}}?)\s*(?:[.;!]|$)", re.I),
    re.compile(rf"\b(?:not|no)\s+{_NP}\s*,?\s+but\s+(.{{2,200}}?)\s*(?:[.;!]|$)", re.I),
)
REMOVE = re.compile(rf"\b(?:remove|get rid of|take out|drop|lose|no more)\s+{_NP}{_END}", re.I)
LESS = re.compile(rf"\b(?:less|fewer|not so much|too much)\s+{_NP}{_END}", re.I)
SHOW = re.compile(
    rf"\b(?:show(?:\s+me)?|(?:want|like|need) to see|let us see|include)\s+{_NP}(?=\s*(?:[.;!?]|$))", re.I
)
SHOT_WORDS = {"it", "this", "that", "shot", "this shot", "the shot", "that shot", "scene", "this scene", "the scene"}
NOT_PICTURE = re.compile(
    r"\b(narration|voice-?over|line|lines|dialogue|music|score|sound|sounds|shots?|scenes?)$", re.I
)


def _bare(phrase: str) -> str:
    """'the seagulls' -> 'seagulls' (what a prompt is searched for)."""
    return re.sub(r"^(an?|the|all the|some)\s+", "", phrase.strip(), flags=re.I)


def _noun_phrase(phrase: str) -> bool:
    """A phrase that can name something to see or a quality (its last word can be a noun or an adjective, or is a
    participle used as one: 'threatening', 'crowded'); a finite verb ('appears', 'happens', 'move') is not one."""
    from agents.offline.idea import verb_lemma, word_classes

    last = phrase.split()[-1].lower() if phrase.split() else ""
    classes = word_classes(last)
    if not last:
        return False
    if not classes or classes & {"NOUN", "PROPN", "ADJ"}:
        return True
    return last.endswith(("ing", "ed", "en")) and verb_lemma(last) != last


MUSIC = re.compile(r"\b(music|score|soundtrack)\b", re.I)
INSTRUMENTS = re.compile(r"\b(strings|violins?|cellos?|drums|piano|brass|choir|synths?)\b", re.I)  # heard when loud
EFFECTS = re.compile(r"\b(sound effects|ambience|ambient sound|background noise|sfx)\b", re.I)
BARE_EFFECTS = re.compile(r"\beffects\b", re.I)  # also the picture's (VFX): a sound only when too loud or quiet
LOUDER = re.compile(
    r"\b(too (?:quiet|soft|low|faint)|louder|(?:turn|bring|crank) (?:it |them |the \w+ )?up|(?:can ?not|can't|"
    r"cannot|barely|hardly) hear|stronger|more present)\b",
    re.I,
)
QUIETER = re.compile(
    r"\b(too (?:loud|much|strong|busy|intrusive|present|heavy)|quieter|softer|(?:turn|bring|take) (?:it |them |the \w+ )?"
    r"down|lower|drown\w*|overpower\w*|mask\w*|covers? the (?:lines?|dialogue|voices?)|fights? the (?:lines?|voices?)|"
    r"(?:can ?not|can't|cannot|barely|hardly) hear (?:the )?(?:lines?|dialogue|words|voices?|what))\b",
    re.I,
)
DB = re.compile(r"\b(?:by\s+)?(\d{1,2}(?:\.\d)?)\s*db\b", re.I)
NO_MUSIC = re.compile(
    r"\b(?:no|without|remove|drop|cut|lose|kill|get rid of|take out|stop)\s+(?:the\s+|any\s+)?(?:music|score|soundtrack)\b"
    r"|\b(?:music|score)\s+(?:should|must)\s+(?:stop|go)\b|\bin silence\b",
    re.I,
)
NO_EFFECTS = re.compile(
    r"\b(?:no|without|remove|drop|cut|lose|get rid of|take out)\s+(?:the\s+|any\s+)?(?:sound effects|effects|ambience|"
    r"sounds|background noise)\b",
    re.I,
)
CUE = (
    re.compile(r"\b(?:music|score)\s+(?:should|must|could|needs? to|ought to)\s+be\s+(.{2,200}?)\s*(?:[.;!]|$)", re.I),
    re.compile(
        r"\b(?:add|use|play|want|try|give (?:it|the scene)|put in)\s+(?:an?\s+|some\s+|the\s+)?([a-z][a-z,\- ]{1,120}?)"
        r"\s+(?:music|score)\b",
        re.I,
    ),
)
# What makes a sound and nothing to see (thunder is heard; rain, wind and the sea are seen as well: those need
# "the sound of" or "hear" to be read as sounds).
HEARD = set(
    """thunder thunderclap thunderclaps footsteps birdsong ticking tick creaking creak creaks applause laughter siren
sirens foghorn howling howl rumble rumbling crackle crackling hum humming buzz buzzing whistle whistling echo echoes
heartbeat heartbeats splash splashing dripping drip thud thuds bang bangs knock knocking knocks chime chimes clatter
hiss roar roaring gunshot gunshots explosion whisper whispers murmur murmuring chatter""".split()
)
SOUND_OF = re.compile(
    rf"\b(?:sound|sounds|noise|noises)\s+of\s+{_NP}{_END}|\bhear\s+{_NP}{_END}|\b([a-z][a-z\-]{{2,30}})\s+sounds?\b"
    rf"(?=\s*(?:[,.;!]|$|\bto\b|\bin\b|\bon\b))",
    re.I,
)
ADD_HEARD = re.compile(rf"\b(?:add(?:ing)?|more|put in|include)\s+{_NP}(?=\s*(?:[,.;!]|$|\bto\b|\bin\b|\bon\b))", re.I)
DELIVERIES = (  # the note's words for how a line is said -> the delivery written on the line
    (re.compile(r"\bwhisper\w*\b", re.I), "whispered"),
    (re.compile(r"\b(shout\w*|yell\w*|scream\w*)\b", re.I), "shouted"),
    (re.compile(r"\b(mutter\w*|mumbl\w*)\b", re.I), "muttered"),
    (re.compile(r"\b(sob\w*|in tears|tearful\w*|crying)\b", re.I), "tearful"),
    (re.compile(r"\blaugh\w*\b", re.I), "laughing"),
    (re.compile(r"\bsing\b|\bsung\b|\bsinging\b", re.I), "sung"),
)
SPOKEN = re.compile(r"\b(line|lines|say|says|said|saying|speak|speaks|spoken|dialogue|deliver\w*|read it)\b", re.I)
MANNER = re.compile(
    r"\b(?:say|says|speak|speaks|deliver|delivers|read|reads|said)\b(?:\s+(?:it|that|this|the|her|his|their|line|"
    r"lines|more|a bit|much))*\s+(\w+ly)\b",
    re.I,
)
VOICE_TALK = re.compile(r"\b(?:sounds?|voice|voiced|speaks?|talks?)\b", re.I)
# The dimensions a voice moves along: the words at each pole, and the step (semitones, pace factor) toward it. A
# note's adjective is read onto one pole: by its base form when it is one of these words, else by the packaged
# sentence embedder (all-MiniLM-L6-v2), nearest pole by its words, when that is clearly nearer than the other pole.
VOICE_DIMENSIONS = (
    ("age", ("old elderly aged ancient frail", (-2.0, 0.85)), ("young youthful childlike juvenile", (2.0, 1.1))),
    ("pitch", ("deep low gruff bass husky heavy", (-3.0, 1.0)), ("high squeaky shrill thin piping light", (3.0, 1.0))),
    (
        "pace",
        ("slow measured drawling sluggish unhurried", (0.0, 0.85)),
        ("fast quick rapid hurried brisk", (0.0, 1.15)),
    ),
    ("energy", ("lively playful excited perky bouncy", (1.0, 1.1)), ("calm tired weary subdued listless", (-1.0, 0.9))),
)
VOICE_NEAR, VOICE_MARGIN = 0.68, 0.04  # cosine of "a X voice" to a pole's word, and its lead over the other pole
# Words about the sound, which say nothing about which shots a note is about.
SOUND_TALK = set(
    """music score soundtrack cue sound sounds noise loud louder quiet quieter soft softer voice voices line lines
level levels mix volume hear heard whisper whispered shout shouted effects ambience db older younger deeper higher
lower slower faster""".split()
)


_WHERE = re.compile(  # where a cue goes, not what it is: "... in the storm scene", "... for s004"
    r"\s+(?:in|on|for|during|over|throughout)\s+(?:the\s+|this\s+|that\s+|every\s+|all\s+)?(?:\S+\s+){0,3}?"
    r"(?:scenes?|shots?|film|movie)\b.*$|\s+(?:in|on|for|to|at)\s+\S*\d\S*.*$",
    re.I,
)
_PLACE = re.compile(r"\s+(?:in|on|to|at|during|for|over|throughout)\s+.*$", re.I)  # a sound's place: the note's shots


@dataclass
class Hearing:
    """What a note asks of the sound: level changes in dB (music, effects), a new cue ('' no music), effects to add
    or take out, a delivery for lines, a voice change (semitones, pace factor), or the sound words it used that no
    rule reads (`unread`)."""

    music_db: float = 0.0
    effects_db: float = 0.0
    cue: str | None = None
    sounds: list[str] = field(default_factory=list)
    no_sounds: bool = False
    delivery: str = ""
    voice: tuple[float, float] | None = None
    character: str = ""  # whose voice (or whose lines)
    unread: str = ""

    @property
    def empty(self) -> bool:
        return not (self.music_db or self.effects_db or self.cue is not None or self.sounds or self.no_sounds) and not (
            self.delivery or self.voice
        )


def _amount(text: str, sign: int) -> float:
    """A level change in dB: the note's own figure ("by 3 dB"), 10 for "much/far/way", else 6."""
    m = DB.search(text)
    step = float(m.group(1)) if m else 10.0 if re.search(r"\b(much|far|way|a lot)\b", text, re.I) else 6.0
    return sign * min(step, 24.0)


def read_hearing(text: str, board: Storyboard) -> Hearing:
    """What `text` (a note, or a critic's issue) asks of the sound."""
    h = Hearing()
    low = " ".join(text.split()).lower()
    sign = -1 if QUIETER.search(low) else 1 if LOUDER.search(low) else 0
    music = bool(MUSIC.search(low) or (sign and INSTRUMENTS.search(low)))
    effects = bool(EFFECTS.search(low) or (sign and BARE_EFFECTS.search(low)))
    if sign and not music and not effects:  # "the rain is too loud": a word of some shot's sounds is the effects
        effects = bool(content_words(low) & set().union(*(content_words(s.sounds) for s in board.shots())))
    if NO_MUSIC.search(low):
        h.cue = ""
    elif music:
        for rx in CUE:
            if (m := rx.search(text)) and not (LOUDER.search(m.group(1)) or QUIETER.search(m.group(1))):
                h.cue = _WHERE.sub("", m.group(1)).strip(" ,")  # "louder" is a level, never the cue's words
                break
    if sign and h.cue is None and (music or effects):
        h.music_db = _amount(low, sign) if music else 0.0
        h.effects_db = _amount(low, sign) if effects and not music else 0.0
    if NO_EFFECTS.search(low):
        h.no_sounds = True
    heard = [_bare(x) for group in SOUND_OF.findall(text) for x in group if x.strip()]
    heard += [_bare(x) for x in ADD_HEARD.findall(text) if set(_bare(x).lower().split()) & HEARD]
    heard = [_PLACE.sub("", x).strip() for x in heard]
    h.sounds = list(dict.fromkeys(x for x in heard if x and x.lower() not in SOUND_TALK and not MUSIC.search(x)))
    h.delivery = next((d for rx, d in DELIVERIES if rx.search(low)), "")
    if not h.delivery and SPOKEN.search(low) and (m := MANNER.search(low)):
        h.delivery = m.group(1)
    if sign and not music and not effects and not h.delivery and SPOKEN.search(low):  # a line said louder or softer
        h.delivery = "loud" if sign > 0 else "quiet"
    who = _character(low, board)
    if who and (m := VOICE_TALK.search(low)) and not h.delivery:
        shift, unclear = voice_shift(low, m, who)
        if shift:
            pitch, pace = shift
            h.voice, h.character = (max(-6.0, min(6.0, pitch)), round(max(0.7, min(1.4, pace)), 3)), who
        elif unclear:
            h.unread = (
                f"no voice dimension reads {unclear!r} clearly: say higher or deeper, older or younger, faster or "
                "slower, livelier or calmer"
            )
    if h.delivery and who:
        h.character = who
    if h.empty and (music or effects or re.search(r"\b(voice|sound|mix|audio)\b", low)):  # named, not read
        h.unread = "a sound note no rule reads: say louder or quieter, no music, the cue in words, or a sound to add"
    return h


def _adjective_base(word: str) -> str:
    """'older' -> 'old', 'gruffer' -> 'gruff', 'cheekier' -> 'cheeky' (a comparative lemminflect does not know is
    read by its ending); '' for a word that cannot be an adjective or adverb."""
    from agents.offline.idea import word_classes

    classes = word_classes(word)
    if classes & {"ADJ", "ADV"}:
        from lemminflect import getAllLemmas

        forms = getAllLemmas(word)
        return (forms.get("ADJ") or forms.get("ADV") or (word,))[0]
    if not classes:
        if word.endswith("ier") and len(word) > 5:
            return word[:-3] + "y"
        if word.endswith(("y", "ish", "ful", "ous", "ive", "ic", "al")) and len(word) > 4:
            return word
    return ""


def voice_shift(low: str, talk: re.Match, who: str) -> tuple[tuple[float, float] | None, str]:
    """(semitones, pace factor) for the adjectives a voice note uses ("sound more mischievous", "a raspier voice"),
    each read onto a pole of `VOICE_DIMENSIONS`; 'less'/'not so' before one goes the other way. Also the first
    adjective no pole reads clearly ('' when none), so the answer can say why nothing changed."""
    head = _PLACE.sub("", low[talk.end() :]) or low[: talk.start()]
    skip = STOP | INSTRUCTION | {w.lower() for w in who.split()} | {"voice", "sound", "sounds", "like", "bit"}
    words = [w for w in re.findall(r"[a-z][a-z\-]+", head) if w not in skip]
    picked = [(w, base) for w in words if (base := _adjective_base(w))]
    if not picked:
        return None, ""
    pitch, pace, unclear, read = 0.0, 1.0, "", False
    for word, base in picked:
        pole = _pole(base)
        if pole is None:
            unclear = unclear or word
            continue
        (_, step), (_, back) = pole
        if re.search(rf"\b(less|not so|not as)\s+{re.escape(word)}\b", low):
            step = back
        pitch, pace, read = pitch + step[0], pace * step[1], True
    return ((pitch, pace) if read else None), ("" if read else unclear)


def voiced(word: str) -> str:
    """What the embedder compares for a word about a voice: "a gruff voice"."""
    return f"a {word} voice"


def voice_anchors() -> list[str]:
    """The texts of every pole's words (`voiced`): fixed, so they are in the embedder's packaged table."""
    return [voiced(w) for _, a, b in VOICE_DIMENSIONS for pole in (a, b) for w in pole[0].split()]


def _pole(base: str):
    """The (pole, other pole) of `VOICE_DIMENSIONS` that `base` (an adjective's base form) names or is nearest to."""
    for _, a, b in VOICE_DIMENSIONS:
        for pole, other in ((a, b), (b, a)):
            if base in pole[0].split():
                return pole, other
    from agents.diversity import embed

    poles = [(pole, other) for _, a, b in VOICE_DIMENSIONS for pole, other in ((a, b), (b, a))]
    anchors = [(k, w) for k, (pole, _) in enumerate(poles) for w in pole[0].split()]
    vectors = embed([voiced(base)] + [voiced(w) for _, w in anchors])
    sims = vectors[1:] @ vectors[0]
    near = [max(float(s) for (k, _), s in zip(anchors, sims) if k == i) for i in range(len(poles))]
    best = max(range(len(poles)), key=near.__getitem__)
    opposite = best ^ 1  # the other pole of the same dimension
    if near[best] >= VOICE_NEAR and near[best] - near[opposite] >= VOICE_MARGIN:
        return poles[best]
    return None


def _character(low: str, board: Storyboard) -> str:
    """The character a note names: by name, else by a word only their description has ("the keeper")."""
    for c in board.characters:
        if re.search(rf"\b{re.escape(c.name.lower())}\b", low):
            return c.name
    words = content_words(low) - SOUND_TALK - INSTRUCTION
    found = [c.name for c in board.characters if words & content_words(c.description)]
    return found[0] if len(found) == 1 else ""


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|\s*;\s*|\s*\n+\s*")
_JOIN = re.compile(r"\s*,?\s+\b(?:and|but|and also|while)\b\s+|\s*,\s*(?=but\b)", re.I)
_PRONOUNS = frozenset("it they he she this these those them".split())


def _clause(part: str) -> bool:
    """Whether `part` asks something on its own: at least two words, something to change (a noun, a name or a
    pronoun) and a different word that says what (a verb, an auxiliary, an adjective or an adverb)."""
    from agents.offline.idea import word_classes

    words = re.findall(r"[A-Za-z][A-Za-z'\-]*", part)
    if len(words) < 2:
        return False
    targets = {
        i
        for i, w in enumerate(words)
        if w.lower() in _PRONOUNS
        or (w[0].isupper() and i)
        or "NOUN" in word_classes(w.removesuffix("'s"))
        or (w[0].isupper() and not word_classes(w))
    }
    said = {i for i, w in enumerate(words) if word_classes(w) & {"AUX", "VERB", "ADJ", "ADV"}}
    return bool(targets) and bool(said) and any(i != j for i in targets for j in said)


def split_requests(text: str) -> list[str]:
    """A note's requests: its sentences, and within one the clauses joined by 'and', 'but' or ';' when each side
    has its own subject or target and what it asks ("Tom should sound gruffer and the rain should be quieter" is
    two; "Ada and Tom should run" is one). A clause that leaves out its verb ("make the sky darker and the sea
    rougher") borrows the first one's. Punctuation at the ends is dropped."""
    out: list[str] = []
    for sentence in _SENTENCE.split(" ".join(text.split()) if "\n" not in text else text):
        sentence = sentence.strip(" .!?,")
        if not sentence:
            continue
        parts = [p.strip(" ,") for p in _JOIN.split(sentence) if p.strip(" ,")]
        merged: list[str] = []
        for p in parts:  # join back a side that is no clause of its own ("Ada and Tom ...", "bread and butter")
            if merged and (not _clause(p) or not _clause(merged[-1]) or _listed(merged[-1], p)):
                merged[-1] = f"{merged[-1]} and {p}"
            else:
                merged.append(p)
        verb = _lead_verb(merged[0]) if len(merged) > 1 else ""
        out += [
            m if not verb or k == 0 or _lead_verb(m) or _has_verb(m) else f"{verb} {m}" for k, m in enumerate(merged)
        ]
    return out or [text.strip()]


def _listed(left: str, right: str) -> bool:
    """Two nouns in a list ('add bread and butter to the table'): the left ends on a noun and the right opens with
    a bare one (no article, name or pronoun)."""
    from agents.offline.idea import word_classes

    last, first = left.split()[-1], right.split()[0]
    return (
        first.islower()
        and first not in _PRONOUNS
        and "NOUN" in word_classes(last)
        and "NOUN" in word_classes(first)
        and not word_classes(last) & {"ADJ", "ADV"}
    )


def _lead_verb(part: str) -> str:
    """The verb an imperative opens with ('make', 'turn'), or ''."""
    from agents.offline.idea import word_classes

    first = part.split()[0] if part.split() else ""
    return first if first.islower() and "VERB" in word_classes(first) and first not in STOP - {"make", "let"} else ""


def _has_verb(part: str) -> bool:
    from agents.offline.idea import word_classes

    return any("AUX" in word_classes(w) for w in part.lower().split())


@dataclass
class Reading:
    scope: str  # "shot", "scene", "character", "keyword", "film"
    shots: list[str]
    character: str = ""  # a character-bible name when the note is about a character
    cut: bool = False
    pace: int = 0  # +1 shorter, -1 longer
    frame: str = ""  # a shot type to reframe as
    camera: str = ""
    line: str | None = None  # a new spoken line ("" removes it)
    looks: list[Look] = field(default_factory=list)
    avoid: list[str] = field(default_factory=list)
    add: list[str] = field(default_factory=list)
    traits: list[str] = field(default_factory=list)
    style: list[str] = field(default_factory=list)
    replace: list[tuple[str, str]] = field(default_factory=list)  # (what is there, what goes in its place)
    remove: list[str] = field(default_factory=list)  # things to take out of the picture (and tell the model to avoid)
    less: list[str] = field(default_factory=list)  # things to tone down: their clauses go, a lighter mention stays
    hearing: Hearing = field(default_factory=Hearing)  # what it asks of the sound

    @property
    def empty(self) -> bool:
        return not (
            self.cut
            or self.pace
            or self.frame
            or self.camera
            or self.line is not None
            or self.looks
            or self.avoid
            or self.add
            or self.traits
            or self.style
            or self.replace
            or self.remove
            or self.less
            or not self.hearing.empty
        )


def read_note(note: Note, board: Storyboard) -> Reading:
    text = " ".join(note.text.split())
    low = text.lower()
    ids = {s.shot_id for s in board.shots()}
    named = [w for w in re.findall(r"[A-Za-z0-9_\-]+", text) if w in ids]
    bare = (
        re.sub(
            r"\b(shots?\s+)?(" + "|".join(map(re.escape, sorted(ids, key=len, reverse=True))) + r")\b",
            " ",
            text,
            flags=re.I,
        )
        if named
        else text
    )  # the ids scope the note; they are not what it asks
    r = Reading(scope="film", shots=[])
    for rx in REPLACE:
        r.replace += [(_bare(a), b.strip()) for a, b in rx.findall(bare) if _bare(a) and b.strip()]
        if r.replace:
            break
    picture = [x for x in REMOVE.findall(bare) + LESS.findall(bare) if not NOT_PICTURE.search(x.strip())]
    r.remove = [_bare(x) for x in REMOVE.findall(bare) if x in picture and x.strip().lower() not in SHOT_WORDS]
    r.less = [_bare(x) for x in LESS.findall(bare) if x in picture and x.strip().lower() not in SHOT_WORDS]
    cut = CUT.search(bare)
    r.cut = bool(cut) and not ADD.search(bare) and not r.remove and not r.replace
    if SHORTER.search(bare) or re.search(r"\btoo (slow|boring)\b", low):
        r.pace = 1
    elif LONGER.search(bare) or re.search(r"\bslower\b|\btoo (fast|quick|abrupt)\b", low):
        r.pace = -1
    r.frame = "close-up" if CLOSER.search(bare) else "wide" if WIDER.search(bare) else ""
    r.camera = next((cam for words, cam in CAMERA_HINTS.items() if words in low), "")
    quoted = QUOTED.search(text)
    if quoted and re.search(r"\b(say|says|narrat\w*|line|voice|reads?)\b", low):
        r.line = quoted.group(1).strip()
    elif NO_LINE.search(low):
        r.line = ""
        r.cut = False  # "drop the narration" takes the line out, not the shot
    replaced = {a.lower() for a, _ in r.replace}
    r.avoid = [
        m.strip()
        for m in AVOID.findall(bare)
        if m.strip() not in STOP and _noun_phrase(m.strip()) and _bare(m).lower() not in replaced
    ]  # "it never appears" asks for it to be seen: "appears" is not a thing to avoid
    r.looks = _looks(low, r.avoid)
    more = [
        m.strip()
        for m in MORE.findall(bare)
        if not any(re.fullmatch(f, m.strip()) for f, _ in LOOKS.values()) and m.strip() not in INSTRUCTION
    ]
    more = [m for m in more if m.lower() not in {x.lower() for x in r.less}]
    shown = [m.strip() for m in SHOW.findall(bare) if _noun_phrase(m.strip())]
    r.add = [m.strip() for m in ADD.findall(bare)] + more + shown + [f"wearing {m.strip()}" for m in WEAR.findall(bare)]
    if r.replace:
        r.add = [a for a in r.add if all(a.lower() not in b.lower() for _, b in r.replace)]
    r.style = [w for w in WORD.findall(low) if w in STYLES]
    r.hearing = read_hearing(bare, board)
    if not r.hearing.empty or r.hearing.unread:  # a note about the sound: its words are not picture changes
        r.cut, r.pace, r.frame, r.camera, r.line = False, 0, "", "", None
        r.looks, r.avoid, r.add, r.traits, r.style, r.less = [], [], [], [], [], []
        r.remove = [x for x in r.remove if not MUSIC.search(x) and not EFFECTS.search(x)]
    _scope(r, note, board, named, bare)
    return r


def _looks(low: str, avoid: list[str]) -> list[Look]:
    found = []
    avoided = " ".join(avoid)
    for name, (forms, look) in LOOKS.items():
        m = re.search(rf"\b(?:(less|not so|too)\s+)?({forms})\b", low)
        if not m or re.search(rf"\b({forms})\b", avoided):
            continue
        flipped = bool(m.group(1)) and name in OPPOSITE
        chosen = LOOKS[OPPOSITE[name]][1] if flipped else look
        if chosen not in found:
            found.append(chosen)
    return found


def _scope(r: Reading, note: Note, board: Storyboard, named: list[str], bare: str) -> None:
    """Which shots the note is about, most specific first: its shot, shot ids it names, a scene, a character,
    words its shots share; none means the whole film."""
    if note.shot_id:
        r.scope, r.shots = "shot", [note.shot_id]
        return
    if not note.scope.whole:  # the scenes or shots the creator scoped it to (`--scene`, `--shots`): only those
        r.scope, r.shots = "scene", note.scope.shot_ids(board)
        return
    if named:
        r.scope, r.shots = "shot", named
        return
    low = bare.lower()
    scenes = board.scenes
    for k, sc in enumerate(scenes, 1):
        title = sc.title.lower()
        if (
            re.search(rf"\bscene\s+{k}\b", low)
            or (len(title) >= 5 and title in low)
            or (any(ch.isdigit() for ch in sc.scene_id) and re.search(rf"\b{re.escape(sc.scene_id.lower())}\b", low))
            or (sc.purpose and re.search(rf"\b(the\s+)?{re.escape(sc.purpose)}\b", low))
        ):
            r.scope = "scene"
            r.shots += [s.shot_id for s in sc.shots]
    if re.search(r"\b(opening|beginning|first scene)\b", low):
        r.scope, r.shots = "scene", r.shots + [s.shot_id for s in scenes[0].shots]
    if re.search(r"\b(the end|ending|last scene|final scene|final shot)\b", low):
        r.scope, r.shots = "scene", r.shots + [s.shot_id for s in scenes[-1].shots]
    if r.shots:
        r.shots = list(dict.fromkeys(r.shots))
        return
    talk = SOUND_TALK if not r.hearing.empty else set()
    words = {
        w for w in content_words(low) - INSTRUCTION - talk if not any(re.fullmatch(f, w) for f, _ in LOOKS.values())
    }
    words = {w for w in words if not any(re.search(rf"\b{re.escape(w)}", a) for a in r.avoid + r.add)}
    who = next((c.name for c in board.characters if c.name.lower() in low or stem(c.name.split()[-1]) in words), "")
    if who and r.hearing.empty and not r.hearing.unread:
        r.traits = _traits(low, who)
        words -= content_words(who) | content_words(" ".join(r.traits))
    shots = [s for s in board.shots() if words & content_words(f"{s.prompt} {s.narration}")]
    shots += [s for sc in scenes if words & content_words(f"{sc.title} {sc.description}") for s in sc.shots]
    if who and not shots:
        r.scope, r.character = "character", who
        r.traits += [a for a in r.add if a.startswith("wearing ")]
        return
    if who:
        shots = [s for s in shots if who in s.characters or who.lower() in s.prompt.lower()] or shots
    if shots:
        order = [x.shot_id for x in board.shots()]
        r.scope, r.shots = "keyword", sorted(dict.fromkeys(s.shot_id for s in shots), key=order.index)


def _traits(low: str, who: str) -> list[str]:
    """'keep the whale gentle and curious, never threatening' -> ['gentle', 'curious']."""
    head = who.lower().split()[-1]
    after = low.split(head, 1)[1] if head in low else low
    after = re.split(r"[,.;!]|\b(never|not|no|but|without|in every|in all)\b", after)[0]
    for _ in range(2):  # "should be", "to look"
        after = re.sub(
            r"^\W*(is|are|be|should|stay|stays|look|looks|feel|feels|to|always|more|a bit|very|so)\b\s*",
            "",
            after.strip(),
        )
    parts = [p.strip() for p in re.split(r"\band\b|,", after) if p.strip()]
    return [p for p in parts if len(p.split()) <= 3 and p not in STOP and p not in INSTRUCTION][:4]
