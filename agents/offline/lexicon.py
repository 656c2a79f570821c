"""Word lists the offline agents read ideas and notes with: function words, how a danger looks, a place's role.

What a noun names (a person, an animal, a machine, a place, a time) is not listed here: `kinds.py` reads it with
the embedder. The old lists of people, animals, creatures and places live on as a measurement set in
tests/agents/kind_words.py.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# (place, role): who an idea with only a place stands in ("the keeper" of a lighthouse), and where a role with no
# place starts (a cartographer in the map room). A place with a "the" is only ever a role's place.
WORKPLACES = (
    ("lighthouse", "keeper"),
    ("kitchen", "cook"),
    ("bakery", "baker"),
    ("ship", "captain"),
    ("boat", "boatman"),
    ("farm", "farmer"),
    ("forest", "ranger"),
    ("woods", "ranger"),
    ("library", "librarian"),
    ("garden", "gardener"),
    ("school", "teacher"),
    ("classroom", "teacher"),
    ("city", "night watchman"),
    ("town", "postman"),
    ("village", "baker"),
    ("mountain", "climber"),
    ("station", "stationmaster"),
    ("shop", "shopkeeper"),
    ("hospital", "nurse"),
    ("theatre", "stagehand"),
    ("theater", "stagehand"),
    ("circus", "acrobat"),
    ("laboratory", "scientist"),
    ("lab", "scientist"),
    ("museum", "night guard"),
    ("hotel", "porter"),
    ("island", "islander"),
    ("sea", "sailor"),
    ("ocean", "sailor"),
    ("desert", "nomad"),
    ("spaceship", "pilot"),
    ("castle", "guard"),
    ("workshop", "inventor"),
    ("market", "trader"),
    ("restaurant", "waiter"),
    ("cafe", "barista"),
    ("the map room", "cartographer"),
    ("the kitchen", "chef"),
    ("the harbour", "fisherman"),
    ("the harbour", "sailor"),
    ("the ship's deck", "captain"),
    ("the cockpit", "pilot"),
    ("the space station", "astronaut"),
    ("the workshop", "mechanic"),
    ("the studio", "painter"),
    ("the studio", "artist"),
    ("the rehearsal room", "musician"),
    ("the clinic", "doctor"),
    ("the hospital ward", "nurse"),
    ("the office", "detective"),
    ("the forge", "blacksmith"),
    ("the workshop", "carpenter"),
    ("the tailor's shop", "tailor"),
    ("the mine", "miner"),
    ("the hillside", "shepherd"),
    ("the throne room", "king"),
    ("the throne room", "queen"),
    ("the monastery", "monk"),
    ("the chapel", "priest"),
    ("the circus tent", "clown"),
    ("the stage", "magician"),
    ("the tower", "wizard"),
    ("the cottage", "witch"),
    ("the writing desk", "writer"),
)
ROLE_OF_PLACE = {place: f"the {role}" for place, role in WORKPLACES if not place.startswith("the ")}
PLACE_OF_ROLE: dict[str, str] = {}
for _place, _role in WORKPLACES:
    PLACE_OF_ROLE.setdefault(_role, _place if _place.startswith("the ") else f"the {_place}")
THREATS = _words("""
storm storms hurricane typhoon tornado blizzard flood floods fire fires wildfire earthquake war battle plague illness
sickness drought famine avalanche tsunami eruption volcano invasion hunters poachers curse shipwreck deadline exam
competition contest trial eviction debt gale gales tempest snowstorm sandstorm heatwave
""")
# How a danger named in the idea looks on screen, for the crisis and climax.
THREAT_LOOK = {
    "storm": "storm winds and driving rain",
    "gale": "gale winds and driving rain",
    "tempest": "storm winds and rain",
    "hurricane": "hurricane winds and rain",
    "typhoon": "typhoon winds and rain",
    "tornado": "a dark tornado funnel",
    "blizzard": "a blizzard of driving snow",
    "snowstorm": "a snowstorm of driving snow",
    "sandstorm": "a wall of blowing sand",
    "flood": "rising flood water",
    "fire": "smoke and the orange glow of fire",
    "wildfire": "wildfire smoke and an orange glow",
    "war": "smoke of war on the horizon",
    "battle": "smoke of battle on the horizon",
    "earthquake": "cracked ground and falling dust",
    "avalanche": "an avalanche of snow",
    "tsunami": "a towering tsunami wave",
    "eruption": "volcanic ash falling",
    "volcano": "volcanic ash falling",
    "heatwave": "shimmering heat",
}
TIMES = _words("dawn dusk night morning evening noon midnight sunset sunrise twilight afternoon")
SEASONS = _words("winter summer autumn spring christmas")
STYLES = _words("""
anime noir watercolour watercolor claymation stop-motion pixel cyberpunk steampunk documentary western musical
silent black-and-white sepia painterly comic cartoon
""")
# Adjectives that make a thing a character ("a talking teapot").
ANIMATING = _words("talking sentient living walking singing enchanted haunted magic magical")
CAPITALISED_NOT_NAMES = _words("""
The A An One When In On At After Before During Every Once This That These Those It Its She He They We I You Her His
Their There Then But And So As While If Years Long Far Deep High Somewhere Nobody Everyone Someone Today Tomorrow
Yesterday Tonight Now Soon Later Until Since Because Although Though With Without From Into Across Through Under Over
Near By Of For To Our My Your Meanwhile Finally Suddenly Eventually Only Even Still Some Each All Both Two Three
January February March April May June July August September October November December Monday Tuesday Wednesday
Thursday Friday Saturday Sunday Christmas Easter God Earth Mars Moon Sun
""")
DETERMINERS = _words("a an the his her their its my our your one some two three")
PLACE_PREPOSITIONS = _words("""
in on at near by inside across under beneath through into onto over above below beyond along around within toward
towards from outside behind
""")
STOP = _words("""
a an the and or but of to in on at for with from by into onto over under about as is are was were be been being it
its this that these those he she they them his her their our your my we you i me who whom whose which what when
where while after before during until because so than then there here not no yet also only just very too can could
should would will shall may might must do does did has have had make makes made let lets get gets got
""")
