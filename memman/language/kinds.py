"""The kinds of value a pattern accepts: which words name a job, a diet, a school, a pet.

A pattern over the words alone says too much: "I am a good student" is no job, "I work at
home" names no employer, "I have a greyhound" has a dog. `check_kind` holds a pattern's match
to the kind of value it must state. The words of each kind are rules/kinds.toml's.
"""

from __future__ import annotations

import re

from memman.language import rulebook
from memman.language.attributes import OTHERS
from memman.language.text import words
from memman.language.values import NUMBER_WORDS, VALUE_CLASSES, trim_value

OCCUPATIONS = rulebook.words("kinds", "words", "occupations")
DIETS = rulebook.words("kinds", "words", "diets")
STATUSES = rulebook.mapping("kinds", "map.statuses")
_SCHOOLS = rulebook.words("kinds", "words", "schools")
_SCHOOL_ENDS = rulebook.listed("kinds", "listed", "school_ends")
_NOT_FIELDS = _SCHOOLS | rulebook.words("kinds", "words", "not_fields")
_NOT_EMPLOYERS = rulebook.words("kinds", "words", "not_employers")
_HEAD_ENDS = rulebook.words("kinds", "words", "head_ends")
DRINKABLE = VALUE_CLASSES["caffeine"] | VALUE_CLASSES["alcohol"]
_DOG_BREEDS = rulebook.words("kinds", "words", "dog_breeds")
PETS = VALUE_CLASSES["pets"] | rulebook.words("kinds", "words", "pets")
COMPANIES = rulebook.words("kinds", "words", "companies")
VEHICLES = rulebook.words("kinds", "words", "vehicles")
CAR_MAKES = rulebook.words("kinds", "words", "car_makes")
_NOT_IN_MAKE_PATTERN = rulebook.words("kinds", "words", "not_in_make_pattern")
_DEVICES = rulebook.word_sets("kinds", "devices")
_PASTIMES = rulebook.words("kinds", "words", "pastimes")
_ANY_DEVICE = rulebook.words("kinds", "words", "any_device")
_CONSOLE_LINES = rulebook.mapping("kinds", "map.console_lines")
_ORDINALS = rulebook.mapping("kinds", "map.ordinals")
_HAIR_LENGTHS = rulebook.words("kinds", "words", "hair_lengths")
_HAIR_COLORS = rulebook.words("kinds", "words", "hair_colors")
_FISH = rulebook.words("kinds", "words", "fish")
_LATER_EMPLOYER = rulebook.pattern("kinds", "later_employer")
_EMPLOYER_NAMED = rulebook.pattern("kinds", "employer_named")


def make_pattern() -> str:
    """The car makes as a regex alternation, less the words that name other things too ("a
    mini fridge", "a ram", "a seat"): "have a Toyota", "own a Honda Civic"."""
    return "|".join(sorted(CAR_MAKES - _NOT_IN_MAKE_PATTERN))


def vehicle_pattern() -> str:
    """The vehicle kinds as a regex alternation ("have a car", "own a pickup")."""
    return "|".join(sorted(VEHICLES))


def check_kind(
    attribute: str, fixed: str, raw: str | None, value: str | None
) -> tuple[str, str | None, bool] | None:
    """The patterns whose match alone is not enough: the value must be of the right kind."""
    if fixed == "-":  # a retraction naming the value it takes back, or none
        return attribute, value, True
    if fixed == "new":  # a new value, not named ("I changed careers")
        return attribute, None, False
    if fixed == "employer?":
        employer = _employer(raw or "")
        return (attribute, employer, False) if employer else None
    if fixed == "job?":
        return (attribute, value, False) if value and value.split()[-1] in OCCUPATIONS else None
    if fixed == "field?":
        return None if value is None or value in _NOT_FIELDS else (attribute, value, False)
    if fixed == "status?":
        status = STATUSES.get(value or "")
        return (attribute, status, False) if status else None
    if fixed == "school?":
        school = value is not None and (
            any(w in value.split() for w in _SCHOOLS) or value.endswith(_SCHOOL_ENDS)
        )
        return (attribute, value, False) if school else None
    if fixed == "drink?":
        drinks = [w.rstrip("s") for w in (value or "").split() if w.rstrip("s") in DRINKABLE]
        return (attribute, drinks[0], False) if drinks else None
    if fixed == "count" and raw in ("a", "an", "one"):  # "I have a daughter": one child
        return attribute, "1", False
    if fixed == "born":  # "had our third child" counts three; "had a baby": a new count
        return attribute, _ORDINALS.get(raw or "", (raw or "")[:-2] or None), False
    if fixed == "eats?":  # "started eating fish again": no longer vegetarian
        fish = set((raw or "").split()) - {"and"} <= _FISH  # "salmon and chicken": omnivore
        return attribute, "pescatarian" if fish else "omnivore", False
    if fixed == "pastime?":  # "i knit", "do not climb anymore": the pastime, knitting
        return (attribute, gerund(raw), False) if raw in _PASTIMES else None
    if fixed == "device?":
        return _device(value)
    if fixed == "hair?":
        return _hair(value)
    if fixed.startswith("-") and len(fixed) > 1:  # "am sober": a named value taken back
        return attribute, fixed[1:], True
    if fixed == "vehicle?":
        return (attribute, value, False) if value and _is_vehicle(value) else None
    if fixed == "count":
        count = NUMBER_WORDS.get(value or "any", value if (value or "").isdigit() else None)
        if value is None or value == "any":
            # "I have kids": some, not counted; "I don't have any kids" is negated by the caller
            return attribute, None, False
        return (attribute, count, False) if count is not None else None
    if fixed == "pet?":
        pet = (value or "").rstrip("s")
        pet = "dog" if pet in _DOG_BREEDS else pet
        if pet == "pet":  # "I have pets"; "I don't have any pets" is negated by the caller
            return attribute, None, False
        return (attribute, pet, False) if pet in PETS else None
    return attribute, fixed, False


