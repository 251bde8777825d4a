"""Facts read whole, their subject inside the phrasing: "please call me Bob" states the
user's name, "today is my 63rd birthday" their age. The patterns of patterns.py read a
predicate, the fact less its subject; these need the subject's words too."""

from __future__ import annotations

import re

from memman.language.values import trim_value

# (attribute, pattern[, the value it states when the pattern names none])
_WHOLE: list[tuple] = [
    (
        "name",
        re.compile(
            r"^(?:please |you can |just |so |but )?(?:(?:everyone|everybody|people|most people"
            r"|my friends|friends|all my friends|they) )?calls? me (?P<v>\w+)(?: .*)?$"
        ),
    ),
    (  # "since the move it only takes me 15 minutes to get to work"
        "amount:commute",
        re.compile(
            r"^(?:.* )?it (?:now |only |just |usually )*(?:takes?|am) (?:me )?(?:only |just |about"
            r" |around |nearly |almost )?(?P<v>\w+ (?:minutes?|mins?|hours?|hrs?))(?: each way)?"
            r" (?:to (?:get|commute|drive|walk|cycle|bike) (?:to|into) (?:work|the office)"
            r"|of commuting)(?: .*)?$"
        ),
    ),
    (  # "rent went up to $1,550 this year", "our rent is going up to 900"
        "amount:rent",
        re.compile(
            r"^(?:(?:my|our|the|user) )?rent (?:just )?(?:went up|has gone up|am going up|rose"
            r"|increased|jumped|went down|dropped|came down|was raised|got raised|am now)"
            r" (?:to )?(?P<v>\d[\d ]*(?: a month| per month| monthly)?)(?: .*)?$"
        ),
    ),
    (  # "down to 185 lbs after six months of walking", "finally down to 70 kg"
        "amount:weight",
        re.compile(
            r"^(?:(?:i|user) )?(?:am |im )?(?:now |finally |officially )?(?:down|up) to"
            r" (?P<v>\d+(?: \d+)? ?(?:kg|kgs|kilos|kilograms|pounds|lbs|lb|stone)\b)(?: .*)?$"
        ),
    ),
    (  # "new number is 555-0198 btw": the phone number (patterns.read_predicate's name)
        "amount:phone number",
        re.compile(
            r"^(?:(?:my|user) )?new (?:phone |cell |mobile )?number (?:am|s) (?:now )?"
            r"(?P<v>\+?\d[\d ]*\d)(?: .*)?$"
        ),
    ),
    (  # "it's just me in the place these days": a household of one
        "household",
        re.compile(
            r"^(?:its|it am|it s) (?:just |only )?me (?:(?:in|at) (?:the|my|this|our)"
            r" (?:place|flat|apartment|house|home)|here|at home) (?:now|these days|nowadays)"
            r"(?: .*)?$"
        ),
        "alone",
    ),
    (
        "age",
        re.compile(
            r"^(?:today|it|yesterday) (?:am|was) my (?P<v>\d+)(?:st|nd|rd|th) birthday(?: .*)?$"
        ),
    ),
    (
        "age",
        re.compile(
            r"^(?:i|user) (?:just )?(?:celebrated|had) (?:my|their|his|her) (?P<v>\d+)"
            r"(?:st|nd|rd|th) birthday(?: .*)?$"
        ),
    ),
]


# "I'm in Melbourne": a place only by its capital, alone or before a comment ("I'm in Year
# 10", "I'm in love" are no place). Where one is is not where one lives: "I'm in Paris this
# week", "I'm in Paris now, the conference is great" are a trip.
_PLACE = re.compile(
    r"^(?i:I'm|I\u2019m|I am|Im|User is|We're|We are)(?: now| still)?(?P<how> based| living"
    r"| settled| now settled)? in (?!(?:Grade|Year|Form|Class|Love|AA)\b)"
    r"(?P<v>[A-Z][a-z]+(?: [A-Z][a-z]+)?)(?P<rest> now| these days| nowadays)?[.!]?$"
)
# Words that make a stated place a home ("these days", "we moved here in May", "home now")
# and words that make it a stay ("for work", "visiting", "tonight"): a stay wins.
_HOME = re.compile(
    r"\b(?:these days|nowadays|moved (?:here|there|in|over|back)|live here|living here"
    r"|(?:is|my|our|new|call it|calling it|feels like) home|for good|permanently|settled|lease"
    r"|relocated)\b",
    re.IGNORECASE,
)
_STAY = re.compile(
    r"\b(?:this (?:week|weekend|month|morning|afternoon|evening)|today|tonight|tomorrow"
    r"|for (?:work|business|a conference|a meeting|a wedding|the (?:day|night|week|weekend)"
    r"|a (?:few|couple of)\b|(?:a|one|two|three|four|five|ten) (?:days?|nights?|weeks?))"
    r"|on (?:holiday|vacation|business|a trip|tour|a layover)|holiday|vacation|visiting"
    r"|visit|trip|conference|layover|till|until|for now|right now|at the moment|hotel|flight"
    r"|flew in|landed|jet ?lag(?:ged)?|back (?:home )?(?:on|next|in|tomorrow|soon))\b",
    re.IGNORECASE,
)

# Home named as such: "Home for me is Brooklyn", "My home is Leeds now".
_HOME_IS = re.compile(
    r"^(?:Home|My home|Our home)(?: for (?:me|us))? is (?:now )?(?:in )?"
    r"(?P<v>[A-Z][a-z]+(?: [A-Z][a-z]+)?)(?: now| these days| nowadays)?[.!]?$"
)
# Whom one lives with, by name: "My roommate is Kevin" (a capital: not "is a nurse").
_HOUSEMATE = re.compile(
    r"^(?:My|User's|User\u2019s) (?P<who>roommate|flatmate|housemate) is (?P<v>[A-Z][a-z]+)[.!]?$"
)
# Something worn taken off: "braces came off yesterday", "the cast is off" (its words are
# singular by then: the first word is read as a verb, speaker.first_person).
_OFF = re.compile(
    r"^(?:(?:my|the|user) )?(?P<v>brace|braces|cast|sling|splint|stitches|retainer|moon boot"
    r"|bandage|bandages) (?:finally |just |officially )?(?:came|come|am|are|got taken|were taken"
    r"|was taken|have come|have been taken|got) off\b(?: .*)?$"
    r"|^(?:i |user )?(?:got|had|have had|finally got) (?:my|the) (?P<w>braces|cast|sling|splint"
    r"|stitches) (?:off|removed|taken off|out)\b(?: .*)?$"
)
# Where one is in without living there: "I'm in Medical School", "I'm in High School".
_INSTITUTIONS = frozenset(
    "school college university uni hospital prison jail army navy rehab therapy band".split()
)


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
    for attribute, pattern, *fixed in _WHOLE:
        found = pattern.match(spoken)
        if found and fixed:
            return attribute, fixed[0]
        value = trim_value(found.group("v")) if found else None
        if value:
            return attribute, value
    return None
