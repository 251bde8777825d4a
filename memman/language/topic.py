"""What a fact is about: its subject, its attribute and the value it states.

"I moved to Munich last month" and "I live in Berlin" share no content word, yet both state
where the user lives. Word overlap cannot see that; a topic can: both are (user, residence),
with the values "munich" and "berlin". The write path uses topics to find the memory a fact
supersedes (same subject and attribute, whatever the words) and to settle the clear cases
without an LLM: a single-valued attribute (where the user lives, works, their relationship
status) holds one current value, so a different value replaces the old one; a multi-valued
one (likes, pets, languages) holds several, so a different value is a fact of its own.

`about(text)` is a deterministic extractor for the common attributes of chat memory, first
person ("I live in Berlin") and the extracted style ("User lives in Berlin") alike, and for
other people the user talks about ("My sister lives in Rome" is (sister, residence)). It
returns None when it does not recognise the fact: such facts are routed by their words as
before. Its coverage is listed in ATTRIBUTES and measured in benchmarks/bench_conflicts.py.

The steps live in modules of their own: speaker.py (whose fact, the predicate in the first
person), negation.py (what it takes back), patterns.py, whole.py and kinds.py (the attribute
and value the phrasing states), values.py (where a value ends), verbs.py (the fallback), and
attributes.py the vocabulary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memman.language import rulebook
from memman.language.attributes import ENDED, TIMED, USER, is_verb_topic
from memman.language.chatter import past_chatter
from memman.language.kinds import PETS, VEHICLES
from memman.language.labels import label, measured
from memman.language.life import pastime
from memman.language.negation import (
    NEGATION_WORDS,
    correction,
    first_clause,
    now_clause,
    rephrased,
    strip_negation,
    swapped,
    undone_change,
)
from memman.language.patterns import read_predicate, stated_favorite
from memman.language.providers import stated_provider
from memman.language.senses import in_sense
from memman.language.speaker import (
    first_person,
    only_openers,
    subject_and_predicate,
    without_openers,
)
from memman.language.text import words
from memman.language.values import PET_KINDS, is_state, trim_value
from memman.language.verbs import verb_and_object
from memman.language.whole import (
    place_kind,
    stated_home,
    stated_housemate,
    stated_place,
    stated_whole,
    taken_off,
)
from memman.memo import memoized

# Which reading of phrasings about() is: the code's version (bump it whenever the code reads
# more: an attribute, a step, a subject it returned None for before) and a hash of the rule
# tables (rulebook.version: any row or word changed). A store records the version that last
# labelled it (memman/storage/labels.py); a memory stored with no topic under another one may
# have one now, and `memman check` says so until `memman relabel` reads those again.
CODE_VERSION = 1
READER_VERSION = f"{CODE_VERSION}.{rulebook.version()}"


@dataclass(frozen=True)
class Topic:
    """A fact's subject and attribute, and the value it states (None: not known).

    `retracted` marks a fact that takes a value back ("I don't live in Berlin anymore", "I
    quit caffeine"); its `value` is the value taken back, None when it names none ("I have
    no pets"). `replaces` is a value the fact says it replaces ("drinks tea instead of
    coffee", "from Indiana, not Ohio"): a multi-valued memory of that value is superseded.
    """

    subject: str
    attribute: str
    value: str | None = None
    retracted: bool = False
    replaces: str | None = None


# "Forget what I said about learning Rust": a take-back of whatever said it.
_FORGET = re.compile(
    r"^(?:please )?(?:forget|ignore|disregard) (?:what|that|everything) i (?:said|told you)"
    r" about (?P<v>.+)$"
)


# Where a chat message's statement ends and a comment on it starts: "Sold my car, I'm
# car-free now", "I cancelled Netflix, nothing good on anymore" (punctuation before a space).
_COMMENT = re.compile(r"\s*[,;:!?\u2013\u2014]\s+|\s+-\s+")


@memoized
def about(text: str) -> Topic | None:
    """The topic of a fact, or None when the extractor does not recognise it (or reads a
    value that is none of the attribute's: senses.py)."""
    topic = _about(text)
    if topic is None:
        return None
    sensed = in_sense(topic.subject, topic.attribute, topic.value, text)
    if sensed is None:
        return None
    return Topic(*sensed, retracted=topic.retracted, replaces=topic.replaces)


def labelled(found: Topic | None, subject: str | None, attribute: str | None) -> Topic | None:
    """The topic of a fact read as `found` whose subject and attribute a caller or a model
    gave (either may be None): a given attribute keeps the value and polarity read from the
    text when the text reads as that attribute; otherwise the value is unknown, and a
    single-valued memory of that attribute is replaced by any different text."""
    if attribute is None:
        if found is None or subject is None:
            return found
        return Topic(subject, found.attribute, found.value, found.retracted)
    if found is not None and found.attribute == attribute:
        return Topic(subject or found.subject, attribute, found.value, found.retracted)
    return Topic(subject or USER, attribute)


def _about(text: str) -> Topic | None:
    """The topic of a fact as the patterns read it.

    A chat message is read from its statement on: "Hi! I'm Tom." is read as "I'm Tom."
    (chatter.past_chatter; the lead words, "By the way I'm ...", see without_openers). When
    the whole reads as no attribute, its first clause may: the words after the comma of "I'm
    a night owl, usually in bed around 2am" comment on it, and "I cancelled Netflix, nothing
    good on anymore" takes back Netflix, not "netflix nothing good"."""
    text = past_chatter(text)
    parts = _COMMENT.split(text.strip(), maxsplit=1)
    if len(parts) == 2 and only_openers(words(parts[0])):  # "ok quick update: we're in ..."
        return _about(parts[1])
    whole = _read(text)
    if whole is not None and not is_verb_topic(whole.attribute):
        return _unless_comment_negates(whole, parts)
    if len(parts) < 2 or len(parts[0].split()) < 2:
        return whole
    head, rest = parts
    first = _read(head)
    if first is not None and first.attribute == "whereabouts":  # "I'm in Paris now, ..."
        return Topic(USER, place_kind(rest), first.value)
    if first is None or (is_verb_topic(first.attribute) and first.attribute != ENDED):
        return _said_after(rest) or whole
    return first


def _unless_comment_negates(whole: Topic, parts: list[str]) -> Topic:
    """The whole's reading, or its statement's when only the comment holds the negation:
    "Started at a startup on Monday, feels weird not being at a big firm" starts a job."""
    if not whole.retracted or len(parts) < 2:
        return whole
    first = _read(parts[0])
    same = first is not None and first.attribute == whole.attribute and not first.retracted
    return first if same else whole


# Who speaks in a clause of the user's own: "got a raise, I'm making 72k now".
_SPEAKERS = frozenset("i im ive we were weve user".split())


def _said_after(rest: str) -> Topic | None:
    """The attribute a later clause of the user's own states, when the first states none:
    "got a raise, I'm making 72k now" is the salary (not "it's so much fun", not "so the
    rain here took some getting used to": no speaker)."""
    if words(rest)[:1] and words(rest)[0] in _SPEAKERS:
        later = _read(rest)
        if later is not None and not is_verb_topic(later.attribute):
            return later
    return None


def _read(text: str) -> Topic | None:
    """The topic a sentence states, or its label's when the sentence states none of the
    user's: "Name is John" read as a person named Name, "Location: Leeds" as nothing."""
    said = _sentence(text)
    if _users(said):
        return said
    labelled = label(text)
    if labelled is None:
        return said
    if said is not None and not is_verb_topic(said.attribute) and said.subject != labelled.key:
        return said  # "My son is 4", "Anna is vegan": another's
    if labelled.attribute and labelled.takes_back:  # "Pets: none"
        return Topic(USER, labelled.attribute, None, True)
    read = _sentence(labelled.sentence)
    if read is not None and _users(read):
        if labelled.attribute is None and measured(read.attribute, read.value):
            return read
        if labelled.attribute is not None and (
            not labelled.colon or read.attribute == labelled.attribute
        ):
            return read
    value = trim_value(labelled.value)
    if labelled.colon and labelled.attribute and value:  # "Location: Leeds"
        return Topic(USER, labelled.attribute, value)
    speaker = words(labelled.value)[:1]
    if labelled.colon and speaker and speaker[0] in _SPEAKERS:  # "Update: I moved to York"
        own = _sentence(labelled.value)  # ("Sister: lives in Rome" is the sister's)
        return own if _users(own) else said
    return said


def _users(topic: Topic | None) -> bool:
    """Whether a reading states an attribute of the user's own (not the verb fallback)."""
    return topic is not None and topic.subject == USER and not is_verb_topic(topic.attribute)


def _sentence(text: str) -> Topic | None:
    spoken = first_person(without_openers(words(text)))
    favorite = stated_favorite(spoken)
    if favorite:  # "Coffee is my favorite drink", "Radiohead is the group I love most"
        return Topic(USER, *favorite)
    place = stated_place(text)
    if place:  # "I'm in Melbourne", "I'm based in Lisbon", "I'm in Paris this week"
        return Topic(USER, *place)
    home = stated_home(text)
    if home:  # "Home for me is Brooklyn"
        return Topic(USER, "residence", home)
    mate = stated_housemate(text)
    if mate:  # "My roommate is Kevin"
        return Topic(USER, "household", mate)
    held = stated_provider(text, spoken)
    if held:  # "My boss is Linda", "I report to Marcus"
        return Topic(USER, *held)
    off = taken_off(spoken)
    if off:  # "braces came off yesterday": whatever held the braces ended
        return Topic(USER, ENDED, off, True)
    whole = stated_whole(spoken)
    if whole:  # "Please call me Bob", "Today is my 63rd birthday"
        return Topic(USER, *whole)
    forget = _FORGET.match(spoken)
    if forget:
        value = trim_value(forget.group("v"))
        return Topic(USER, ENDED, value, True) if value else None
    parsed = subject_and_predicate(text)
    if parsed is None:
        return None
    subject, predicate = parsed
    corrected = correction(predicate)
    if corrected is not None:
        return Topic(subject, *corrected)
    predicate = first_clause(predicate)
    if undone_change(predicate):  # "I never dyed my hair blue": no colour either way
        return None
    said_not = bool(NEGATION_WORDS - {"no"} & set(predicate.split()))  # "no" may be the value
    predicate, negated, ended = strip_negation(predicate)
    topic = read_predicate(predicate)
    if topic and predicate.startswith("my ") and topic[0] not in TIMED and is_state(topic[1] or ""):
        return None  # "My job is killing me", "My car is in the shop": how it is, not what
    for other in rephrased(predicate) if topic is None else []:
        topic = read_predicate(other)  # "have been sober for six months": is sober
        if topic is not None:
            break
    later = now_clause(spoken) if topic is None and not ended and subject == USER else None
    if later is not None:  # "I graduated and now I work as a paralegal": the paralegal
        topic = read_predicate(first_person(later.split()))
    gone = swapped(predicate) if topic is None and not ended else None
    if gone is not None:  # "switched from coffee to tea": whatever held coffee ended
        predicate, ended = gone, True
    if topic is None and ended:  # "I sold my motorcycle": whatever held "motorcycle" ended
        value = trim_value(predicate)
        if value is not None and value.split()[-1] in VEHICLES:  # "sold my car": the car,
            return Topic(subject, "car", None, True)  # whatever make the memory names
        if value is not None and value.split()[-1] in PETS | PET_KINDS.keys():
            return Topic(subject, "pets", value.split()[-1], True)  # "gave the bird away"
        return Topic(subject, ENDED, value, True) if value else None
    topic = topic or pastime(predicate) or verb_and_object(predicate, subject)
    if topic is None:
        return None
    attribute, value, retracted = topic
    if retracted and said_not:  # "I never finished school": no end is stated
        return None
    return Topic(subject, attribute, value, retracted or negated)
