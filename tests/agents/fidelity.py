"""A held-out set of ideas and notes, and named checks of how faithfully the offline planner and refiner follow them.

Written before the planner and refiner were changed and kept aside while they were developed (no rule was tuned to
these sentences). `idea_checks` and `note_checks` return (check name, passed, what was found) so a test can assert
each and a report can count them: `python -m tests.agents.fidelity` prints the figures for the code on the path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from storage.schema import Note, Scope, SetShot, SetStory, Storyboard

HUMAN_LOOK = re.compile(r"\b(hair|coat|jumper|cardigan|anorak|trainers|scarf|jacket|spectacles|braid|raincoat)\b")


WORN = ("clothes a person wears", "a person's hair or hairstyle")
NOT_WORN = (
    "an animal's fur, feathers or markings",
    "a body part, eyes or limbs",
    "a material, metal or wood",
    "a colour",
    "a feeling or a manner",
)


def worn(description: str) -> list[str]:
    """The nouns in a description that the embedder reads as a person's clothes or hair (nearer WORN than NOT_WORN,
    cosine >= 0.45): a general check beside HUMAN_LOOK's words, for looks no list names."""
    from lemminflect import getAllLemmas

    words = sorted({w for w in re.findall(r"[a-z]+", description.lower()) if len(w) > 3})
    words = [w for w in words if "NOUN" in getAllLemmas(w)]
    return [w for w in words if _worn(w)]


@cache
def _worn(word: str) -> bool:
    from agents.diversity import embed

    near, far = _poles()
    vector = embed([word])[0]
    a, b = float((near @ vector).max()), float((far @ vector).max())
    return a > b and a >= 0.45


@cache
def _poles():
    from agents.diversity import embed

    return embed(list(WORN)), embed(list(NOT_WORN))


@dataclass(frozen=True)
class Who:
    word: str  # what names them in the storyboard ("Nadia", "robot")
    kind: str  # person, animal, creature, machine
    signs: bool = False  # deaf or mute in the idea: every line they have is signed and captioned, never voiced
    blind: bool = False  # blind in the idea: never shown looking, watching or catching sight of anything


@dataclass(frozen=True)
class Case:
    name: str
    idea: str
    cast: tuple[Who, ...]
    words: tuple[str, ...]  # the idea's own places, objects and conditions that must be in the pictures
    goal: str  # a regex the story's text must contain somewhere (its goal, in any form)
    never: tuple[str, ...] = ()  # regexes that contradict the idea: must appear nowhere
    where: tuple[str, ...] = ()  # regexes of the idea's places: each is some scene's location
    not_where: tuple[str, ...] = ()  # regexes no scene's location may match (a time, an event, a pronoun)


