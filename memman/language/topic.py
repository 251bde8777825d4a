"""What a fact is about: its subject, its attribute and the value it states.

"I moved to Munich last month" and "I live in Berlin" share no content word, yet both state
where the user lives. Word overlap cannot see that; a topic can: both are (user, residence),
with the values "munich" and "berlin". The write path uses topics to find the memory a fact
supersedes (same subject and attribute, whatever the words) and to settle the clear cases
without an LLM: a single-valued attribute (where the user lives, works, their relationship
status) holds one current value, so a different value replaces the old one; a multi-valued
one (likes, pets, languages) holds several, so a different value is a fact of its own.

`about(text)` is a deterministic extractor for the common attributes of chat memory, first
person ("I live in Berlin") and the extracted style ("User lives in Berlin") alike, and for
other people the user talks about ("My sister lives in Rome" is (sister, residence)). It
returns None when it does not recognise the fact: such facts are routed by their words as
before. Its coverage is listed in ATTRIBUTES and measured in benchmarks/bench_conflicts.py.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from pydantic import BaseModel, Field, field_validator

from memman.language.text import NEGATIONS, STOPWORDS, content_tokens, normalize, verb_stem, words
from memman.memo import memoized

USER = "user"

# attribute -> what it holds. Single-valued: one current value, a newer one replaces it.
SINGLE_VALUED = frozenset(
    """residence hometown employer job relationship_status name last_name native_language age
    birthday diet smoking children car school studies""".split()
)
# Multi-valued: several true at once ("likes jazz" and "likes hiking").
MULTI_VALUED = frozenset("likes drinks pets plays speaks allergy hobby".split())
# Favourites are single-valued per thing: "favorite:color", "favorite:band".
FAVORITE = "favorite"
# So is an amount the user states of one thing of theirs: "My rent is $1,200 a month" is
# amount:rent (a number of its own is needed: "my truck is a Ford F150" is no amount).
AMOUNT = "amount"
# The fallback: "verb:collect" for "I collect antique dolls" (see _verb_and_object).
VERB = "verb"
ATTRIBUTES = SINGLE_VALUED | MULTI_VALUED | {f"{FAVORITE}:*", f"{AMOUNT}:*", f"{VERB}:*"}
_SHARED_OBJECT_WORDS = frozenset(
    """named called name one two three four five six seven eight nine ten many much lot lots
    little bit time times day days year years thing things kind sort""".split()
)
_MODALS = frozenset("would can could will should might must".split())
# A fact written without its subject ("Lives in Berlin", "Also enjoys video games") is the
# user's when it starts with one of these verbs.
_SUBJECTLESS_VERBS = frozenset(
    """is has was does likes loves lives works enjoys plays drinks drives speaks owns prefers
    hates dislikes eats reads watches studies moved joined quit got goes takes uses wants
    visited visits collects cooks runs teaches volunteers attends""".split()
)


def is_single_valued(attribute: str, single_valued: frozenset[str] = SINGLE_VALUED) -> bool:
    return attribute in single_valued or attribute.startswith((FAVORITE + ":", AMOUNT + ":"))


@dataclass(frozen=True)
class Topic:
    """A fact's subject and attribute, and the value it states (None: not known).

    `retracted` marks a fact that takes a value back ("I don't live in Berlin anymore", "I
    quit caffeine"); its `value` is the value taken back, None when it names none ("I have
    no pets"). `replaces` is a value the fact says it replaces ("drinks tea instead of
    coffee", "from Indiana, not Ohio"): a multi-valued memory of that value is superseded.
    """

    subject: str
    attribute: str
    value: str | None = None
    retracted: bool = False
    replaces: str | None = None


# People (and pets) the user talks about: "my sister lives in Rome" is the sister's residence.
OTHERS = frozenset(
    """sister brother mother mom mum father dad wife husband partner girlfriend boyfriend
    fiance fiancee son daughter kid kids children child friend boss roommate grandmother
    grandma grandfather grandpa aunt uncle cousin parents neighbor neighbour coworker
    colleague dog cat""".split()
)
_FIRST_PERSON = {"i": (), "im": ("am",), "ive": ("have",), "id": ("would",), "ill": ("will",)}
# Third-person verb forms ("User lives in", "User is") spelled as the first person says them.
_VERB_FORMS = {
    "is": "am", "are": "am", "was": "was", "were": "was", "has": "have", "does": "do",
    "doesnt": "do not", "dont": "do not", "didnt": "did not", "isnt": "am not",
    "arent": "am not", "wasnt": "was not", "hasnt": "have not", "havent": "have not",
    "cant": "can not", "cannot": "can not", "wont": "will not", "aint": "am not",
}  # fmt: skip
# Words that say a value no longer holds, removed from the predicate before matching.
_NEGATORS = ("do not ", "did not ", "not ", "no longer ", "never ")
_NEGATION_WORDS = frozenset("no not longer never".split())
# Words a chat message opens with before its subject.
_OPENERS = frozenset(
    "honestly well so actually btw anyway oh ok okay yeah yes also these days nowadays lately"
    .split()
)
_STILL_TRUE_FILLERS = frozenset(
    "just recently finally also really currently now still actually officially".split()
)
# Verbs that take something back: "I quit smoking" is "I smoke", negated.
_QUITTING = re.compile(r"^(?:quit|stopped|gave up|give up|have given up|have quit) (?P<rest>.+)$")
# Verbs that end what their object names: "sold my motorcycle", "cancelled the membership".
_ENDING = re.compile(
    r"^(?:(?:sold|gave away) (?=my |our |the )|(?:cancell?ed|dropped|abandoned|outgrew"
    r"|came off|got rid of|ended|broke off) )(?P<rest>.+)$"
)
# The attribute of a fact that ends something no pattern names: the memory holding its object
# is taken back (supersede._taken_back).
ENDED = "verb:quit"
# "Lena and I broke up": the user's relationship status.
_BREAKUP = re.compile(
    r"^(?:\w+ and (?:i|user)|(?:i|user) and (?:my|their|his|her) \w+) (?P<p>(?:just |recently"
    r" |finally )?(?:broke up|split up|separated|got divorced|divorced)(?: .*)?)$"
)
# "My hamster Peanut died", "my roommate moved out".
_GONE = re.compile(r"^(?:\w+ )?(?:died|passed away|ran away|was rehomed|moved out)(?: .*)?$")
_CHILDREN = frozenset("son daughter baby child".split())
# "wife is sarah", "wifes name is sarah" (after "my" / "User's").
_NAMING_PHRASE = re.compile(r"^(?P<who>\w+?)(?:s name is| is called| is named| is) (?P<name>\w+)$")
# "Forget what I said about learning Rust": a take-back of whatever said it.
_FORGET = re.compile(
    r"^(?:please )?(?:forget|ignore|disregard) (?:what|that|everything) i (?:said|told you)"
    r" about (?P<v>.+)$"
)
_LATER_CLAUSE = re.compile(
    r"^(?P<head>.+?) (?:but|and|though|although|except|because|since|when|while|if|unless"
    r"|that|who|which) (?P<rest>.+)$"
)
_CORRECTION = re.compile(r"^(?P<head>.+?) (?P<how>not|instead of|rather than) (?P<old>.+)$")
_SMOKES = frozenset("smoke cigarettes cigars cigar tobacco vaping vape".split())
_GERUNDS = {
    "smoking": "smoke", "drinking": "drink", "working": "work", "eating": "eat",
    "playing": "play", "living": "live", "dating": "date", "using": "use", "studying": "study",
}  # fmt: skip
# Where a value ends: "Berlin with my wife", "Munich last month", "jazz and blues".
_VALUE_END = frozenset(
    """in at for with since because and but so now currently last this every each when while
    who which that especially from to as on after before during until anymore any more again
    these days nowadays right too though ago he she they it i we""".split()
)
# "I like to go fishing" likes "fishing".
_LEADING_VERB = re.compile(r"^(?:to go |to |going |go )")
_ARTICLES = frozenset("a an the my our some any".split())
_SERVICE = r"(?:a |an |the )?"

OCCUPATIONS = frozenset(
    """nurse teacher doctor physician engineer developer programmer coder designer lawyer
    attorney accountant student chef cook waiter waitress bartender barista cashier manager
    salesman saleswoman salesperson mechanic electrician plumber carpenter pilot driver
    firefighter officer cop policeman soldier farmer writer author journalist artist painter
    musician singer actor actress photographer dentist pharmacist vet veterinarian scientist
    researcher professor lecturer librarian architect consultant analyst therapist
    psychologist psychiatrist surgeon paramedic secretary receptionist clerk janitor
    entrepreneur ceo cto founder freelancer tutor coach trainer nanny babysitter hairdresser
    stylist model dancer athlete banker broker realtor translator editor producer director
    intern technician miner builder welder butcher baker tailor gardener lifeguard
    nutritionist dietitian economist mathematician physicist chemist biologist marketer
    recruiter practitioner assistant administrator sysadmin housekeeper caregiver mailman
    postman trucker contractor investor programer counselor counsellor midwife optician
    astronaut comedian youtuber streamer blogger influencer""".split()
)
DIETS = frozenset(
    "vegetarian vegan pescatarian pescetarian keto carnivore flexitarian omnivore paleo".split()
)
STATUSES = {
    "single": "single", "married": "married", "engaged": "engaged", "divorced": "divorced",
    "widowed": "widowed", "separated": "separated", "widow": "widowed", "widower": "widowed",
    "unattached": "single", "unmarried": "single",
}  # fmt: skip
# A retraction of the class takes back each of its members: "I quit caffeine" takes back
# "I drink coffee every morning".
VALUE_CLASSES = {
    "caffeine": frozenset("coffee espresso latte lattes cappuccino tea caffeine".split()),
    "alcohol": frozenset("alcohol beer wine whiskey whisky vodka gin rum booze".split()),
    "pets": frozenset("dog cat rabbit hamster bird fish parrot snake turtle pet".split()),
}
_SCHOOLS = frozenset(
    "school college university uni academy institute highschool elementary kindergarten".split()
)
# What "a <word> student" says when the word names no field of study: how, where, how well.
_NOT_FIELDS = _SCHOOLS | frozenset(
    """good poor bad great average top straight fulltime parttime graduate grad undergraduate
    undergrad postgraduate phd doctoral masters exchange international foreign mature former
    new freshman sophomore junior senior""".split()
)
# What "works at / for" names when it names no employer: a spot, a time, a span, a job.
_NOT_EMPLOYERS = frozenset(
    """home counter desk register table computer computers laptop couch sofa bed night nights
    weekend weekends shift shifts living fun family job jobs year years month months week
    weeks day days hour hours while""".split()
)
_HEAD_ENDS = frozenset("near of in on by part full same".split())
_DRINKABLE = VALUE_CLASSES["caffeine"] | VALUE_CLASSES["alcohol"]
_DOG_BREEDS = frozenset(
    """greyhound retriever labrador lab poodle terrier beagle husky bulldog shepherd chihuahua
    dachshund pug corgi collie spaniel rottweiler boxer doberman mutt""".split()
)
_PETS = VALUE_CLASSES["pets"] | {"puppy", "kitten", "horse", "lizard", "guinea", "ferret"}
_NUMBER_WORDS = {
    "a": "1", "an": "1", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10", "no": "0",
}  # fmt: skip

_PARTNERS = frozenset("girlfriend boyfriend partner wife husband fiance fiancee".split())
_NAMED = r"(?: named .+| called .+)?"
_DECADES = r"(?:teens|twenties|thirties|forties|fifties|sixties|seventies|eighties|\d0s)"
_HOME = r"(?:a |an |my |our )?(?:\w+ )?(?:apartment|flat|house|home|condo|place|studio)"
_SCHOOL_LEVELS = "high school|middle school|grad school|college|university|uni"

# (attribute, pattern over the predicate in first-person form). The named group v is the
# value; a pattern without it states a fixed value (its `fixed`). Checked in order: the
# more specific patterns first ("am a vegetarian" before "am a <job>").
_V = r"(?P<v>.+)"
_PATTERNS: list[tuple[str, re.Pattern[str], str | None]] = [
    (attribute, re.compile(pattern), fixed)
    for attribute, pattern, fixed in [
        (
            "name",
            rf"^(?:my (?:first |full |preferred )?name am|name am|am called|go by) {_V}$",
            None,
        ),
        ("last_name", rf"^my (?:last|family) name am {_V}$", None),
        ("native_language", rf"^my (?:native|first|mother) (?:language|tongue) am {_V}$", None),
        ("birthday", rf"^(?:my birthday am|birthday am|was born on) {_V}$", None),
        ("age", r"^(?:am|turned|just turned) (?P<v>\d+)(?: years? old| yrs? old)?(?: .*)?$", None),
        ("age", rf"^am in (?:my|their|his|her) (?P<v>(?:early |mid |late )?{_DECADES})$", None),
        (
            "hometown",
            rf"^(?:am originally from|am from|come from|grew up in|was born in"
            rf"|spent (?:my|their) childhood in) {_V}$",
            None,
        ),
        ("residence", rf"^(?:live|am living|reside|am based|am located|have lived) in {_V}$", None),
        ("residence", rf"^(?:moved|relocated|have moved|have relocated) (?:back )?to {_V}$", None),
        ("residence", rf"^(?:my home am|home am) in {_V}$", None),
        ("residence", rf"^(?:rent|am renting|bought|have bought|got) {_HOME} in {_V}$", None),
        ("residence", r"^moved out(?: of (?P<v>.+))?$", "-"),
        (
            "employer",
            r"^am (?:employed|working)(?: at the moment| right now| at present)?$",
            "employed",
        ),
        ("employer", r"^(?:changed|switched) jobs(?: .*)?$", "new"),
        ("job", r"^(?:changed|switched) (?:careers?|professions?)(?: .*)?$", "new"),
        (
            "employer",
            rf"^(?:work|am working|have worked)(?: (?!at |for )\w+){{0,2}} (?:at|for) {_V}$",
            "employer?",
        ),
        (
            "employer",
            rf"^(?:started|took|got|accepted|began) (?:a |an )?(?:new )?(?:job|position|role)"
            rf" (?:at|with) {_V}$",
            None,
        ),
        ("employer", rf"^(?:am employed|am hired|got hired|was hired) (?:at|by) {_V}$", None),
        (
            "employer",
            rf"^(?:joined|started at|started working at|started working for|got a job at"
            rf"|took a job at|accepted a job at|accepted an offer from) (?!a |an |the |my ){_V}$",
            None,
        ),
        ("employer", r"^(?:lost my job|got fired|got laid off|was laid off|was fired)$", "-"),
        ("employer", r"^(?:am unemployed|am retired|retired|am out of work)$", "-"),
        ("employer", rf"^(?:left) (?!a |an |the |my ){_V}$", "-"),
        ("job", rf"^(?:work|am working)(?: \w+){{0,3}} as {_SERVICE}{_V}$", None),
        ("job", rf"^(?:my job am|job am|became|got promoted to) {_SERVICE}{_V}$", None),
        ("diet", rf"^am {_SERVICE}(?P<v>{'|'.join(sorted(DIETS))})$", None),
        ("smoking", r"^am (?:a )?non smoker$", "-"),
        (
            "smoking",
            r"^(?:picked up|started|took up|have started) (?:smoking|vaping)(?: .*)?$",
            "smokes",
        ),
        (
            "school",
            rf"^am (?:a |an )?(?P<v>{_SCHOOL_LEVELS})"
            r" (?:senior|junior|freshman|sophomore|student)$",
            None,
        ),
        (
            "school",
            rf"^(?:started|began|entered|am starting) (?P<v>{_SCHOOL_LEVELS})(?: .*)?$",
            None,
        ),
        ("diet", rf"^(?:follow|am on|eat) {_SERVICE}(?P<v>\w+(?: \w+)?) diet(?: .*)?$", None),
        ("diet", r"^eat meat(?: .*)?$", "omnivore"),
        # "a medical student" studies medicine: a job only when the word says no field
        ("studies", r"^am (?:a |an )?(?P<v>\w+) student(?: .+)?$", "field?"),
        ("job", rf"^am {_SERVICE}{_V}$", "job?"),  # only when the head word is an occupation
        (
            "relationship_status",
            r"^(?:am|got|just got|recently got) (?:\w+ly )?(?P<v>\w+)(?: .*)?$",
            "status?",
        ),
        ("relationship_status", r"^am in a relationship", "in a relationship"),
        ("relationship_status", r"^(?:am dating|am seeing) .+$", "in a relationship"),
        ("relationship_status", rf"^have {_SERVICE}(?:wife|husband){_NAMED}$", "married"),
        ("relationship_status", rf"^have {_SERVICE}(?:fiance|fiancee){_NAMED}$", "engaged"),
        (
            "relationship_status",
            rf"^have {_SERVICE}(?:girlfriend|boyfriend|partner){_NAMED}$",
            "in a relationship",
        ),
        ("relationship_status", r"^(?:broke up|just broke up|split up)", "single"),
        ("relationship_status", r"^(?:got )?(?P<v>divorced|separated)(?: .*)?$", "status?"),
        ("smoking", r"^(?:smoke|am a smoker|smoke cigarettes)$", "smokes"),
        ("smoking", r"^(?:smoke|am a smoker)", "smokes"),
        ("drinks", rf"^drink (?:a lot of |lots of |a cup of |a glass of )?{_V}$", "drink?"),
        ("drinks", r"^drink$", "alcohol"),
        ("drinks", rf"^(?P<v>{'|'.join(sorted(_DRINKABLE))})$", None),
        ("allergy", rf"^am allergic to {_V}$", None),
        ("allergy", rf"^have {_SERVICE}(?P<v>\w+) allergy$", None),
        (
            "children",
            r"^have (?P<v>\w+) (?:kids|children|sons|daughters|child|kid|son|daughter)(?: .*)?$",
            "count",
        ),
        ("children", r"^have (?:any )?(?:kids|children)$", "count"),
        ("pets", r"^have no (?:pets?|animals)(?: .*)?$", "-"),
        (
            "pets",
            r"^have (?:a |an |one |two |three |\d+ |any |no |pet )*(?:pet )?(?P<v>\w+)(?: .*)?$",
            "pet?",
        ),
        (
            "pets",
            r"^(?:adopted|got|rescued) (?:a |an )?(?:rescue |new )?(?P<v>\w+)(?: .*)?$",
            "pet?",
        ),
        ("car", rf"^(?:drive|my car am) {_SERVICE}{_V}$", None),
        ("school", rf"^(?:go to|attend|am a student at|study at|am studying at) {_V}$", "school?"),
        ("studies", rf"^(?:study|am studying|major in|am majoring in) {_V}$", None),
        ("speaks", rf"^speak {_V}$", None),
        ("plays", rf"^play {_SERVICE}{_V}$", None),
        ("hobby", rf"^(?:my (?:main |favorite )?(?:hobby|hobbies) am|hobby am) {_V}$", None),
        ("hobby", r"^(?:go|love going|like going) (?P<v>\w+ing)$", None),
        (
            "likes",
            rf"^(?:like|love|enjoy|adore|am into|am a fan of|am a big fan of|am a huge fan of"
            rf"|am passionate about|dislike|hate|can not stand) {_V}$",
            None,
        ),
    ]
]
_FAVORITE = re.compile(r"^my (?:favorite|favourite|main) (?P<thing>\w+(?: \w+)?) am (?P<v>.+)$")
_AMOUNT = re.compile(
    r"^my (?P<thing>(?:\w+ )?\w+(?<!s)) (?:am|am now|went up to|went down to|rose to|fell to"
    r"|increased to|dropped to) (?P<v>(?:.* )?\d+(?: .*)?)$"
)
# "Radiohead is the group I love most": favorite:band.
_LOVED_MOST = re.compile(
    r"^(?P<v>.+) am the (?P<thing>\w+) i (?:love|like|enjoy)(?: the)? (?:most|best)$"
)
# One favorite, whatever it is called: "the group I love most" is the favorite band.
_FAVORITE_THINGS = {
    "group": "band", "film": "movie", "colour": "color", "dish": "food", "meal": "food",
    "tune": "song", "author": "writer", "hobbies": "hobby",
}  # fmt: skip
_FAVORITE_AFTER = re.compile(r"^(?P<v>.+) am my (?:favorite|favourite) (?P<thing>\w+(?: \w+)?)$")
_DISLIKE = ("dislike ", "hate ", "can not stand ")


@memoized
def about(text: str) -> Topic | None:
    """The topic of a fact, or None when the extractor does not recognise it."""
    spoken = _first_person(_without_openers(words(text)))
    favorite = _FAVORITE_AFTER.match(spoken) or _LOVED_MOST.match(spoken)
    if favorite:  # "Coffee is my favorite drink", "Radiohead is the group I love most"
        return Topic(USER, _favorite(favorite.group("thing")), trim_value(favorite.group("v")))
    forget = _FORGET.match(spoken)
    if forget:
        value = trim_value(forget.group("v"))
        return Topic(USER, ENDED, value, True) if value else None
    parsed = _subject_and_predicate(text)
    if parsed is None:
        return None
    subject, predicate = parsed
    corrected = _corrected(predicate)
    if corrected is not None:
        return Topic(subject, *corrected)
    predicate = _first_clause(predicate)
    predicate, negated, ended = _strip_negation(predicate)
    topic = _match(predicate)
    if topic is None and ended:  # "I sold my motorcycle": whatever held "motorcycle" ended
        value = trim_value(predicate)
        return Topic(subject, ENDED, value, True) if value else None
    topic = topic or _verb_and_object(predicate, subject)
    if topic is None:
        return None
    attribute, value, retracted = topic
    return Topic(subject, attribute, value, retracted or negated)


def _corrected(predicate: str) -> tuple[str, str, bool, str] | None:
    """A value stated in place of another: "am originally from indiana not ohio" is hometown
    Indiana, replacing Ohio; "drink tea instead of coffee" replaces coffee. A bare "not"
    corrects only a single-valued attribute ("like dogs but not cats" replaces nothing)."""
    found = _CORRECTION.match(predicate)
    if found is None:
        return None
    head = found.group("head")
    matched = _match(head)
    old = trim_value(found.group("old"))
    if matched is None or matched[1] is None or matched[2] or old is None:
        return None
    attribute, value, _ = matched
    if found.group("how") == "not" and (
        not is_single_valued(attribute) or not head.endswith(" " + matched[1])
    ):  # "from canada and i am not a student": the "not" is another clause's
        return None
    return attribute, value, False, old


def _first_clause(predicate: str) -> str:
    """The predicate up to a later clause that holds the only negation: "like dogs but not
    cats" likes dogs, "live in berlin and i am not a student" lives in Berlin (a later clause
    of nothing but the negation negates the head: "but i do not"). A value ends
    at "and" / "but" anyway (_VALUE_END); this keeps the later "not" from negating it."""
    found = _LATER_CLAUSE.match(predicate)
    if found is None or _NEGATION_WORDS & set(found.group("head").split()):
        return predicate
    rest = found.group("rest")
    if not _NEGATION_WORDS & set(rest.split()) or not content_tokens(rest):
        return predicate  # "wanted to play instruments but i do not": the head's negation
    return found.group("head")


def _without_openers(tokens: list[str]) -> list[str]:
    while len(tokens) > 2 and tokens[0] in _OPENERS:  # "Honestly, I'm ...", "These days I ..."
        tokens = tokens[1:]
    return tokens


def _subject_and_predicate(text: str) -> tuple[str, str] | None:
    tokens = [t for t in words(text) if t]
    written = text.strip().split()
    kept = _without_openers(tokens)
    tokens, written = kept, written[len(written) - len(kept) :] if kept else []
    if len(tokens) < 2:
        return None
    breakup = _BREAKUP.match(" ".join(tokens))
    if breakup:  # "Lena and I broke up", "User and their boyfriend split up"
        return USER, _first_person(breakup.group("p").split())
    first = tokens[0]
    written = written[0] if written else ""
    if first == "we":  # "We adopted a greyhound": the user's household
        return USER, _first_person(tokens[1:])
    if first in _FIRST_PERSON:
        return USER, _first_person(list(_FIRST_PERSON[first]) + tokens[1:])
    if first == "users":  # "User's sister ..."
        return _possessive(tokens[1:], _capitalised(text))
    if first == "user":
        return USER, _first_person(tokens[1:])
    if first == "my":
        return _possessive(tokens[1:], _capitalised(text))
    verb = tokens[1] if first in _STILL_TRUE_FILLERS | _NEGATION_WORDS else first
    if verb in _SUBJECTLESS_VERBS:  # "Lives in Berlin", "Never eats pork"
        return USER, _first_person(tokens)
    named = written[:1].isupper() and first not in STOPWORDS | NEGATIONS | _STILL_TRUE_FILLERS
    if named and tokens[1] in _SUBJECTLESS_VERBS:
        # A named person: "Jon works at Apple", "Anna is vegan".
        return first, _first_person(tokens[1:])
    return None


def _possessive(rest: list[str], names: frozenset[str]) -> tuple[str, str] | None:
    """After "my" / "User's": another person's fact, or the user's own ("my name is Ana").
    `names`: the words written with a capital (see _named)."""
    if not rest:
        return None
    named = _named(" ".join(rest), names)
    if named is not None:
        return USER, named
    if rest[0] in _CHILDREN and rest[1:3] == ["was", "born"]:  # "my daughter was born ..."
        return USER, "have one child"
    if rest[0] in OTHERS | _PETS and _GONE.match(" ".join(rest[1:])):
        # "My hamster Peanut died", "my roommate moved out": the user no longer has them.
        return USER, f"no longer have a {rest[0]}"
    if rest[0][:-1] in OTHERS | _PETS and rest[1:3] == ["name", "is"]:  # "my dog's name is"
        return rest[0][:-1], _first_person(rest[1:])
    if rest[0] in OTHERS and len(rest) > 1:
        return rest[0], _first_person(rest[1:])
    if (
        len(rest) > 2
        and rest[0] in ("best", "older", "younger", "little", "big")
        and (rest[1] in OTHERS)
    ):
        return rest[1], _first_person(rest[2:])
    return USER, "my " + _first_person(rest)


def _capitalised(text: str) -> frozenset[str]:
    """The words written with a capital letter after the first: the names a fact holds."""
    found = (words(w) for w in text.split()[1:] if w[:1].isupper())
    return frozenset(w[0] for w in found if w)


def _named(rest: str, names: frozenset[str]) -> str | None:
    """A partner's name stated as the user having them: "my wife is Sarah" / "my wife's name
    is Sarah" is "have a wife named sarah", the user's relationship status, as "I am married
    to Sarah" states it. Only a single word written with a capital is a name: "my wife is
    sweet" says something about the wife. (A pet's name stays the pet's: "my dog is called
    Max" is (dog, name), so that "is actually called Rex" renames it.)"""
    found = _NAMING_PHRASE.match(rest)
    if found is None or found.group("name") not in names:
        return None
    if found.group("who") not in _PARTNERS:
        return None
    return f"have a {found.group('who')} named {found.group('name')}"


