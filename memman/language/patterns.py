"""The extractor's patterns: the phrasings of each attribute, matched against a predicate.

A predicate is the fact in the first person without its subject ("live in berlin"); the
first pattern that matches names its attribute and value. Favourites and amounts have
patterns of their own, since the attribute is named in the text ("my favorite band is").
"""

from __future__ import annotations

import functools
import re

from memman.language.attributes import FAVORITE, amount_key, favorite_key
from memman.language.kinds import DIETS, DRINKABLE, check_kind, make_pattern, vehicle_pattern
from memman.language.life import LIFE
from memman.language.text import content_tokens
from memman.language.values import trim_value

_SERVICE = r"(?:a |an |the )?"
_NAMED = r"(?: named .+| called .+)?"
_DECADES = r"(?:teens|twenties|thirties|forties|fifties|sixties|seventies|eighties|\d0s)"
_SCHOOL_LEVELS = "high school|middle school|grad school|college|university|uni"
# What one does as a pastime ("I do yoga twice a week"): "do" alone says nothing.
_PRACTICES = (
    "yoga|pilates|karate|judo|crossfit|martial arts|taekwondo|boxing|kickboxing|zumba"
    "|tai chi|gymnastics|aerobics|spin classes|spinning"
)
_PARENT = r"(?:dad|father|mom|mum|mother|parent)"
_BIRTH = r"(?:baby|child|kid|son|daughter|boy|girl|twins)"
_ORDINAL = r"(?:first|second|third|fourth|fifth|sixth|\d+(?:st|nd|rd|th))"
# Animal food: eating it again ends a vegetarian or vegan diet (kinds.check_kind "eats?").
_ANIMAL_FOOD = "meat|chicken|beef|pork|steak|bacon|poultry|turkey|fish|seafood|salmon|tuna"
# What says the user eats it now, not as ever: "started eating fish", "eat meat again".
_RESUMED = (
    r"(?:started|began|have started|am back to|went back to|returned to) eating"
    r"(?: (?:red|white|lean))?"
)
# What says a setting is the whole week, not one part of a schedule ("work from home on
# Mondays" and "from the office on Thursdays" are both true).
_WHOLLY = r"(?: full time| now| again| these days| for good| permanently| every day)?"
_NOW_TAIL = r"(?: now| these days| nowadays)?"
_DIETS = "|".join(sorted(DIETS))
_CHANGED_DIET = r"(?:went|have gone|became|have become|turned|am now|switched to being)"

