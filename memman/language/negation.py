"""What a fact takes back: negation, verbs that end something, and corrections.

"I no longer live in Berlin" and "I quit caffeine" retract a value; "I sold my motorcycle"
ends whatever held the motorcycle; "from Indiana, not Ohio" states a value in place of
another. A later clause's "not" ("like dogs but not cats") negates nothing of the head.
The words and patterns are rules/negation.toml's; this module holds what is done with them.
"""

from __future__ import annotations

from memman.language import rulebook
from memman.language.attributes import is_single_valued
from memman.language.patterns import read_predicate
from memman.language.text import content_tokens
from memman.language.values import trim_value

_NEGATORS = rulebook.listed("negation", "listed", "negators")
_NEGATED_TAILS = rulebook.listed("negation", "listed", "negated_tails")
NEGATION_WORDS = rulebook.words("negation", "words", "negation_words")
_PATTERNS = rulebook.patterns("negation")
_QUITTING = _PATTERNS["quitting"].pattern
_QUIT_TAIL = _PATTERNS["quit_tail"].pattern
_A_JOB = _PATTERNS["a_job"].pattern
_WORK_ENDS = rulebook.words("negation", "words", "work_ends")
_ENDING = _PATTERNS["ending"].pattern
_GIVEN_UP = _PATTERNS["given_up"].pattern
_STARTING = _PATTERNS["starting"].pattern
_LATER_CLAUSE = _PATTERNS["later_clause"].pattern
_PERFECT = _PATTERNS["perfect"].pattern
_STATE_SINCE = _PATTERNS["state_since"].pattern
_JUST_DONE = _PATTERNS["just_done"].pattern
_TAKEN_IN = _PATTERNS["taken_in"].pattern
_AS_SELF = _PATTERNS["as_self"].pattern
_WHEN_TAIL = _PATTERNS["when_tail"].pattern
_CORRECTION = _PATTERNS["correction"].pattern
_NOW_SAID = _PATTERNS["now_said"].pattern
_SMOKES = rulebook.words("negation", "words", "smokes")
GERUNDS = rulebook.mapping("negation", "map.gerunds")
_UNDONE = _PATTERNS["undone"].pattern
_NOW_CLAUSE = _PATTERNS["now_clause"].pattern
_SWAPPED = _PATTERNS["swapped"].pattern


def rephrased(predicate: str) -> list[str]:
    """The predicate in the tenses the patterns read, when it is said in another: "have been
    sober for six months" -> "am sober for six months", "have been going to bed around 1am
    lately" -> "go to bed around 1am", "have started at microsoft" -> "started at microsoft",
    "have a girlfriend now" -> "have a girlfriend". Tried in order after the predicate itself."""
    found: list[str] = []
    said = _STATE_SINCE.sub("am ", predicate, count=1) if _STATE_SINCE.match(predicate) else None
    if said is not None:
        found.append(said)
        verb, _, rest = said[3:].partition(" ")
        if verb in GERUNDS:  # "am going to bed": "go to bed"
            found.append(f"{GERUNDS[verb]} {rest}".strip())
    if _JUST_DONE.match(predicate):
        found.append(predicate[5:])
    taken = _TAKEN_IN.match(predicate)
    if taken:  # "can not do caffeine anymore": a drink, if it is one (the patterns check)
        found.append("drink " + taken.group("rest"))
    described = _AS_SELF.match(predicate)
    if described:  # "describe myself as agnostic these days": "am agnostic"
        found.append("am " + described.group("rest"))
    found += [_WHEN_TAIL.sub("", p) for p in [predicate, *found] if _WHEN_TAIL.search(p)]
    return found


def undone_change(predicate: str) -> bool:
    """True for a change said not to have happened ("never dyed my hair blue"): no value."""
    return _UNDONE.match(predicate) is not None