def _first_person(tokens: list[str]) -> str:
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
        if not verb_seen and token not in _NEGATION_WORDS:
            verb_seen = True
            if form is None and token.endswith("s") and token[-2:] != "ss":
                form = verb_stem(token)
        out.append(form or token)
    return " ".join(out)


def _strip_negation(predicate: str) -> tuple[str, bool, bool]:
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
    ending = _ENDING.match(predicate)
    if ending:
        return ending.group("rest"), True, True
    quitting = _QUITTING.match(predicate)
    if quitting:
        rest = quitting.group("rest").split()
        ended = not rest[0].endswith("ing")
        rest[0] = _GERUNDS.get(rest[0], rest[0])
        predicate, negated = " ".join(rest), True
        if predicate in ("my job", "work", "job"):
            predicate = "lost my job"
        elif rest[-1] in _SMOKES:
            predicate = "smoke"
    return predicate.replace("have got ", "have ").strip(), negated, ended


def _match(predicate: str) -> tuple[str, str | None, bool] | None:
    favorite = _FAVORITE.match(predicate) or _FAVORITE_AFTER.match(predicate)
    if favorite:
        return _favorite(favorite.group("thing")), trim_value(favorite.group("v")), False
    for attribute, pattern, fixed in _PATTERNS:
        found = pattern.match(predicate)
        if not found:
            continue
        raw = found.groupdict().get("v")
        value = trim_value(raw) if raw else None
        if fixed is None:
            if not value:
                continue
            retracted = attribute == "likes" and predicate.startswith(_DISLIKE)
            return attribute, value, retracted
        checked = _checked(attribute, fixed, raw, value)
        if checked is not None:
            return checked
    amount = _AMOUNT.match(predicate)  # after the patterns: "my car is a 98 jaguar" is a car
    if amount:
        return f"{AMOUNT}:{amount.group('thing')}", trim_value(amount.group("v")), False
    return None


