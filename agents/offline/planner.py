"""The offline planner: an idea becomes a storyboard with a beat sheet scaled to the length, scenes that advance it,
and shots that follow a shot grammar (establishing, medium, close-up, reaction, insert), every prompt distinct.

Deterministic and heuristic: the story comes from templates (`story.py`) filled with what `idea.py` reads in the
idea, never from a language model.
"""

from __future__ import annotations

import re

from agents.base import Result
from agents.offline import wordnet
from agents.offline.idea import Cast, Idea, is_place, read_idea, verb_lemma, verbish
from agents.offline.kinds import lemma
from agents.offline.lexicon import PLACE_OF_ROLE, SEASONS, THREAT_LOOK
from agents.offline.story import (
    AMBIENCE,
    BEATS,
    EXTRA,
    FACE,
    FOLEY,
    LIGHT,
    LINES,
    MUSIC,
    PACE,
    RELATIONS,
    SHARE,
    SHORT_BEATS,
    WHEN,
    Moment,
    moments,
)
from agents.offline.words import READ_WPS, SHOT_TYPES, capitalise, clip_words, content_words, stable_hash
from storage.run import RunContext
from storage.schema import WORDS_PER_SECOND, Character, Line, Location, Scene, Shot, Storyboard, fit_gap

SIGNED = "signed, captioned, not voiced"  # a Line's delivery for a character who signs (Line.voiced() reads it)
MEAN_SHOT = 4.5  # seconds: the film's average shot before pacing by beat and shot type
SCENE_SECONDS = 35.0  # a beat longer than this gets several scenes
WEIGHT = {
    "establishing": 1.5,
    "wide": 1.3,
    "medium": 1.0,
    "two-shot": 1.1,
    "over-the-shoulder": 0.9,
    "close-up": 0.75,
    "reaction": 0.6,
    "insert": 0.5,
}
CAMERAS = {  # a motivated camera: establishing shots travel, most others hold still
    "establishing": ("pan_right", "static", "zoom_out", "static", "pan_left"),
    "wide": ("static", "pan_left", "static"),
    "medium": ("static", "dolly_in", "static"),
    "two-shot": ("static",),
    "over-the-shoulder": ("static", "dolly_in"),
    "close-up": ("static", "zoom_in", "static"),
    "reaction": ("static",),
    "insert": ("static", "tilt_down", "static"),
}
ON_PLACES = {"island", "ship", "boat", "rock", "farm", "moon", "planet", "shore", "beach", "hillside", "deck", "street"}
IN_PLACES = {
    "city",
    "town",
    "village",
    "forest",
    "woods",
    "jungle",
    "desert",
    "kitchen",
    "room",
    "house",
    "valley",
    "garden",
    "workshop",
    "studio",
    "library",
    "classroom",
    "junkyard",
    "mountains",
    "hills",
    "cottage",
    "bakery",
    "shop",
    "office",
    "laboratory",
    "forge",
    "mine",
    "monastery",
    "chapel",
    "clinic",
    "ward",
    "cockpit",
    "tent",
    "harbour",
    "harbor",
    "world",
}
ANGLES = (
    "seen from a low angle",
    "seen from high above",
    "in profile",
    "framed off-centre",
    "from behind",
    "at eye level",
    "in silhouette against the background",
    "through a foreground of blurred shapes",
    "with a shallow depth of field",
    "from a distance",
    "tracking alongside",
    "in the foreground, the place behind",
)
LOOKS = {  # (face and hair, clothes or body): one is picked per character, the same in every shot
    "young": (
        ("tousled dark hair", "a green knitted jumper and a canvas satchel"),
        ("short curly hair", "a red anorak and scuffed trainers"),
        ("a long braid and round glasses", "a yellow raincoat"),
    ),
    "old": (
        ("short silver hair and a weathered face", "a mustard oilskin coat"),
        ("white hair and wire spectacles", "a brown cardigan"),
        ("a lined, kind face and a flat cap", "a patched tweed jacket"),
    ),
    "person": (
        ("cropped black hair", "a navy pea coat and a grey scarf"),
        ("auburn hair tied back", "a denim jacket and heavy boots"),
        ("a shaved head", "a rust-orange work jacket and a leather bag"),
    ),
    "animal": (
        ("bright, watchful eyes", "a pale scar across its left side"),
        ("a calm, steady gaze", "one pale patch near its left eye"),
        ("quick, curious eyes", "a darker stripe along its back"),
        ("a grizzled muzzle", "a torn left ear"),
        ("small, bright amber eyes", "a white tip on its tail"),
    ),
    "machine": (  # a robot has no hair and wears no coat: what it is made of, how it moves, what lights it
        ("two round lens eyes that whirr as they focus", "a riveted body with one dented panel"),
        ("a single glowing visor", "jointed limbs that creak as they move"),
        ("a small square head with an antenna", "worn paint and patches of rust"),
    ),
    "myth": (  # a being of folklore (WordNet: an imaginary or spiritual being): drawn as one, never as a toy
        ("deep-set eyes that glint in the dark", "a heavy cloak the colour of moss"),
        ("a long, weathered face", "skin like old grey stone"),
        ("pale, shining eyes", "a shape that seems to shimmer at its edges"),
    ),
    "creature": (  # a made thing come alive (a teapot, a doll, a tin soldier)
        ("one round blue eye", "a dented copper body"),
        ("a soft grey glow", "long, thin limbs"),
        ("a painted smile", "a chipped white surface with a faded blue pattern"),
    ),
}
MATERIALS = (
    "paper",
    "brass",
    "copper",
    "tin",
    "wooden",
    "wood",
    "glass",
    "clay",
    "stone",
    "iron",
    "steel",
    "porcelain",
)
# The shot grammar's own words of seeing, and what a blind character does instead (the planner's templates, not
# the idea's words).
UNSEEING = {
    "watches": "listens to",
    "watching": "listening",
    "watch": "listen to",
    "looks": "turns",
    "looking": "turning",
    "look": "turn",
    "gazes": "turns",
    "gazing": "turning",
    "sees": "senses",
    "seeing": "sensing",
    "glimpse": "sound",
    "stares": "listens",
}
SEEING = re.compile(r"\b(" + "|".join(UNSEEING) + r")\b", re.I)
# An animal's look by what WordNet says it is (a hypernym of its noun: `wordnet.is_a`); a mammal's look otherwise.
BODY_PLANS = ("bird", "fish", "insect", "reptile", "amphibian")
ANIMAL_LOOKS = {
    "bird": (
        ("bright, beady eyes", "ruffled grey-and-white feathers"),
        ("a sharp yellow beak", "one bent tail feather"),
        ("a cocked head and a keen eye", "a pale wing bar"),
    ),
    "fish": (("wide, unblinking eyes", "silver scales with a blue sheen"), ("a torn fin", "a speckled back")),
    "insect": (("large faceted eyes", "a glossy segmented body"), ("long twitching antennae", "dusty wings")),
    "reptile": (("slit-pupilled golden eyes", "rough olive scales"), ("a slow, blinking gaze", "a banded tail")),
    "amphibian": (("bulging golden eyes", "damp speckled skin"), ("a wide mouth", "a pale throat")),
}
SAME = {
    "person": "the same face, hair and clothes in every shot",
    "animal": "the same size, colouring and markings in every shot",
    "creature": "the same shape and colours in every shot",
    "machine": "the same build, materials and wear in every shot",
}


