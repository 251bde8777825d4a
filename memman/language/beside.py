"""A newer statement of a single-valued attribute that stands beside the current one.

One value replaces another ("I live in Austin" ends "I live in Denver"), but some statements
of such an attribute add to it: "I also work as a custodian to pay the bills" (a second
job), "I am a dancer" beside "I am a student" (a student may work), "I have a son" beside "I
have kids" or "I have three kids" (one of them), "I'm pregnant with twins" beside "I have
three kids" (more to come). Replacing the current one would lose a true fact, so no
topic rule does: the router and the decider judge them.
"""

from __future__ import annotations

from memman.language import rulebook
from memman.language.change import says_change
from memman.language.text import words
from memman.language.topic import Topic

_ALSO = rulebook.pattern("beside", "also")  # rules/beside.toml


def stands_beside(text: str, topic: Topic, current: Topic | None) -> bool:
    """Whether the statement `text`, read as `topic`, adds to the current memory's reading
    `current` (None: its value is not known) instead of replacing it."""
    if topic.retracted or (current is not None and current.retracted):
        return False  # "I also quit smoking" takes back; a birth ends "I have no kids"
    if _ALSO.search(" ".join(words(text))):
        return True
    if current is None:
        return False
    if topic.attribute == "job":
        # A student may work ("I am a student" / "I am a dancer"), unless a change is said:
        # "I graduated and now I work as a paralegal" ends the studies.
        student = _STUDENT in (_head(topic.value), _head(current.value))
        return student and not says_change(text)
    if topic.attribute != "children":
        return False
    if topic.value == "expecting":  # "I am pregnant" beside "I have three kids"
        return current.value is not None and current.value.isdigit()
    if current.value is None or (current.value.isdigit() and int(current.value) > 1):
        return topic.value == "1"  # "I have kids", "I have three kids": "I have a son" is one
    return False


_STUDENT = "student"


def _head(value: str | None) -> str | None:
    """A value's last word, the noun it names ("graduate student": student)."""
    return value.split()[-1] if value else None