def _verb_and_object(predicate: str, subject: str) -> tuple[str, str | None, bool] | None:
    """The fallback for facts no pattern reads: "verb:<verb>" and the verb's whole object.

    "I collect antique dolls" is (verb:collect, "antique dolls"). It settles nothing: the
    memories of the same verb reach the decider, whatever their objects ("supports Arsenal" /
    "supports Chelsea now"), and it tells a fact apart only from another person's facts and
    from recognised attributes of the same person (see supersede._other_topic).
    """
    verb, _, rest = predicate.partition(" ")
    if verb == "am" and rest.split(" ", 1)[0].endswith("ing"):  # "am learning German"
        verb, _, rest = rest.partition(" ")
    if verb.endswith("ing") and len(verb) > 5:
        verb = _GERUNDS.get(verb, verb[:-3])
    if verb in _MODALS and rest:  # "would like to be an artist": verb:would_like
        second, _, rest = rest.partition(" ")
        verb = f"{verb}_{second}"
    elif rest.startswith("to "):  # "want to open a store": verb:want, "open a store"
        rest = rest[3:]
    if not verb.replace("_", "").isalpha() or verb in STOPWORDS - {"am", "have", "own"}:
        return None
    if subject == USER and not rest:
        return None
    return f"{VERB}:{'be' if verb == 'am' else verb}", rest or None, False


