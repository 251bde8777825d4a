"""The vocabulary of topics: whom a fact can be about and the attributes it can state.

The settings name these attributes (config.single_valued), the write path asks whether one
holds a single value, and an LLM's labels are normalised here before they are trusted.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, field_validator

from memman.language.text import normalize

USER = "user"

# attribute -> what it holds. Single-valued: one current value, a newer one replaces it.
SINGLE_VALUED = frozenset(
    """residence hometown employer job relationship_status name last_name native_language age
    birthday diet smoking children car school studies""".split()
)
# Multi-valued: several true at once ("likes jazz" and "likes hiking").
MULTI_VALUED = frozenset("likes drinks pets plays speaks allergy hobby".split())
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
# People (and pets) the user talks about: "my sister lives in Rome" is the sister's residence.
OTHERS = frozenset(
    """sister brother mother mom mum father dad wife husband partner girlfriend boyfriend
    fiance fiancee son daughter kid kids children child friend boss roommate grandmother
    grandma grandfather grandpa aunt uncle cousin parents neighbor neighbour coworker
    colleague dog cat""".split()
)


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


def usable_label(value: object) -> str | None:
    """An LLM's subject or attribute, normalised, or None when it is unusable: an odd label
    must never cost the fact it came with (the extractor reads the text instead)."""
    try:
        return check_label("label", value)
    except ValueError:
        return None


class TopicLabels(BaseModel):
    """What a fact is about, as an LLM answer states it (extraction, the decision call):
    optional, and an unusable label is dropped (the extractor reads the text instead)."""

    subject: str | None = Field(
        default=None, description='Whom the fact is about: "user", or a person ("sister")'
    )
    attribute: str | None = Field(
        default=None,
        description="What it states, one key: residence, employer, job, relationship_status,"
        " name, age, diet, pets, likes, hobby ...",
    )
    _labels = field_validator("subject", "attribute")(usable_label)

    def about(self) -> tuple[str, str] | None:
        return (self.subject or "user", self.attribute) if self.attribute else None