# (attribute, pattern over the predicate in first-person form). The named group v is the
# value; a pattern without it states a fixed value (its `fixed`). Checked in order: the
# more specific patterns first ("am a vegetarian" before "am a <job>").
_V = r"(?P<v>.+)"
_PATTERNS: list[tuple[str, re.Pattern[str], str | None]] = [
    (attribute, re.compile(pattern), fixed)
    for attribute, pattern, fixed in [
        *LIFE,  # the more specific phrasings of everyday changes first
        (
            "name",
            rf"^(?:my (?:first |full |preferred )?name am|name am|am called|go by) {_V}$",
            None,
        ),
        (
            "name",
            rf"^(?:prefer|want|like|would like|would prefer|asked) to be called {_V}$",
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
            rf"^(?:joined|started at|start at|am starting at|will start at|started working at"
            rf"|started working for|got a job at|took a job at|accepted a job at"
            rf"|accepted an offer from) (?!a |an |the |my |\d){_V}$",
            None,
        ),
        (
            "employer",
            r"^(?:lost my job|got fired|got laid off|was laid off|was fired)(?: (?:at|with|from)"
            r" (?!(?:my |the )?(?:work|job)\b)(?P<v>.+)| .+)?$",
            "-",
        ),
        (  # "retired last year", not "am not retired yet" (still at work)
            "employer",
            r"^(?:am unemployed|am retired|retired|am out of work)(?: (?!yet\b).*)?$",
            "-",
        ),
        ("employer", rf"^(?:left) (?!a |an |the |my ){_V}$", "-"),
        # where one works: "work from home", "am back in the office full time"
        (
            "work_setting",
            rf"^(?:work|am working) (?:from home|remotely|remote){_WHOLLY}$",
            "remote",
        ),
        (
            "work_setting",
            r"^(?:am back|work|am working|went back|returned|go back) (?:in|at|to|into|from)"
            rf" (?:the )?office{_WHOLLY}$",
            "office",
        ),
        ("job", rf"^(?:work|am working)(?: \w+){{0,3}} as {_SERVICE}{_V}$", None),
        (
            "children",
            rf"^(?:had|gave birth to|welcomed|am expecting|are expecting) (?:a |an |our |my |the"
            rf" |their |his |her )?(?:(?P<v>{_ORDINAL}) )?(?:new |little |baby )?{_BIRTH}(?: .*)?$",
            "born",
        ),
        ("children", rf"^am (?:a )?{_PARENT} of (?P<v>\w+)(?: .*)?$", "count"),
        (
            "children",
            rf"^(?:(?:became|have become|am now) (?:a )?(?:new |first time )?{_PARENT}"
            rf"|am (?:a )?(?:new |first time ){_PARENT}|am (?:a )?{_PARENT} now)(?: .*)?$",
            "born",
        ),
        ("job", rf"^(?:my job am|job am|became|got promoted to) {_SERVICE}{_V}$", None),
        ("diet", rf"^am {_SERVICE}(?P<v>{_DIETS})(?: (?:for|since|after) .+)?$", None),
        (
            "diet",
            rf"^{_CHANGED_DIET} (?:fully |completely |totally |strictly |full |back to being )?"
            rf"{_SERVICE}(?P<v>{_DIETS})(?: .*)?$",
            None,
        ),
        ("diet", rf"^{_RESUMED} (?P<v>{_ANIMAL_FOOD})(?: .*)?$", "eats?"),
        (
            "diet",
            rf"^(?:eat|am eating) (?P<v>{_ANIMAL_FOOD})"
            r"(?: again| now| these days| nowadays)(?: .*)?$",
            "eats?",
        ),
        ("smoking", r"^am (?:a )?non smoker$", "-"),
        ("smoking", r"^(?:have been |am |been )?(?:smoke|tobacco|nicotine) free(?: .*)?$", "-"),
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
        ("school", rf"^am in (?P<v>{_SCHOOL_LEVELS}|\w+ grade)(?: .*)?$", None),
        (  # the year of school: "am a sophomore at nyu", "am in my final year of college"
            "school_year",
            r"^am (?:a |an |in (?:my |the )?)?(?P<v>freshman|sophomore|junior|senior"
            r"|(?:first|second|third|fourth|final|last) year)(?: year)?"
            r"(?: (?:at|in|of) .+| student.*| now)?$",
            None,
        ),
        (
            "school",
            rf"^(?:started|began|entered|am starting) (?P<v>{_SCHOOL_LEVELS})(?: .*)?$",
            None,
        ),
        ("diet", rf"^(?:follow|am on|eat) {_SERVICE}(?P<v>\w+(?: \w+)?) diet(?: .*)?$", None),
        ("diet", r"^eat meat(?: .*)?$", "omnivore"),
        (
            "diet",
            r"^eat (?:pretty much |just about |basically |practically |almost )?(?:everything"
            r"|anything|all kinds of food|whatever)(?: .*)?$",
            "omnivore",
        ),
        # "eats fish now" (a last "now" is dropped by the speaker): animal food as the object
        (
            "diet",
            rf"^eat (?P<v>(?:{_ANIMAL_FOOD})(?: and (?:{_ANIMAL_FOOD}))*){_NOW_TAIL}$",
            "eats?",
        ),
        # "a medical student" studies medicine: a job only when the word says no field
        ("studies", r"^am (?:a |an )?(?P<v>\w+) student(?: .+)?$", "field?"),
        ("job", rf"^am {_SERVICE}{_V}$", "job?"),  # only when the head word is an occupation
        (
            "relationship_status",
            r"^(?:am|got|just got|recently got) (?:\w+ly )?(?:a )?(?P<v>\w+)(?: .*)?$",
            "status?",
        ),
        ("relationship_status", r"^am in a relationship", "in a relationship"),
        ("relationship_status", r"^(?:am dating|am seeing) .+$", "in a relationship"),
        ("relationship_status", rf"^have {_SERVICE}(?:wife|husband){_NAMED}$", "married"),
        ("relationship_status", r"^married (?!off )\w+(?: .*)?$", "married"),  # "married tom"
        ("relationship_status", rf"^have {_SERVICE}(?:fiance|fiancee){_NAMED}$", "engaged"),
        (
            "relationship_status",
            rf"^have {_SERVICE}(?:girlfriend|boyfriend|partner){_NAMED}$",
            "in a relationship",
        ),
        ("relationship_status", r"^(?:broke up|just broke up|split up|split$)", "single"),
        ("relationship_status", r"^(?:got )?(?P<v>divorced|separated)(?: .*)?$", "status?"),
        ("smoking", r"^(?:smoke|am a smoker|smoke cigarettes)$", "smokes"),
        ("smoking", r"^(?:smoke|am a smoker)", "smokes"),
        ("drinks", rf"^drink (?:a lot of |lots of |a cup of |a glass of )?{_V}$", "drink?"),
        (  # "have two cups of tea a day"
            "drinks",
            rf"^(?:have|need) (?:a |an |one |two |three |four |\d+ |several |many )?(?:cups?"
            rf"|glass(?:es)?|mugs?|pints?|bottles?|shots?|cans?) of {_V}$",
            "drink?",
        ),
        ("drinks", r"^drink(?: again| socially| a lot| heavily| too much| every day| daily)?$",
         "alcohol"),
        (
            "drinks",
            r"^am (?:completely |totally |fully )?(?:sober|teetotal|a teetotaler|alcohol free)"
            r"(?: .*)?$",
            "-alcohol",
        ),
        ("drinks", rf"^(?P<v>{'|'.join(sorted(DRINKABLE))})$", None),
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
            r"^(?:adopted|got|rescued) (?:a |an |another )?"
            r"(?:second |third |fourth |\d+(?:nd|rd|th) )?(?:rescue |new )?(?P<v>\w+)(?: .*)?$",
            "pet?",
        ),
        # "drive to work" is a commute, not a car
        (
            "car",
            rf"^(?:drive|my (?:new |current )?car am) (?!to |home|around ){_SERVICE}{_V}$",
            None,
        ),
        (
            "car",
            rf"^(?:have|own) (?:a |an )?(?:new |used |old )?(?P<v>{vehicle_pattern()}"
            rf"|(?:{make_pattern()})(?: \w+){{0,2}})$",
            None,
        ),
        (
            "car",
            r"^(?:bought|got|leased|have bought|purchased|am getting|picked up) (?:a |an |my )?"
            r"(?:new |used |secondhand |second hand |brand new )?(?P<v>.+)$",
            "vehicle?",
        ),
        (
            "car",
            r"^(?:traded in|swapped|replaced|exchanged) (?:my |the |our )?(?:old )?(?:\w+ ){1,2}?"
            rf"(?:for|with) {_V}$",
            "vehicle?",
        ),
        # devices: "use an iphone", "switched to a pixel", "upgraded to a ps5", "game on a ps4"
        (
            "device",
            r"^(?:use|am using|have|own|got|bought|have bought|switched to|upgraded to|moved to"
            r"|play on|game on|replaced (?:my |the )?\w+(?: \w+)? with) (?!owned |had |used )"
            r"(?:a |an |my |the )?"
            r"(?:new |used |old )?(?P<v>.+)$",
            "device?",
        ),
        (
            "school",
            rf"^(?:transferred|have transferred|switched (?:schools|colleges|universities|unis))"
            r"(?: to| and am now at) (?!.*\b(?:office|branch|team|department|store|division)\b)"
            rf"{_V}$",
            None,
        ),
        (
            "studies",
            rf"^(?:changed|switched) (?:my )?(?:major|degree|course|field of study)"
            rf"(?: from .+?)? to {_V}$",
            None,
        ),
        ("school", rf"^(?:go to|attend|am a student at|study at|am studying at) {_V}$", "school?"),
        ("studies", rf"^(?:study|am studying|major in|am majoring in) {_V}$", None),
        ("speaks", rf"^speak {_V}$", None),
        ("plays", rf"^play {_SERVICE}{_V}$", None),
        ("hobby", rf"^(?:my (?:main |favorite )?(?:hobby|hobbies) am|hobby am) {_V}$", None),
        ("hobby", r"^(?:go|love going|like going) (?P<v>\w+ing)(?: .*)?$", None),
        ("hobby", rf"^(?:do|practice|practise|take) (?P<v>{_PRACTICES})(?: .*)?$", None),
        (
            "likes",
            rf"^(?:like|love|enjoy|adore|am into|am a fan of|am a big fan of|am a huge fan of"
            rf"|am passionate about|dislike|hate|can not stand) {_V}$",
            None,
        ),
        # a pastime alone, as a take-back leaves it: "gave up running after a knee injury"
        (
            "hobby",
            r"^(?!(?:some|no|any|every)?thing\b)(?P<v>\w{3,}ing)(?: (?:after|since|because|when"
            r"|as|last|this|years?|months?|ago|due|completely|altogether)\b.*"
            r"| (?:in|for) (?:years|months|ages|a while|a long time)(?: now)?)?$",
            None,
        ),
    ]
]
# Every pattern as one alternation, each a group of its own (its named groups made plain): one
# scan finds the first pattern that matches, where trying them one by one cost a call per
# pattern, and most predicates match none. The alternation tries them in order, as the loop.
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
_FIRST = re.compile(
    "|".join(f"({_NAMED_GROUP.sub('(?:', pattern.pattern)})" for _, pattern, _ in _PATTERNS)
)
assert _FIRST.groups == len(_PATTERNS), "a pattern holds a group that is not named"
_NOW = r"(?: now| these days| nowadays| right now| at the moment)?"
_FAVORITE = re.compile(
    rf"^my (?:new |current )?(?:favorite|favourite|main) (?P<thing>\w+(?: \w+)??){_NOW} am"
    r"(?: now)? (?P<v>.+)$"
)
_PHONE_NUMBERS = frozenset(("number", "cell number", "mobile number", "mobile", "cell"))
_AMOUNT = re.compile(
    r"^my (?P<thing>(?:\w+ )?\w+(?<!s)) (?:am|am now|went up to|went down to|rose to|fell to"
    r"|increased to|dropped to) (?P<v>(?:.* )?\d+(?: .*)?)$"
)
# "Radiohead is the group I love most": favorite:band.
_LOVED_MOST = re.compile(
    r"^(?P<v>.+) am the (?P<thing>\w+) i (?:love|like|enjoy)(?: the)? (?:most|best)$"
)
_FAVORITE_AFTER = re.compile(
    rf"^(?P<v>.+) am my (?:new )?(?:favorite|favourite) (?P<thing>\w+(?: \w+)??){_NOW}$"
)
_DISLIKE = ("dislike ", "hate ", "can not stand ")