@functools.cache
def phrasing(attribute: str) -> frozenset[str]:
    """The content words the extractor's patterns use to say an attribute ("based", "reside",
    "moved" for residence): two statements of one value that differ only in these say the
    same thing ("I live in Berlin" / "I'm based in Berlin")."""
    if attribute.startswith(FAVORITE + ":"):
        return content_tokens("favorite favourite my the is")
    literal = " ".join(
        " ".join(re.findall(r"[a-z]{3,}", pattern.pattern))
        for name, pattern, _ in _PATTERNS
        if name == attribute
    )
    return content_tokens(literal)


def is_verb_topic(attribute: str) -> bool:
    return attribute.startswith(VERB + ":")


def object_words(value: str) -> frozenset[str]:
    """The content words of a verb topic's object that tell one thing from another: not
    numbers or words like "named" that any two objects may share ("a dog named George" and "a
    cat named Matter")."""
    return frozenset(
        w for w in content_tokens(value) if w not in _SHARED_OBJECT_WORDS and not w.isdigit()
    )


def _favorite(thing: str) -> str:
    return f"{FAVORITE}:{_FAVORITE_THINGS.get(thing, thing).replace(' ', '_')}"


def _checked(
    attribute: str, fixed: str, raw: str | None, value: str | None
) -> tuple[str, str | None, bool] | None:
    """The patterns whose match alone is not enough: the value must be of the right kind."""
    if fixed == "-":  # a retraction naming the value it takes back, or none
        return attribute, value, True
    if fixed == "new":  # a new value, not named ("I changed careers")
        return attribute, None, False
    if fixed == "employer?":
        employer = _employer(raw or "")
        return (attribute, employer, False) if employer else None
    if fixed == "job?":
        return (attribute, value, False) if value and value.split()[-1] in OCCUPATIONS else None
    if fixed == "field?":
        return None if value is None or value in _NOT_FIELDS else (attribute, value, False)
    if fixed == "status?":
        status = STATUSES.get(value or "")
        return (attribute, status, False) if status else None
    if fixed == "school?":
        school = value is not None and any(w in value.split() for w in _SCHOOLS)
        return (attribute, value, False) if school else None
    if fixed == "drink?":
        drinks = [w.rstrip("s") for w in (value or "").split() if w.rstrip("s") in _DRINKABLE]
        return (attribute, drinks[0], False) if drinks else None
    if fixed == "count":
        count = _NUMBER_WORDS.get(value or "any", value if (value or "").isdigit() else None)
        if value is None or value == "any":
            return attribute, None, True  # "I don't have any kids" (negated by the caller)
        return (attribute, count, False) if count is not None else None
    if fixed == "pet?":
        pet = (value or "").rstrip("s")
        pet = "dog" if pet in _DOG_BREEDS else pet
        if pet == "pet":  # "I have pets"; "I don't have any pets" is negated by the caller
            return attribute, None, False
        return (attribute, pet, False) if pet in _PETS else None
    return attribute, fixed, False


