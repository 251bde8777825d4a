"""What a fact takes back: negation, verbs that end something, and corrections.

"I no longer live in Berlin" and "I quit caffeine" retract a value; "I sold my motorcycle"
ends whatever held the motorcycle; "from Indiana, not Ohio" states a value in place of
another. A later clause's "not" ("like dogs but not cats") negates nothing of the head.
"""

from __future__ import annotations

import re

from memman.language.attributes import is_single_valued
from memman.language.patterns import read_predicate
from memman.language.text import content_tokens
from memman.language.values import trim_value

# Words that say a value no longer holds, removed from the predicate before matching.
_NEGATORS = ("do not ", "did not ", "not ", "no longer ", "never ")
NEGATION_WORDS = frozenset("no not longer never".split())
# Verbs that take something back: "I quit smoking" is "I smoke", negated.
_QUITTING = re.compile(
    r"^(?:had to |decided to |have decided to )?(?:gave up on|have given up on|quit|stopped"
    r"|gave up|give up|have given up|have quit|have stopped|kicked|have kicked|ditched"
    r"|have ditched|cut out|have cut out|am done with|am through with|am finished with"
    r"|(?<=to )stop|stepped down as|stepped down from|have stepped down as|stepped away from"
    r"|resigned as|resigned from) (?P<rest>.+)$"
)
# What a quit says of how or when, not of what: "cut out caffeine completely", "gave up the
# violin years ago", "kicked the habit for good".
_AGO = r"(?:(?:a few|some|many|several|\d+|two|three|four|five|ten) )?(?:years|months|weeks) ago"
_QUIT_TAIL = re.compile(
    r"(?: (?:completely|entirely|altogether|totally|for good|cold turkey|at last"
    rf"|{_AGO}|(?:last|this) (?:year|month|week|spring|summer|autumn|fall|winter)|in \d{{4}}))+$"
)
# A job by what it was: "my barista job", "her job at the bank", "the teaching job".
# (Not a job held beside the main one: "quit my summer job" leaves the employer.)
_A_JOB = re.compile(
    r"^(?:(?:my|the|this|that) )?(?!(?:my|the|this|that|first|summer|side|second|weekend"
    r"|holiday|evening) )"
    r"(?:\w+ ){0,2}?job\b"
)
# "stopped working to stay home", "quit work after the baby": work itself, not one job's.
_WORK_ENDS = frozenset("to after because when since so last this and ago altogether".split())
# Verbs that end what their object names: "sold my motorcycle", "cancelled the membership".
_ENDING = re.compile(
    r"^(?:(?:sold|gave away|shaved off) (?=my |our |the |their |his |her )|(?:had to )?"
    r"(?:cancell?ed|dropped(?! out)|abandoned|outgrew|came off|got rid of|ended|broke off"
    r"|rehomed|rehome|uninstalled|deleted) |dropped out of (?=(?:my |our |the |a )?(?:\w+ )*?"
    r"(?:club|team|band|choir|league|orchestra|race|tournament|competition)\b)"
    r"|left (?=(?:my |our |the )(?:\w+ )*?(?:club|team|band|choir|group|league|orchestra|union"
    r"|class|course|program|programme|gym)\b))"
    r"(?P<rest>.+)$"
)
# The same, the verb's object inside it: "gave our rabbit to a neighbour", "put my dog down".
_GIVEN_UP = re.compile(
    r"^(?:had to )?(?:gave|give|put) (?P<rest>(?:my |our |the )?\w+(?: \w+)??)"
    r" (?:away|down|up for adoption|to (?:a |an |my |our |the )?(?:\w+ )?(?:neighbou?r|friend"
    r"|shelter|family|rescue|relative)s?)(?: .*)?$"
)
# Verbs that start something: "started drinking again" is "drink again" (GERUNDS).
_STARTING = re.compile(
    r"^(?:started|began|have started|am back to|went back to|took up|picked up) (?P<g>\w+ing)"
    r"(?P<rest>(?: (?!at |in |when |as |with |for |after |since |on ).*)?)$"
)
_LATER_CLAUSE = re.compile(
    r"^(?P<head>.+?) (?:but|and|though|although|except|because|since|when|while|if|unless"
    r"|that|who|which) (?P<rest>.+)$"
)
# A present perfect's auxiliary before a verb ("have painted", "have been running").
_PERFECT = re.compile(r"^(?:have|has) (?:been )?(?=\w+(?:ed|ing)\b)")
# A state held for a while is a state held now: "have been seeing someone" is "am seeing",
# "have been sober for six months" "am sober"; "have been to Paris" is a visit, "have been
# married before" a past.
_STATE_SINCE = re.compile(
    r"^(?:have been|been) (?!to |there |here )(?!.*\b(?:before|once|twice|times|previously)\b)"
)
# An event just done is the event: "have started at Microsoft" is "started at Microsoft" (not
# "have divorced parents": a participle before its noun describes it).
_JUST_DONE = re.compile(
    r"^have (?=(?:\w+ed|got|found|left|taken|become|gone) (?:at|to|from|in|into|with|for|as|out"
    r"|up|off|back|my|our|a|an|the)\b)"
)
# What one can (not) take in: "can not do caffeine", "can not handle dairy".
_TAKEN_IN = re.compile(r"^can (?:do|have|handle|tolerate|stomach) (?P<rest>.+)$")
# How one sees oneself is what one is: "consider myself agnostic", "identify as Buddhist".
_AS_SELF = re.compile(
    r"^(?:would )?(?:describe|consider|identify|define) (?:myself as|myself|as) (?P<rest>.+)$"
)
# A tail that says when, not what: "have a girlfriend now", "go to bed around 1am lately".
_WHEN_TAIL = re.compile(r" (?:now|again|these days|nowadays|lately|at the moment)$")


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


