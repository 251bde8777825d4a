"""What a take-back names, as its words tell it: "gave up the Saturday soccer team since the
move" takes back "saturday soccer" (write/takeback.py decides which memory that ends).

The words where a new clause starts, the memberships one leaves and the attributes of a having
are data (rules/changes.toml [takeback]).
"""

from __future__ import annotations

from memman.language import rulebook
from memman.language.text import content_tokens

_CLAUSE_END = rulebook.words("changes", "takeback", "clause_end")
_MEMBERSHIPS = rulebook.words("changes", "takeback", "memberships")
HAVING = rulebook.words("changes", "takeback", "having")


def taken(value: str) -> str:
    """What a take-back names: its object up to where a new clause starts ("glasses anymore
    since the laser surgery" -> "glasses"), prepositions kept: "not stirring chili in a
    kettle" takes back chili in a kettle, not any chili."""
    kept = []
    for word in value.split():
        if kept and word in _CLAUSE_END:
            break
        kept.append(word)
    if len(kept) > 1 and kept[-1] in _MEMBERSHIPS:  # "the saturday soccer team": soccer
        kept.pop()
    return " ".join(kept)


def stems(text: str) -> frozenset[str]:
    """Content words cut to five letters: "allergy" and "allergic", "cats" and "cat" meet.
    Every word counts: "not reliable in other things" does not take back "reliable in my
    job", nor "do not make a lot of money" "make money from passive income"."""
    return frozenset(w[:5] for w in content_tokens(text) if len(w) > 2)
