"""Take-backs no attribute pattern reads: "sold my motorcycle", "stopped learning German".

A retraction of this kind names its object instead of an attribute, so supersede.py asks here
which one memory it ends: the same person's, stated by the same verb (or any having), holding
every word of what is taken back. Kept apart from the attribute rules because it matches by
the object's words, not by the topic's value.
"""

from __future__ import annotations

from memman.language.reader import ENDED, READER, VERB, Topic
from memman.models import Memory, Op, Tier
from memman.write.candidate import Candidate
from memman.write.decide import Decision, negates

# A take-back names one thing: an object of more words is a sentence that happens to hold a
# negation ("I'm quite positive about it except I wouldn't want ...", MRPC), not a take-back.
_MAX_TAKEN = 4


def taken_back(candidate: Candidate, topic: Topic, seen: list[Memory]) -> Decision | None:
    """A retraction no attribute pattern reads ("sold my motorcycle", "stopped learning
    German", "cancelled the gym membership"): the one active memory of the same person that
    holds every word of what is taken back is replaced by it. Two or more such memories, or
    none, or only memories whose topic is not known: nothing is settled. A verb takes back
    only what the same verb stated ("stopped learning German" / "is learning German", not
    "loves German films"), "have" what any having stated; a verb that ends something
    (topic.ENDED: "sold", "cancelled") any memory."""
    read = READER
    wanted = read.stems(read.taken(topic.value or ""))
    if not wanted or len(wanted) > _MAX_TAKEN:
        return None
    if topic.attribute == ENDED:
        verbs = None
    elif topic.attribute in read.having():
        verbs = read.having()
    else:
        verbs = frozenset({topic.attribute})
    holders = {
        m.id: m
        for m in seen
        if m.subject == topic.subject
        and m.attribute is not None
        and (verbs is None or m.attribute in verbs or _pastime_of(m, topic.attribute))
        and wanted <= read.stems(m.content)
        and not _says_retracted(m)
    }
    if len(holders) != 1:
        return None
    if negates(candidate.content, next(iter(holders.values())).content):
        return None  # the same words negated: the router and the decider's (decide.negates)
    [memory] = holders.values()
    why = f"takes back {topic.value!r}, which this memory states; the newer statement replaces it"
    return Decision(Op.UPDATE, why, Tier.TOPIC, target=memory, content=candidate.content)


def _pastime_of(memory: Memory, attribute: str) -> bool:
    """The memory states the pastime the verb names: "I read a lot" is hobby reading, and
    "I don't read a lot and am busy with work" (verb:read) takes it back."""
    if memory.attribute != "hobby" or not attribute.startswith(VERB + ":"):
        return False
    read = READER
    stated = read.about(memory.content)
    return stated is not None and stated.value == read.gerund(attribute.split(":", 1)[1])


def _says_retracted(memory: Memory) -> bool:
    """The memory already denies what it names: a retraction ("doesn't have a car") or a
    negated value ("has no car"), so a take-back of the same thing restates it."""
    stated = READER.about(memory.content)
    return stated is not None and (stated.retracted or bool(READER.negations(stated.value or "")))