def _employer(raw: str) -> str | None:
    """Whom the user works at or for, or None when "at" / "for" names where, when or how long
    they work: "works standing at a kitchen counter", "at home", "at night", "for four years",
    "for my dad". A later "at" / "for" may still name the employer: "works at the front desk
    at Best Western", "for my dad at a car dealership"."""
    value = trim_value(raw)
    if value is None:
        return None
    head = _head(value)
    if head == "home" and not value.startswith("home"):  # "a nursing home" employs
        return value
    if head not in _NOT_EMPLOYERS and not (head in OTHERS and value == head):
        return value
    later = re.search(r" (?:at|for) (?P<v>.+)$", raw)
    return _employer(later.group("v")) if later else None


def _head(value: str) -> str:
    """A value's head noun: its last word before a preposition, not a count ("mall near my
    home": mall, "bookstore 4": bookstore, "4 years": years)."""
    kept: list[str] = []
    for word in value.split():
        if kept and word in _HEAD_ENDS:
            break
        if not word.isdigit() or not kept:
            kept.append(word)
    return kept[-1]


def trim_value(raw: str) -> str | None:
    """The value's words up to where it ends, without articles: "the Berlin office" ->
    "berlin office", "Munich last month" -> "munich"."""
    kept: list[str] = []
    for word in _LEADING_VERB.sub("", raw).split():
        if kept and (word in _VALUE_END or (word.endswith("ly") and len(word) > 4)):
            break
        if word in _ARTICLES and not kept:
            continue
        kept.append(word)
    value = " ".join(kept)
    return value or None


