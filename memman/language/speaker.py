"""Whose fact it is, and its predicate in the first person.

"I live in Berlin", "User lives in Berlin" and "Lives in Berlin" are all the user's; "My
sister lives in Rome" is the sister's and "Jon works at Apple" Jon's. The predicate comes back
with its verb as the first person says it ("live in berlin"), so one set of patterns reads
every style.
"""

from __future__ import annotations

import re

from memman.language.attributes import OTHERS, USER, person
from memman.language.kinds import PETS
from memman.language.names import self_named, without_apposition
from memman.language.negation import NEGATION_WORDS
from memman.language.text import NEGATIONS, STOPWORDS, verb_stem, words

_FIRST_PERSON = {"i": (), "im": ("am",), "ive": ("have",), "id": ("would",), "ill": ("will",)}
# Third-person verb forms ("User lives in", "User is") spelled as the first person says them.
_VERB_FORMS = {
    "is": "am", "are": "am", "was": "was", "were": "was", "has": "have", "does": "do",
    "doesnt": "do not", "dont": "do not", "didnt": "did not", "isnt": "am not",
    "arent": "am not", "wasnt": "was not", "hasnt": "have not", "havent": "have not",
    "cant": "can not", "cannot": "can not", "wont": "will not", "aint": "am not",
}  # fmt: skip
# Words a chat message opens with before its subject.
_OPENERS = frozenset(
    """honestly well so actually btw anyway oh ok okay yeah yes also these days nowadays lately
    hi hello hey and plus fyi now""".split()
)
# Phrases that lead into a statement without being part of it: "By the way, I'm vegan", "Oh
# and I have a cat" ("oh" and "and" are openers of their own), "Just so you know, ...".
_LEAD_PHRASES = tuple(
    tuple(phrase.split())
    for phrase in (
        "by the way", "just so you know", "for the record", "for context", "fun fact",
        "remember that", "note that", "keep in mind that", "dont forget that", "good news",
        "big news", "guess what", "quick update",
    )
)  # fmt: skip
_STILL_TRUE_FILLERS = frozenset(
    """just recently finally also really currently now still actually officially usually
    mostly generally normally typically""".split()
)
# The user's own, as a fact written of "User" says it: "User lost their job".
_OWN = {"their": "my", "his": "my", "her": "my", "themselves": "myself", "himself": "myself",
        "herself": "myself"}  # fmt: skip
