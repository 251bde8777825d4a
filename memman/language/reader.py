"""The reader of text: the questions the write path and the lifecycle ask of a fact's words.

memman/write/ and memman/lifecycle/ ask language/ only through `Reader`, never by importing
its modules: what a fact is about, whether two texts state the same value, negate, count or
extend one another, which words a text holds. `OfflineReader` answers them with the offline
reader (topic.py and its steps, its rules as data under rules/); another reader (one that
asks a model) implements the same protocol and is installed with `use_reader`.

Value types and labels travel with the protocol: `Topic` (what a fact is about),
`TopicLabels` (the labels a model gives, in its answers), `Kind` (a thing of a kind), and the
label constants `USER`, `VERB` and `ENDED`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, cast, runtime_checkable

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from memman.language import (
    attributes,
    bearing,
    beside,
    chatter,
    clauses,
    kinds,
    patterns,
    speaker,
    switches,
    takebacks,
    topic,
    values,
    verbs,
)
from memman.language import roles as _roles
from memman.language import text as _text
from memman.language import wording as _wording
from memman.language.attributes import ENDED, USER, VERB
from memman.language.switches import Kind
from memman.language.topic import Topic

__all__ = [
    "ENDED",
    "READER",
    "USER",
    "VERB",
    "Kind",
    "OfflineReader",
    "Reader",
    "Topic",
    "TopicLabels",
    "reader",
    "use_reader",
]


@runtime_checkable
class Reader(Protocol):
    """What memman asks of text. Every answer is a pure function of its arguments."""

    @property
    def version(self) -> str:
        """Which reading this is: a newer version may read a topic where an older read none
        (lifecycle/relabel.py reads again the memories an older one left without)."""
        ...

    # -- what a fact is about -------------------------------------------------------------

    def about(self, text: str) -> Topic | None:
        """The fact's subject, attribute and value; None when it is not recognised."""
        ...

    def labelled(self, text: str, subject: str | None, attribute: str | None) -> Topic | None:
        """What a fact is about when a caller or a model labelled it (`check_label`'s output;
        either label may be None): the labels where given, the reading otherwise."""
        ...

    def is_verb_topic(self, attribute: str) -> bool:
        """The attribute is a fallback verb topic ("verb:collect"), not a named attribute."""
        ...

    def is_single_valued(self, attribute: str, single_valued: frozenset[str]) -> bool:
        """The attribute holds one current value (the settings' list, favourites, amounts)."""
        ...

    def kindred(self, attribute: str) -> str | None:
        """The attribute whose memories may state this one's value too ("job" / "employer")."""
        ...

    def check_label(self, name: str, value: object) -> str | None:
        """A caller's subject or attribute, normalised; ValueError if it is none."""
        ...

    def person(self, word: str) -> str:
        """The subject a person is filed under ("mom" is "mother")."""
        ...

    def model_label(self, name: str, value: object) -> str | None:
        """A subject or attribute a model gave in its answer, filed under the reader's own
        ("User's mom" is "mother", "location" is "residence"); None when it is unusable (the
        text is read instead)."""
        ...

    def having(self) -> frozenset[str]:
        """The attributes that state a having: "no longer have X" may take any of them back."""
        ...

    # -- words ------------------------------------------------------------------------------

    def blank(self, text: str) -> bool: ...
    def normalize(self, text: str) -> str: ...
    def content_hash(self, text: str) -> str: ...
    def words(self, text: str) -> list[str]: ...
    def written_words(self, text: str) -> list[str]: ...
    def content_tokens(self, text: str) -> frozenset[str]: ...
    def token_spellings(self, text: str) -> set[tuple[str, str]]: ...
    def jaccard(self, a: frozenset[str], b: frozenset[str]) -> float: ...
    def stems(self, text: str) -> frozenset[str]: ...

    def added_words(
        self, candidate: str, memory: str, *, paraphrase_aware: bool
    ) -> frozenset[str]: ...

    def is_stopword(self, word: str) -> bool: ...
    def is_negation(self, word: str) -> bool: ...
    def negations(self, text: str) -> frozenset[str]: ...
    def numbers(self, text: str) -> frozenset[str]: ...
    def years(self, text: str) -> frozenset[str]: ...
    def is_past_verb(self, verb: str) -> bool:
        """The verb tells an event, not a state ("visited", "went")."""
        ...

    # -- two texts, two values ----------------------------------------------------------------

    def same_value(self, a: str | None, b: str | None) -> bool: ...
    def of_kind(self, value: str | None, kind: str | None) -> bool: ...
    def counted(self, value: str) -> tuple[str, frozenset[str]]: ...
    def object_words(self, value: str) -> frozenset[str]: ...
    def phrasing(self, attribute: str) -> frozenset[str]: ...
    def affirmed(self, text: str) -> tuple[str, ...]: ...
    def wording(self, text: str) -> tuple[str, ...]: ...
    def extends(self, longer: str, shorter: str) -> bool: ...
    def elaborates(self, longer: str, shorter: str) -> bool: ...

    def meaning_difference(
        self, a: str, b: str, *, roles: bool = True, vouched: bool = False
    ) -> str | None: ...

    def stands_beside(self, text: str, topic: Topic, current: Topic | None) -> bool: ...
    def states_other_facts(self, text: str, topic: tuple[str | None, str | None]) -> bool: ...
    def bearing_words(self, text: str) -> frozenset[str]: ...
    def names_employer(self, text: str) -> bool: ...
    def about_sons_or_daughters(self, text: str) -> bool: ...
    def gerund(self, verb: str) -> str: ...

    # -- changes named by their object ------------------------------------------------------

    def switch(self, text: str) -> tuple[Kind, Kind | None] | None:
        """The kind a switch goes to, and the one it leaves when named ("switched from a
        standing desk to a sitting desk")."""
        ...

    def kind(self, phrase: str) -> Kind | None:
        """The thing a phrase names by a head noun and its modifiers ("a standing desk")."""
        ...

    def taken(self, value: str) -> str:
        """What a take-back names: its object up to where a new clause starts."""
        ...

    # -- chat -----------------------------------------------------------------------------

    def sentences(self, text: str) -> list[str]: ...
    def is_chatter(self, sentence: str) -> bool: ...
    def only_chatter(self, tokens: Iterable[str]) -> bool: ...
    def without_openers(self, tokens: list[str]) -> list[str]: ...


