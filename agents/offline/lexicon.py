"""Word lists the offline agents read ideas and notes with: who can be a character, what is a place, what is a danger.

Small and explicit on purpose: a word missing here is read as an ordinary noun (never invented as a character).
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PEOPLE = _words("""
man woman boy girl child kid baby toddler teen teenager lad lass lady gentleman wife husband mother father mom mum
dad son daughter brother sister grandmother grandfather grandma grandpa granny gran aunt uncle cousin nephew niece
friend stranger neighbour neighbor king queen prince princess knight wizard witch sorcerer soldier sailor pirate
captain pilot astronaut scientist doctor nurse teacher student pupil detective thief spy monk nun priest farmer
fisherman fisherwoman hunter keeper cartographer baker chef cook painter artist musician pianist violinist cellist
singer dancer writer poet author inventor engineer mechanic clown magician acrobat actor actress orphan widow widower
veteran refugee traveller traveler wanderer explorer hermit miner blacksmith carpenter tailor librarian gardener
shepherd postman postwoman courier driver waiter waitress barista clerk shopkeeper merchant judge lawyer mayor emperor
empress chief warrior archer ninja samurai cowboy sheriff outlaw ranger guard janitor caretaker nanny grandchild twin
villager citizen tourist climber diver surfer skater athlete runner boxer coach champion hero heroine villain
apprentice maid butler servant peasant lord duke duchess baron nomad beggar busker student intern boss worker
fireman firefighter policeman policewoman officer agent elder girlfriend boyfriend fiancee fiance bride groom
visitor survivor inspector director professor narrator sculptor conductor collector editor translator investigator
mentor tutor ancestor hiker swimmer skier dreamer lover leader ruler owner player butcher trapper poacher smuggler
gambler storyteller lamplighter trucker hacker gamer drummer fighter racer rider jogger founder prisoner worker
believer influencer youngster outsider newcomer settler lodger stowaway photographer beekeeper toymaker watchmaker
clockmaker shoemaker dressmaker bookseller fishmonger locksmith goldsmith silversmith archaeologist biologist
astronomer grandson granddaughter chef teller voyager mariner ferryman boatman watchman stationmaster porter trader sweeper sister
""")
CREATURES = _words("""
robot android cyborg ghost spirit monster alien giant dwarf elf fairy troll vampire zombie mermaid angel demon god
goddess dragon puppet doll toy scarecrow snowman golem goblin ogre unicorn yeti creature phantom automaton
""")
ANIMALS = _words("""
whale dolphin shark fish octopus turtle tortoise seal otter penguin crab jellyfish bird owl crow raven sparrow robin
eagle hawk falcon parrot pigeon gull seagull swan duck duckling goose chicken hen rooster dog puppy hound cat kitten
fox wolf bear cub deer fawn stag rabbit bunny hare mouse rat squirrel hedgehog badger beaver raccoon horse pony foal
donkey mule cow calf bull pig piglet sheep lamb goat elephant lion lioness tiger leopard cheetah giraffe zebra monkey
ape gorilla chimpanzee bee ant butterfly moth spider snail frog toad lizard snake dragonfly firefly bat camel
kangaroo koala panda sloth moose elk bison buffalo yak llama alpaca crocodile alligator hippo rhino orca beetle
ladybird ladybug worm caterpillar heron stork crane flamingo pelican albatross puffin walrus narwhal salmon trout
""")
# Words ending like an agent noun (-er, -or, -ist, -ian) that are not people.
NOT_AGENTS = _words("""
water river tower letter paper winter summer corner center centre danger dinner thunder silver number border chamber
computer flower power weather feather mirror door floor color colour corridor error horror terror motor elevator
escalator tractor monitor indoor outdoor harbor harbour labor interior exterior decor after other under over never
ever together whether either neither hunger anger chapter matter butter ladder finger shoulder rather
cancer poster cover amber copper timber meteor sector vector major minor theater theatre
fever shelter boulder glacier ember barrier career soccer laser razor quarter order answer
wonder lantern
""")
PLACES = _words("""
city town village island lighthouse forest woods wood jungle desert mountain mountains hill hills valley river lake
sea ocean bay beach shore coast harbour harbor port ship boat house home cottage cabin castle palace tower school
classroom library museum hospital kitchen bakery restaurant cafe shop market station street alley road bridge garden
park farm field meadow cave mine factory office apartment flat room attic basement cellar church temple shrine
theatre theater circus zoo laboratory lab spaceship planet moonbase rooftop roof tunnel subway airport workshop
studio hotel inn tavern pub bar prison court courtroom stadium arena swamp marsh glacier canyon cliff cliffs reef
orchard vineyard greenhouse barn mill well pier dock wharf square plaza neighbourhood neighborhood suburb valley
kingdom realm world galaxy space underground sewer junkyard scrapyard camp tent attic bookshop bookstore hospital
""")
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