# A fact written without its subject ("Lives in Berlin", "Also enjoys video games") is the
# user's when it starts with one of these verbs.
_SUBJECTLESS_VERBS = frozenset(
    """is has was does likes loves lives works enjoys plays drinks drives speaks owns prefers
    hates dislikes eats reads watches studies moved joined quit got goes takes uses wants
    visited visits collects cooks runs teaches volunteers attends""".split()
)
# A chat message in the past tense without its "I" ("Sold my car", "Handed in my notice",
# "Went for a pixie cut"): the user's, when the verb is followed by what a verb takes (an
# object's determiner, a particle), so "Ted moved to Rome" (a name, then a verb) is Ted's.
_PAST_IRREGULAR = frozenset(
    """sold went took got bought found gave had began lost left made quit kept met ran split
    cut put broke drove grew threw wrote became""".split()
)
# What one can't take any more: "Can't do caffeine anymore", "Can't stomach dairy".
_TAKE_IN = frozenset("do have handle tolerate stomach drink eat".split())
# Verbs that are the user's whatever follows them: "Cancelled Spotify", "Joined Google".
_TOLD_ALONE = frozenset(
    "cancelled canceled quit ditched joined started finished moved sold retired".split()
)
_AFTER_VERB = frozenset(
    """my our the a an in on up out off to for into back over down away it his her their
    some all this last another""".split()
)
# Capitalised at the start of a sentence, yet nobody's name: "Someone is cutting a tomato" is
# no fact about a person called Someone (two such facts would read as two people's).
_INDEFINITE = frozenset(
    "someone somebody anyone anybody everyone everybody noone nobody people".split()
)
# "Lena and I broke up", "Sam and I got married", "my wife and I separated": the user's
# relationship status.
_BREAKUP = re.compile(
    r"^(?:(?:my |our )?\w+ and (?:i|user)|(?:i|user) and (?:(?:my|their|his|her) )?\w+)"
    r" (?P<p>(?:just |recently |finally |have |are |are now )?(?:broke up|split up|separated"
    r"|split|got divorced|divorced|got married|married|got engaged|engaged|tied the knot"
    r"|got hitched|eloped|got remarried|remarried"
    r"|(?P<apart>(?:are|have) (?:no longer together|not together anymore|parted ways|gone our"
    r" separate ways)|parted ways|went our separate ways))(?: .*)?)$"
)
# "My wife and I live together in Leeds", "my boyfriend and I moved in together": a partner.
_TOGETHER = re.compile(
    r"^(?:my|our) (?P<who>girlfriend|boyfriend|partner|wife|husband|fiance|fiancee) and"
    r" (?:i|user) (?:live together|moved in together|share a (?:flat|house|home|place))\b"
)
# A child moved to a school by the parents: "We transferred our boy to Riverside Academy" is
# where the son goes to school (the school check of the patterns still applies).
_ENROLLED = re.compile(
    r"^(?:we|i|user) (?:just |finally )?(?:have )?(?:transferred|moved|switched|enrolled|put"
    r"|sent) (?:our|my|their|his|her) (?P<who>son|daughter|boy|girl|kid|child|eldest"
    r"|youngest)(?: \w+)? (?:to|at|in|into) (?P<rest>.+)$"
)
# "Google let me go", "my boss fired me", "the company laid User off": the user's work ended
# (not "my mom let me go to the party").
_LET_GO = re.compile(
    r"^(?:(?:my|the|our) )?\w+ (?:just |finally )?(?:let (?:me|user) go(?! (?:to|on|with|out|home"
    r"|early|first|ahead|\w+ing)\b)|laid (?:me|user) off|fired (?:me|user)(?! up)"
    r"|made (?:me|user) redundant)\b"
)
# "My hamster Peanut died", "my roommate moved out".
_GONE = re.compile(r"^(?:\w+ )?(?:died|passed away|ran away|was rehomed|moved out)(?: .*)?$")
_CHILDREN = frozenset("son daughter baby child".split())
# "Our second child was born", "our baby arrived": the user's children, counted anew.
_BORN = re.compile(
    r"^(?:(?P<n>first|second|third|fourth|fifth|\d+(?:st|nd|rd|th)) )?(?:new |baby |little )?"
    r"(?P<who>son|daughter|baby|child|kid|boy|girl)(?: \w+)? (?P<how>was born|arrived)(?: .*)?$"
)
# "My wife gave birth to our son": the user's child as well.
_PARTNER_BIRTH = re.compile(r"^(?:just )?(?:gave birth|had (?:a|our|the) (?:\w+ )?(?:baby|child))")
# "wife is sarah", "wifes name is sarah" (after "my" / "User's").
_NAMING_PHRASE = re.compile(r"^(?P<who>\w+?)(?:s name is| is called| is named| is) (?P<name>\w+)$")
_PARTNERS = frozenset("girlfriend boyfriend partner wife husband fiance fiancee".split())
# "Tom is my husband", "Sarah is User's wife": the same, the name first.
_NAME_FIRST = re.compile(r"^(?P<name>\w+) is (?:my|users) (?P<who>\w+)$")


def without_openers(tokens: list[str]) -> list[str]:
    """The words from the statement on: "Honestly, I'm ...", "By the way I'm ..." lose their
    lead, and so does "(it) turns out" ("It turns out I'm not allergic to cats"); at least two
    words are kept ("so so" stays)."""
    while len(tokens) > 2:
        lead = next((p for p in _LEAD_PHRASES if tuple(tokens[: len(p)]) == p), None)
        drop = len(lead) if lead else 1 if tokens[0] in _OPENERS else 0
        if not drop or len(tokens) - drop < 2:
            break
        tokens = tokens[drop:]
    turns = 1 if tokens[:1] == ["it"] else 0
    if len(tokens) > turns + 3 and tokens[turns : turns + 2] == ["turns", "out"]:
        return without_openers(tokens[turns + 2 :])
    return tokens


