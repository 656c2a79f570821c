"""The offline planner's story material: a beat sheet, what happens in each beat for each kind of story, and how it
looks (light by beat, faces by beat). Text templates with named slots, filled by `planner.py`.

Slots: {a} the lead ({A} capitalised), {b} who or what the story turns on, {b_first} its first mention ("a lost whale"), {home} the
lead's place ({at_home}: 'at the lighthouse'), {away} the other place, {threat} and {threat_look} only when the idea names a danger,
{goal} what the idea says must be done and {obstacle} what stands in the way (the "task" story; {looming} it as a
picture of it coming: "the ferry about to hit the rocks", "the ice storm drawing near"), {winner} and
{loser} who the idea says wins a contest and who does not ({B}, {Winner} capitalised). The idea's own clauses
(`Idea.events`) are put into the inciting incident, the middle and the climax by the planner, so the plot is the idea's.
"""

from __future__ import annotations

from dataclasses import dataclass

BEATS = ("setup", "inciting incident", "rising action", "midpoint", "crisis", "climax", "resolution")
SHORT_BEATS = ("setup", "inciting incident", "climax", "resolution")  # films too short for seven
SHARE = {
    "setup": 0.14,
    "inciting incident": 0.11,
    "rising action": 0.22,
    "midpoint": 0.11,
    "crisis": 0.14,
    "climax": 0.16,
    "resolution": 0.12,
}
PACE = {
    "setup": 1.15,
    "inciting incident": 1.0,
    "rising action": 0.95,
    "midpoint": 1.0,
    "crisis": 0.85,
    "climax": 0.75,
    "resolution": 1.2,
}  # relative shot length: shorter toward the climax
LIGHT = {  # per beat, one per scene of that beat
    "setup": ("soft morning light", "still grey morning", "late morning sun"),
    "inciting incident": ("clear daylight", "bright overcast day"),
    "rising action": ("golden afternoon light", "hazy midday", "long afternoon shadows", "late golden hour"),
    "midpoint": ("warm evening light", "violet twilight"),
    "crisis": ("cold blue dusk", "near darkness", "grey, failing light"),
    "climax": ("night, pools of light and shadow", "deep night, one strong light source"),
    "resolution": ("pale dawn light", "clear morning after"),
}
WHEN = {
    "night": "night, moonlight",
    "midnight": "midnight dark",
    "dawn": "dawn light",
    "dusk": "dusk light",
    "morning": "morning light",
    "evening": "evening light",
    "noon": "noon sun",
    "sunset": "sunset glow",
    "sunrise": "sunrise glow",
    "twilight": "twilight",
    "afternoon": "afternoon light",
}  # a time the idea names
EXTRA = {  # more that the camera can show in any scene of a beat, after the scene's own actions
    "setup": ("{a} walks through {place}", "{a} tidies up, unhurried", "{place} quiet and ordinary"),
    "inciting incident": (
        "{a} steps closer, cautious",
        "{a} looks around for anyone else",
        "{place}, suddenly unfamiliar",
    ),
    "rising action": (
        "{a} walks through {place}, thinking",
        "{a} tries a new approach",
        "{a} makes a small discovery",
        "{a} and {b} in the distance",
    ),
    "midpoint": ("{a} looks back at how far things have come", "{a} shares the news", "{place} in a new light"),
    "crisis": ("{a} hurries across {place}", "{a} searches for a way through", "{place}, nobody in sight"),
    "climax": ("{a} takes the final step", "{a} reaches out", "{a} holds on"),
    "resolution": ("{a} walks home slowly", "{a} rests at last", "{place}, calm again"),
}
FACE = {
    "setup": "calm and absorbed",
    "inciting incident": "startled, eyes wide",
    "rising action": "curious, half smiling",
    "midpoint": "open and delighted",
    "crisis": "afraid, jaw set",
    "climax": "fierce with resolve",
    "resolution": "quiet, at peace",
}


