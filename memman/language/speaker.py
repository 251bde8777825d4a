"""Whose fact it is, and its predicate in the first person.

"I live in Berlin", "User lives in Berlin" and "Lives in Berlin" are all the user's; "My
sister lives in Rome" is the sister's and "Jon works at Apple" Jon's. The predicate comes back
with its verb as the first person says it ("live in berlin"), so one set of patterns reads
every style.
"""

from __future__ import annotations

from memman.language import rulebook
from memman.language.attributes import OTHERS, USER, person
from memman.language.kinds import PETS
from memman.language.names import self_named, without_apposition
from memman.language.negation import NEGATION_WORDS
from memman.language.text import NEGATIONS, STOPWORDS, verb_stem, words

# The words and patterns: rules/speaker.toml.
_FIRST_PERSON = {
    said: tuple(meant.split())
    for said, meant in rulebook.mapping("speaker", "first_person").items()
}
_VERB_FORMS = rulebook.mapping("speaker", "map.verb_forms")
_OPENERS = rulebook.words("speaker", "words", "openers")
_LEAD_PHRASES = tuple(
    tuple(p.split()) for p in rulebook.listed("speaker", "listed", "lead_phrases")
)
_STILL_TRUE_FILLERS = rulebook.words("speaker", "words", "still_true_fillers")
_OWN = rulebook.mapping("speaker", "map.own")
_SUBJECTLESS_VERBS = rulebook.words("speaker", "words", "subjectless_verbs")
_PAST_IRREGULAR = rulebook.words("speaker", "words", "past_irregular")
_PERFECT_PARTICIPLES = rulebook.words("speaker", "words", "perfect_participles")
_TAKE_IN = rulebook.words("speaker", "words", "take_in")
_TOLD_ALONE = rulebook.words("speaker", "words", "told_alone")
_AFTER_VERB = rulebook.words("speaker", "words", "after_verb")
_INDEFINITE = rulebook.words("speaker", "words", "indefinite")
_PATTERNS = rulebook.patterns("speaker")
_BREAKUP = _PATTERNS["breakup"].pattern
_TOGETHER = _PATTERNS["together"].pattern
_ENROLLED = _PATTERNS["enrolled"].pattern
_LET_GO = _PATTERNS["let_go"].pattern
_GONE = _PATTERNS["gone"].pattern
_CHILDREN = rulebook.words("speaker", "words", "children")
_BORN = _PATTERNS["born"].pattern
_PARTNER_BIRTH = _PATTERNS["partner_birth"].pattern
_NAMING_PHRASE = _PATTERNS["naming_phrase"].pattern
_PARTNERS = rulebook.words("speaker", "words", "partners")
_NAME_FIRST = _PATTERNS["name_first"].pattern
_RELATIVE_AGES = rulebook.words("speaker", "words", "relative_ages")


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
    return done.endswith("ed") or done in _PAST_IRREGULAR | _PERFECT_PARTICIPLES


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
    if len(rest) > 2 and rest[0] in _RELATIVE_AGES and (rest[1] in OTHERS):
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