def only_openers(tokens: list[str]) -> bool:
    """True when the words are nothing but lead words ("ok quick update", "good news"): all
    of them are dropped by without_openers (which keeps two words: the two ends added)."""
    return bool(tokens) and without_openers([*tokens, "", ""]) == ["", ""]


def subject_and_predicate(text: str) -> tuple[str, str] | None:
    tokens = [t for t in words(text) if t]
    written = text.strip().split()
    kept = without_openers(tokens)
    tokens, written = kept, written[len(written) - len(kept) :] if kept else []
    if len(tokens) < 2:
        return None
    if _LET_GO.match(" ".join(tokens)):  # "Google let me go": the user's work ended
        return USER, "lost my job"
    enrolled = _ENROLLED.match(" ".join(tokens))
    if enrolled:  # "We transferred our boy to Riverside Academy": the son's school
        return person(enrolled.group("who")), f"go to {enrolled.group('rest')}"
    together = _TOGETHER.match(" ".join(tokens))
    if together:  # "My wife and I live together in Leeds": the user has a wife
        return USER, f"have a {together.group('who')}"
    breakup = _BREAKUP.match(" ".join(tokens))
    if breakup and breakup.group("apart"):  # "Tom and I are no longer together"
        return USER, "broke up"
    if breakup:  # "Lena and I broke up", "User and their boyfriend split up"
        return USER, first_person(breakup.group("p").split())
    first = tokens[0]
    aligned = written if len(written) == len(tokens) else []
    written = written[0] if written else ""
    if first in ("we", "weve"):  # "We adopted a greyhound": the user's household
        return USER, first_person(["have"] * (first == "weve") + tokens[1:])
    if first in _FIRST_PERSON:
        expanded = _FIRST_PERSON[first]  # "im" -> "am": the name is the 2nd or 3rd word
        spoken = list(expanded) + tokens[1:]
        name = self_named(spoken, aligned[2 - len(expanded) :])
        if name is not None:  # "I'm Tom", "I am Tom and I ...": what "I am called Tom" says
            return USER, f"am called {name}"
        return USER, first_person(spoken)
    if first == "users":  # "User's sister ..."
        return _possessive(tokens[1:], text)
    if first == "user":  # "User lost their job": the user's own job
        return USER, first_person([_OWN.get(t, t) for t in tokens[1:]])
    if first in ("my", "our"):
        return _possessive(tokens[1:], text)
    verb = tokens[1] if first in _STILL_TRUE_FILLERS | NEGATION_WORDS else first
    if verb in _SUBJECTLESS_VERBS:  # "Lives in Berlin", "Never eats pork"
        return USER, first_person(tokens)
    if first in _STILL_TRUE_FILLERS and verb.endswith("ed"):  # "Just accepted an offer"
        return USER, first_person(tokens)
    if tokens[0] in ("cant", "cannot") and tokens[1] in _TAKE_IN:  # "Can't do caffeine"
        return USER, first_person(tokens)
    if _told_past(tokens) or _told_perfect(tokens):  # "Sold my car", "Haven't touched a drop"
        return USER, first_person(tokens)
    ordinary = STOPWORDS | NEGATIONS | _STILL_TRUE_FILLERS | _INDEFINITE
    named = written[:1].isupper() and first not in ordinary
    partner = _NAME_FIRST.match(" ".join(tokens)) if named else None
    if partner and partner.group("who") in _PARTNERS:  # "Tom is my husband"
        return USER, f"have a {partner.group('who')} named {partner.group('name')}"
    if named and _GONE.match(" ".join(tokens[1:])):  # "Luna died": whoever was named Luna
        return USER, f"no longer have {first}"
    if named and tokens[1] in _SUBJECTLESS_VERBS:
        # A named person: "Jon works at Apple", "Anna is vegan".
        return first, first_person(tokens[1:])
    return None


def _told_past(tokens: list[str]) -> bool:
    """Whether a message opens with a verb of the past, its "I" left out (_PAST_IRREGULAR)."""
    first, after = tokens[0], tokens[1]
    past = first in _PAST_IRREGULAR or (len(first) > 4 and first.endswith("ed"))
    return first in _TOLD_ALONE or (past and after in _AFTER_VERB)