def strip_negation(predicate: str) -> tuple[str, bool, bool]:
    """The predicate without its negation, whether it was negated, and whether it is now the
    object of a verb that ended something ("quit the chess club" -> "the chess club")."""
    negated = ended = False
    for negator in _NEGATORS:
        if negator in predicate + " " and (
            predicate.startswith(negator) or f" {negator}" in f" {predicate} "
        ):
            predicate = (" " + predicate + " ").replace(" " + negator, " ").strip()
            negated = True
    for tail in _NEGATED_TAILS:
        if predicate.endswith(tail):
            predicate, negated = predicate[: -len(tail)], True
    if negated:  # "have not painted in years", "have not been running since"
        predicate = _pastime_not_done(predicate)
    ending = _ENDING.match(predicate) or _GIVEN_UP.match(predicate)
    if ending:
        return ending.group("rest"), True, True
    quitting = _QUITTING.match(predicate)
    if quitting:
        rest = (_QUIT_TAIL.sub("", quitting.group("rest")) or quitting.group("rest")).split()
        ended = not rest[0].endswith("ing")
        rest[0] = GERUNDS.get(rest[0], rest[0])
        predicate, negated = " ".join(rest), True
        job = _A_JOB.match(predicate)
        if rest[0] in ("work", "job") and (len(rest) == 1 or rest[1] in _WORK_ENDS):
            predicate = "lost my job"
        elif job:  # "quit my barista job": the job lost, at whatever employer it names
            predicate = "lost my job" + predicate[job.end() :]
        elif _SMOKES & set(rest[:4]):  # "kicked the smoking habit": smoking
            predicate = "smoke"
    starting = _STARTING.match(predicate)
    # "started drinking again"; what one starts eating is the diet patterns' (patterns._RESUMED)
    if starting and starting.group("g") in GERUNDS.keys() - {"eating"}:
        predicate = GERUNDS[starting.group("g")] + starting.group("rest")
    return predicate.replace("have got ", "have ").strip(), negated, ended


def _pastime_not_done(predicate: str) -> str:
    """A negated present perfect of a pastime, as the pastime ("have painted in years" ->
    "painting in years"); any other predicate unchanged ("have decided yet")."""
    perfect = _PERFECT.match(predicate)
    if perfect is None:
        return predicate
    done, _, rest = predicate[perfect.end() :].partition(" ")
    done = done[:-2] + "ing" if done.endswith("ed") else done  # painted -> painting
    pastime = f"{done} {rest}".strip()
    read = read_predicate(pastime)
    return pastime if read is not None and read[0] == "hobby" else predicate


def correction(predicate: str) -> tuple[str, str, bool, str] | None:
    """A value stated in place of another: "am originally from indiana not ohio" is hometown
    Indiana, replacing Ohio; "drink tea instead of coffee" replaces coffee. A bare "not"
    corrects only a single-valued attribute ("like dogs but not cats" replaces nothing)."""
    found = _CORRECTION.match(predicate)
    if found is None:
        return None
    head = _NOW_SAID.sub("", found.group("head"))  # "called christina now, not chris"
    matched = read_predicate(head)
    old = trim_value(found.group("old"))
    if matched is None or matched[1] is None or matched[2] or old is None:
        return None
    attribute, value, _ = matched
    if found.group("how") == "not" and (
        not is_single_valued(attribute) or not head.endswith(" " + matched[1])
    ):  # "from canada and i am not a student": the "not" is another clause's
        return None
    return attribute, value, False, old


def now_clause(spoken: str) -> str | None:
    """The later clause of a fact that says what holds now, as its own predicate (its verb
    not yet in the first person), or None."""
    found = _NOW_CLAUSE.match(spoken)
    rest = found.group("rest") if found else None
    return "am" + rest[2:] if rest and rest.startswith("im ") else rest  # "and im now a ..."


def swapped(predicate: str) -> str | None:
    """What a switch from one thing to another gives up ("from coffee to tea": coffee), or
    None."""
    found = _SWAPPED.match(predicate)
    gone = found and (found.group("old") or found.group("mine"))
    return trim_value(gone) if gone else None


def first_clause(predicate: str) -> str:
    """The predicate up to a later clause that holds the only negation: "like dogs but not
    cats" likes dogs, "live in berlin and i am not a student" lives in Berlin (a later clause
    of nothing but the negation negates the head: "but i do not"). A value ends
    at "and" / "but" anyway (_VALUE_END); this keeps the later "not" from negating it."""
    found = _LATER_CLAUSE.match(predicate)
    if found is None or NEGATION_WORDS & set(found.group("head").split()):
        return predicate
    rest = found.group("rest")
    if not NEGATION_WORDS & set(rest.split()) or not content_tokens(rest):
        return predicate  # "wanted to play instruments but i do not": the head's negation
    return found.group("head")
