"""The extractor's patterns: the phrasings of each attribute, matched against a predicate.

A predicate is the fact in the first person without its subject ("live in berlin"); the
first row that reads it names its attribute and value. The rows are data: rules/life.toml
and rules/predicates.toml, loaded by rulebook.py, each with the facts it must read and the
look-alikes it must not. Favourites and amounts have patterns of their own, since the
attribute is named in the text ("my favorite band is").
"""

from __future__ import annotations

import functools
import re

from memman.language import rulebook
from memman.language.attributes import FAVORITE, amount_key, favorite_key
from memman.language.kinds import (
    COMPANIES,
    DIETS,
    DRINKABLE,
    check_kind,
    make_pattern,
    vehicle_pattern,
)
from memman.language.rulebook import Row
from memman.language.text import content_tokens
from memman.language.values import trim_value

# The rows of every attribute's phrasings, in precedence order: life's turns first, being the
# more specific, then the general phrasings (rules/life.toml, rules/predicates.toml; the first
# row that reads a predicate wins). The pieces built from word tables kept in code:
_PIECES = {
    "COMPANIES": "|".join(sorted(COMPANIES)),
    "DIETS": "|".join(sorted(DIETS)),
    "DRINKABLE": "|".join(sorted(DRINKABLE)),
    "MAKES": make_pattern(),
    "VEHICLES": vehicle_pattern(),
}
ROWS: list[Row] = [*rulebook.rows("life", **_PIECES), *rulebook.rows("predicates", **_PIECES)]
_PATTERNS: list[tuple[str, re.Pattern[str], str | None]] = [
    (str(row.attribute), row.pattern, row.fixed) for row in ROWS
]
# Every pattern as one alternation, each a group of its own (its named groups made plain): one
# scan finds the first pattern that matches, where trying them one by one cost a call per
# pattern, and most predicates match none. The alternation tries them in order, as the loop.
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
_FIRST = re.compile(
    "|".join(f"({_NAMED_GROUP.sub('(?:', pattern.pattern)})" for _, pattern, _ in _PATTERNS)
)
assert _FIRST.groups == len(_PATTERNS), "a pattern holds a group that is not named"
_NOW = r"(?: now| these days| nowadays| right now| at the moment)?"
_FAVORITE = re.compile(
    rf"^my (?:new |current )?(?:favorite|favourite|main) (?P<thing>\w+(?: \w+)??){_NOW} am"
    r"(?: now)? (?P<v>.+)$"
)
_PHONE_NUMBERS = frozenset(("number", "cell number", "mobile number", "mobile", "cell"))
_AMOUNT = re.compile(
    r"^my (?P<thing>(?:\w+ )?\w+(?<!s)) (?:am|am now|went up to|went down to|rose to|fell to"
    r"|increased to|dropped to) (?P<v>(?:.* )?\d+(?: .*)?)$"
)
# "Radiohead is the group I love most": favorite:band.
_LOVED_MOST = re.compile(
    r"^(?P<v>.+) am the (?P<thing>\w+) i (?:love|like|enjoy)(?: the)? (?:most|best)$"
)
_FAVORITE_AFTER = re.compile(
    rf"^(?P<v>.+) am my (?:new )?(?:favorite|favourite) (?P<thing>\w+(?: \w+)??){_NOW}$"
)
_DISLIKE = ("dislike ", "hate ", "can not stand ")


def stated_favorite(spoken: str) -> tuple[str, str | None] | None:
    """A favourite named before what it is: "coffee am my favorite drink", "radiohead am the
    group i love most" (the whole fact in the first person, subject included)."""
    favorite = _FAVORITE_AFTER.match(spoken) or _LOVED_MOST.match(spoken)
    if favorite is None:
        return None
    return favorite_key(favorite.group("thing")), trim_value(favorite.group("v"))


def read_predicate(predicate: str) -> tuple[str, str | None, bool] | None:
    """The attribute, value and whether the predicate retracts it, as the first pattern that
    matches reads them; None when none does."""
    favorite = _FAVORITE.match(predicate) or _FAVORITE_AFTER.match(predicate)
    if favorite:
        return favorite_key(favorite.group("thing")), trim_value(favorite.group("v")), False
    read = read_row(predicate)
    if read is not None:
        return read[1]
    amount = _AMOUNT.match(predicate)  # after the patterns: "my car is a 98 jaguar" is a car
    if amount:
        thing = amount.group("thing")
        phone = thing in _PHONE_NUMBERS and sum(c.isdigit() for c in predicate) >= 6
        thing = "phone number" if phone else thing  # "my number is 555-0143", not "is 42"
        return amount_key(thing), trim_value(amount.group("v")), False
    return None


def read_row(predicate: str) -> tuple[Row, tuple[str, str | None, bool]] | None:
    """The first row that reads the predicate (its pattern matches, its check passes), and
    what it reads: attribute, value and whether the predicate retracts it."""
    first = _FIRST.match(predicate)
    start = first.lastindex - 1 if first and first.lastindex else len(ROWS)
    for row, (attribute, pattern, fixed) in zip(ROWS[start:], _PATTERNS[start:], strict=True):
        found = pattern.match(predicate)
        if not found:
            continue
        raw = found.groupdict().get("v")
        value = trim_value(raw) if raw else None
        if fixed is None:
            if not value:
                continue
            retracted = attribute == "likes" and predicate.startswith(_DISLIKE)
            return row, (attribute, value, retracted)
        checked = check_kind(attribute, fixed, raw, value)
        if checked is not None:
            return row, checked
    return None


@functools.cache
def phrasing(attribute: str) -> frozenset[str]:
    """The content words the extractor's patterns use to say an attribute ("based", "reside",
    "moved" for residence): two statements of one value that differ only in these say the
    same thing ("I live in Berlin" / "I'm based in Berlin")."""
    if attribute.startswith(FAVORITE + ":"):
        return content_tokens("favorite favourite my the is")
    literal = " ".join(
        " ".join(re.findall(r"[a-z]{3,}", pattern.pattern))
        for name, pattern, _ in _PATTERNS
        if name == attribute
    )
    return content_tokens(literal)
