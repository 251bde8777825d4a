"""Facts read whole, their subject inside the phrasing: "please call me Bob" states the
user's name, "today is my 63rd birthday" their age. The patterns of patterns.py read a
predicate, the fact less its subject; these need the subject's words too."""

from __future__ import annotations

from memman.language import rulebook
from memman.language.values import trim_value

# The rows and patterns: rules/whole.toml.
_WHOLE = rulebook.rows("whole")
_PATTERNS = rulebook.patterns("whole")
_PLACE = _PATTERNS["place"].pattern
_HOME = _PATTERNS["home"].pattern
_STAY = _PATTERNS["stay"].pattern
_HOME_IS = _PATTERNS["home_is"].pattern
_HOUSEMATE = _PATTERNS["housemate"].pattern
_OFF = _PATTERNS["off"].pattern
_INSTITUTIONS = rulebook.words("whole", "words", "institutions")


def stated_place(text: str) -> tuple[str, str] | None:
    """The town of "I'm in Melbourne" (the fact as written: the capital tells a place), and
    what it states: "residence" with a word of home ("I'm based in Lisbon", "in Perth these
    days"), else "whereabouts": where the user is, which a stated residence replaces but
    which never replaces one (a comment may tell more: `place_kind`)."""
    found = _PLACE.match(text.strip())
    place = found.group("v").lower() if found else ""
    value = None if set(place.split()) & _INSTITUTIONS else trim_value(place)
    if found is None or value is None:
        return None
    home = found.group("how") or _HOME.search(found.group("rest") or "")
    return ("residence" if home else "whereabouts"), value


def stated_home(text: str) -> str | None:
    """The town of "Home for me is Brooklyn" (the fact as written, as stated_place)."""
    found = _HOME_IS.match(text.strip())
    return trim_value(found.group("v").lower()) if found else None


def stated_housemate(text: str) -> str | None:
    """The household of "My roommate is Kevin": "roommate kevin" (so that "Kevin moved out"
    takes it back by the name)."""
    found = _HOUSEMATE.match(text.strip())
    return f"{found.group('who')} {found.group('v').lower()}" if found else None


def taken_off(spoken: str) -> str | None:
    """What "braces came off" takes back: a thing worn ("braces"), else None."""
    found = _OFF.match(spoken)
    return (found.group("v") or found.group("w")) if found else None


def place_kind(comment: str) -> str:
    """What the comment after "I'm in Paris now" makes the place: a "trip" ("the conference
    is great", "back home on Friday": a word of a stay wins), a "residence" ("we moved here
    in May"), or still "whereabouts"."""
    if _STAY.search(comment):
        return "trip"
    return "residence" if _HOME.search(comment) else "whereabouts"


def stated_whole(spoken: str) -> tuple[str, str] | None:
    """A fact whose phrasing holds its subject (the whole fact in the first person)."""
    for row in _WHOLE:  # the first row that reads it wins
        found = row.pattern.match(spoken)
        if found and row.fixed:
            return row.attribute or "", row.fixed
        value = trim_value(found.group("v")) if found else None
        if value:
            return row.attribute or "", value
    return None