def _hair(value: str | None) -> tuple[str, str, bool] | None:
    """Hair by its length or, failing that, its colour: two aspects, each one value ("long
    brown" is long; dyeing it blue leaves the length alone)."""
    said = (value or "").split()
    for attribute, kinds in (("hair", _HAIR_LENGTHS), ("hair_color", _HAIR_COLORS)):
        named = [w for w in said if w in kinds]
        if named:
            return attribute, named[0], False
    return None


def gerund(verb: str) -> str:
    """A verb's -ing form: "knit" -> "knitting", "dance" -> "dancing", "climb" -> "climbing"
    (one syllable ending consonant-vowel-consonant doubles its last letter)."""
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _device(value: str | None) -> tuple[str, str, bool] | None:
    """The device attribute a value names and the value, or None for no device. A console's
    model is spelled out so one line's models share a word ("ps4" -> "playstation 4")."""
    named = (value or "").split()
    if len(named) == 1 and named[0] in _ANY_DEVICE:  # "on my phone all day": no device named
        return None
    # the device first ("iphone 12", "nintendo switch") or last ("windows laptop"): not
    # "two computer monitors", "started a small computer business"
    ends = {named[0], named[-1]} if named else set()
    for attribute, kinds in _DEVICES.items():
        if ends & kinds:
            if attribute == "console":
                named = [_console(word) for word in named]
            return attribute, " ".join(named), False
    return None


def _console(word: str) -> str:
    line = re.fullmatch(r"(ps)(\d)", word)
    return f"{_CONSOLE_LINES[line.group(1)]} {line.group(2)}" if line else word


def _is_vehicle(value: str) -> bool:
    """A car's value: a make first ("honda accord") or a vehicle kind last ("old truck")."""
    named = value.split()
    return named[0] in CAR_MAKES or named[-1] in VEHICLES


def _employer(raw: str) -> str | None:
    """Whom the user works at or for, or None when "at" / "for" names where, when or how long
    they work: "works standing at a kitchen counter", "at home", "at night", "for four years",
    "for my dad". A later "at" / "for" may still name the employer: "works at the front desk
    at Best Western", "for my dad at a car dealership"."""
    value = trim_value(raw)
    if value is None:
        return None
    head = _head(value)
    if head == "home" and not value.startswith("home"):  # "a nursing home" employs
        return value
    if head not in _NOT_EMPLOYERS and not (head in OTHERS and value == head):
        return value
    later = _LATER_EMPLOYER.search(raw)
    return _employer(later.group("v")) if later else None


def _head(value: str) -> str:
    """A value's head noun: its last word before a preposition, not a count ("mall near my
    home": mall, "bookstore 4": bookstore, "4 years": years)."""
    kept: list[str] = []
    for word in value.split():
        if kept and word in _HEAD_ENDS:
            break
        if not word.isdigit() or not kept:
            kept.append(word)
    return kept[-1]


_SONS_OR_DAUGHTERS = rulebook.words("kinds", "words", "sons_or_daughters")


def about_sons_or_daughters(text: str) -> bool:
    """True for a statement about a son or daughter ("I have a son named Leo", "I have two
    daughters"): a count of all the user's children ("I am a mother of three", "We just had
    a baby girl!") is another statement, and this one stays true."""
    return bool(_SONS_OR_DAUGHTERS & set(words(text)))


def names_employer(text: str) -> bool:
    """The fact names whom one works at or for besides what one does: "I'm a data analyst at
    Spotify" does, "I'm a barista" and "I work at home" do not."""
    found = _EMPLOYER_NAMED.search(" ".join(words(text)))
    return found is not None and _employer(found.group("v")) is not None
