"""Which related memories a fact must be compared with: those about the same thing.

Runs between candidate gathering and the router (memman/write/route.py). A memory reached
only through words that say how the speaker relates to something ("like", "have", "want":
language/bearing.py), never what it is, is not about the candidate's topic: "I like to read
books" is no reason to ask the LLM about "I like to play basketball". Dropping it here lets
the router call the fact novel with no LLM call when nothing else relates to it. A memory
still reaches the decider when it shares a word that names the topic ("basketball"), or has
the candidate's subject and named attribute ("I have a dog named Toto" / "I have a
chihuahua": both (user, pets), sharing only "have" and "named"). A candidate made of
relation words alone ("I love it") keeps every memory: they are all it says.

With an embedder, a memory that shares no topic word with the candidate needs a cosine
halfway from novel_cosine to noop_cosine (MiniLM: 0.725), whether it shares relation words or
no word at all: two chat facts of one shape about different things ("I like Spring" / "I like
winter", "I paint" / "I teach art", "I am Irish" / "I am american") score 0.5-0.7 with
MiniLM, and below the halfway point the replay's decider was asked about 1,800 of 2,500 facts
(benchmarks/RESULTS.md, "Conversation replay: LLM calls per fact"). The exceptions: the
memories of the candidate's named attribute, but for those whose words name another value of
it (supersede.TopicRouting.other_values: "I like rain" / "I like winter", told apart without
an embedder, judged here by the cosine like any other), and, for a candidate read as no named
attribute, a memory sharing no word that is of a named one or of none, kept at novel_cosine
(the router's test): no topic tells them apart, and "User eats bread and pasta again" may
change "User follows a strict keto diet" (MiniLM 0.51).
"""

from __future__ import annotations

from collections.abc import Collection

from memman.language.reader import READER
from memman.write.candidate import Candidate
from memman.write.retrieval import Retrieved
from memman.write.route import Thresholds

# A memory sharing no topic word with the candidate needs a cosine this far from
# novel_cosine to noop_cosine (see the module docstring).
_RELATION_SHARE = 0.5


def sharing_topic_words(text: str, related: list[Retrieved]) -> list[Retrieved]:
    """The related memories that share a word naming what the text (a candidate's, a chat
    message's) is about, not only words of how one relates to it ("like", "have", "used
    to"); all of them when the text is made of such words alone ("I love it")."""
    words = READER.bearing_words(text)
    if not words:
        return related
    return [r for r in related if words & READER.bearing_words(r.memory.content)]


def pertinent(
    candidate: Candidate,
    related: list[Retrieved],
    cosine: Thresholds | None,
    nearby: Collection[str] = (),
    apart: Collection[str] = (),
) -> list[Retrieved]:
    """The related memories about what the candidate is about (see the module docstring).

    `nearby`: ids of the memories of the attribute the candidate is nearest to by meaning
    (write/meaning.py), kept like those of its named attribute. `apart`: ids of memories of
    its named attribute whose words name another value (supersede.TopicRouting.other_values),
    judged like any memory sharing no topic word.
    """
    words = READER.bearing_words(candidate.content)
    if not words:
        return related
    topic = candidate.topic
    named = topic if topic is not None and not READER.is_verb_topic(topic.attribute) else None
    bar = None if cosine is None else cosine.novel + _RELATION_SHARE * (cosine.noop - cosine.novel)

    def about_it(r: Retrieved) -> bool:
        memory = r.memory
        if words & READER.bearing_words(memory.content) or memory.id in nearby:
            return True
        attribute = named and (named.subject, named.attribute)
        if (memory.subject, memory.attribute) == attribute and memory.id not in apart:
            return True
        if bar is None or r.cosine is None:
            return False
        if r.cosine >= bar:
            return True
        # A fact read as no named attribute may change a named one, or one no topic was read
        # for, in other words: no topic tells them apart (the router asks novel_cosine).
        return (
            named is None
            and (memory.attribute is None or not READER.is_verb_topic(memory.attribute))
            and not READER.content_tokens(candidate.content) & READER.content_tokens(memory.content)
        )

    return [r for r in related if about_it(r)]