_CORRECTION = re.compile(r"^(?P<head>.+?) (?P<how>not|instead of|rather than) (?P<old>.+)$")
_NOW_SAID = re.compile(r" (?:now|these days|nowadays)$")
_SMOKES = frozenset("smoke smoking cigarette cigarettes cigars cigar tobacco vaping vape".split())
GERUNDS = {
    "smoking": "smoke", "drinking": "drink", "working": "work", "eating": "eat",
    "playing": "play", "living": "live", "dating": "date", "using": "use", "studying": "study",
    "doing": "do", "going": "go", "having": "have", "being": "am", "cycling": "cycle",
    "biking": "bike", "driving": "drive", "walking": "walk", "commuting": "commute",
    "crashing": "crash", "taking": "take",
}  # fmt: skip
# Where a value ends: "Berlin with my wife", "Munich last month", "jazz and blues".


# A change said not to have happened: "never dyed my hair blue", "did not move to Berlin",
# "have never cut my hair short". It states no current value (the hair may be blue by
# birth, the user born in Berlin), unlike a state denied ("never smoked", "am not married").
_UNDONE = re.compile(
    r"^(?:have |has )?(?:never|did not)(?: ever| actually| really)? (?:have |has )?"
    r"(?:dyed?|bleach(?:ed)?|colou?r(?:ed)?|highlight(?:ed)?|cut|shaved?|grew|grow|chop(?:ped)?"
    r"|moved?|relocated?|switch(?:ed)?|convert(?:ed)?|changed?|went)\b"
)


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
    for tail in (" anymore", " any more", " any longer"):
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


# A later clause that states what holds now: "i graduated and now i work as a paralegal",
# "i packed up and moved to seattle" (the whole fact in the first person: "now" is kept).
_NOW_CLAUSE = re.compile(
    r"^(?:i|user|we) .+? (?:and|so|but) (?:now (?:i |user |we )?|(?:then |just )?(?=moved"
    r" |relocated )|(?=(?:am|is|are|im) now ))(?P<rest>.+)$"
)


def now_clause(spoken: str) -> str | None:
    """The later clause of a fact that says what holds now, as its own predicate (its verb
    not yet in the first person), or None."""
    found = _NOW_CLAUSE.match(spoken)
    rest = found.group("rest") if found else None
    return "am" + rest[2:] if rest and rest.startswith("im ") else rest  # "and im now a ..."


# One thing given up for another: "switched from coffee to tea", "replaced my Fitbit with an
# Apple Watch". What the new thing is, no pattern may read; what it ends, the object names.
_SWAPPED = re.compile(
    r"^(?:switched|changed|went|converted|have switched) from (?P<old>.+?) to .+$"
    r"|^(?:replaced|have replaced) (?P<mine>(?:my|our|the) .+?) with .+$"
)


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