class OfflineReader:
    """The offline reader: patterns and word tables, no model. Each answer is language/'s own
    function, bound as it is (no call in between: the write path asks thousands a second)."""

    @property
    def version(self) -> str:
        return topic.READER_VERSION

    about = staticmethod(topic.about)

    def labelled(self, text: str, subject: str | None, attribute: str | None) -> Topic | None:
        return topic.labelled(self.about(text), subject, attribute)

    is_verb_topic = staticmethod(attributes.is_verb_topic)
    is_single_valued = staticmethod(attributes.is_single_valued)
    check_label = staticmethod(attributes.check_label)

    def model_label(self, name: str, value: object) -> str | None:
        filed = attributes.usable_subject if name == "subject" else attributes.usable_attribute
        return filed(value)

    person = staticmethod(attributes.person)

    def kindred(self, attribute: str) -> str | None:
        return attributes.KINDRED.get(attribute)

    def having(self) -> frozenset[str]:
        return takebacks.HAVING

    blank = staticmethod(_text.blank)
    normalize = staticmethod(_text.normalize)
    content_hash = staticmethod(_text.content_hash)
    words = staticmethod(_text.words)
    written_words = staticmethod(_text.written_words)
    content_tokens = staticmethod(_text.content_tokens)
    token_spellings = staticmethod(_text.token_spellings)
    jaccard = staticmethod(_text.jaccard)
    stems = staticmethod(takebacks.stems)
    added_words = staticmethod(_text.added_words)

    def is_stopword(self, word: str) -> bool:
        return word in _text.STOPWORDS

    def is_negation(self, word: str) -> bool:
        return word in _text.NEGATIONS

    negations = staticmethod(_text.negations)
    numbers = staticmethod(_text.numbers)
    years = staticmethod(values.years)
    is_past_verb = staticmethod(verbs.is_past)
    same_value = staticmethod(values.same_value)
    of_kind = staticmethod(values.of_kind)
    counted = staticmethod(values.counted)
    object_words = staticmethod(verbs.object_words)
    phrasing = staticmethod(patterns.phrasing)
    affirmed = staticmethod(_wording.affirmed)
    wording = staticmethod(_wording.wording)
    extends = staticmethod(_wording.extends)
    elaborates = staticmethod(_wording.elaborates)
    meaning_difference = staticmethod(_roles.meaning_difference)
    stands_beside = staticmethod(beside.stands_beside)
    states_other_facts = staticmethod(clauses.states_other_facts)
    bearing_words = staticmethod(bearing.bearing_words)
    names_employer = staticmethod(kinds.names_employer)
    about_sons_or_daughters = staticmethod(kinds.about_sons_or_daughters)
    gerund = staticmethod(kinds.gerund)
    switch = staticmethod(switches.switch)
    kind = staticmethod(switches.kind)
    taken = staticmethod(takebacks.taken)
    sentences = staticmethod(chatter.sentences)
    is_chatter = staticmethod(chatter.is_chatter)

    def only_chatter(self, tokens: Iterable[str]) -> bool:
        return set(tokens) <= chatter.CHATTER

    without_openers = staticmethod(speaker.without_openers)


_current: Reader = OfflineReader()


def reader() -> Reader:
    """The reader the write path and the lifecycle ask: the offline one unless another was
    installed with `use_reader`."""
    return _current


def use_reader(new: Reader) -> Reader:
    """Install `new` as the reader everything asks from now on; returns the one it replaces
    (to put it back)."""
    global _current
    old, _current = _current, new
    vars(READER).clear()  # the answers it kept were the old reader's
    return old


class _Installed:
    """The installed reader as one object to import: every question goes to `reader()`. An
    answer asked once is kept on the object (use_reader forgets them), so a question costs an
    attribute lookup, not a `__getattr__` call."""

    def __getattr__(self, name: str) -> Any:
        answer = getattr(_current, name)
        if name != "version":
            setattr(self, name, answer)
        return answer


# What memman/write/ and memman/lifecycle/ import and ask: `READER.about(text)`.
READER = cast(Reader, _Installed())


class TopicLabels(BaseModel):
    """What a fact is about, as an LLM answer states it (extraction, the decision call):
    optional, filed by the installed reader (`model_label`); an unusable label is dropped (the
    text is read instead)."""

    subject: str | None = Field(
        default=None, description='Whom the fact is about: "user", or a person ("sister")'
    )
    attribute: str | None = Field(
        default=None,
        description="What it states, one key: residence, employer, job, relationship_status,"
        " name, age, diet, pets, likes, hobby ...",
    )

    @field_validator("subject", "attribute")
    @classmethod
    def _filed(cls, value: object, info: ValidationInfo) -> str | None:
        return READER.model_label(info.field_name or "", value)

    def about(self) -> tuple[str, str] | None:
        return (self.subject or USER, self.attribute) if self.attribute else None
