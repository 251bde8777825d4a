"""A topic's value: where it ends in the text, its counts, and when two values are one.

"Munich last month" states the value "munich"; "82 kg now" and "90 kg" are one thing counted
differently, while "in 2019" dates it; "coffee" is a member of "caffeine", so quitting
caffeine takes coffee back. The words and patterns are rules/values.toml's.
"""

from __future__ import annotations

from memman.language import rulebook
from memman.language.text import STOPWORDS, normalize, words

_VALUE_END = rulebook.words("values", "words", "value_end")
_STATES = rulebook.words("values", "words", "states")
_OBJECTS = rulebook.words("values", "words", "objects")
_LEADING_VERB = rulebook.pattern("values", "leading_verb")
_ARTICLES = rulebook.words("values", "words", "articles")
VALUE_CLASSES = rulebook.word_sets("values", "value_classes")
PET_KINDS = rulebook.word_sets("values", "pet_kinds")
NUMBER_WORDS = rulebook.mapping("values", "map.number_words")


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


_ORDINALS = rulebook.words("values", "words", "ordinals")
_ORDINAL = rulebook.pattern("values", "ordinal")
_COUNT_WORDS = rulebook.words("values", "words", "count_words")
_NAMING = rulebook.words("values", "words", "naming")


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


_YEARLIKE = rulebook.pattern("values", "yearlike")
_DATED_BY = rulebook.words("values", "words", "dated_by")


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
