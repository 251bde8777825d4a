"""A switch to another kind of the same thing, as its words tell it: "switched back to a
sitting desk" goes to a desk of the kind "sitting" (write/switch.py decides what it ends).

The switch verbs and the words around a thing's name are data (rules/changes.toml [switch]).
"""

from __future__ import annotations

from dataclasses import dataclass

from memman.language import rulebook
from memman.language.text import STOPWORDS, words

_SWITCH = rulebook.rows("changes", "switch.row")[0].pattern
_AFTER = rulebook.words("changes", "switch", "after")
_LEADING = rulebook.words("changes", "switch", "leading")
_MAX_WORDS = 4  # a longer phrase is a clause, not the name of a thing


@dataclass(frozen=True)
class Kind:
    """A thing named by a head noun and its modifiers, and where it is ("at work")."""

    head: str
    modifiers: frozenset[str]
    place: frozenset[str]


def kind(phrase: str) -> Kind | None:
    """ "a standing desk at work" -> Kind("desk", {"standing"}, {"work"}); None when the phrase
    names no modified thing ("decaf", "a Pixel", a whole clause)."""
    tokens = phrase.split()
    while tokens and tokens[0] in _LEADING:
        tokens = tokens[1:]
    cut = next((i for i, w in enumerate(tokens) if w in _AFTER), len(tokens))
    name, place = tokens[:cut], tokens[cut:]
    if not 2 <= len(name) <= _MAX_WORDS or any(w.isdigit() for w in name):
        return None
    head = name[-1][:-1] if name[-1].endswith("s") and not name[-1].endswith("ss") else name[-1]
    return Kind(head, frozenset(name[:-1]), frozenset(place) - STOPWORDS - _AFTER)


def switch(text: str) -> tuple[Kind, Kind | None] | None:
    """The kind switched to, and the one switched from when the text names it."""
    found = _SWITCH.search(" ".join(words(text)))
    if found is None:
        return None
    new = kind(found.group("new"))
    if new is None:
        return None
    return new, kind(found.group("old")) if found.group("old") else None