@dataclass(frozen=True)
class Relation:
    """What happens between the lead and {b} in one kind of story: present tense for pictures, past for narration."""

    meet: tuple[str, str]
    approach: tuple[tuple[str, str, str], ...]  # (scene title, present, past)
    turn: tuple[str, str]
    lose: tuple[str, str]
    win: tuple[str, str]
    end: tuple[str, str]


RELATIONS = {
    "task": Relation(  # the idea says what must be done: {goal} ("repair the frozen clock tower")
        meet=("{a} sees what must be done: {goal}", "One day, {a} knew what had to be done: {goal}."),
        approach=(
            ("Getting ready", "{a} gathers what it takes to {goal}", "{A} gathered everything it would take."),
            ("A first try", "{a} tries to {goal}, and it goes wrong", "The first try went wrong."),
            ("Step by step", "{a} works on, step by step, {b} close by", "Step by step, it came together."),
            ("Running out of time", "{a} works faster, {looming}", "Time was running out."),
        ),
        turn=("{a} halfway through the task, {looming}", "For a moment, it looked possible."),
        lose=("what {a} has done comes undone", "Then everything came undone."),
        win=("{a} manages to {goal}", "At last, {a} managed to {goal}."),
        end=("{a} rests, the task done", "It was done, and {a} could rest."),
    ),
    "contest": Relation(  # a race or a challenge between {a} and {b}: {winner} is who the idea says wins
        meet=("{a} challenges {b}", "{A} challenged {b_first}."),
        approach=(
            ("The start", "{a} and {b} side by side at the start", "They started side by side."),
            ("Out in front", "{a} pulls ahead of {b}", "{A} pulled ahead."),
            ("Step by step", "{b} keeps going, step by step", "{B} kept going, step by step."),
            ("Sure of winning", "{a} looks back at {b}, far behind", "{A} was sure of winning."),
        ),
        turn=("{a} far ahead, {b} far behind", "{A} was far ahead."),
        lose=("{a} too sure, {b} still coming", "But {b} never stopped."),
        win=("{winner} wins, {loser} watching", "{Winner} won."),
        end=("{a} and {b} after the contest", "Neither of them forgot that day."),
    ),
    "bond": Relation(
        meet=("{a} notices {b} for the first time", "Then {a} met {b_first}."),
        approach=(
            ("Keeping a distance", "{a} watches {b} from a safe distance", "At first, {a} kept a careful distance."),
            ("Reaching out", "{a} holds out a hand to {b}", "Little by little, {a} reached out."),
            ("Closer", "{b} comes closer while {a} stays very still", "And {b} came a little closer each day."),
            ("Laughter", "{a} and {b} share a small, funny moment", "Soon they were laughing together."),
        ),
        turn=("{a} and {b} side by side, at ease", "By now, {a} and {b} trusted each other."),
        lose=("{a} and {b} pulled apart", "Then {a} and {b} were torn apart."),
        win=("{a} risks everything to reach {b}", "{a} risked everything to reach {b}."),
        end=("{a} and {b} part as friends", "They parted as friends, and neither was the same again."),
    ),
    "discovery": Relation(
        meet=("{a} finds {b}", "One day, {a} discovered {b_first}."),
        approach=(
            ("Studying it", "{a} studies {b} closely", "{a} studied it for hours."),
            ("Following the trail", "{a} follows where {b} leads", "Then {a} followed where it led."),
            ("A secret kept", "{a} hides {b} from curious eyes", "{a} told no one."),
            ("No explanation", "{a} compares {b} with everything they know", "Nothing {a} knew could explain it."),
        ),
        turn=("{b} reveals its secret to {a}", "Then {b} revealed its secret."),
        lose=("{a} loses hold of {b}", "And then {a} lost it."),
        win=("{a} follows {b} to the very end", "{a} followed it to the very end."),
        end=("{a}, changed by what {b} showed them", "{a} was never quite the same."),
    ),
    "making": Relation(
        meet=("{a} sketches the first idea of {b}", "One day, {a} decided to make {b_first}."),
        approach=(
            ("Gathering", "{a} gathers what {b} needs", "{a} gathered everything it would need."),
            ("Late nights", "{a} works late on {b}", "Night after night, {a} worked on it."),
            ("Starting over", "{a} starts {b} over from scratch", "The first try failed, so {a} began again."),
            ("The first test", "{a} tests {b} for the first time", "Then came the first test."),
        ),
        turn=("{b} works for a moment, and {a} laughs", "For a moment, it worked."),
        lose=("{b} breaks apart in front of {a}", "Then it broke."),
        win=("{a} finishes {b} at last", "At last, {a} finished it."),
        end=("{a} shares {b} with others", "And {a} shared it with everyone."),
    ),
    "quest": Relation(
        meet=("{a} sets out to find {b}", "One day, {a} set out to find {b_first}."),
        approach=(
            ("The search", "{a} searches {away} for {b}", "{a} searched everywhere."),
            ("Asking around", "{a} asks a passer-by about {b}", "{a} asked everyone they met."),
            ("A first clue", "{a} follows a first clue toward {b}", "A first clue pointed the way."),
            ("Pushing on", "{a} pushes on, tired, toward {b}", "{a} pushed on, tired but hopeful."),
        ),
        turn=("{a} catches a first glimpse of {b}", "Then, at last, a first glimpse."),
        lose=("the trail to {b} goes cold", "Then the trail went cold."),
        win=("{a} reaches {b}", "{a} reached {b} at last."),
        end=("{a} heads home with {b}", "And {a} came home."),
    ),
    "escape": Relation(
        meet=("{a} sees a way out", "One day, {a} saw a way out."),
        approach=(
            ("Unseen", "{a} slips past unseen", "{a} slipped away unseen."),
            ("Hiding", "{a} hides, holding their breath", "{a} hid and held their breath."),
            ("Running", "{a} runs through {away}", "Then {a} ran."),
            ("Looking back", "{a} looks back over a shoulder", "{a} did not look back for long."),
        ),
        turn=("{a} reaches open space and breathes", "For a moment, {a} was free."),
        lose=("{a} is cornered", "Then {a} was cornered."),
        win=("{a} breaks free", "{a} broke free."),
        end=("{a} free at last, in a new place", "{a} was free at last."),
    ),
    "conflict": Relation(
        meet=("{a} faces {b} for the first time", "Then {a} came face to face with {b_first}."),
        approach=(
            ("Preparing", "{a} prepares for {b}", "{a} prepared."),
            ("The first round", "{a} loses a first round against {b}", "The first round went badly."),
            ("Learning", "{a} studies how {b} moves", "{a} watched and learned."),
            ("Again", "{a} tries again, stronger", "{a} tried again."),
        ),
        turn=("{a} wins a small victory over {b}", "Then came a small victory."),
        lose=("{a} knocked down by {b}", "Then {a} fell."),
        win=("{a} stands up to {b}", "{a} stood up to {b}."),
        end=("{a}, tired and proud", "{a} was tired, and proud."),
    ),
    "loss": Relation(
        meet=("{a} finds that {b} is gone", "One day, {b} was gone."),
        approach=(
            ("The old places", "{a} looks for {b} in familiar places", "{a} looked in all the old places."),
            ("What was left", "{a} holds something that belonged to {b}", "{a} kept what was left."),
            ("Remembering", "{a} remembers a day with {b}", "{a} remembered."),
            ("The quiet", "{a} sits alone where {b} used to be", "The quiet was the hardest part."),
        ),
        turn=("{a} smiles at a memory of {b}", "Then, one day, a memory made {a} smile."),
        lose=("{a} almost gives up", "{a} almost gave up."),
        win=("{a} lets {b} go", "{a} let go."),
        end=("{a} carries {b} in memory", "And {a} carried {b} with them."),
    ),
    "return": Relation(
        meet=("{a} decides to go back to {b}", "One day, {a} decided to go back."),
        approach=(
            ("Packing", "{a} packs for the journey", "{a} packed for the journey."),
            ("The long road", "{a} travels the long road", "The road was long."),
            ("A familiar sight", "{a} recognises the first familiar landmark", "Then came the first familiar sight."),
            ("Hesitation", "{a} hesitates at the edge of {away}", "{a} almost turned back."),
        ),
        turn=("{a} arrives and is recognised", "Someone remembered {a}."),
        lose=("{a} finds that everything has changed", "But everything had changed."),
        win=("{a} makes peace with {b}", "{a} made peace with {b}."),
        end=("{a} at home again", "And {a} was home again."),
    ),
}


