"""The vocabulary of topics: whom a fact can be about and the attributes it can state.

The settings name these attributes (config.single_valued), the write path asks whether one
holds a single value, and an LLM's labels are normalised here before they are trusted.
"""

from __future__ import annotations

import re

from memman.language.text import normalize

USER = "user"

# attribute -> what it holds. Single-valued: one current value, a newer one replaces it.
SINGLE_VALUED = frozenset(
    """residence hometown employer job relationship_status name last_name native_language age
    birthday diet smoking children car school school_year studies phone computer
    work_setting household bedtime wake_time hair hair_color commute religion
    work_hours gluten whereabouts gym doctor dentist therapist boss landlord bank vet
    accountant eyewear dwelling birth_year""".split()
)
# Multi-valued: several true at once ("likes jazz" and "likes hiking").
# A phone or a computer is the one the user uses now: a new one replaces it ("switched to a
# Pixel"). Consoles are several ("also got a Switch"); one line's new model is told from
# another line by the value's words (kinds.device_value: "playstation 4" / "playstation 5").
MULTI_VALUED = frozenset("likes drinks pets plays speaks allergy hobby console injury trip".split())
# Attributes that are two sides of one fact: where one works and as what ("a software engineer
# at Stripe" is a job; "started a new job at Shopify" an employer; "retired" ends both).
# So are a school and what one studies there: "I graduated" ends both.
# A fact of one is shown to the decider with the memories of the other; the few it settles on
# them are write/holders.py's (work or school ended, a new employer for a job that names one).
# So are a full name and a surname: "took my husband's surname" changes "My name is Jo Brown";
# and gluten and a diet: "eats bread and pasta again" may end keto (shown, never settled);
# and where one lives and where one is ("I'm in Paris now"): a residence stated replaces the
# latter when no residence is known, the latter never replaces a residence.
KINDRED = {
    "employer": "job", "job": "employer", "school": "studies", "studies": "school",
    "last_name": "name", "name": "last_name", "gluten": "diet", "diet": "gluten",
    "residence": "whereabouts", "whereabouts": "residence",
}  # fmt: skip
# Attributes whose value is a time: "my birthday is on March 12" is no state of it.
TIMED = frozenset("birthday bedtime wake_time work_hours".split())
# Favourites are single-valued per thing: "favorite:color", "favorite:band".
FAVORITE = "favorite"
# So is an amount the user states of one thing of theirs: "My rent is $1,200 a month" is
# amount:rent (a number of its own is needed: "my truck is a Ford F150" is no amount).
AMOUNT = "amount"
# The fallback: "verb:collect" for "I collect antique dolls" (see verbs.py).
VERB = "verb"
ATTRIBUTES = SINGLE_VALUED | MULTI_VALUED | {f"{FAVORITE}:*", f"{AMOUNT}:*", f"{VERB}:*"}
# The attribute of a fact that ends something no pattern names: the memory holding its object
# is taken back (supersede._taken_back).
ENDED = "verb:quit"
# One name for a person however the user calls them: "my mom" and "my mother" are one
# subject, so "My mother moved to Paris" meets "My mom lives in Rome".
KIN = {
    "mom": "mother", "mum": "mother", "mommy": "mother", "mummy": "mother", "dad": "father",
    "daddy": "father", "grandma": "grandmother", "granny": "grandmother", "nana": "grandmother",
    "grandpa": "grandfather", "grandad": "grandfather", "granddad": "grandfather",
    "kid": "child", "kids": "children", "neighbour": "neighbor", "coworker": "colleague",
    "hubby": "husband", "boy": "son", "girl": "daughter",
}  # fmt: skip
# People (and pets) the user talks about: "my sister lives in Rome" is the sister's residence.
# Every name of KIN too ("my mommy").
OTHERS = frozenset(
    """sister brother mother father wife husband partner girlfriend boyfriend fiance fiancee
    son daughter children child friend boss roommate grandmother grandfather aunt uncle
    cousin parents neighbor colleague dog cat""".split()
).union(KIN)

# An LLM's ways to name the user as a fact's subject.
_THE_USER = frozenset("user me i myself self the_user speaker".split())
_OWNER = re.compile(r"^(?:the_|user_s_|users_|my_)+")


def person(word: str) -> str:
    """The subject a person is filed under: "mom" is "mother" (KIN); anyone else as said."""
    return KIN.get(word, word)


def is_single_valued(attribute: str, single_valued: frozenset[str] = SINGLE_VALUED) -> bool:
    return attribute in single_valued or attribute.startswith((FAVORITE + ":", AMOUNT + ":"))


def is_verb_topic(attribute: str) -> bool:
    return attribute.startswith(VERB + ":")


def check_label(name: str, value: object) -> str | None:
    """A caller's subject or attribute, normalised ("Relationship Status" ->
    "relationship_status"); None stays None. Raises ValueError for anything else."""
    if value is None:
        return None
    if not isinstance(value, str) or not normalize(value):
        raise ValueError(f"{name} must be a non-empty string")
    label = re.sub(r"[^\w:]+", "_", normalize(value)).strip("_")
    if not label or len(label) > 64:
        raise ValueError(f"{name} must be 1 to 64 letters, digits, '_' or ':'")
    return label


