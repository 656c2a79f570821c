"""The word lists the offline idea reader used before issue 35 (who can be a character, what is a place), kept only
as a measurement set for the embedder's kinds (agents/offline/kinds.py): no code reads them."""

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
