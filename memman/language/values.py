"""A topic's value: where it ends in the text, its counts, and when two values are one.

"Munich last month" states the value "munich"; "82 kg now" and "90 kg" are one thing counted
differently, while "in 2019" dates it; "coffee" is a member of "caffeine", so quitting
caffeine takes coffee back.
"""

from __future__ import annotations

import re

from memman.language.text import STOPWORDS, normalize, words

# Where a value ends: "Berlin with my wife", "Munich last month", "jazz and blues".
_VALUE_END = frozenset(
    """in at for with since because and but so now currently last this every each when while
    who which that especially from to as on after before during until anymore any more again
    these days nowadays right too though ago yesterday today tonight he she they it i we im
    ive""".split()
)
# What follows "my job is" or "my car is" that is no value of it: where or how it is ("in
# the shop", "so stressful", "dead"), or what it does to the user ("killing me").
_STATES = frozenset(
    """dead broken stolen stressful boring exhausting awful terrible great fine ok okay busy
    hard crazy amazing done over gone fixed new old pretty really very quite super totally
    absolutely kind sort such not still always never finally being getting going""".split()
)
_OBJECTS = frozenset("me us him her them everyone".split())
# "I like to go fishing" likes "fishing".
_LEADING_VERB = re.compile(r"^(?:to go |to |going |go )")
_ARTICLES = frozenset("a an the my our some any".split())
# A retraction of the class takes back each of its members: "I quit caffeine" takes back
# "I drink coffee every morning".
VALUE_CLASSES = {
    "caffeine": frozenset("coffee espresso latte lattes cappuccino tea caffeine".split()),
    "alcohol": frozenset(
        """alcohol beer wine whiskey whisky vodka gin rum booze cider cocktail cocktails lager ale
        prosecco champagne tequila""".split()
    ),
    "pets": frozenset("dog cat rabbit hamster bird fish parrot snake turtle pet".split()),
}
# A pet by its kind, for a take-back only ("gave the bird away" ends "has a parrot"): as values
# of a fact, "a parrot" and "another bird" may be two pets, so same_value keeps them apart.
PET_KINDS = {
    "bird": frozenset("parrot budgie budgerigar canary cockatiel parakeet lovebird".split()),
    "dog": frozenset("puppy pup".split()),
    "cat": frozenset(["kitten"]),
    "fish": frozenset("goldfish betta".split()),
}
NUMBER_WORDS = {
    "a": "1", "an": "1", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10", "no": "0",
}  # fmt: skip


def trim_value(raw: str) -> str | None:
    """The value's words up to where it ends, without articles: "the Berlin office" ->
    "berlin office", "Munich last month" -> "munich"."""
    kept: list[str] = []
    for word in _LEADING_VERB.sub("", raw).split():
        if kept and (word in _VALUE_END or (word.endswith("ly") and len(word) > 4)):
            break
        if word in _ARTICLES and not kept:
            continue
        kept.append(word)
    value = " ".join(kept)
    return value or None


def is_state(value: str) -> bool:
    """Whether a value said after "my <thing> is" tells how the thing is, not what it is:
    "my car is in the shop" must not replace "I drive a Honda Civic"."""
    first, *rest = value.split() or [""]
    doing = first.endswith("ing") and rest[:1] != [] and rest[0] in _OBJECTS
    return first in _VALUE_END or first in _STATES or doing


_ORDINALS = frozenset(
    "first second third fourth fifth sixth seventh eighth ninth tenth once twice".split()
)
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$")
_COUNT_WORDS = frozenset("time times".split())  # "four times a week": part of the count
_NAMING = frozenset("number no".split())


def counted(value: str) -> tuple[str, frozenset[str]]:
    """A value's words without its counts, and the counts: "10 km three times a week" ->
    ("km week", {"10", "3"}). "82 kg now" and "90 kg" are the same thing counted
    differently; a year ("in 2019") is a count too, and the caller decides what to do with it.
    A number after "number" names a thing: "boat number 2" and "boat number 3" are two boats."""
    words_, counts = [], set()
    before = ""
    for word in (trim_value(value) or "").split():
        named, before = before in _NAMING, word
        if word in _ARTICLES or word in _COUNT_WORDS:
            continue
        if named:
            words_.append(word)
        elif word.isdigit() or word in NUMBER_WORDS or word in _ORDINALS or _ORDINAL.match(word):
            counts.add(NUMBER_WORDS.get(word, word))
        else:
            words_.append(word.rstrip("s"))
    return " ".join(words_), frozenset(counts)


# A number that may be a year: four digits from 1900 to 2099 ("the 1990s" too), not a part of
# a longer number ("12000", "2,000", "1950.5") nor an amount of money ("$1950").
_YEARLIKE = re.compile(r"(?<![\w$£€¥.,])(?:19|20)\d\d(?=(?:s|['’]s)?\b)(?![.,]\d)")
# A word before a year that names the dated thing: "a 2015 honda", "my 2019 tax return".
_DATED_BY = frozenset("a an the my our your his her their its this that".split())


def years(text: str) -> frozenset[str]:
    """The numbers of the text that date something ("in 2019", "since 2021", "born in 1990",
    "class of 2012", "a 2015 honda"), not those counting the word right after them: "2000
    followers", "1900 fish" and "1950 dollars" are counts, which a later count replaces,
    where "visited Paris in 2019" and "in 2022" are two visits."""
    said = normalize(text)
    found = set()
    for year in _YEARLIKE.finditer(said):
        after = words(said[year.end() :])[:1]
        before = words(said[: year.start()])[-1:]
        counts = after and not (after[0] in STOPWORDS or after[0][0].isdigit())
        if not counts or (before and before[0] in _DATED_BY):
            found.add(year.group())
    return frozenset(found)


def same_value(a: str | None, b: str | None) -> bool:
    """Two values that name the same thing: equal, one a member of the other's class
    ("coffee" and "caffeine"), or equal but for a plural."""
    if a is None or b is None:
        return False
    if a == b or a.rstrip("s") == b.rstrip("s"):
        return True
    return any(
        (a == name and b in members) or (b == name and a in members)
        for name, members in VALUE_CLASSES.items()
    )


def of_kind(value: str | None, kind: str | None) -> bool:
    """A pet's value of the kind a take-back names ("parrot" of "bird"), or the same value."""
    return same_value(value, kind) or value in PET_KINDS.get(kind or "", ())