def stated_favorite(spoken: str) -> tuple[str, str | None] | None:
    """A favourite named before what it is: "coffee am my favorite drink", "radiohead am the
    group i love most" (the whole fact in the first person, subject included)."""
    favorite = _FAVORITE_AFTER.match(spoken) or _LOVED_MOST.match(spoken)
    if favorite is None:
        return None
    return favorite_key(favorite.group("thing")), trim_value(favorite.group("v"))


def read_predicate(predicate: str) -> tuple[str, str | None, bool] | None:
    """The attribute, value and whether the predicate retracts it, as the first pattern that
    matches reads them; None when none does."""
    favorite = _FAVORITE.match(predicate) or _FAVORITE_AFTER.match(predicate)
    if favorite:
        return favorite_key(favorite.group("thing")), trim_value(favorite.group("v")), False
    first = _FIRST.match(predicate)
    for attribute, pattern, fixed in _PATTERNS[first.lastindex - 1 :] if first else []:
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
        checked = check_kind(attribute, fixed, raw, value)
        if checked is not None:
            return checked
    amount = _AMOUNT.match(predicate)  # after the patterns: "my car is a 98 jaguar" is a car
    if amount:
        thing = amount.group("thing")
        phone = thing in _PHONE_NUMBERS and sum(c.isdigit() for c in predicate) >= 6
        thing = "phone number" if phone else thing  # "my number is 555-0143", not "is 42"
        return amount_key(thing), trim_value(amount.group("v")), False
    return None


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