_ORDINALS = frozenset(
    "first second third fourth fifth sixth seventh eighth ninth tenth once twice".split()
)
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$")
_COUNT_WORDS = frozenset("time times".split())  # "four times a week": part of the count
_NAMING = frozenset("number no".split())


def counted(value: str) -> tuple[str, frozenset[str]]:
    """A value's words without its counts, and the counts: "10 km three times a week" ->
    ("km week", {"10", "3"}). "82 kg now" and "90 kg" are the same thing counted
    differently; a year ("in 2019") is a count too, and the caller decides what to do with it.
    A number after "number" names a thing: "boat number 2" and "boat number 3" are two boats."""
    words_, counts = [], set()
    before = ""
    for word in (trim_value(value) or "").split():
        named, before = before in _NAMING, word
        if word in _ARTICLES or word in _COUNT_WORDS:
            continue
        if named:
            words_.append(word)
        elif word.isdigit() or word in _NUMBER_WORDS or word in _ORDINALS or _ORDINAL.match(word):
            counts.add(_NUMBER_WORDS.get(word, word))
        else:
            words_.append(word.rstrip("s"))
    return " ".join(words_), frozenset(counts)


def same_value(a: str | None, b: str | None) -> bool:
    """Two values that name the same thing: equal, one a member of the other's class
    ("coffee" and "caffeine"), or equal but for a plural."""
    if a is None or b is None:
        return False
    if a == b or a.rstrip("s") == b.rstrip("s"):
        return True
    return any(
        (a == name and b in members) or (b == name and a in members)
        for name, members in VALUE_CLASSES.items()
    )