# What an LLM calls an attribute in other words, filed under memman's: "User lives in Porto"
# labelled "location" must meet "User moved to Lisbon" labelled "residence", or both stay
# active (tests/test_llm_labels.py). Only names with one reading among durable facts (a
# transient "at the airport" goes to short-term memory, not here); plurals and singulars
# of the vocabulary ("allergies", "pet") and "favorite_x" are read by rule in `filed`.
ALIASES = {
    "location": "residence", "city": "residence", "home": "residence", "home_city": "residence",
    "current_city": "residence", "lives_in": "residence", "place_of_residence": "residence",
    "home_town": "hometown", "birthplace": "hometown", "company": "employer",
    "workplace": "employer", "works_at": "employer", "occupation": "job", "profession": "job",
    "job_title": "job", "career": "job", "marital_status": "relationship_status",
    "relationship": "relationship_status", "first_name": "name", "preferred_name": "name",
    "surname": "last_name", "family_name": "last_name", "date_of_birth": "birthday",
    "birth_date": "birthday", "dob": "birthday", "dietary_preference": "diet",
    "dietary_restriction": "diet", "diet_type": "diet", "smoker": "smoking",
    "smoking_status": "smoking", "kids": "children", "child": "children",
    "number_of_children": "children", "vehicle": "car", "university": "school",
    "college": "school", "mother_tongue": "native_language", "first_language": "native_language",
    "language": "speaks", "languages": "speaks", "spoken_languages": "speaks",
    "allergic_to": "allergy", "hobbies_and_interests": "hobby", "smartphone": "phone",
    "mobile_phone": "phone", "cell_phone": "phone", "laptop": "computer",
    "game_console": "console", "gaming_console": "console", "major": "studies",
    "field_of_study": "studies", "year_in_school": "school_year", "grade": "school_year",
    "living_situation": "household", "living_arrangement": "household", "lives_with": "household",
    "sleep_schedule": "bedtime",
}  # fmt: skip
# One favorite, whatever it is called: "the group I love most" is the favorite band.
_FAVORITE_THINGS = {
    "group": "band", "film": "movie", "colour": "color", "dish": "food", "meal": "food",
    "tune": "song", "author": "writer", "hobbies": "hobby", "tv show": "show",
    "tv series": "show", "series": "show",
}  # fmt: skip
_FAVORITE = re.compile(r"(?:favou?rite|fave?)_(\w+)")


def favorite_key(thing: str) -> str:
    """The attribute of a favourite thing: "favorite:band" for the group, film or band."""
    return f"{FAVORITE}:{_FAVORITE_THINGS.get(thing, thing).replace(' ', '_')}"


# How often an amount is paid says nothing of what it is: "my monthly rent" is the rent.
_PER = re.compile(r"^(?:monthly|weekly|yearly|annual|daily|hourly|nightly) ")


def amount_key(thing: str) -> str:
    """The attribute of an amount of one thing: "amount:rent" for the monthly rent, and the
    age for "my age is 34", as "I am 34" says it (a commute's minutes are no commute)."""
    thing = _PER.sub("", thing)
    return "age" if thing == "age" else f"{AMOUNT}:{thing}"


def filed(label: str) -> str:
    """A normalised label under memman's vocabulary where it names one of its attributes in
    other words; any other label unchanged (a caller's or an LLM's own key stays its own)."""
    known = SINGLE_VALUED | MULTI_VALUED
    if label in known:
        return label
    if label in ALIASES:
        return ALIASES[label]
    favorite = _FAVORITE.fullmatch(label)
    if favorite:
        return favorite_key(favorite.group(1).replace("_", " "))
    if label.endswith("ies"):  # allergies, hobbies
        singular = label[:-3] + "y"
    elif label.endswith("s"):  # cars
        singular = label[:-1]
    else:
        singular = None
    for other in (singular, label + "s"):  # pet -> pets
        if other in known:
            return other
    return label


def usable_label(value: object) -> str | None:
    """An LLM's subject or attribute, normalised, or None when it is unusable: an odd label
    must never cost the fact it came with (the extractor reads the text instead)."""
    try:
        return check_label("label", value)
    except ValueError:
        return None


def usable_subject(value: object) -> str | None:
    """An LLM's subject as usable_label reads it, the user however named ("User", "the
    user", "me") and another person by their own name ("User's mom", "my_sister": mother,
    sister)."""
    label = usable_label(value)
    if label is None or label in _THE_USER:
        return None if label is None else USER
    return person(_OWNER.sub("", label) or label)


def usable_attribute(value: object) -> str | None:
    """An LLM's attribute as usable_label reads it, filed under the vocabulary."""
    label = usable_label(value)
    return None if label is None else filed(label)
