"""Which memories a fact of a single-valued attribute is settled with, beyond its own.

Work is told two ways: what one does (job) and whom for (employer). "I'm retired now" ends
both, so the newest memory of either is the one it replaces; "Just accepted an offer from
Netflix" replaces "I'm a data analyst at Spotify", a job memory that names an employer, but
not "I'm a barista" (a barista may change cafés). A surname taken replaces a full name
("My name is Jo Brown"), not a first name alone. A residence stated replaces where the user
said they are ("I'm in Melbourne") when no residence is known. Any other fact of one side is
only shown to the decider with the other side's memories (attributes.KINDRED), never
settled on them.

And when several memories hold the value a retraction takes back ("I am married with three
kids", "I have been married for six years", both from one chat), the one it replaces is the
one last stated, said again ("I am married") or recalled, not merely the newest written.
"""

from __future__ import annotations

from memman.language.reader import READER, Topic
from memman.models import Memory


def with_other_side(topic: Topic | None, same: list[Memory], other: list[Memory]) -> list[Memory]:
    """`same` (the fact's own attribute's memories) and those of `other` (the kindred
    attribute's) that the fact settles too, newest observed first."""
    if topic is None or READER.kindred(topic.attribute) is None or not other:
        return same
    if topic.attribute == "residence":  # "I'm in Melbourne", then "We moved to Perth"
        settled = [] if same else other
    elif topic.retracted and topic.value is None:  # work ended: whichever side told it
        settled = other
    elif topic.attribute == "employer" and not topic.retracted and topic.value:
        settled = [m for m in other if READER.names_employer(m.content)]
    elif topic.attribute == "last_name" and not topic.retracted:  # a full name, not "Jo"
        settled = [m for m in other if len((_value(m) or "").split()) > 1]
    else:
        return same
    return sorted([*same, *settled], key=lambda m: m.observed_at or m.created_at, reverse=True)


def retracted_holder(topic: Topic, same_topic: list[Memory]) -> Memory:
    """The memory a retraction replaces: among those stating the newest memory's value, the
    one stated, said again or recalled last (last_accessed_at: a repeat stamps it, and so
    does a recall; no column tells the two apart)."""
    newest = same_topic[0]
    if not topic.retracted or topic.value is None or len(same_topic) < 2:
        return newest
    value = _value(newest)
    if value is None or not READER.same_value(value, topic.value):
        return newest
    holders = [m for m in same_topic if READER.same_value(_value(m), value)]
    return max(holders, key=_last_said)


def _last_said(memory: Memory) -> str:
    stated = memory.observed_at or memory.created_at
    return max(stated, memory.last_accessed_at or stated)


def _value(memory: Memory) -> str | None:
    stated = READER.about(memory.content)
    if stated is None or stated.attribute != memory.attribute or stated.retracted:
        return None
    return stated.value