def check_label(name: str, value: object) -> str | None:
    """A caller's subject or attribute, normalised ("Relationship Status" ->
    "relationship_status"); None stays None. Raises ValueError for anything else."""
    if value is None:
        return None
    if not isinstance(value, str) or not normalize(value):
        raise ValueError(f"{name} must be a non-empty string")
    label = re.sub(r"[^\w:]+", "_", normalize(value)).strip("_")
    if not label or len(label) > 64:
        raise ValueError(f"{name} must be 1 to 64 letters, digits, '_' or ':'")
    return label


def usable_label(value: object) -> str | None:
    """An LLM's subject or attribute, normalised, or None when it is unusable: an odd label
    must never cost the fact it came with (the extractor reads the text instead)."""
    try:
        return check_label("label", value)
    except ValueError:
        return None


class TopicLabels(BaseModel):
    """What a fact is about, as an LLM answer states it (extraction, the decision call):
    optional, and an unusable label is dropped (the extractor reads the text instead)."""

    subject: str | None = Field(
        default=None, description='Whom the fact is about: "user", or a person ("sister")'
    )
    attribute: str | None = Field(
        default=None,
        description="What it states, one key: residence, employer, job, relationship_status,"
        " name, age, diet, pets, likes, hobby ...",
    )
    _labels = field_validator("subject", "attribute")(usable_label)

    def about(self) -> tuple[str, str] | None:
        return (self.subject or "user", self.attribute) if self.attribute else None
