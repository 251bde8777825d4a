"""The one person or service the user has in a role: their doctor, their boss, their bank.

"My boss is Linda" was read as a fact about the boss (the person), so "after the reorg I
report to Marcus" never met it; "User's doctor is Dr. Patel" and "User switched GPs and sees
Dr. Huang" shared no reading at all. A role held by one at a time is an attribute of the
user, its holder the value: a new holder replaces the old. Only a holder named as a name
(capitals, "Dr. Huang") is read, so "my boss is strict" stays a fact about the boss.
"""

from __future__ import annotations

from memman.language import rulebook
from memman.language.values import trim_value

# The roles and patterns: rules/providers.toml.
ROLES = rulebook.mapping("providers", "roles")
_ROLE = "|".join(sorted(ROLES, key=len, reverse=True))
_NAME = rulebook.fragment("providers", "NAME")
_PATTERNS = rulebook.patterns("providers", ROLE=_ROLE)
_HOLDER = _PATTERNS["holder"].pattern
_REPORTS = _PATTERNS["reports"].pattern
_SWITCHED = _PATTERNS["switched"].pattern
_BANKED = _PATTERNS["banked"].pattern


def stated_provider(text: str, spoken: str) -> tuple[str, str] | None:
    """(attribute, holder) of a role the user has one of: the fact as written (`text`: the
    capitals tell a name) or, for a bank, as spoken in the first person."""
    text = text.strip()
    found = _HOLDER.match(text)
    if found:
        return _held(ROLES[found.group("role").lower()], found.group("v"))
    found = _REPORTS.match(text)
    if found:
        return _held("boss", found.group("v"))
    found = _SWITCHED.match(text)
    if found:
        return _held(ROLES[found.group("role").lower().rstrip("s")], found.group("v"))
    found = _BANKED.match(spoken)
    if found:
        return _held("bank", found.group("v") or found.group("w"))
    return None


def _held(attribute: str, holder: str) -> tuple[str, str] | None:
    value = trim_value(holder.lower().replace(".", ""))
    return (attribute, value) if value else None
