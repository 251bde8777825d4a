"""Routing by topic: the memory a new fact supersedes, found by what both are about.

Runs after retrieval and before the word-based router (memman/write/route.py). For a candidate
whose topic is known (memman/language/topic.py) it settles the clear cases with no LLM call, offline
and online alike:

- a single-valued attribute holds one current value: a different value replaces the newest
  memory of that subject and attribute (UPDATE, the old text stays in its history), and a
  retraction ("I don't live in Berlin anymore") replaces it too, clearing the value;
- a multi-valued attribute holds several: a retraction replaces the memory with that value
  ("I no longer have a cat" / "I have a cat"), and a new value is a fact of its own;
- a value taken back that is not the current one ("I don't live in Paris anymore" while the
  memory says Berlin) changes nothing and goes into the memory's history;
- a fact said again word for word after a newer statement replaced it ("I read a lot", then
  "I don't read a lot", then "I read a lot") is the newest statement: it replaces the memory
  that replaced it, with or without a topic (_said_again).

"Newer" means observed later: apply.py keeps any UPDATE or DELETE of a statement older than
the memory's current one out of the memory (into its history), whichever tier decided it.

It also tells the router which retrieved memories are known to be about something else
(another subject or attribute, or another value of a multi-valued attribute): they are not
shown to the decider, which is what keeps "likes jazz" / "likes hiking" from costing an LLM
call. Memories whose topic is not known are always shown.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from memman.language.reader import READER, USER, Topic
from memman.models import Memory, Op, Tier
from memman.write.candidate import Candidate
from memman.write.decide import Decision
from memman.write.holders import retracted_holder
from memman.write.switch import switched
from memman.write.takeback import taken_back


@dataclass(frozen=True)
class TopicRouting:
    decision: Decision | None = None  # settled by topic; None: the router and decider go on
    other_topics: frozenset[str] = frozenset()  # ids of memories about something else
    same_topic: list[Memory] = field(default_factory=list)  # must reach the decider
    # With an embedder: same-topic memories whose words name another value ("likes rain" /
    # "likes winter"), kept for the cosine to judge rather than forced on the decider.
    other_values: frozenset[str] = frozenset()


def route_by_topic(
    candidate: Candidate,
    same_topic: list[Memory],
    retrieved: list[Memory],
    *,
    single_valued: frozenset[str],
    by_meaning: bool = False,
    replacing: Memory | None = None,
) -> TopicRouting:
    """Settle the candidate by topic if its topic makes the answer clear.

    `same_topic` holds the scope's active memories with the candidate's subject and
    attribute, newest observed first; `retrieved` what word (and vector) retrieval found.
    `by_meaning`: an embedder compares the texts, so values of one attribute are never told
    apart by their words alone: those the words would tell apart are returned as
    `other_values`, for the cosine to judge (write/pertinent.py) instead of the decider.
    `replacing`: the active memory an UPDATE took the candidate's very text out of
    (Store.active_replacing), if any (_said_again).
    """
    topic = candidate.topic
    seen = [*retrieved, *same_topic]
    again = _said_again(candidate, replacing) if replacing is not None else None
    if again is not None:
        return TopicRouting(again, same_topic=same_topic)
    if topic is None or replacing is not None:
        # replacing grew from the candidate's very text ("I hike" -> "I hike a few times a
        # year"): the router's NOOP onto it, not a topic's onto another ("I hike daily")
        return TopicRouting()
    other = frozenset(
        m.id
        for m in seen
        if _other_topic(topic, m, single_valued, by_meaning)
        and not _introduces(m, topic.subject, candidate.content)
    )
    related = [m for m in same_topic if m.id not in other]
    values = frozenset(
        m.id
        for m in seen
        if by_meaning
        and m.id not in other
        and _other_topic(topic, m, single_valued, by_meaning=False)
        and not _introduces(m, topic.subject, candidate.content)
    )
    if READER.is_verb_topic(
        topic.attribute
    ):  # a named attribute (the caller's too) has its own rules
        switch = switched(candidate, topic.subject, [m for m in seen if m.id not in other])
        if switch is not None:  # "switched back to a sitting desk" ends "uses a standing desk"
            return TopicRouting(switch, other, related, values)
    if topic.retracted and READER.is_verb_topic(topic.attribute):
        taken = taken_back(candidate, topic, seen)
        return TopicRouting(taken, other, related, values)
    if not same_topic or READER.is_verb_topic(topic.attribute):
        # A fallback topic only tells other facts apart; what a verb's object changes is the
        # router's and the decider's to judge (they see the memories of the same verb), but
        # for a new count of the same thing ("runs 5 km" -> "runs 10 km").
        recount = _recounted_verb(candidate, topic, related) if same_topic else None
        return TopicRouting(recount, other, related, values)
    if READER.is_single_valued(topic.attribute, single_valued):
        current = retracted_holder(topic, same_topic)
        decision = _single(candidate, topic, current) or _restated_older(
            candidate, topic, same_topic[1:]
        )
    else:
        decision = _multi(candidate, topic, same_topic)
    return TopicRouting(decision, other, related, values)


def _other_topic(
    topic: Topic, memory: Memory, single_valued: frozenset[str], by_meaning: bool
) -> bool:
    """True when the memory is known to state another fact than any the candidate could touch:
    it is about another person, or another recognised attribute, or another value of the same
    multi-valued one. A fallback verb topic tells nothing apart but another person's facts:
    two different verbs prove nothing ("uses a desk" / "bought a lamp"; a switch of kind is
    switch.py's), and neither do two objects of one ("supports Arsenal" / "supports Chelsea
    now")."""
    if memory.attribute is None or memory.subject is None:
        return False
    if memory.subject != topic.subject:
        return True
    if memory.attribute != topic.attribute:
        return not READER.is_verb_topic(memory.attribute) and not READER.is_verb_topic(
            topic.attribute
        )
    if READER.is_single_valued(topic.attribute, single_valued) or by_meaning:
        return False  # by_meaning: "enjoys prawns" may say "loves shellfish"; the cosine judges
    # Before parsing the memory's text: it decides nothing here, and half the memories that
    # reach this line share a verb topic with the fact (RESULTS.md, "A single write, against mem0").
    # Measured: pruning these cost 2 % of the suite's recall.
    if READER.is_verb_topic(topic.attribute):
        return False
    if topic.value is None:
        return False
    stated = READER.about(memory.content)
    if stated is None or stated.attribute != topic.attribute:
        return False
    if READER.same_value(
        stated.value, topic.replaces
    ):  # "tea instead of coffee": coffee is touched
        return False
    if stated.value is None:
        return False
    # Another value only when no word is shared: "jazz music" may refine "jazz".
    return not READER.same_value(stated.value, topic.value) and not (
        READER.object_words(stated.value) & READER.object_words(topic.value)
    )


def _introduces(memory: Memory, subject: str, text: str) -> bool:
    """True when one of the two is the user's fact that names the other's subject: "User has
    a dog named Max" introduces the dog of "User's dog is called Max", "I have a sister in
    Rome" the sister of "my sister moved to Paris". Such a pair is about one thing from two
    sides, never known to be apart; "I live in Berlin" names no sister and stays apart from
    "my sister lives in Rome"."""
    if memory.subject == USER and subject != USER:
        return _names(memory.content, subject)
    if subject == USER and memory.subject not in (None, USER):
        return _names(text, memory.subject)
    return False


def _names(text: str, subject: str) -> bool:
    """The text names the subject, in the plural too ("I have two dogs" names the dog)."""
    return subject in READER.words(text) or subject in READER.content_tokens(text)


def _said_again(candidate: Candidate, memory: Memory) -> Decision | None:
    """UPDATE the active memory whose earlier text the candidate is, word for word: a newer
    statement replaced that text ("I read a lot" -> "I don't read a lot"), and saying it again
    now makes it the newest statement, the one that holds (apply.py still keeps it out if it
    was observed before the memory's current text). Whatever decided the replacement judged
    the two to be about one thing, so no LLM is needed to judge it again, and the second row
    an ADD would make (replaying a conversation twice added one per such fact) is avoided.
    A memory that holds the candidate's wording and more ("likes jazz" -> "likes jazz and
    blues") already says it: that is the router's NOOP. The memory is found by the text's
    hash in one index seek (replaced.py), not by reading the histories of the candidates."""
    if READER.extends(memory.content, candidate.content):
        return None
    why = "said again after a newer statement replaced it in this memory; the newest statement wins"
    return Decision(Op.UPDATE, why, Tier.TOPIC, target=memory, content=candidate.content)


def _stated(memory: Memory) -> Topic | None:
    """What the memory's text says about its own attribute (None: its value is not known)."""
    stated = READER.about(memory.content)
    return stated if stated is not None and stated.attribute == memory.attribute else None


def _stating(memories: list[Memory], value: str | None) -> Iterator[tuple[Memory, Topic]]:
    """The memories (with what they state) that hold `value`, not take it back: one test
    for a value said again and for the value "instead of" names."""
    for memory in memories:
        stated = _stated(memory)
        if stated is not None and not stated.retracted and READER.same_value(stated.value, value):
            yield memory, stated


def _single(candidate: Candidate, topic: Topic, current: Memory) -> Decision | None:
    stated = _stated(current)
    if READER.stands_beside(candidate.content, topic, stated):  # "I also work as a custodian"
        return None
    if stated is None:
        if topic.value is None and current.content.casefold() == candidate.content.casefold():
            return None
        return _replace(candidate, topic, current, stated)
    if READER.same_value(stated.value, topic.replaces) and not READER.same_value(
        stated.value, topic.value
    ):
        return _replace(candidate, topic, current, stated)  # "Christina, not Chris": not alike
    same_polarity = stated.retracted == topic.retracted
    if same_polarity and (
        _alike(stated.value, topic.value) or (topic.retracted and topic.value is None)
    ):
        # The same value again: a new count ("lived in Chicago for 3 years" -> "for 4
        # years"), the same said in other words, or for the router: a refinement.
        return _newer_count(
            candidate, topic, current, READER.numbers(current.content)
        ) or _restated(candidate, topic, current, stated)
    if (
        topic.retracted
        and topic.value is not None
        and not stated.retracted
        and not READER.same_value(stated.value, topic.value)
    ):
        why = (
            f"{topic.attribute}: takes back {topic.value!r}, which is not the current value"
            f" ({stated.value!r}); kept in this memory's history"
        )
        return Decision(Op.NOOP, why, Tier.TOPIC, target=current, reinforce=False)
    if _another_child(candidate, topic, current, stated):
        return None
    return _replace(candidate, topic, current, stated)


def _restated_older(candidate: Candidate, topic: Topic, older: list[Memory]) -> Decision | None:
    """NOOP onto an older memory of a single-valued attribute that states the candidate's
    value in other words, when the newest one settled nothing: a value said again after
    another memory of the attribute was written ("I have a girlfriend" after "My girlfriend's
    name is Luis", both beside "I have a boyfriend") is not a fact of its own."""
    if topic.retracted or topic.value is None:
        return None
    for memory, stated in _stating(older, topic.value):
        restated = _restated(candidate, topic, memory, stated)
        if restated is not None:
            return restated
    return None


def _alike(a: str | None, b: str | None) -> bool:
    """The same value, or one that may be the same said another way ("medical" / "medicine":
    the same stems). Only for not replacing: a value that may be the same is the router's and
    the decider's to compare, never an UPDATE without them."""
    return READER.same_value(a, b) or (
        a is not None and b is not None and READER.stems(a) == READER.stems(b) != set()
    )


def _multi(candidate: Candidate, topic: Topic, same_topic: list[Memory]) -> Decision | None:
    if not topic.retracted:
        return _recounted(candidate, topic, same_topic)
    for memory in same_topic:
        stated = _stated(memory)
        if stated is None or stated.retracted:
            continue
        if topic.value is None or READER.of_kind(stated.value, topic.value):
            return _replace(candidate, topic, memory, stated)
    return None


def _newer_count(
    candidate: Candidate,
    topic: Topic,
    memory: Memory,
    had: frozenset[str],
    said: frozenset[str] | None = None,
) -> Decision | None:
    """UPDATE when the candidate counts the memory's thing differently (`said`: the
    candidate's counts, its numbers by default); None when the counts are the same, missing,
    or years (values.years: a year dates an event, it does not count a thing)."""
    said = READER.numbers(candidate.content) if said is None else said
    dated = READER.years(candidate.content) | READER.years(memory.content)
    if not said or not had or said == had or (said | had) & dated:
        return None
    if len(READER.numbers(candidate.content)) < len(
        READER.numbers(memory.content)
    ):  # "two brothers and
        return None  # one sister" -> "3 brothers": replacing it would drop the sister
    counts = f"{', '.join(sorted(had))} -> {', '.join(sorted(said))}"
    why = f"{topic.attribute}: the same thing counted anew ({counts}), the newer count wins"
    return Decision(Op.UPDATE, why, Tier.TOPIC, target=memory, content=candidate.content)


def _restated(candidate: Candidate, topic: Topic, memory: Memory, stated: Topic) -> Decision | None:
    """NOOP when the candidate states a single-valued memory's value in other words and adds
    nothing: every content word it has that the memory lacks is one the attribute is phrased
    with ("I'm based in Berlin" / "I live in Berlin", "User is employed at Google" / "works
    at Google") or the very value the memory states without naming it ("I'm married to
    Sarah" / "My wife is Sarah": both say married, to Sarah), and the numbers agree. "I live
    in Berlin with my wife" adds "wife": a refinement, for the router; so is a candidate with
    no word of its own (the router's lexical and containment NOOPs). A multi-valued "I love
    jazz" after "I like jazz" stays the decider's: how much the user likes it may be the
    news."""
    added = {
        word  # numbers are compared on their own: "two kids" / "2 children"
        for word in READER.content_tokens(candidate.content) - READER.content_tokens(memory.content)
        if not READER.numbers(word)
    }
    value = topic.value if READER.same_value(stated.value, topic.value) else None
    named = READER.content_tokens(value) if value else frozenset()
    if (
        not added
        or not added <= READER.phrasing(topic.attribute) | named
        or READER.numbers(candidate.content) != READER.numbers(memory.content)
    ):
        return None
    why = f"{topic.attribute}: the same value ({topic.value!r}) in other words"
    return Decision(Op.NOOP, why, Tier.TOPIC, target=memory)


def _recounted_verb(
    candidate: Candidate, topic: Topic, same_topic: list[Memory]
) -> Decision | None:
    """A verb topic's object counted anew: "User keeps 3 chickens" -> "User keeps 5 chickens",
    "I'm in my second year of nursing school" -> "third year". Only for a present-tense verb
    (a state, not an event: "visited Paris in 2019" / "in 2022" are both true)."""
    verb = topic.attribute.partition(":")[2]
    if topic.value is None or READER.is_past_verb(verb):
        return None
    thing, said = READER.counted(topic.value)
    if not thing or not said:  # nothing counted: no memory's text need be parsed
        return None
    for memory in same_topic:
        stated = _stated(memory)
        if stated is None or stated.retracted or stated.value is None:
            continue
        its_thing, had = READER.counted(stated.value)
        if thing and its_thing == thing:
            return _newer_count(candidate, topic, memory, had, said)
    return None


def _recounted(candidate: Candidate, topic: Topic, same_topic: list[Memory]) -> Decision | None:
    """A value the memory took back, stated again ("I have no pets" -> "we adopted a dog"),
    or the same value with another count ("I have two cats" -> "I have three cats now"): the
    newer statement replaces the memory. Anything else about the same value (a refinement, a
    paraphrase) is the router's to compare."""
    for memory in same_topic:
        stated = _stated(memory)
        if (
            stated is not None
            and stated.retracted
            and (stated.value is None or READER.same_value(stated.value, topic.value))
        ):  # "We adopted a greyhound" after "I don't have any pets": no longer true
            return _replace(candidate, topic, memory, stated)
    for memory, stated in _stating(same_topic, topic.replaces):
        # "drinks green tea instead of coffee": the coffee memory is no longer true.
        why = f"{topic.attribute}: {topic.value!r} instead of {stated.value!r}"
        return Decision(Op.UPDATE, why, Tier.TOPIC, target=memory, content=candidate.content)
    for memory in same_topic:
        stated = _stated(memory)
        if stated is None or stated.retracted or stated.value is None or topic.value is None:
            continue
        if not READER.same_value(stated.value, topic.value):
            thing, its_thing = READER.counted(topic.value)[0], READER.counted(stated.value)[0]
            if not thing or thing != its_thing:  # "three languages" / "four languages"
                continue
        recount = _newer_count(candidate, topic, memory, READER.numbers(memory.content))
        if recount is not None:
            return recount
    return None


def _replace(candidate: Candidate, topic: Topic, current: Memory, stated: Topic | None) -> Decision:
    """UPDATE to the candidate's text (apply keeps an older statement out: see apply.py)."""
    was = repr(stated.value) if stated is not None and stated.value else "its old text"
    if topic.retracted:
        why = f"{topic.attribute}: takes back {was}; the newer statement replaces it"
    else:
        now = repr(topic.value) if topic.value else "a new value"
        why = f"{topic.attribute} holds one value: {was} -> {now}, the newer statement wins"
    return Decision(Op.UPDATE, why, Tier.TOPIC, target=current, content=candidate.content)


def _another_child(candidate: Candidate, topic: Topic, current: Memory, stated: Topic) -> bool:
    """A statement about a son or daughter ("I have a son named Leo") beside a fact about the
    children that names none ("I am a mother of three", "We just had a baby girl!"): both
    stay true, so no topic rule replaces it. "Two sons" -> "three sons now" still does, and
    a birth still ends "I don't have kids" and a count of all of them ("I have two kids")."""
    if topic.attribute != "children" or stated.retracted:
        return False
    named = READER.about_sons_or_daughters
    return named(current.content) and not named(candidate.content)
