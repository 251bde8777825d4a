"""Readings whose value is not what the attribute holds, put right after the reading.

An MSC persona's facts are all true at once, so each replacement between two facts of one
persona loses a true fact (benchmarks/bench_personas.py). Writing every persona's facts
found the reader's value misread in a few shapes:

- "I live in a house" / "I live in California": a kind of home is no place. It is the
  dwelling ("I moved into a condo" replaces it), and "I grew up in an apartment" no hometown.
- "I recently moved to this country": "this country" names no place.
- "I am 5' 3"": a height, not an age of 5; "I was born in 1990" a year, not a hometown.
- "I have one son and one daughter": two children, not one.
- "I am an ex chef": a past job, not the current one.
- "I study on the weekends", "I drive everywhere", "My car is black": when or how, not what;
  "I study at UCLA" is the school.
"""

from __future__ import annotations

from memman.language import rulebook
from memman.language.attributes import AMOUNT
from memman.language.text import words
from memman.language.values import NUMBER_WORDS

# The words and patterns: rules/senses.toml.
_DWELLINGS = rulebook.words("senses", "words", "dwellings")
_PLACES = frozenset({"residence", "hometown", "whereabouts"})
_PATTERNS = rulebook.patterns("senses")
_DEICTIC = _PATTERNS["deictic"].pattern
_HEIGHT = _PATTERNS["height"].pattern
_PAST_ROLE = _PATTERNS["past_role"].pattern
_BORN_WHEN = _PATTERNS["born_when"].pattern
_COUNTS = _PATTERNS["counts"].pattern
# Attributes whose value is a thing, never led by a preposition ("studies on the weekends").
_THINGS = frozenset("studies job employer car phone computer".split())
_LED = rulebook.words("senses", "words", "led")
_NOT_THINGS = rulebook.words("senses", "words", "not_things")

Reading = tuple[str, str, str | None]  # subject, attribute, value


def in_sense(subject: str, attribute: str, value: str | None, text: str) -> Reading | None:
    """The reading of `text` with its value in the sense the attribute holds, or None when
    the value is none of the attribute's (the fact is then routed by its words)."""
    if value is None:
        return subject, attribute, value
    head = value.split()[-1]
    if attribute in _PLACES and _DEICTIC.match(value):
        return None
    born = _BORN_WHEN.match(value) if attribute == "hometown" else None
    if born:
        return subject, "birth_year", born.group("year")
    if attribute in _PLACES and head in _DWELLINGS:
        return (subject, "dwelling", value) if attribute == "residence" else None
    if attribute == "age" and _HEIGHT.search(text):
        return subject, f"{AMOUNT}:height", value
    if attribute == "children":
        counted = [NUMBER_WORDS.get(n, n) for n in _COUNTS.findall(" ".join(words(text)))]
        if len(counted) > 1 and all(n.isdigit() for n in counted):
            return subject, attribute, str(sum(int(n) for n in counted))
    if attribute == "studies" and value.startswith("at "):  # "studies at Oxford": the school
        return subject, "school", value.removeprefix("at ")
    if attribute == "job" and _PAST_ROLE.match(value):
        return None
    if attribute in _THINGS and (value in _NOT_THINGS or value.split()[0] in _LED):
        return None
    return subject, attribute, value