class OfflinePlanner:
    mode = "offline"

    def plan(self, idea: str, minutes: float, ctx: RunContext | None = None) -> Result[Storyboard]:
        (ctx or RunContext()).cancel.raise_if_cancelled("planner (offline): cancelled")
        if not 0.25 <= minutes <= 24 * 60:  # the caller keeps to its own limit (Config.max_film_minutes)
            raise ValueError(f"target length must be between 0.25 and 1440 minutes, got {minutes}")
        read = read_idea(idea)
        return Result(Draft(read, round(minutes * 60, 3)).storyboard(), model="offline")


class Draft:
    """One storyboard being written from a read idea."""

    def __init__(self, idea: Idea, total: float) -> None:
        self.idea, self.total = idea, total
        lead = idea.cast[0]
        partner = idea.cast[1] if len(idea.cast) > 1 else None
        self.partner = partner
        named = [p for p in idea.places if p.split()[-1] not in idea.thing.split()]
        inside = [p for p in idea.places if p not in named]  # "a city" in "a map of a city" is part of the thing
        work = PLACE_OF_ROLE.get(lead.head)
        places = named + inside if named or not work else [work, *inside]
        guarded = _goal_object(idea.goal) if idea.relation == "task" else ""
        if not places and guarded and is_place(guarded.split()[-1]):
            places = [guarded]  # "guard the old windmill": the story happens there ("win back the crown": not a place)
        self.home = places[0] if places else f"{lead.name}'s home"
        self.away = places[1] if len(places) > 1 else f"the world beyond {self.home}"
        self.elsewhere = places[1:] or [self.away]  # the places scenes away from home go to, in turn
        if idea.thing and (partner is None or idea.relation in ("quest", "discovery", "making", "return")):
            b, b_first = f"the {idea.thing_head}", _first_mention(idea.thing)  # the story turns on a thing
        elif partner is not None:
            b, b_first = partner.name, _first_mention(partner.name)
        elif idea.relation == "task" and _goal_object(idea.goal):
            b = b_first = _goal_object(idea.goal)  # what the task is done to: "the village's hives"
        else:
            b = b_first = "something new"
        winner = idea.winner if idea.winner in (lead.name, b) else lead.name
        at = "on" if self.home.split()[-1] in ON_PLACES else "in" if self.home.split()[-1] in IN_PLACES else "at"
        self.slots = {
            "a": lead.name,
            "A": capitalise(lead.name),
            "b": b,
            "b_first": b_first,
            "home": self.home,
            "at_home": f"{at} {self.home}",
            "away": self.away,
            "threat": idea.threat,
            "threat_look": _threat_look(idea),
            "B": capitalise(b),
            "winner": winner,
            "Winner": capitalise(winner),
            "loser": b if winner == lead.name else lead.name,
            "goal": idea.goal or "see it through",
            "obstacle": idea.obstacle or idea.threat or "time",
            "looming": _looming(idea.obstacle or idea.threat),
        }
        self.relation = RELATIONS[idea.relation]
        self.when = next((t for t in idea.times if t in WHEN), "")
        self.season = next((t for t in idea.times if t in SEASONS), "")

    def fill(self, text: str, sentence: bool = False) -> str:
        """A template with the idea's slots filled (capitalised when it is a sentence or a title)."""
        filled = text.format(**self.slots)
        return capitalise(filled) if sentence else filled

    def storyboard(self) -> Storyboard:
        idea = self.idea
        n_shots = self.total / MEAN_SHOT
        beats = BEATS if n_shots >= 9 else SHORT_BEATS
        share = sum(SHARE[b] for b in beats)
        plan: list[tuple[str, Moment, float, int]] = []  # (beat, what happens, seconds, scene of the beat)
        for beat in beats:
            seconds = self.total * SHARE[beat] / share
            options = moments(beat, self.relation, bool(idea.threat))
            count = max(1, min(len(options), round(seconds / SCENE_SECONDS)))
            plan += [(beat, m, seconds / count, j) for j, m in enumerate(options[:count])]
        plan = self.events(plan)
        lines = self.narration([m for _, m, _, _ in plan])
        scenes: list[Scene] = []
        raw: list[float] = []
        for k, ((beat, moment, seconds, j), line) in enumerate(zip(plan, lines)):
            away = self.elsewhere[(k // 2) % len(self.elsewhere)]  # every place the idea names has its scenes
            location = self.home if beat in ("setup", "resolution") or k % 2 == 0 else away
            new_place = k == 0 or scenes[-1].location != location
            light = LIGHT[beat][j % len(LIGHT[beat])]
            if beat in ("setup", "inciting incident") and self.when:
                light = WHEN[self.when]  # the time of day the idea names
            if self.season:
                light = f"{light}, {self.season}"
            shots = self.shots(
                k, beat, moment, location, light, max(1, round(seconds / (MEAN_SHOT * PACE[beat]))), new_place
            )
            raw += [WEIGHT[kind] * PACE[beat] for kind, _ in shots]
            scenes.append(
                Scene(
                    scene_id=f"sc{k + 1:02d}",
                    title=self.fill(moment.title, True),
                    description=line,
                    purpose=beat,
                    location=location,
                    music=MUSIC[beat][(j + k) % len(MUSIC[beat])],
                    shots=[shot for _, shot in shots],
                )
            )
            scenes[-1].shots[0].narration = line
        self.cast_in(scenes)
        self.things_in(scenes)
        self.unseeing(scenes)
        self.timing(scenes, raw)
        self.lines(scenes)
        for shot in (s for sc in scenes for s in sc.shots):
            shot.description = _description(shot)
        return Storyboard(
            title=self.title(),
            logline=_logline(idea),
            style_guide=_style(idea),
            characters=self.bible(),
            locations=[
                Location(
                    name=p[:80],
                    description=f"{capitalise(p)}: the same layout, landmarks and colours "
                    "every time the film returns here",
                )
                for p in dict.fromkeys(s.location for s in scenes)
            ],
            scenes=scenes,
        )

    def events(self, plan: list[tuple[str, Moment, float, int]]) -> list[tuple[str, Moment, float, int]]:
        """The idea's own clauses become the plot: the first opens the inciting incident, the last is the climax,
        those between are the middle (midpoint, crisis), each the first action and the title of its scene."""
        events = self.idea.events
        if self.idea.relation == "task" and self.idea.goal and len(events) > 1:
            # the goal's own clause is done in the climax ("manages to {goal}"); the idea's other clauses come first
            verb = self.idea.goal.split()[0]
            events = [e for e in events if verb not in {verb_lemma(w) or w.lower() for w in e.split()}] or events
            events = [*events, self.fill("{a} manages to {goal}")]
        elif self.idea.relation == "task" and self.idea.goal:
            events = []  # one clause, the goal: seen to be done in the climax, set up in the inciting incident
        first = next(n for n, p in enumerate(plan) if p[0] == "inciting incident")
        slots: dict[int, str] = {}
        climax = next(n for n, p in enumerate(plan) if p[0] == "climax")
        firsts = {p[0]: n for n, p in reversed(list(enumerate(plan))) if p[3] == 0}
        middle = [firsts[b] for b in ("midpoint", "crisis", "rising action") if b in firsts]
        middle = middle or [n for n, p in enumerate(plan) if first < n < climax]
        if events:
            slots[first] = events[0]
        if len(events) > 1:
            slots[climax] = events[-1]
            for n, event in zip(sorted(middle[: len(events) - 2]), events[1:-1]):
                slots[n] = event
        if self.idea.earlier:  # "after the oven breaks": what happened first opens the film
            slots.setdefault(0, self.idea.earlier)
        crisis = next((n for n, p in enumerate(plan) if p[0] == "crisis"), None)
        if crisis is None:
            crisis = next((n for n in range(first + 1, climax) if n not in slots), None)
        if self.slots["looming"] != _looming(self.idea.threat) and crisis is not None and crisis not in slots:
            slots[crisis] = self.slots["looming"]  # the obstacle, an event: "the ferry about to hit the rocks"
        out = []
        for n, (beat, m, seconds, j) in enumerate(plan):
            if n in slots:
                event = slots[n].replace("{", "(").replace("}", ")")
                m = Moment(capitalise(clip_words(event, 9)), capitalise(event) + ".", (event, *m.actions))
            out.append((beat, m, seconds, j))
        return out

    def cast_in(self, scenes: list[Scene]) -> None:
        """Every character the idea names is seen: one whom fewer than a tenth of the shots show joins the medium
        and wide shots of every other scene from the inciting incident on, and is listed on those shots."""
        shots = [s for sc in scenes[1:] for s in sc.shots] or [s for sc in scenes for s in sc.shots]
        total = sum(len(sc.shots) for sc in scenes)
        for c in self.idea.cast:
            if sum(c.name.lower() in s.prompt.lower() for sc in scenes for s in sc.shots) >= max(1, total // 10):
                continue
            for k, sc in enumerate(scenes[1:] or scenes):
                for s in sc.shots if k % 2 == 0 else []:
                    if s.prompt.startswith(("Medium", "Wide", "Two-shot")) and c.name.lower() not in s.prompt.lower():
                        s.prompt = f"{s.prompt}, {c.name} close by"
            if not any(c.name.lower() in s.prompt.lower() for s in shots):
                shots[len(shots) // 2].prompt += f", {c.name} close by"
        for sc in scenes:
            for s in sc.shots:
                s.characters = [c.name[:80] for c in self.idea.cast if c.name.lower() in s.prompt.lower()]

    def unseeing(self, scenes: list[Scene]) -> None:
        """A character the idea says is blind is never shown looking: in what follows their name up to the next
        comma, the shot grammar's words of seeing become words of hearing and touch ("Vera waiting and listening",
        "from behind Vera turning toward the vault")."""
        for c in self.idea.cast:
            if "blind" not in c.traits:
                continue
            name = re.escape(c.name)
            for s in (s for sc in scenes for s in sc.shots):
                s.prompt = re.sub(
                    rf"(\b{name}\b)([^,]*)",
                    lambda m: m.group(1) + SEEING.sub(lambda w: UNSEEING[w.group(0).lower()], m.group(2)),
                    s.prompt,
                    flags=re.I,
                )

    def things_in(self, scenes: list[Scene]) -> None:
        """Every thing the idea names is seen: one no prompt shows yet joins a wide, medium or insert shot of a
        scene after the setup (the goal's scenes first: the climax, then the middle), "the lamp in view"."""
        order = [sc for sc in scenes if sc.purpose == "climax"] + [
            sc for sc in scenes[1:] if sc.purpose not in ("climax", "resolution")
        ]
        order = order or scenes
        used: set[int] = set()  # shots already given a thing (by identity: ids are given in timing())
        for n, thing in enumerate(self.idea.objects):
            head = thing.split()[-1].lower().removesuffix("'s")
            if any(re.search(rf"\b{re.escape(head)}", s.prompt, re.I) for sc in scenes for s in sc.shots):
                continue
            shots = [
                s
                for sc in order[n % len(order) :] + order[: n % len(order)]
                for s in sc.shots
                if s.prompt.startswith(("Wide", "Medium", "Insert")) and id(s) not in used
            ]
            shots = shots or [s for sc in order for s in sc.shots]
            if shots:
                used.add(id(shots[0]))
                shots[0].prompt = f"{shots[0].prompt}, the {thing} in view"[:2000]

    def shots(
        self, k: int, beat: str, moment: Moment, location: str, light: str, n: int, new_place: bool
    ) -> list[tuple[str, Shot]]:
        """n shots for one scene, following the shot grammar; the first establishes a new place."""
        other = self.partner is not None and beat != "setup"  # the second character arrives with the story
        grammar = [
            "establishing" if new_place else "wide",
            "medium",
            "close-up",
            "reaction",
            "wide",
            "insert",
            "two-shot" if other else "over-the-shoulder",
            "medium",
            "close-up",
            "over-the-shoulder",
        ]
        actions = [self.fill(a) for a in moment.actions] + [
            self.fill(a.replace("{place}", location)) for a in EXTRA[beat]
        ]
        out, seen = [], {kind: 0 for kind in WEIGHT}
        for i in range(n):
            kind = "wide" if n == 1 else grammar[i] if i < len(grammar) else grammar[1 + (i - 1) % (len(grammar) - 1)]
            order = seen["medium"] + seen["wide"] - (not new_place and n > 1 and i > 0)
            prompt = self.prompt(kind, beat, location, light, actions[max(0, order) % len(actions)], seen[kind], other)
            seen[kind] += 1
            moves = CAMERAS[kind]
            camera = (
                "handheld"
                if beat in ("crisis", "climax") and kind == "medium"
                else moves[stable_hash(self.idea.text, k, i) % len(moves)]
            )
            names = [c.name for c in self.idea.cast if c.name.lower() in prompt.lower()]
            sounds = ", ".join(x for x in (self.ambience(location, beat), FOLEY[kind]) if x)
            out.append(
                (
                    kind,
                    Shot(
                        shot_id="tmp",
                        prompt=prompt,
                        camera=camera,
                        characters=names,
                        sounds=sounds,
                        seed=stable_hash(self.idea.text, k, i) % 2**31,
                    ),
                )
            )
        return out

    def prompt(self, kind: str, beat: str, location: str, light: str, action: str, nth: int, other: bool) -> str:
        """One shot's prompt: its type, then what is seen, where, in what light (`nth`: how many of this kind
        the scene already has, so a second close-up looks at someone else)."""
        lead, b = self.slots["a"], self.slots["b"]
        if self.partner is not None and self.partner.name != b and other and kind in ("medium", "wide"):
            action += f", {self.partner.name} close by"  # a companion stays in the story
        if self.idea.threat and beat in ("crisis", "climax") and self.slots["threat_look"] not in action:
            light = f"{self.slots['threat_look']}, {light}"
        toward = b if other or self.partner is None and beat != "setup" else self.away
        doing = " ".join(action.split()[:12])  # what this moment is about, so no two scenes' close shots read alike
        moment = _ing(doing, lead)  # "the hare napping halfway", or the action itself when it is a picture already
        objects = [f"the {o}" for o in self.idea.objects]
        details = (
            [f"{lead}'s hands as {doing}, {light}"]
            + [f"{o} as {doing}, one detail filling the frame" for o in objects[nth % 2 :: 2] if beat != "setup"]
            + (
                [f"the {self.idea.thing_head}, one detail filling the frame"]
                if self.idea.thing_head and beat != "setup"
                else []
            )
            + ([f"{b} as {doing}, one detail filling the frame"] if other else [])
            + [f"something {lead} carries as {doing}, {light}"]
        )
        face = moment if moment != doing or not _clause(doing) else f"{lead}'s face as {doing}"
        faces = [f"{face}, {FACE[beat]}, {light}"] + ([f"{b}, watching {lead} as {doing}, {light}"] if other else [])
        seen = {
            "establishing": f"of {location} in {light}" + (f", {lead} small in the frame" if nth else ""),
            "wide": f": {action}, {location}, {light}",
            "medium": f": {action}, {light}",
            "two-shot": f"of {lead} and {b} as {doing}, {light}",
            "over-the-shoulder": f"from behind {lead} looking toward {toward} as {doing}"
            + (f", {light}" if nth else ""),
            "close-up": f"of {faces[nth % len(faces)]}",
            "reaction": f"of {b} reacting as {doing}, {light}"
            if _clause(doing)
            else f"of {b} reacting to {doing}, {light}"
            if other and nth % 2 == 0
            else f"of {lead} as {doing}, {FACE[beat]}, {light}"
            if _clause(doing)
            else f"of {lead} looking at {doing}, {FACE[beat]}, {light}",
            "insert": f"of {details[nth % len(details)]}",
        }[kind]
        return f"{SHOT_TYPES[kind][0]}{' ' if seen[0] != ':' else ''}{seen}"

    def narration(self, plan: list[Moment]) -> list[str]:
        """One line per scene: the idea's own sentences when it tells a story, else the beat's line."""
        said = [s for s in self.idea.sentences if len(s.split()) >= 3]
        if len(said) >= 3:
            return [clip_words(said[round(k * (len(said) - 1) / max(1, len(plan) - 1))], 16) for k in range(len(plan))]
        return [self.fill(m.narration, True) for m in plan]

    def timing(self, scenes: list[Scene], raw: list[float]) -> None:
        """Durations proportional to shot type and pace that add up to the target; ids in film order; prompts made
        distinct; a narration line too long to say in its shot is shortened or dropped."""
        shots = [s for sc in scenes for s in sc.shots]
        scale = self.total / sum(raw)
        used: list[tuple[str, frozenset[str]]] = []
        for n, (shot, weight) in enumerate(zip(shots, raw)):
            shot.shot_id = f"s{n + 1:03d}"
            shot.duration = round(weight * scale, 2)
            shot.prompt = _distinct(shot.prompt, used, n)
            if shot.narration and len(shot.narration.split()) > shot.duration * READ_WPS:
                shot.narration = _shorter(shot.narration, shot.duration * READ_WPS)
        shots[-1].duration = round(self.total - sum(s.duration for s in shots[:-1]), 2)

    def ambience(self, location: str, beat: str) -> str:
        """What the place sounds like (the threat's sound in the crisis and the climax), in words."""
        threat = self.idea.threat if beat in ("crisis", "climax") else ""
        if threat and len(threat.split()) > 2:  # the idea's own danger ("the ice storm"), not a stock storm
            return f"wind howling, {threat.removeprefix('the ')} raging"
        words = f"{threat} {location}".lower()
        return next((sound for key, sound in AMBIENCE if key in words), "room tone, a faint breeze")

    def lines(self, scenes: list[Scene]) -> None:
        """The scene's lines (English, as the offline planner reads English ideas): the lead speaks, the other
        person answers from the inciting incident on; each on its own shot after the narrated first one (one that
        shows the speaker if there is one, else they speak off screen), the full line where it can be said and read
        within the shot (READ_WPS, slower than WORDS_PER_SECOND: it is subtitled too), else its short form, else
        none. Only people speak, and a being the idea says talks ("a talking seagull")."""
        talkers = [c.name[:80] for c in self.idea.cast if c.kind == "person" or "talking" in c.traits][:2]
        signers = {c.name[:80] for c in self.idea.cast if c.signs}
        din = self.idea.threat_head or "wind"
        for scene in scenes:
            said = LINES[scene.purpose][: 1 if scene.purpose == "setup" else 2]
            free = [s for s in scene.shots[1:] if not s.narration]
            for who, ((full, short), delivery) in zip(talkers, said):
                open_ = [s for s in free if not s.dialogue]
                shot = next((s for s in open_ if who in s.characters), open_[0] if open_ else None)
                fits = [t for t in (full, short) if shot and len(t.split()) <= shot.duration * READ_WPS]
                if not fits or shot is None:
                    continue
                how = delivery.format(din=din)
                if who in signers:  # deaf or mute: they sign, the line is captioned and never voiced
                    how = SIGNED + (f", {how}" if how else "")
                    if who in shot.characters and "sign" not in shot.prompt:
                        shot.prompt = f"{shot.prompt}, {who.removeprefix('the ')} signing".strip()[:2000]
                shot.dialogue = [Line(character=who, line=fits[0], delivery=how)]

    def bible(self) -> list[Character]:
        """One description per character, fitting what they are; no two characters share a look."""
        out: list[Character] = []
        used: set[tuple[str, str]] = set()
        for c in self.idea.cast:
            out.append(Character(name=c.name[:80], description=_look(c, self.idea.text, used)[:1000]))
        return out

    def title(self) -> str:
        names = [c.name for c in self.idea.cast[:2]]
        if len(names) == 1 and self.idea.thing_head:
            names.append(f"the {self.idea.thing_head}")
        small = {"and", "the", "of", "a", "an", "in", "on"}
        text = " and ".join(names)
        return " ".join(w if (w in small and i) else capitalise(w) for i, w in enumerate(text.split()))[:200]


def _distinct(prompt: str, used: list[tuple[str, frozenset[str]]], n: int) -> str:
    """The prompt, with one or two camera angles added when it repeats or nearly repeats an earlier one."""
    variants = (
        [prompt]
        + [f"{prompt}, {ANGLES[(n + t) % len(ANGLES)]}" for t in range(len(ANGLES))]
        + [f"{prompt}, {x}, {y}" for x in ANGLES for y in ANGLES if x != y]
    )
    taken = {p for p, _ in used}
    choice = next(
        (
            v
            for v in variants
            if v not in taken
            and all(len(content_words(v) & w) / max(1, len(content_words(v) | w)) < 0.8 for _, w in used)
        ),
        None,
    )
    choice = choice or next(v for v in variants if v not in taken)
    used.append((choice, content_words(choice)))
    return choice


def _shorter(line: str, words: float) -> str:
    """The line without its opening phrase ("One day, ...") or its last clause, if that fits in `words`; else ""."""
    head, sep, rest = line.partition(", ")
    options = [capitalise(rest)] if sep and len(head.split()) <= 3 else []
    options += [line.rsplit(", ", 1)[0].rstrip(".") + "."] if ", " in line else []
    return next((o for o in options if len(o.split()) <= words and len(o.split()) >= 3), "")


DESCRIPTION_WORDS = 12  # the most words of a shot's description (about 5 s said)
_SHOT_LEAD = re.compile(
    r"^\s*(?:" + "|".join(re.escape(label) for label, _ in SHOT_TYPES.values()) + r")\s*(?:of\b|:|,)?\s*", re.I
)
_BOUNDARY = frozenset("in on at with and while as beyond under over near from into through behind across".split())
_DANGLING = frozenset("a an the of in on at to with and by from into over under its his her their".split())


def _description(shot: Shot) -> str:
    """What the shot shows, for the audio description: its prompt without the shot type ("Medium shot: ..."), as
    many of its clauses as fit DESCRIPTION_WORDS and a gap between the shot's lines (at WORDS_PER_SECOND, as
    `Storyboard.description_warnings` estimates); fewer words where the lines leave less room, "" where they
    leave room for fewer than three. A clause too long is cut before one of its phrases ("in soft morning light"),
    never inside one ("The sea in soft morning."): "" where none starts early enough."""
    clauses = [c.strip() for c in _SHOT_LEAD.sub("", shot.prompt).split(",") if c.strip()]
    if not clauses:
        return ""
    for limit in range(DESCRIPTION_WORDS, 2, -1):
        text = clauses[0]
        for c in clauses[1:]:
            if len(f"{text}, {c}".split()) > limit:
                break
            text = f"{text}, {c}"
        words = text.split()
        if len(words) > limit:  # cut before a phrase ("in storm winds and driving rain"), never inside one
            # a phrase starts at a boundary word with words after it ("pushing through" ends with one: no phrase)
            cuts = [
                i
                for i, w in enumerate(words[: limit + 1])
                if i >= 3 and w.lower() in _BOUNDARY and i + 1 < len(words) and not w.endswith(",")
            ]
            if not cuts:  # no phrase starts early enough: fewer words will not find one either
                return ""
            words = words[: cuts[-1]]
        while words and words[-1].lower() in _DANGLING:
            words.pop()
        if len(words) < 3:
            return ""
        said = len(words) / WORDS_PER_SECOND
        if fit_gap(0.0, shot.duration, shot.speech(), said)[0] is not None:
            return capitalise(" ".join(words).rstrip(".;:")) + "."
    return ""


def _first_mention(name: str) -> str:
    """'the lost whale' -> 'a lost whale' (names and plurals stay as they are)."""
    if not name.startswith("the ") or name.endswith("s") or name.split()[1] in ("two", "three"):
        return name
    rest = name[4:]
    return ("an " if rest[0] in "aeiou" else "a ") + rest


def _goal_object(goal: str) -> str:
    """'save her village's hives from a strange frost' -> "the village's hives" ('' when the goal names none)."""
    words = []
    for w in goal.split()[1:]:
        if w.lower() in ("from", "in", "on", "with", "to", "across", "before", "at", "for", "through", "over"):
            break
        words.append(w)
    determiners = ("a", "an", "the", "her", "his", "their", "its", "my", "our", "one")
    if len(words) > 1 and words[0].lower() not in determiners and words[1].lower() in determiners:
        words = words[1:]  # "win back the crown", "give up the farm": the verb's particle, not the object
    while words and words[0].lower() in determiners:
        words = words[1:]
    return "the " + " ".join(words) if words else ""


def _clause(text: str) -> bool:
    """Whether an action is a clause with its own verb ("the hare naps halfway") rather than a picture named by a
    noun phrase ("an empty chair beside the hare", "the hare's hands at a familiar task")."""
    words = text.split()
    return any(verbish(w.strip(",")) and not words[n - 1].endswith("'s") for n, w in enumerate(words) if n)


def _ing(action: str, lead: str) -> str:
    """'the hare naps halfway' -> 'the hare napping halfway' (a lead's action as a picture); anything else as it is."""
    if not action.lower().startswith(lead.lower() + " "):
        return action
    rest = action[len(lead) + 1 :].split()
    lemma = verb_lemma(rest[0]) if rest else ""
    if not lemma or lemma == rest[0].lower() or not rest[0].endswith("s") or not _clause(action):
        return action
    from lemminflect import getInflection

    def gerund(word: str) -> str:
        base = verb_lemma(word)
        form = getInflection(base, "VBG") if base and base != word.lower() and word.endswith("s") else None
        return form[0] if form else word

    rest = [gerund(w) if n == 0 or rest[n - 1] == "and" else w for n, w in enumerate(rest)]  # "waits and watches"
    return " ".join([lead, *rest])


def _looming(obstacle: str) -> str:
    """What stands in the way as a picture of it coming: a clause with its own subject and verb ("the ferry hits the
    rocks in a storm") -> "the ferry about to hit the rocks in a storm"; a noun phrase -> "the ice storm drawing
    near"; a pronoun's clause, or nothing -> "time running out"."""
    words = obstacle.split()
    if not words or words[0].lower() in ("she", "he", "they", "it", "we", "i", "you"):
        return "time running out"
    after_noun = [n for n in range(1, len(words)) if words[n - 1].lower() not in ("the", "a", "an", "his", "her")]
    at = next((n for n in after_noun if verb_lemma(words[n]) and verbish(words[n])), None)  # "the tide turns"
    if at is None:  # "the guards change shift": a verb with words after it; "the ice storm" ends in its noun
        at = next((n for n in after_noun if verb_lemma(words[n]) and n < len(words) - 1), None)
    if at is None:
        return f"{obstacle} drawing near"
    return " ".join([*words[:at], "about to", verb_lemma(words[at]), *words[at + 1 :]])


def _threat_look(idea: Idea) -> str:
    """How the idea's danger looks: its own words when it qualifies it ("the ice storm" is not rain), else the
    stock look of its kind ("storm winds and driving rain")."""
    if len(idea.threat.removeprefix("the ").split()) > 1:
        return f"{idea.threat} {'raging' if idea.threat_head in THREAT_LOOK else 'closing in'}"
    return THREAT_LOOK.get(idea.threat_head, idea.threat)


def _look(c: Cast, text: str, used: set[tuple[str, str]] | None = None) -> str:
    """How a character looks in every shot: what the idea says, then one consistent look that fits what they are
    (a machine gets no hair and no coat), different from the looks `used` by the others."""
    used = set() if used is None else used
    words = set(c.name.lower().split()) | set(c.detail.lower().split())
    kind = c.kind if c.kind in SAME else "creature"
    age = kind
    if kind == "person":  # the idea's describing words, read by the embedder (kinds.trait_of): a child, an old one
        age = "young" if "young" in c.traits else "old" if "old" in c.traits else "person"
    noun = lemma((c.detail or c.name).split()[-1].lower())  # what they are: "troll", "heron"
    if kind == "creature" and wordnet.of_myth(noun):
        age = "myth"
    options = LOOKS[age]
    if kind == "animal":  # a bird has feathers and a beak, never a muzzle (WordNet: what the animal's noun is)
        options = ANIMAL_LOOKS.get(wordnet.is_a(noun, BODY_PLANS), options)
    start = stable_hash(text, c.name) % len(options)
    face, body = next(
        (
            options[(start + n) % len(options)]
            for n in range(len(options))
            if options[(start + n) % len(options)] not in used
        ),
        options[start],
    )
    used.add((face, body))
    made = next((w for w in MATERIALS if w in words), "")
    if made and kind in ("machine", "creature"):  # "a paper dragon" is made of paper, whatever the stock look says
        body = f"made of {'wood' if made == 'wooden' else made} throughout"
    worn = c.detail.startswith(("with ", "in ", "wearing "))  # the idea already says what they wear
    who = f"{c.name}, {c.detail}" if c.detail and not worn else c.name.removeprefix("the ")
    if "blind" in c.traits:
        body = f"{body}, {'a white cane, ' if kind == 'person' else ''}finding the way by touch and sound"
    return capitalise(who) + (f" {c.detail}: {face}" if worn else f": {face}, {body}") + f"; {SAME[kind]}"


def _logline(idea: Idea) -> str:
    first = idea.sentences[0] if idea.sentences else idea.text
    return first if len(first) <= 300 else clip_words(first, 45)[:300]


def _style(idea: Idea) -> str:
    look = f"{', '.join(idea.styles)} look" if idea.styles else "Painterly animated look"
    return capitalise(f"{look}, consistent colour grading across scenes, soft film grain, 16:9 framing")
