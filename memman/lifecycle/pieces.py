"""Offline: the facts a kept chat message holds, and which of them only hold for now.

A kept message is stored verbatim and whole (utterance.py: its sentences refer to each
other). One exception: first-person clauses, joined by "and I" or sentences of their own ("Hi! I'm
Tom and I just moved to Lisbon.", "I'm married. I have two kids."), that state facts standing
alone. Stored whole, the message has one topic (the name) and a later "I moved to Porto"
would not replace the city it states. Such a message is cut into its clauses when every one
opens with "I", reads alone as a known attribute (topic.about names one: not the verb
fallback) and no later one points back ("I have a dog and I walk him", "I got divorced and
I'm still adjusting": the second clause needs the first). The clauses keep their words;
chatter sentences ("Hi!", "Thanks!") are left out.

A plan for today or where the user is right now ("I think I'll go for a run later", "I'm
heading to the airport now") is true for hours: offline it goes to short-term memory with the
category "plan" or "location" (their TTLs in `short_term_ttl_hours`), as an LLM's
"transient" facts do, not to long-term memory.
"""

from __future__ import annotations

import re

from memman.language.reader import READER

# The importance of a transient fact found offline: nothing tells one (remember_short_term's
# default).
IMPORTANCE = 5.0
# ", and I ...", " and I'm ...": where a first-person clause joins another.
_AND_I = re.compile(r",?\s+and\s+(?=(?:i|i'm|i’m|im|i've|i’ve|ive|i'd|i’d)\b)", re.IGNORECASE)
# A first-person clause opens with one of these (past lead words: "Oh and I ...").
_FIRST_PERSON = frozenset("i im ive id".split())
# Words of a later clause that point back at the one before ("and I love it").
_POINTING_BACK = frozenset(
    """it its itself them they their theirs there that this those these he him his she her
    one ones same both either neither then""".split()
)
# Near times: what is planned for them holds for hours, a day or two ("soon" and a bare
# "now" do not say so: "I will retire soon", "I'm going to school now").
_NEAR = (
    r"(?:later(?: on| today)?|tonight|today|tomorrow|this (?:morning|afternoon|evening)"
    r"|in a (?:bit|minute|moment|few minutes|few hours|couple of hours)|in an hour"
    r"|right now|after work|after lunch|after dinner)"
)
# Farther times: "I'm driving to California next month" is no situation of the moment.
_FAR = re.compile(
    r"\b(?:next|in (?:a|two|three|\d+|a few|several) (?:weeks?|months?|years?)|this (?:year|month"
    r"|summer|winter|spring|fall)|someday|one day|soon|january|february|march|april|may|june"
    r"|july|august|september|october|november|december)\b"
)
# Where a new first-person clause starts: "..., I have ...", ". I'm ...", "and I ...".
_CLAUSE_START = re.compile(
    r"(?:[,;.!?]+\s+|,?\s+(?:and|but)\s+)(?=(?:i|i'm|i’m|im|i've|i’ve|ive|i'd|i’d)\b)",
    re.IGNORECASE,
)
_LEAD = r"^(?:(?:i think|i guess|maybe|probably|ok|okay|so|well|anyway|oh|btw|and) )*"
# "I'll go for a run later", "I'm going to cook tonight", "Gonna watch a movie tonight", "I
# have a dentist appointment tomorrow": the user's plan for a near time.
_PLAN = re.compile(
    _LEAD + r"(?:i ?ll|i will|(?:i (?:m|am) )?(?:going to|gonna|about to|planning to)|i plan to"
    r"|i need to|i have to|i might|i want to|i have an? (?:\w+ )?(?:meeting|appointment"
    r"|interview|exam|test|date|flight|class|game|party|call))\b.* " + _NEAR + r"\b"
)
# "I'm heading to the airport", "I'm on my way home", "I'm at the gym right now".
_LOCATION = re.compile(
    _LEAD + r"i (?:m|am) (?:just |currently |still )?(?:(?:heading|driving|walking|flying"
    r"|on my way|off) (?:to|home|back|out)\b|(?:at|in) the \w+(?: \w+)? (?:right now|now)$)"
)


def pieces(message: str) -> list[str]:
    """The facts a kept message is stored as: the message itself, or its clauses."""
    said = [sentence for sentence in READER.sentences(message) if not READER.is_chatter(sentence)]
    clauses = [c.strip() for sentence in said for c in _AND_I.split(sentence)]
    if len(clauses) < 2 or not all(_first_person(clause) for clause in clauses):
        return [message]
    if any(_POINTING_BACK & set(READER.words(clause)) for clause in clauses[1:]):
        return [message]
    return clauses if all(_lasting(clause) for clause in clauses) else [message]


def transient(fact: str) -> str | None:
    """The category "plan" or "location" when the fact holds only for now (see the module's
    docstring), None when it is lasting.

    Every first-person clause must be for now: "I'm off to the gym later, I have a peanut
    allergy" must not expire with the plan. A question after the plan ("I'm planning to
    watch a movie tonight. Any recommendations?") is no clause of the user's."""
    clauses = _CLAUSE_START.split(fact)
    kinds = [_for_now(clause) for clause in clauses]
    if kinds[0] is None or any(_lasting(clause) for clause in clauses):
        return None
    if any(kind is None and _first_person(c) for c, kind in zip(clauses, kinds, strict=True)):
        return None
    return kinds[0]


def _for_now(clause: str) -> str | None:
    # "I'm" -> "i m", "Im" -> "i m": one spelling for the patterns.
    spoken = " ".join(READER.words(clause.replace("'", " ").replace("’", " ")))
    spoken = re.sub(r"\bi(m|ll)\b", r"i \1", spoken)
    if _FAR.search(spoken):
        return None
    if _LOCATION.search(spoken):
        return "location"
    return "plan" if _PLAN.search(spoken) else None


def _lasting(fact: str) -> bool:
    """True if the fact states a known attribute: "I'm moving to Berlin tomorrow" changes
    where the user lives, "I'll be 30 tomorrow" their age; those are long-term news."""
    topic = READER.about(fact)
    return topic is not None and not READER.is_verb_topic(topic.attribute)


def _first_person(clause: str) -> bool:
    """True if the clause opens with the user as its subject, lead words aside."""
    said = READER.without_openers(READER.words(clause))
    return bool(said) and said[0] in _FIRST_PERSON
