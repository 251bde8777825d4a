"""Which related memories a fact must be compared with: those about the same thing.

Runs between candidate gathering and the router (memman/write/route.py). A memory reached
only through words that say how the speaker relates to something ("like", "have", "want":
language/bearing.py), never what it is, is not about the candidate's topic: "I like to read
books" is no reason to ask the LLM about "I like to play basketball". Dropping it here lets
the router call the fact novel with no LLM call when nothing else relates to it. A memory
still reaches the decider when it shares a word that names the topic ("basketball"), when it
has the candidate's subject and named attribute (a contradiction of where the user lives
shares no word at all), or when an embedder scored it: then the cosine judges it, as before.
A candidate made of relation words alone ("I love it") keeps every memory: they are all it
says.
"""

from __future__ import annotations

from memman.language.attributes import is_verb_topic
from memman.language.bearing import bearing_words
from memman.write.candidate import Candidate
from memman.write.retrieval import Retrieved


def pertinent(candidate: Candidate, related: list[Retrieved]) -> list[Retrieved]:
    """The related memories about what the candidate is about (see the module docstring)."""
    words = bearing_words(candidate.content)
    if not words:
        return related
    topic = candidate.topic
    named = topic if topic is not None and not is_verb_topic(topic.attribute) else None

    def about_it(r: Retrieved) -> bool:
        if r.cosine is not None or words & bearing_words(r.memory.content):
            return True
        memory = r.memory
        return named is not None and (memory.subject, memory.attribute) == (
            named.subject,
            named.attribute,
        )

    return [r for r in related if about_it(r)]
