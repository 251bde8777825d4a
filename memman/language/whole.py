"""Facts read whole, their subject inside the phrasing: "please call me Bob" states the
user's name, "today is my 63rd birthday" their age. The patterns of patterns.py read a
predicate, the fact less its subject; these need the subject's words too."""

from __future__ import annotations

import re

from memman.language.values import trim_value

_WHOLE = [
    (
        "name",
        re.compile(
            r"^(?:please |you can |just |so |but )?(?:(?:everyone|everybody|people|most people"
            r"|my friends|friends|all my friends|they) )?calls? me (?P<v>\w+)(?: .*)?$"
        ),
    ),
    (  # "since the move it only takes me 15 minutes to get to work"
        "amount:commute",
        re.compile(
            r"^(?:.* )?it (?:now |only |just |usually )*(?:takes?|am) (?:me )?(?:only |just |about"
            r" |around |nearly |almost )?(?P<v>\w+ (?:minutes?|mins?|hours?|hrs?))(?: each way)?"
            r" (?:to (?:get|commute|drive|walk|cycle|bike) (?:to|into) (?:work|the office)"
            r"|of commuting)(?: .*)?$"
        ),
    ),
    (
        "age",
        re.compile(
            r"^(?:today|it|yesterday) (?:am|was) my (?P<v>\d+)(?:st|nd|rd|th) birthday(?: .*)?$"
        ),
    ),
    (
        "age",
        re.compile(
            r"^(?:i|user) (?:just )?(?:celebrated|had) (?:my|their|his|her) (?P<v>\d+)"
            r"(?:st|nd|rd|th) birthday(?: .*)?$"
        ),
    ),
]


# "I'm in Melbourne": a place only by its capital, and only alone ("I'm in Tokyo for work",
# "this week" is a trip; "I'm in love", "I'm in Year 10" no place).
_PLACE = re.compile(
    r"^(?:I'm|I\u2019m|I am|Im|User is|We're|We are)(?: now| still)? (?:based |living )?in"
    r" (?!(?:Grade|Year|Form|Class|Love|AA)\b)(?P<v>[A-Z][a-z]+(?: [A-Z][a-z]+)?)"
    r"(?: now| these days| nowadays)?[.!]?$"
)

# Where one is in without living there: "I'm in Medical School", "I'm in High School".
_INSTITUTIONS = frozenset(
    "school college university uni hospital prison jail army navy rehab therapy band".split()
)


def stated_place(text: str) -> str | None:
    """The town of "I'm in Melbourne" (the fact as written: the capital tells a place)."""
    found = _PLACE.match(text.strip())
    place = found.group("v").lower() if found else ""
    return None if set(place.split()) & _INSTITUTIONS else trim_value(place)


def stated_whole(spoken: str) -> tuple[str, str] | None:
    """A fact whose phrasing holds its subject (the whole fact in the first person)."""
    for attribute, pattern in _WHOLE:
        found = pattern.match(spoken)
        value = trim_value(found.group("v")) if found else None
        if value:
            return attribute, value
    return None
