"""Facts written as labels: "Job: barista", "Name is John", "Monthly rent: $1,200".

Notes, forms and LLM extractors drop the subject. mem0's extraction prompt writes "Name is
John" and "Favourite movies are Inception and Interstellar"; a profile pasted into a chat
reads "Location: Leeds". The subjectless verbs ("Lives in Leeds") are speaker.py's; a label
has a noun first, which read as a person named by it ("Name is John" was a person called
Name) or as nothing, so "Location: Leeds" never met "I moved to York".

A label is the user's own thing, read as "my <key> is <value>" would be. A key the
vocabulary knows (attributes.filed: "Name", "Job title", "Allergies") files the value under
its attribute after a colon even where that sentence reads as nothing ("my location is
Leeds"), and "none" takes the attribute back ("Pets: none"). A key it does not know labels
only a favourite or an amount ("Monthly rent is $1,200"): "Anna is vegan" and "Dinner is at
7" are no labels, and after a colon the value may be a sentence of its own ("Update: I moved
to York").
"""

from __future__ import annotations

from dataclasses import dataclass

from memman.language import rulebook
from memman.language.attributes import AMOUNT, FAVORITE, MULTI_VALUED, SINGLE_VALUED, filed
from memman.language.text import words

# The patterns: rules/labels.toml.
_COLON = rulebook.pattern("labels", "colon")
_NOUN_IS = rulebook.pattern("labels", "noun_is")


@dataclass(frozen=True)
class Label:
    """A label: its key, its sentence ("my job is barista"), the attribute its key names
    (None: one the vocabulary does not know), its value, and whether a colon marked it."""

    key: str
    sentence: str
    attribute: str | None
    value: str
    colon: bool

    @property
    def takes_back(self) -> bool:
        """ "Pets: none", "Smoker: no": the user has none."""
        return self.colon and self.value in _NONE


_NONE = frozenset(rulebook.listed("labels", "listed", "none"))


def label(text: str) -> Label | None:
    """The label `text` is, or None when it is none."""
    colon = _COLON.match(text.strip())
    found = colon or _NOUN_IS.match(" ".join(words(text)))
    if found is None:
        return None
    key = " ".join(words(found.group("key")))
    value = " ".join(words(found.group("value")))
    if not key or not value:
        return None
    attribute = filed(key.replace(" ", "_"))
    known = attribute in SINGLE_VALUED | MULTI_VALUED
    sentence = f"my {key} {'are' if key.endswith('s') else 'is'} {value}"
    return Label(key, sentence, attribute if known else None, value, colon is not None)


def measured(attribute: str, value: str | None) -> bool:
    """Whether a label of a key the vocabulary does not know states what it may: a favourite
    ("Favourite movies are ..."), or an amount that starts with its number ("Monthly rent is
    $1,200"; "Dinner is at 7" is no amount)."""
    if attribute.startswith(FAVORITE + ":"):
        return True
    return attribute.startswith(AMOUNT + ":") and bool(value) and value[:1].isdigit()
