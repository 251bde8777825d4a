"""The vocabulary of topics: whom a fact can be about and the attributes it can state.

The settings name these attributes (config.single_valued), the write path asks whether one
holds a single value, and an LLM's labels are normalised here before they are trusted.
"""

from __future__ import annotations

import re

from memman.language import rulebook
from memman.language.text import normalize

USER = "user"

# The vocabulary: rules/attributes.toml (attribute -> what it holds, what is kin to what).
SINGLE_VALUED = rulebook.words("attributes", "words", "single_valued")
MULTI_VALUED = rulebook.words("attributes", "words", "multi_valued")
KINDRED = rulebook.mapping("attributes", "map.kindred")
TIMED = rulebook.words("attributes", "words", "timed")
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
KIN = rulebook.mapping("attributes", "map.kin")
OTHERS = rulebook.words("attributes", "words", "others").union(KIN)
_THE_USER = rulebook.words("attributes", "words", "the_user")
_OWNER = rulebook.pattern("attributes", "owner")


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


ALIASES = rulebook.mapping("attributes", "map.aliases")
_FAVORITE_THINGS = rulebook.mapping("attributes", "map.favorite_things")
_FAVORITE = rulebook.pattern("attributes", "favorite")


def favorite_key(thing: str) -> str:
    """The attribute of a favourite thing: "favorite:band" for the group, film or band."""
    return f"{FAVORITE}:{_FAVORITE_THINGS.get(thing, thing).replace(' ', '_')}"


_PER = rulebook.pattern("attributes", "per")


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