@dataclass(frozen=True)
class Moment:
    """One scene's event: its title, the narration line that tells it, and what the camera can show of it."""

    title: str
    narration: str
    actions: tuple[str, ...]


def moments(beat: str, rel: Relation, threat: bool) -> list[Moment]:
    """The scenes a beat can hold, in order of use (a long film uses more of them)."""
    if beat == "setup":
        return [
            Moment(
                "{A} {at_home}",
                "{A} lived {at_home}, and every day was much the same.",
                ("{a} at work {at_home}", "{a}'s hands at a familiar task", "{a} pauses and looks out at {away}"),
            ),
            Moment(
                "Alone",
                "In the evenings, {a} was alone.",
                ("{a} alone at the end of the day", "an empty chair beside {a}", "{a} gazes at the horizon"),
            ),
        ]
    if beat == "inciting incident":
        return [
            Moment(rel.meet[0], rel.meet[1], (rel.meet[0], "{a} freezes, not sure what to do", "{b} close by")),
            Moment(
                "Second thoughts",
                "{A} could not stop thinking about it.",
                ("{a} lying awake, thinking of {b}", "{a} returns to the same spot", "{a} makes a decision"),
            ),
        ]
    if beat == "rising action":
        return [
            Moment(title, past, (present, "{a} waits and watches", "{b} close by"))
            for title, present, past in rel.approach
        ]
    if beat == "midpoint":
        return [
            Moment(rel.turn[0], rel.turn[1], (rel.turn[0], "{a} laughs for the first time", "{b} in full view")),
            Moment(
                "Together",
                "For a while, everything seemed possible.",
                ("{a} and {b} against the open sky", "{a} makes a plan", "{b} waits for {a}"),
            ),
        ]
    if beat == "crisis":
        danger = (
            [
                Moment(
                    "The danger",
                    "Then {threat} came.",
                    ("{away} in {threat_look}", "{a} braces against {threat_look}", "{b} struggling in {threat_look}"),
                )
            ]
            if threat
            else []
        )
        return danger + [
            Moment(rel.lose[0], rel.lose[1], (rel.lose[0], "{a} alone, head bowed", "{b} out of reach")),
            Moment(
                "The choice",
                "{A} had to choose.",
                ("{a} stands at the threshold", "{a} remembers what {b} means", "{a} steps forward"),
            ),
        ]
    if beat == "climax":
        return [
            Moment(
                rel.win[0],  # titled by what happens in this story, not by the beat
                rel.win[1],
                (rel.win[0], "{a} pushes through" + (" {threat_look}" if threat else ""), "{b} within reach"),
            ),
            Moment(
                "The cost",
                "It was the bravest thing {a} had ever done.",
                ("{a} exhausted but standing", "{b} safe", "{a} and {b} face to face"),
            ),
        ]
    return [
        Moment("{home}, afterwards", rel.end[1], (rel.end[0], "{a} back at {home}, changed", "{away} at peace")),
        Moment(
            "A new day",
            "And the days that followed were not the same.",
            ("{a} at the familiar task, smiling", "{home} in a new light", "{a} looks out at {away}"),
        ),
    ]