HELD_OUT = (
    Case(
        "clockmaker",
        "A retired clockmaker and her clumsy brass robot apprentice must repair the frozen clock tower before an "
        "ice storm.",
        (Who("clockmaker", "person"), Who("robot", "machine")),
        ("clock tower", "ice"),
        r"\brepair",
        (r"\brain\b",),
    ),
    Case(
        "hare_and_tortoise",
        "A boastful hare challenges a patient tortoise to a race across the meadow; the hare naps halfway and the "
        "tortoise wins.",
        (Who("hare", "animal"), Who("tortoise", "animal")),
        ("race", "meadow"),
        r"\brac(e|es|ing)\b",
        (r"\b(sets? out|set off) to find\b", r"\bsearch(es)? (everywhere|.{0,40} for)\b"),
    ),
    Case(
        "beekeeper",
        "Nadia, a young beekeeper, must save her village's hives from a strange frost before the spring festival.",
        (Who("Nadia", "person"),),
        ("hive", "frost", "festival"),
        r"\bsav(e|es|ing)\b",
        (r"\brain\b",),
    ),
    Case(
        "lighthouse",
        "An old lighthouse keeper named Tomas befriends a lost baby whale during the winter storms.",
        (Who("Tomas", "person"), Who("whale", "animal")),
        ("lighthouse", "whale", "storm"),
        r"\bfriend",
        (),
    ),
    Case(
        "paper_dragon",
        "A shy girl called Priya and her paper dragon Ember race across the rooftops of Mumbai to deliver a letter "
        "before midnight.",
        (Who("Priya", "person"), Who("Ember", "creature")),
        ("rooftop", "letter", "midnight"),
        r"\bdeliver",
        (),
    ),
    Case(
        "rival_chefs",
        "Two rival chefs, Marco and Lucia, are trapped in a snowbound mountain inn and must cook a feast with only "
        "potatoes.",
        (Who("Marco", "person"), Who("Lucia", "person")),
        ("inn", "snow", "potato"),
        r"\bcook",
        (),
    ),
    Case(
        "octopus",
        "A deep-sea diver discovers a glowing octopus guarding a sunken piano in a shipwreck.",
        (Who("diver", "person"), Who("octopus", "animal")),
        ("shipwreck", "piano"),
        r"\bdiscover",
        (),
    ),
    Case(
        "mars_robot",
        "A small robot named Bolt, left behind on Mars, tries to grow a single flower in the red dust.",
        (Who("Bolt", "machine"),),
        ("Mars", "flower", "dust"),
        r"\bgrow",
        (r"\brain\b",),
    ),
    Case(
        "frozen_lake",
        "A grandmother teaches her grandson to fish on a frozen lake while a hungry polar bear watches from the shore.",
        (Who("grandmother", "person"), Who("grandson", "person"), Who("bear", "animal")),
        ("lake", "fish", "ice|frozen"),
        r"\bteach|\bfish",
        (),
    ),
)
# Written after the planner was changed and run once, unseen, as a check that the rules generalise (reported by
# `python -m tests.agents.fidelity`; the tests assert HELD_OUT).
FRESH = (
    Case(
        "ferry_pilot",
        "A nervous ferry pilot named Oren must steer the last boat across a flooded river before the dam breaks.",
        (Who("Oren", "person"),),
        ("ferry|boat", "river"),
        r"\bsteer",
        (r"\bsnow\b",),
    ),
    Case(
        "owl_mouse",
        "A sleepy owl and a brave field mouse guard the old windmill from a gang of hungry rats.",
        (Who("owl", "animal"), Who("mouse", "animal")),
        ("windmill", "rat"),
        r"\bguard",
        (r"\b(sets? out|set off) to find\b",),
    ),
    Case(
        "tin_soldier",
        "A tin soldier falls in love with a paper ballerina, but a jealous goblin throws him into the fire.",
        (Who("soldier", "person"), Who("ballerina", "person"), Who("goblin", "creature")),
        ("fire",),
        r"\blove",
        (),
    ),
)
# Written for issue 35 after the kinds of beings, places and things moved from word lists to the embedder
# (`agents/offline/kinds.py`): fables, fairy tales and folk plots retold in a line each, with animals, a machine,
# objects that come alive, a deaf lead, places and key objects. No rule was tuned to them.
FABLES = (
    Case(
        "crow_pitcher",
        "A thirsty crow drops pebbles into a tall pitcher until the water rises high enough to drink.",
        (Who("crow", "animal"),),
        ("pitcher", "pebble"),
        r"\bdrop|\bdrink",
    ),
    Case(
        "fox_cheese",
        "A hungry fox flatters a vain raven into dropping a wedge of cheese from the branch of an oak tree.",
        (Who("fox", "animal"), Who("raven", "animal")),
        ("cheese", "oak|tree"),
        r"\bflatter",
    ),
    Case(
        "ant_grasshopper",
        "A lazy grasshopper fiddles all summer while a busy ant stores grain in its nest for the winter.",
        (Who("grasshopper", "animal"), Who("ant", "animal")),
        ("grain", "nest"),
        r"\bfiddle|\bstor",
    ),
    Case(
        "town_musicians",
        "An old donkey, a tired hound, a cat and a rooster frighten a gang of robbers out of a cottage in the forest.",
        (Who("donkey", "animal"), Who("hound", "animal"), Who("cat", "animal"), Who("rooster", "animal")),
        ("cottage", "forest"),
        r"\bfrighten",
    ),
    Case(
        "locomotive",
        "A rusty steam locomotive must pull a snowbound train over the mountain pass before the food runs out.",
        (Who("locomotive", "machine"),),
        ("train", "mountain"),
        r"\bpull",
    ),
    Case(
        "kettle",
        "A talking kettle and a cracked teacup must escape the junk shop before the dustmen come.",
        (Who("kettle", "creature"), Who("teacup", "creature")),
        ("shop",),
        r"\bescape",
    ),
    Case(
        "deaf_shepherd",
        "Mira, a deaf shepherd girl, and her old sheepdog must lead the flock down from the hills before the blizzard.",
        (Who("Mira", "person"), Who("sheepdog", "animal")),
        ("flock", "hill", "blizzard|snow"),
        r"\blead",
    ),
    Case(
        "shoemaker_elves",
        "A poor shoemaker leaves leather on his workbench at night, and two tiny elves sew the shoes before dawn.",
        (Who("shoemaker", "person"), Who("elves|elf", "creature")),
        ("leather", "workbench|bench", "shoe"),
        r"\bsew|\bleave",
    ),
    Case(
        "vasilisa",
        "A clever girl named Vasilisa must fetch fire from the witch's hut in the dark forest with the help of her "
        "wooden doll.",
        (Who("Vasilisa", "person"), Who("doll", "creature")),
        ("fire", "hut", "forest"),
        r"\bfetch",
    ),
)
# Written for issue 35's second round, from memory of public-domain plots (Aesop, Grimm, English and Russian folk
# tales) and a few plots of no one's (a heist, a space station, a kitchen, a mine), before the reader was changed for
# them: places named only as a modifier of a character ("a mine engineer"), goals with a deadline or an obstacle
# ("before the tide turns", "after the oven breaks", "until dawn": never places), key objects, and traits that shape
# the filming (deaf or mute: signed; blind: never shown looking).
FOLK = (
    Case(
        "lion_mouse",
        "A tiny mouse frees a mighty lion from a hunter's net, long after the lion spared her life.",
        (Who("mouse", "animal"), Who("lion", "animal")),
        ("net",),
        r"\bfree",
    ),
    Case(
        "hansel_gretel",
        "Hansel and Gretel, lost in the forest, must escape the witch's gingerbread house before she bakes them in "
        "her oven.",
        (Who("Hansel", "person"), Who("Gretel", "person"), Who("witch", "person")),
        ("gingerbread house", "oven"),
        r"\bescap",
        (r"\bsearch(es)? .{0,40} for\b",),
        where=("gingerbread house|forest",),
    ),
    Case(
        "boy_wolf",
        "A bored shepherd boy cries wolf to fool the villagers until a real wolf comes for the sheep at dusk.",
        (Who("boy", "person"), Who("wolf", "animal")),
        ("sheep",),
        r"\bcr(y|ies)\b",
        (r"\bsearch(es)? .{0,40} for\b",),
        not_where=("dusk",),
    ),
    Case(
        "pied_piper",
        "A mute piper leads the rats of Hamelin into the river with his flute, but the mayor refuses to pay him.",
        (Who("piper", "person", signs=True), Who("mayor", "person"), Who("rat", "animal")),
        ("river", "flute"),
        r"\blead",
        (r"\bsearch(es)? .{0,40} for\b",),
    ),
    Case(
        "billy_goats",
        "Three billy goats must cross the old bridge to the green hillside, but a hungry troll lives under it.",
        (Who("goat", "animal"), Who("troll", "creature")),
        ("bridge", "hillside"),
        r"\bcross",
        where=("bridge|hillside",),
        not_where=(r"\bit\b",),
    ),
    Case(
        "red_riding_hood",
        "A little girl in a red hood must carry a basket of bread through the woods to her sick grandmother, but a "
        "cunning wolf reaches the cottage first.",
        (Who("girl", "person"), Who("grandmother", "person"), Who("wolf", "animal")),
        ("basket", "woods", "cottage"),
        r"\bcarr(y|ies)",
        where=("woods|cottage",),
    ),
    Case(
        "heist",
        "A blind safecracker named Vera and her nervous nephew must steal a diamond from the museum vault before the "
        "guards change shift at midnight.",
        (Who("Vera", "person", blind=True), Who("nephew", "person")),
        ("diamond", "vault", "guard"),
        r"\bsteal",
        where=("museum|vault",),
        not_where=("midnight", "shift"),
    ),
    Case(
        "mine_engineer",
        "Kofi, a deaf mine engineer, and his old pit pony must pump the flooded tunnel dry before the miners' air "
        "runs out.",
        (Who("Kofi", "person", signs=True), Who("pony", "animal")),
        ("tunnel", "pump|water|flood"),
        r"\bpump",
        (r"\bsearch(es)? .{0,40} for\b",),
        where=("mine|tunnel",),
        not_where=("air",),
    ),
    Case(
        "space_station",
        "Commander Osei, an old station engineer, must patch the cracked hull before the oxygen runs out, while the "
        "ship's robot argues with him.",
        (Who("Osei", "person"), Who("robot", "machine")),
        ("hull", "oxygen"),
        r"\bpatch",
        where=("station",),
        not_where=("oxygen",),
    ),
    Case(
        "wedding_kitchen",
        "A young chef called Lena must cook a wedding feast in a tiny restaurant kitchen after the oven breaks, "
        "working until dawn.",
        (Who("Lena", "person"),),
        ("feast", "oven"),
        r"\bcook",
        where=("kitchen",),
        not_where=("oven|break|dawn",),
    ),
)
MINUTES = (1, 3, 10)


