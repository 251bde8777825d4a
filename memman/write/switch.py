"""A switch to another kind of the same thing: "User switched back to a sitting desk" ends
"User uses a standing desk".

The two share one word and their verbs differ, so neither words nor the verb topic
(verb:use / verb:switched) tie them; what ties them is the thing: a desk, of another kind. A
switch verb ("switched", "changed", "swapped", "converted") says the old kind is
no longer used, so the memory holding the same head noun with another modifier is replaced
(UPDATE, no LLM call). It fires only when that is clear:

- both name a kind: a head noun with a modifier ("a standing desk"), the modifiers disjoint
  ("switched to a Pixel" after "uses an iPhone" names another thing: the decider's);
- no two places: "a standing desk at work" and "switched to a sitting desk at home" may both
  hold, so both stay;
- exactly one memory of the subject holds the old kind; with two it could be either.

Without a switch verb another kind is a fact of its own: "has a black dog" and "has a brown
dog" may both be true.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memman.language.text import STOPWORDS, words
from memman.language.topic import about
from memman.models import Memory, Op, Tier
from memman.write.candidate import Candidate
from memman.write.decide import Decision

# Not "went (back) to": a visit or a return ("I went to art school", "going back to vet
# school"), which on MSC persona facts the rule read as switches of kind.
_SWITCH = re.compile(
    r"(?:^| )(?:switched|switching|changed|swapped|converted)(?: back| over)?"
    r" (?:from (?P<old>.+?) )?to (?P<new>.+)$"
)
# Where the thing's name ends and its place or a later clause begins.
_AFTER = frozenset(
    """at in on for from with during when while because but and since so after before of as
    to""".split()
)
# Words before the thing's name: "sleeps on a firm mattress", "switched back to a ...".
_LEADING = frozenset("a an the my our his her their some back over to on at in with".split())
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


def _switch(text: str) -> tuple[Kind, Kind | None] | None:
    """The kind switched to, and the one switched from when the text names it."""
    found = _SWITCH.search(" ".join(words(text)))
    if found is None:
        return None
    new = kind(found.group("new"))
    if new is None:
        return None
    return new, kind(found.group("old")) if found.group("old") else None


def _held(memory: Memory, subject: str) -> Kind | None:
    """The kind of thing the memory says the subject uses or has, if it names one."""
    stated = about(memory.content)
    if stated is None or stated.subject != subject or stated.retracted:
        return None
    switched = _switch(memory.content)
    if switched is not None:
        return switched[0]
    return kind(stated.value) if stated.value is not None else None


def _another_kind(new: Kind, old: Kind, named: Kind | None) -> bool:
    if new.head != old.head or not new.modifiers or not old.modifiers:
        return False
    if new.modifiers & old.modifiers:
        return False
    if new.place and old.place and new.place != old.place:
        return False  # "a standing desk at work" / "a sitting desk at home": both may hold
    return named is None or (named.head == old.head and named.modifiers <= old.modifiers)


def switched(candidate: Candidate, subject: str, memories: list[Memory]) -> Decision | None:
    """UPDATE the one memory of the subject whose thing the candidate switches away from."""
    said = _switch(candidate.content)
    if said is None:
        return None
    new, named = said
    unique = {m.id: m for m in memories if m.content != candidate.content}
    ended = [
        (memory, old)
        for memory in unique.values()
        if (old := _held(memory, subject)) is not None and _another_kind(new, old, named)
    ]
    if len(ended) != 1:
        return None
    [(memory, old)] = ended
    why = (
        f"switched to another kind of {new.head}: {' '.join(sorted(old.modifiers))} -> "
        f"{' '.join(sorted(new.modifiers))}, the newer statement wins"
    )
    return Decision(Op.UPDATE, why, Tier.TOPIC, target=memory, content=candidate.content)
