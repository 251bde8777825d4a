"""Whether a stored text states other facts beside the one a new fact is about.

"I live in Leeds and work as a nurse" holds a residence and a job. A new residence read by
topic must not replace the text whole: the job would be lost (issue 27: in a fresh chat the
user moved, and "what is my job" then found nothing). The text is cut at clause joints ("and",
"but", ";", a sentence end) and a later clause that reads alone, with the text's opening
subject put back ("work as a nurse" -> "I work as a nurse"), as another named attribute is
another fact. A list of values ("a dog and a cat", "jazz and blues") reads as no fact alone.
"""

from __future__ import annotations

import re

from memman.language.attributes import is_verb_topic
from memman.language.topic import about

# A clause whose value points back ("and I love it") says nothing of its own.
_POINTING = frozenset("it that this them there him her".split())
_JOINT = re.compile(r"\s*(?:[;.!?]\s+|,?\s+(?:and|but|while|plus)\s+)", re.IGNORECASE)


def states_other_facts(text: str, topic: tuple[str | None, str | None]) -> bool:
    """True when a clause of `text` after the first reads as a named attribute other than
    `topic` (subject, attribute)."""
    parts = [part for part in _JOINT.split(text.strip()) if part]
    if len(parts) < 2:
        return False
    opener = text.split(maxsplit=1)[0]
    for part in parts[1:]:
        read = about(part) or about(f"{opener} {part}")
        if read is None or is_verb_topic(read.attribute) or read.value in _POINTING:
            continue
        if (read.subject, read.attribute) != topic:
            return True
    return False