def _text(board: Storyboard) -> str:
    parts = [board.title, board.logline]
    for sc in board.scenes:
        parts += [sc.title, sc.description, sc.location]
        parts += [f"{s.prompt} {s.narration} {s.spoken()}" for s in sc.shots]
    return " ".join(parts)


def _present(who: Who, text: str) -> bool:
    return re.search(rf"\b({who.word})", text, re.I) is not None


def idea_checks(case: Case, board: Storyboard) -> list[tuple[str, bool, str]]:
    shots = board.shots()
    story = _text(board)
    out: list[tuple[str, bool, str]] = []
    for who in case.cast:  # every named character is seen in at least one shot
        seen = sum(_present(who, f"{s.prompt} {' '.join(s.characters)}") for s in shots)
        out.append((f"character {who.word} in a shot", seen > 0, f"{seen}/{len(shots)} shots"))
    prompts = " ".join(s.prompt for s in shots)
    for w in case.words:  # the idea's own places and conditions are pictured
        n = len(re.findall(rf"\b({w})", prompts, re.I))
        out.append((f"word {w!r} in the prompts", n > 0, f"{n} times"))
    locations = [sc.location for sc in board.scenes]
    for w in case.where:  # the idea's places are where scenes happen
        n = sum(re.search(rf"\b({w})", loc, re.I) is not None for loc in locations)
        out.append((f"place {w!r} is a scene's location", n > 0, "; ".join(dict.fromkeys(locations))))
    for w in case.not_where:
        bad = [loc for loc in dict.fromkeys(locations) if re.search(rf"\b({w})", loc, re.I)]
        out.append((f"no location matches {w!r}", not bad, "; ".join(bad)))
    for who in case.cast:
        theirs = [ln for s in shots for ln in s.dialogue if _present(who, ln.character)]
        if who.signs:  # they sign: their lines are captioned, never voiced
            voiced = [ln.line for ln in theirs if ln.voiced()]
            out.append((f"{who.word} signs, never voiced", not voiced, f"{len(voiced)}/{len(theirs)} voiced"))
        if who.blind:  # they do not see: no shot shows them looking at anything
            seeing = re.compile(rf"\b({who.word})\b[^,]{{0,30}}\b(look|watch|glimpse|see|sight|stare|gaz)", re.I)
            seen = [s.shot_id for s in shots if seeing.search(s.prompt)]
            out.append((f"{who.word} is never shown seeing", not seen, ", ".join(seen)))
    out.append(("goal in the story", re.search(case.goal, story, re.I) is not None, case.goal))
    bad = [m.group(0) for p in case.never for m in [re.search(p, story, re.I)] if m]
    out.append(("no contradiction of the idea", not bad, ", ".join(bad)))
    for who in case.cast:
        c = next((c for c in board.characters if _present(who, f"{c.name} {c.description}")), None)
        wrong = (
            c is not None
            and who.kind != "person"
            and bool(
                HUMAN_LOOK.search(c.description.lower()) or worn(c.description.split(";")[0])
            )  # the look, not the "same ... wear in every shot" clause
        )
        out.append((f"description of {who.word} fits a {who.kind}", c is not None and not wrong, c and c.description))
    looks = [re.sub(re.escape(c.name), "", c.description, flags=re.I).lower() for c in board.characters]
    looks = [set(re.findall(r"[a-z]+", x.split(";")[0])) for x in looks]
    alike = [
        (a, b)
        for i, a in enumerate(board.characters)
        for j, b in enumerate(board.characters)
        if i < j and len(looks[i] & looks[j]) / max(1, len(looks[i] | looks[j])) > 0.6
    ]
    out.append(("descriptions differ", not alike, ", ".join(f"{a.name}~{b.name}" for a, b in alike)))
    exact = len(shots) - len({s.prompt for s in shots})
    heads: dict[str, int] = {}
    for s in shots:
        head = s.prompt.split(",")[0].lower()
        heads[head] = heads.get(head, 0) + 1
    worst = max(heads.items(), key=lambda kv: kv[1])
    ok = exact == 0 and worst[1] <= max(2, len(shots) // 20)
    out.append(("no repeated prompt", ok, f"{exact} identical; {worst[1]}x {worst[0]!r}"))
    return out


@dataclass
class NoteCase:
    name: str
    idea: str  # one of HELD_OUT's ideas, planned at 3 minutes
    text: str
    target: str  # "scene:N" (1-based), "shot:N" (1-based), "film"
    expect: list[str] = field(default_factory=list)  # regexes the edited shots' prompts must contain
    gone: list[str] = field(default_factory=list)  # regexes the edited shots' prompts must no longer contain
    plant: str = ""  # a clause put into the target shot's prompt first (the situation the note answers)
    neg_never: list[str] = field(default_factory=list)  # words no negative prompt may gain
    neg_expect: list[str] = field(default_factory=list)  # words the target shots' negative prompt must gain
    cannot: bool = False  # the note asks what the refiner cannot do: it must say so in not_changed


NOTES = (
    NoteCase(
        "scene note stays in its scene",
        HELD_OUT[0].idea,
        "make the storm scarier",
        "scene:5",
        expect=[r"menac|ominous|frighten|scar"],
    ),
    NoteCase(
        "replace on a shot",
        HELD_OUT[0].idea,
        "Not rain: an ice storm, icicles hanging from the clock face",
        "shot:4",
        expect=[r"ice storm", r"icicle"],
        gone=[r"\brain\b"],
        plant="heavy rain falling",
    ),
    NoteCase(
        "never appears: show",
        HELD_OUT[0].idea,
        "the robot never appears — show the robot apprentice beside the clockmaker",
        "shot:3",
        expect=[r"robot"],
        neg_never=["appear", "robot"],
    ),
    NoteCase(
        "remove from a shot",
        HELD_OUT[3].idea,
        "remove the seagulls",
        "shot:2",
        gone=[r"seagull"],
        plant="seagulls circling overhead",
        neg_expect=["seagull"],
    ),
    NoteCase(
        "more of, in a scene",
        HELD_OUT[5].idea,
        "more snow falling in this scene",
        "scene:2",
        expect=[r"snow"],
    ),
    NoteCase(
        "less of, on a shot",
        HELD_OUT[3].idea,
        "less fog here, I want to see the whale",
        "shot:5",
        expect=[r"whale"],
        gone=[r"thick fog"],
        plant="thick fog everywhere",
    ),
    NoteCase(
        "replace X with Y in a scene",
        HELD_OUT[1].idea,
        "replace the meadow with a muddy forest track",
        "scene:3",
        expect=[r"muddy forest track"],
        gone=[r"\bmeadow\b"],
        plant="in the meadow",
    ),
    NoteCase(
        "says what it cannot do",
        HELD_OUT[6].idea,
        "the whole thing should feel like my grandfather's stories",
        "scene:2",
        cannot=True,
    ),
)


def _target(case: NoteCase, board: Storyboard) -> tuple[Note, list[str]]:
    kind, _, n = case.target.partition(":")
    if kind == "scene":
        sc = board.scenes[min(int(n), len(board.scenes)) - 1]
        return Note(text=case.text, scope=Scope(scenes=[sc.scene_id])), [s.shot_id for s in sc.shots]
    if kind == "shot":
        sid = board.shots()[int(n) - 1].shot_id
        return Note(text=case.text, shot_id=sid), [sid]
    return Note(text=case.text), [s.shot_id for s in board.shots()]


def note_checks(case: NoteCase, board: Storyboard, refine) -> list[tuple[str, bool, str]]:
    """`refine(board, notes)` -> Proposal. The note is answered on the shots it is about, only there."""
    note, ids = _target(case, board)
    if case.plant:
        for s in board.shots():
            if s.shot_id in ids:
                s.prompt = f"{s.prompt}, {case.plant}"
    p = refine(board, [note])
    shot_edits = [e for e in p.edits if isinstance(e, SetShot)]
    out: list[tuple[str, bool, str]] = []
    outside = [e.shot_id for e in shot_edits if e.shot_id not in ids]
    out.append((f"{case.name}: edits only its shots", not outside, ", ".join(outside)))
    story = [e.field for e in p.edits if isinstance(e, SetStory)]
    if case.target != "film":
        out.append((f"{case.name}: style guide untouched", not story, ", ".join(story)))
    if case.cannot:
        said = any(case.text[:20].lower() in (u.what + u.why).lower() for u in p.not_changed)
        out.append((f"{case.name}: says so in not_changed", said and not p.edits, f"{len(p.edits)} edits"))
        return out
    prompts = {e.shot_id: e.new for e in shot_edits if e.field == "prompt"}
    negs = {e.shot_id: e.new for e in shot_edits if e.field == "negative_prompt"}
    for rx in case.expect:
        hit = [sid for sid, text in prompts.items() if re.search(rx, text, re.I)]
        out.append((f"{case.name}: prompt gains {rx}", bool(hit), f"{len(hit)}/{len(ids)} shots"))
    for rx in case.gone:
        planted = [sid for sid in ids if sid in prompts or case.plant]
        still = [sid for sid in planted if re.search(rx, prompts.get(sid, "x " + rx), re.I)]
        out.append((f"{case.name}: prompt loses {rx}", bool(prompts) and not still, f"{len(still)} still"))
    for w in case.neg_never:
        bad = [sid for sid, text in negs.items() if w in text.lower()]
        out.append((f"{case.name}: no {w!r} in negative prompts", not bad, ", ".join(bad)))
    for w in case.neg_expect:
        got = [sid for sid, text in negs.items() if w in text.lower()]
        out.append((f"{case.name}: negative prompt gains {w!r}", bool(got), ""))
    return out


def report() -> dict[str, tuple[int, int]]:
    """Checks passed / total, per length and for the notes, with the planner and refiner on the path."""
    from agents.offline import OfflinePlanner, OfflineRefiner

    out: dict[str, tuple[int, int]] = {}
    for m in MINUTES:
        res = [r for c in HELD_OUT for r in idea_checks(c, OfflinePlanner().plan(c.idea, m).value)]
        out[f"ideas at {m} min"] = (sum(ok for _, ok, _ in res), len(res))
    for m in MINUTES:
        res = [r for c in FRESH for r in idea_checks(c, OfflinePlanner().plan(c.idea, m).value)]
        out[f"fresh ideas at {m} min"] = (sum(ok for _, ok, _ in res), len(res))
    for m in MINUTES:
        res = [r for c in FABLES for r in idea_checks(c, OfflinePlanner().plan(c.idea, m).value)]
        out[f"fables at {m} min"] = (sum(ok for _, ok, _ in res), len(res))
    for m in MINUTES:
        res = [r for c in FOLK for r in idea_checks(c, OfflinePlanner().plan(c.idea, m).value)]
        out[f"folk tales at {m} min"] = (sum(ok for _, ok, _ in res), len(res))
    res = []
    for n in NOTES:
        board = OfflinePlanner().plan(n.idea, 3).value
        res += note_checks(n, board, lambda b, notes: OfflineRefiner().refine(b, notes, []).value)
    out["notes"] = (sum(ok for _, ok, _ in res), len(res))
    return out


@cache
def planned(idea: str, minutes: float) -> Storyboard:
    """The embedded planner's storyboard for `idea`, made once per test process (several tests read each)."""
    from agents.offline import OfflinePlanner

    return OfflinePlanner().plan(idea, minutes).value


if __name__ == "__main__":
    import sys

    verbose = "-v" in sys.argv
    if verbose:
        from agents.offline import OfflinePlanner, OfflineRefiner

        for m in MINUTES:
            for c in HELD_OUT + FRESH + FABLES + FOLK:
                for name, ok, why in idea_checks(c, OfflinePlanner().plan(c.idea, m).value):
                    if not ok:
                        print(f"FAIL {m}min {c.name}: {name} ({why})")
        for n in NOTES:
            board = OfflinePlanner().plan(n.idea, 3).value
            for name, ok, why in note_checks(n, board, lambda b, ns: OfflineRefiner().refine(b, ns, []).value):
                if not ok:
                    print(f"FAIL note: {name} ({why})")
    for k, (a, b) in report().items():
        print(f"{k}: {a}/{b}")
