"""The one person or service the user has in a role: their doctor, their boss, their bank.

"My boss is Linda" was read as a fact about the boss (the person), so "after the reorg I
report to Marcus" never met it; "User's doctor is Dr. Patel" and "User switched GPs and sees
Dr. Huang" shared no reading at all. A role held by one at a time is an attribute of the
user, its holder the value: a new holder replaces the old. Only a holder named as a name
(capitals, "Dr. Huang") is read, so "my boss is strict" stays a fact about the boss.
"""

from __future__ import annotations

import re

from memman.language.values import trim_value

# Each role by the attribute it is filed under ("gp" and "physician" are the doctor).
ROLES = {
    "doctor": "doctor", "gp": "doctor", "physician": "doctor", "dentist": "dentist",
    "therapist": "therapist", "psychiatrist": "therapist", "boss": "boss", "manager": "boss",
    "supervisor": "boss", "landlord": "landlord", "landlady": "landlord", "bank": "bank",
    "vet": "vet", "accountant": "accountant",
}  # fmt: skip
_ROLE = "|".join(sorted(ROLES, key=len, reverse=True))
_NAME = r"(?:(?:Dr|Mr|Mrs|Ms)\.? )?[A-Z][\w'\u2019.-]*(?:(?: of| the| and)? [A-Z][\w'\u2019.-]*)*"
# "My doctor is Dr. Patel", "User's new bank is Chase", "Our landlord is Mr. Green".
_HOLDER = re.compile(
    rf"^(?:My|Our|User's|User\u2019s) (?:new |current )?(?P<role>(?i:{_ROLE})) is (?:now )?"
    rf"(?P<v>{_NAME})(?: now)?[.!]?$"
)
# "after the reorg I report to Marcus", "User now reports directly to Dana".
_REPORTS = re.compile(
    rf"^(?:.*\b)?(?:I|User)(?: now| currently)? reports? (?:directly )?to (?P<v>{_NAME})"
    r"(?: now)?[.!]?$"
)
# "switched GPs and sees Dr. Huang": a change of the role, the new holder named by title.
_SWITCHED = re.compile(
    r"^(?:I|User|We)\b.*\b(?:switched|changed|moved) (?P<role>(?i:doctors|gps|dentists"
    r"|therapists|vets))\b.*?\b(?P<v>(?:Dr|Mr|Mrs|Ms)\.? [A-Z][a-z]+)"
)
# "moved all my accounts over to a local credit union", "switched banks to Chase".
_BANKED = re.compile(
    r"^(?:i |user |we )?(?:just |finally )?(?:moved|switched|transferred|took) (?:all )?"
    r"(?:my|our) (?:accounts?|banking|money|savings|checking account) (?:over )?to (?P<v>.+)$"
    r"|^(?:i |user |we )?(?:switched|changed) banks? (?:to|and now bank with) (?P<w>.+)$"
)


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
