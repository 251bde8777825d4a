"""The phrasings of life's turns: where and with whom one lives, work taken and left, habits.

Everyday updates rarely repeat the words of the fact they replace: "We packed up and moved
down to Bristol" replaces "I'm based in Glasgow", "I live alone these days" replaces "I share
a flat with three roommates", "I took a full-time job as an art director" replaces "I
freelance as a graphic designer". These patterns read such phrasings as the attribute they
state, so that supersede.py finds the memory of the same attribute whatever its words. They
are tried before the general patterns of patterns.py (same form: attribute, pattern over the
first-person predicate, fixed value or check), being the more specific.
"""

from __future__ import annotations

# Where one lives, as a kind of home: "a flat in the city centre", "a house out in the suburbs".
_HOME = (
    r"(?:a |an |my |our |the )?(?:[\w]+ ){0,2}?"
    r"(?:apartment|flat|house|home|condo|place|studio|dorm|bungalow|cottage|townhouse)"
)
# The way a move is told: "moved down to", "packed up and moved back to", "relocated over to".
_MOVED = (
    r"(?:moved|relocated|have moved|have relocated|packed up and moved|upped sticks and moved)"
    r"(?: (?:back|down|up|out|over|away|across|home|abroad|all the way))*"
)
_ALONE = r"(?P<v>alone|on my own|by myself|solo)"
# Whom one shares a home with: "share a flat with three roommates".
_SHARED = r"(?:a |an |the |my |our )?(?:\w+ )?(?:flat|apartment|house|place|room|home|dorm)"
# One's own parents' home: "my parents' house", "my mum's place", "home".
_PARENTS = (
    r"(?:(?:my |our |the )?(?:parents|family|folks|mums?|moms?|dads?|mothers?|fathers?)"
    r"(?: s)? (?:house|home|place)|home)"
)
# Fields of work named alone: "I work in retail" is a job in retail, "in London" is not one.
INDUSTRIES = (
    "retail|sales|marketing|finance|banking|insurance|healthcare|health care|hospitality"
    "|tech|it|software|education|construction|manufacturing|logistics|advertising"
    "|publishing|accounting|law|real estate|human resources|hr|consulting|journalism"
    "|pharma|engineering|fashion|media|politics|research|academia|government|nursing"
    "|customer service|social work|catering|the restaurant business|the film industry"
)
# A past tense says what one did, not does: "sold cars for a living" was a job.
_PAST = r"(?:\w+ed|sold|did|made|drove|taught|was|ran|wrote|built|sang|had|took|used to)"
_V = r"(?P<v>.+)"
_SERVICE = r"(?:a |an |the )?"

LIFE: list[tuple[str, str, str | None]] = [
    # where one lives
    ("residence", rf"^(?:grew up|was born|was raised) in {_V} and (?:still |now )?live there"
     r"(?: .*)?$", None),
    ("residence", rf"^(?:live|am living|reside|am based|am located|have lived) in {_V}$", None),
    ("residence", rf"^{_MOVED} to {_V}$", None),
    ("residence", rf"^(?:my home am|home am) in {_V}$", None),
    ("residence", rf"^(?:now )?call {_V} home(?: now)?$", None),
    ("residence", rf"^(?:rent|am renting|bought|have bought|got|own) {_HOME}"
     rf"(?: out| over| up| down)? in {_V}$", None),
    ("residence", rf"^(?:moved|have moved|am moving) into (?P<v>{_HOME}(?: .+)?)$", None),
    # with whom one lives: a household of one value ("alone", "three roommates", "parents")
    ("household", rf"^(?:live|am living|am staying) {_ALONE}(?: .*)?$", None),
    ("household", r"^(?:live|am living|am staying) (?:at home |at my parents |at my parents s"
     rf" (?:house|place) )?with {_V}$", None),
    ("household", r"^(?:live|am living) at home(?: .*)?$", "with parents"),
    ("household", rf"^share {_SHARED} with {_V}$", None),
    ("household", r"^(?:have|live with) (?P<v>(?:\w+ )?(?:roommates?|flatmates?|housemates?))$",
     None),
    ("household", r"^am staying (?:at|in) (?P<v>(?:my |our |a |the )?(?:\w+ )?(?:\w+ s )?"
     r"(?:place|house|home|flat|apartment|couch|spare room))(?: .*)?$", None),
    ("household", r"^(?:got|have|found|moved into) (?:the keys to )?(?:my|our) (?P<v>own"
     r" (?:place|flat|apartment|house|home))(?: .*)?$", None),
    ("household", rf"^moved out of {_PARENTS}(?: .*)?$", "moved out"),
    ("household", rf"^moved in with {_V}$", None),
    ("residence", r"^moved out(?: of (?P<v>.+))?$", "-"),
    # work taken
    ("job", rf"^(?:was |got |have been |been )?promoted to {_SERVICE}{_V}$", None),
    ("job", rf"^(?:freelance|work freelance|am freelancing) as {_SERVICE}{_V}$", None),
    ("job", r"^(?:took|got|accepted|landed|started|found|have|am starting) (?:a |an )?"
     rf"(?:[\w]+ ){{0,4}}?(?:job|position|role|gig|post) as {_SERVICE}{_V}$", None),
    ("job", rf"^(?!{_PAST}\b)(?P<v>.+) for a living$", None),  # "sold cars for a living": once
    ("job", rf"^(?:work|am working) in (?P<v>{INDUSTRIES})(?: .*)?$", None),
    ("employer", rf"^(?:drive|deliver|ride) for {_V}$", "employer?"),
    # work left: no employer any more, whichever it was
    ("employer", r"^(?:handed in|gave|put in|turned in|submitted|handed) (?:in )?my"
     r" (?:notice|resignation|two weeks notice)(?: .*)?$", "-"),
    ("employer", r"^(?:resigned|retired early|took early retirement|am jobless"
     r"|am between jobs)(?: .*)?$", "-"),
]  # fmt: skip
