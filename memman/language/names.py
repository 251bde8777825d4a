"""People's names in a fact: "I'm Tom" states the user's name, "My wife Ana works as a
dentist" the wife's job (the name in apposition is no verb).

A name is told from other words by its capital alone, and a capital is not enough: "I'm
Canadian", "I'm Catholic" and "I'm OK" are no names. A capitalised word after "I'm" is read
as a name only when no pattern reads it ("I'm Vegan" is a diet), it is not a nationality,
religion or adjective by its ending, and it ends the clause ("I'm Tom.", "I'm Tom and ...",
"I'm Tom, ..."): "I'm President of the club" is no name. A wrong name is costly (it would
replace the user's real one), a missed one is read as before (verb:be).
"""

from __future__ import annotations

import re

from memman.language import rulebook
from memman.language.attributes import OTHERS
from memman.language.kinds import PETS
from memman.language.patterns import read_predicate
from memman.language.text import STOPWORDS

# The words: rules/names.toml.
_NOT_NAME_ENDINGS = rulebook.listed("names", "listed", "not_name_endings")
_NOT_NAMES = rulebook.words("names", "words", "not_names")
_CLAUSE_AFTER = rulebook.words("names", "words", "clause_after")
_CLAUSE_END = re.compile(r"[,.!;:…)]+$")


def self_named(predicate: list[str], written: list[str]) -> str | None:
    """The name in "am Tom" ("I'm Tom", "I am Tom."), or None.

    `predicate`: the first-person words ("am", "tom", ...); `written`: the same words as
    written, aligned with them from the name on."""
    if len(predicate) < 2 or predicate[0] != "am" or not written:
        return None
    name, shown = predicate[1], written[0]
    if not _written_as_name(name, shown) or not _is_name(name):
        return None
    follows = predicate[2] if len(predicate) > 2 else None
    if follows is not None and not _CLAUSE_END.search(shown) and follows not in _CLAUSE_AFTER:
        return None
    return name


def without_apposition(rest: list[str], text: str) -> list[str]:
    """The words after "my" without a name in apposition: "wife ana works as a dentist" ->
    "wife works as a dentist", "son leo is 5" -> "son is 5". `text`: the fact as written."""
    if len(rest) < 3 or rest[0] not in OTHERS | PETS or not _is_name(rest[1]):
        return rest
    shown = (w for w in text.split() if _bare(w) == rest[1])
    if not any(_written_as_name(rest[1], w) for w in shown):
        return rest
    return [rest[0], *rest[2:]]


def _is_name(word: str) -> bool:
    return (
        word.isalpha()
        and word not in STOPWORDS | _NOT_NAMES
        and not word.endswith(_NOT_NAME_ENDINGS)
        and read_predicate(f"am {word}") is None
    )


def _written_as_name(word: str, shown: str) -> bool:
    """True if `shown` writes `word` as a name: a capital, then small letters ("Tom", "Tom,";
    not "OK", "tom" or the possessive "Tom's")."""
    bare = _CLAUSE_END.sub("", shown)
    return bare.lower() == word and bare[:1].isupper() and bare[1:].islower()


def _bare(written: str) -> str:
    return _CLAUSE_END.sub("", written).lower()
