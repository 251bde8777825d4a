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
dog" may both be true. What the words say (the switch, the kinds) is the reader's
(language/switches.py); which memory it ends is decided here.
"""

from __future__ import annotations

from memman.language.reader import READER, Kind
from memman.models import Memory, Op, Tier
from memman.write.candidate import Candidate
from memman.write.decide import Decision


def _held(memory: Memory, subject: str) -> Kind | None:
    """The kind of thing the memory says the subject uses or has, if it names one."""
    stated = READER.about(memory.content)
    if stated is None or stated.subject != subject or stated.retracted:
        return None
    switched = READER.switch(memory.content)
    if switched is not None:
        return switched[0]
    return READER.kind(stated.value) if stated.value is not None else None


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
    said = READER.switch(candidate.content)
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