def _told_perfect(tokens: list[str]) -> bool:
    """Whether a message opens with a negated or dated perfect, its "I" left out ("Haven't
    touched alcohol since January", "Have never felt better", "Have just moved")."""
    if tokens[0] in ("havent", "hasnt"):
        done = tokens[1]
    elif tokens[0] == "have" and len(tokens) > 2 and tokens[1] in ("not", "never", "just"):
        done = tokens[2]
    else:
        return False
    return done.endswith("ed") or done in _PAST_IRREGULAR | {"been", "gone", "done", "taken"}


def _possessive(rest: list[str], text: str) -> tuple[str, str] | None:
    """After "my" / "User's": another person's fact, or the user's own ("my name is Ana").
    `text`: the fact as written (its capitals tell names, see _named)."""
    rest = without_apposition(rest, text)  # "my wife Ana works ..." is the wife's job
    if rest[1:2] == ["friend"] and rest[0] in ("boy", "girl"):  # "my girl friend"
        rest = [rest[0] + "friend", *rest[2:]]
    if not rest:
        return None
    named = _named(" ".join(rest), text)
    if named is not None:
        return USER, named
    born = _BORN.match(" ".join(rest))
    if born and born.group("n"):  # "our third child was born": three
        return USER, f"had our {born.group('n')} child"
    if born and born.group("who") in _CHILDREN and born.group("how") == "was born":
        return USER, "have one child"  # "my daughter was born ..."
    if born:  # "our baby arrived": a child more, not counted
        return USER, "had a baby"
    if rest[0] in _PARTNERS and _PARTNER_BIRTH.match(" ".join(rest[1:])):
        return USER, first_person(rest[1:])  # "my wife gave birth to our son"
    if rest[0] in OTHERS | PETS and _GONE.match(" ".join(rest[1:])):
        # "My hamster Peanut died", "my roommate moved out": the user no longer has them.
        return USER, f"no longer have a {rest[0]}"
    if rest[0][:-1] in OTHERS | PETS and rest[1:3] == ["name", "is"]:  # "my dog's name is"
        return person(rest[0][:-1]), first_person(rest[1:])
    if rest[0] in OTHERS and len(rest) > 1:
        return person(rest[0]), first_person(rest[1:])
    if (
        len(rest) > 2
        and rest[0] in ("best", "older", "younger", "little", "big", "eldest", "oldest", "youngest")
        and (rest[1] in OTHERS)
    ):
        return person(rest[1]), first_person(rest[2:])
    return USER, "my " + first_person(rest)


def _capitalised(text: str) -> frozenset[str]:
    """The words written with a capital letter after the first: the names a fact holds."""
    found = (words(w) for w in text.split()[1:] if w[:1].isupper())
    return frozenset(w[0] for w in found if w)


def _named(rest: str, text: str) -> str | None:
    """A partner's name stated as the user having them: "my wife is Sarah" / "my wife's name
    is Sarah" is "have a wife named sarah", the user's relationship status, as "I am married
    to Sarah" states it. Only a single word written with a capital is a name: "my wife is
    sweet" says something about the wife. (A pet's name stays the pet's: "my dog is called
    Max" is (dog, name), so that "is actually called Rex" renames it.)"""
    found = _NAMING_PHRASE.match(rest)
    if found is None or found.group("who") not in _PARTNERS:
        return None
    if found.group("name") not in _capitalised(text):  # read last: most facts name nobody
        return None
    return f"have a {found.group('who')} named {found.group('name')}"


def first_person(tokens: list[str]) -> str:
    """The predicate with its verb in the first person and leading fillers dropped.

    The verb is the first word that is not a filler or a negation: "User no longer lives in
    Berlin" -> "no longer live in berlin".
    """
    out: list[str] = []
    verb_seen = False
    for index, token in enumerate(tokens):
        if index < 3 and token in _STILL_TRUE_FILLERS:
            continue
        form = _VERB_FORMS.get(token)
        if not verb_seen and token not in NEGATION_WORDS:
            verb_seen = True
            if form is None and token.endswith("s") and token[-2:] != "ss":
                form = verb_stem(token)
        out.append(form or token)
    return " ".join(out)
