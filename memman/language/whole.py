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


def stated_whole(spoken: str) -> tuple[str, str] | None:
    """A fact whose phrasing holds its subject (the whole fact in the first person)."""
    for attribute, pattern in _WHOLE:
        found = pattern.match(spoken)
        value = trim_value(found.group("v")) if found else None
        if value:
            return attribute, value
    return None
