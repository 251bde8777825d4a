"""A pastime said by its verb alone: "I knit", "I don't climb anymore", "run 5k every morning".

The phrasings of life's turns (where and with whom one lives, work taken and left, habits)
are rows of rules/life.toml, read by patterns.py before its general rows.
"""

from __future__ import annotations

import re

from memman.language.kinds import check_kind

# A verb alone as what one does: a pastime ("i knit", "do not climb anymore", "run 5k every
# morning": a distance or a time of day says how much or when, not what).
_VERB_ALONE = re.compile(
    r"^(?P<v>[a-z]{3,})(?: \d+ ?(?:k|km|miles?|laps|kilometers|kilometres))?(?: (?:on weekends"
    r"|on the weekends?|every (?:day|week|morning|evening|night|weekend)|a lot|daily|weekly"
    r"|regularly|often|sometimes|for fun|in my (?:spare|free) time|in the (?:evenings?|mornings?)"
    r"|at night|at all|twice a week|\w+ times a week|most days))?$"
)


def pastime(predicate: str) -> tuple[str, str | None, bool] | None:
    """A predicate of a verb alone read as the pastime it names ("knit" -> hobby knitting).
    Only for a predicate that is a verb: not the object left by a take-back ("quit yoga")."""
    found = _VERB_ALONE.match(predicate)
    return check_kind("hobby", "pastime?", found.group("v"), None) if found else None