# What characters say: per beat, the lead's line then the other's reply, each as (full, short) with its delivery.
# Short enough to be said in a 2-second shot at 2.5 words a second (the short ones), in character with the beat.
LINES = {
    "setup": ((("Same as every day.", "Same as ever."), "quietly, to themself"), (("Morning.", "Morning."), "")),
    "inciting incident": (
        (("Wait. What is that?", "What is that?"), "startled, half to themself"),
        (("I saw it too.", "I saw it."), "low"),
    ),
    "rising action": (
        (("We keep going. Not far now.", "Keep going."), "under the breath"),
        (("You are sure about this?", "You sure?"), "doubtful"),
    ),
    "midpoint": (
        (("So that is what it was.", "So that's it."), "slowly, taking it in"),
        (("Everything is different now.", "It's different."), "softly"),
    ),
    "crisis": (
        (("Not like this. Not now.", "Not now!"), "shouting over the {din}"),
        (("Hold on! I have you!", "Hold on!"), "shouting"),
    ),
    "climax": (
        (("Now. It has to be now.", "Now!"), "through clenched teeth"),
        (("Go! I will follow.", "Go!"), "urgent"),
    ),
    "resolution": ((("We made it. We are home.", "We're home."), "softly, smiling"), (("We did.", "We did."), "warm")),
}
# The scene's music cue, per beat (mood, tempo, instruments): a temp-score engine or a composer reads the words.
MUSIC = {
    "setup": ("gentle solo piano, slow 70 bpm, warm and unhurried", "light acoustic guitar, 80 bpm, calm"),
    "inciting incident": ("pizzicato strings, 90 bpm, curious and uncertain", "low clarinet and harp, hesitant"),
    "rising action": ("steady strings and soft drums, 100 bpm, building", "marimba ostinato, 104 bpm, purposeful"),
    "midpoint": ("sustained strings, 80 bpm, wonder", "felt piano and cello, 76 bpm, reflective"),
    "crisis": ("low brass and taiko drums, 120 bpm, tense", "dissonant strings, pulsing synth bass, 126 bpm, dread"),
    "climax": ("full orchestra, 132 bpm, soaring and urgent", "choir and strings, 128 bpm, triumphant"),
    "resolution": ("solo cello and piano, 66 bpm, tender", "warm strings, 72 bpm, bittersweet and calm"),
}
# Ambience by a word of the place or the threat, first match wins; else by the kind of place.
AMBIENCE = (
    ("storm", "wind howling, rain lashing, thunder rolling"),
    ("rain", "steady rain, water dripping"),
    ("sea", "waves on rocks, gulls, wind"),
    ("lighthouse", "waves on rocks, wind around the tower"),
    ("harbour", "water lapping on the quay, ropes creaking, gulls"),
    ("beach", "surf, distant gulls"),
    ("forest", "wind in the trees, birdsong"),
    ("wood", "wind in the trees, birdsong"),
    ("mountain", "thin wind, distant rockfall"),
    ("snow", "muffled wind, snow crunching underfoot"),
    ("city", "traffic hum, distant voices"),
    ("street", "footsteps, traffic passing"),
    ("station", "announcements echoing, a train braking"),
    ("kitchen", "a kettle ticking, room tone"),
    ("workshop", "tools clinking, room tone"),
    ("garden", "birdsong, leaves rustling"),
    ("farm", "animals in the distance, wind in the grass"),
    ("river", "running water, birds"),
    ("space", "a low ship hum, air vents"),
    ("desert", "dry wind, sand hissing"),
)
FOLEY = {  # one effect per kind of shot, on top of the place's ambience
    "insert": "a small close sound: cloth, a click, a breath",
    "close-up": "breathing close to the microphone",
    "establishing": "",
    "wide": "",
    "medium": "footsteps",
    "two-shot": "",
    "over-the-shoulder": "",
    "reaction": "",
}
