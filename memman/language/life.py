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

import re

from memman.language.kinds import check_kind

# Where one lives, as a kind of home: "a flat in the city centre", "a house out in the suburbs".
_HOME = (
    r"(?:a |an |my |our |the )?(?:[\w]+ ){0,2}?"
    r"(?:apartment|flat|house|home|condo|place|studio|dorm|bungalow|cottage|townhouse)"
)
# The way a move is told: "moved down to", "packed up and moved back to", "relocated over to".
_MOVED = (
    r"(?:moved|relocated|have moved|have relocated|packed up and moved|upped sticks and moved"
    r"|emigrated|immigrated|have emigrated)(?: (?:back|down|up|out|over|away|across|home|abroad"
    r"|all the way|the country|the state|the world|the pond|the border|west|east|north|south))*"
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
    "|tech|software|education|construction|manufacturing|logistics|advertising"
    "|publishing|accounting|law|real estate|human resources|hr|consulting|journalism"
    "|pharma|engineering|fashion|media|politics|research|academia|government|nursing"
    "|customer service|social work|catering|the restaurant business|the film industry"
)
# A past tense says what one did, not does: "sold cars for a living" was a job.
_PAST = r"(?:\w+ed|sold|did|made|drove|taught|was|ran|wrote|built|sang|had|took|used to)"
# A time of day: "midnight", "9pm", "10:30", "around eleven", "early" (not "for work").
_CLOCK = (
    r"(?:around |about |by |at |before |after |until |usually |always )*(?P<v>\d{1,2}(?: \d\d)?"
    r"(?: ?[ap] ?m)?|midnight|noon|early|late|dawn|sunrise|(?:one|two|three|four|five|six|seven"
    r"|eight|nine|ten|eleven|twelve)(?: o clock| thirty| am| pm)?)(?: .*)?"
)
# What one studies for: "doing my master's in economics".
_DEGREE = r"(?:masters|master s|phd|doctorate|degree|bachelors|mba|ba|bsc|msc|ma|diploma)"
_WEIGHT = r"\d+(?:\.\d+)? ?(?:kg|kgs|kilos|kilograms|pounds|lbs|stone)\b"
# Where one gets hurt: "a broken wrist" is an injury, "a broken phone" is not.
_BODY = (
    r"(?:arm|wrist|leg|ankle|knee|hip|back|foot|toe|finger|hand|elbow|shoulder|ribs?|nose"
    r"|collarbone|neck|jaw|thumb|acl|hamstring)"
)
_WISH = r"(?:want|would|hope|plan|wish|dream|like|love|hate|have|am|can|could|will|used)"
_V = r"(?P<v>.+)"
_SERVICE = r"(?:a |an |the )?"

LIFE: list[tuple[str, str, str | None]] = [
    # where one lives
    ("residence", rf"^(?:grew up|was born|was raised) in {_V} and (?:still |now )?live there"
     r"(?: .*)?$", None),
    ("residence", rf"^(?:live|am living|reside|am based|am located|have lived) in {_V}$", None),
    ("residence", rf"^{_MOVED} to {_V}$", None),
    ("residence", rf"^(?:my home am|home am) in {_V}$", None),
    ("residence", rf"^(?:settled|have settled|settled down|have settled down) in {_V}$", None),
    ("residence", r"^(?:my|our) (?:new |current )?(?:place|home|apartment|flat|house|address) am"
     rf" (?:now )?in {_V}$", None),
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
    ("household", r"^(?:have|live with|got|have got|found)"
     r" (?P<v>(?:\w+ )?(?:roommates?|flatmates?|housemates?))$", None),
    ("household", r"^am staying (?:at|in) (?P<v>(?:my |our |a |the )?(?:\w+ )?(?:\w+ s )?"
     r"(?:place|house|home|flat|apartment|couch|spare room))(?: .*)?$", None),
    ("household", r"^(?:got|have|found|moved into) (?:the keys to )?(?:my|our) (?P<v>own"
     r" (?:place|flat|apartment|house|home))(?: .*)?$", None),
    ("household", rf"^moved out of {_PARENTS}(?: .*)?$", "moved out"),
    ("household", rf"^moved in with {_V}$", None),
    ("residence", r"^moved out(?: of (?P<v>.+))?$", "-"),
    # a child on the way: "had the baby" replaces it
    ("children", r"^am (?:pregnant|expecting)(?: .*)?$", "expecting"),
    # when one sleeps and wakes
    ("bedtime", rf"^(?:go to bed|go to sleep|fall asleep|am asleep|am in bed|turn in|get to bed)"
     rf" {_CLOCK}$", None),
    ("wake_time", rf"^(?:wake up|get up|am up|wake) {_CLOCK}$", None),
    ("amount:weight", rf"^(?:weigh|am down to|am up to|got down to|am at) (?P<v>(?:about |around"
     rf" |nearly |almost |over |under |just )?{_WEIGHT}.*)$", None),
    ("last_name", r"^(?:took|have taken|am taking|changed|have changed) (?:my |his |her |their )?"
     r"(?:\w+ )?(?:surname|last name|family name|married name)(?: .*)?$", "new"),
    # school and studies
    ("school", rf"^(?:started|am starting|began|moved) (?:at|to) {_V}$", "school?"),
    ("studies", r"^am (?:a |an )?(?:(?:first|second|third|fourth|final|last|\w+) year |part time "
     r"|full time )(?P<v>\w+) student(?: .*)?$", "field?"),
    ("studies", rf"^am (?:doing|studying for|working on|pursuing|taking) (?:my |a |an )?{_DEGREE}"
     rf"(?: degree)? in {_V}$", None),
    ("studies", r"^(?:have )?(?:dropped out|graduated|finished (?:my |their |his |her )?(?:degree"
     r"|studies|masters|phd|school|college|university|uni))(?!.* (?:and|so|but) (?:now )?(?:i|we) )"
     r"(?: .*)?$", "-"),
    ("hobby", r"^(?:took up|have taken up|am taking up) (?!smoking|vaping|drinking|a |an |the |my"
     r" |his |her |their )(?P<v>\w+(?: \w+)?)$", None),
    # how one gets to work: "take the train to work" until "bike to work now"
    ("commute", r"^(?P<v>drive|bike|cycle|walk|run|ride (?:my |a )?(?:bike|motorbike|scooter)"
     r"|take the (?:train|bus|subway|tube|tram|metro|ferry)|get the (?:train|bus|tube)"
     r"|commute by \w+) (?:to|into) (?:work|the office|school|campus|class)(?: .*)?$", None),
    # pastimes by their gear: "have not picked up my knitting needles in ages"
    ("hobby", r"^(?:have )?(?:picked up|touched) (?:my |the |a )?(?!smoking|vaping|drinking)"
     r"(?P<v>\w+ing)(?: \w+)?(?: (?:in|for) (?:ages|years|months|weeks|a while|a long time)"
     r"| again)?$", None),
    ("hobby", r"^(?:joined|have joined|signed up at) (?:a |the )?gym(?: .*)?$", "exercising"),
    ("hobby", r"^(?:work out|go to the gym|hit the gym|lift weights|am working out)(?: .*)?$",
     "exercising"),
    # injuries and how one looks: "have a broken wrist" until "my wrist has healed"
    ("injury", r"^have (?:a )?(?:broken|fractured|sprained|twisted|injured|torn|bad)"
     rf" (?P<v>{_BODY})(?: (?:from|since|after|because|so|and)\b.*)?$", None),
    ("injury", rf"^my (?P<v>{_BODY}) (?:have|am) (?:fully |completely |finally |all |now )?"
     r"(?:healed|mended|better)(?: .*)?$", "-"),
    ("hair", r"^(?:shaved|have shaved) (?:my|their|his|her) head(?: .*)?$", "shaved"),
    ("hair", r"^have (?P<v>(?:\w+ ){1,2})hair$", "hair?"),
    ("hair", r"^(?:cut|dyed|shaved|grew|chopped off|have cut|have dyed) (?:off )?(?:my |their"
     r" |his |her )?hair(?: off)? (?P<v>.+)$", "hair?"),
    ("diet", r"^(?:do|am doing) (?P<v>keto|paleo|atkins|whole30|intermittent fasting)(?: .*)?$",
     None),
    ("name", rf"^(?:changed|have changed) my (?:first )?name to {_V}$", None),
    # work taken
    ("job", rf"^(?:was |got |have been |been )?promoted to {_SERVICE}{_V}$", None),
    ("job", rf"^(?:freelance|work freelance|am freelancing) as {_SERVICE}{_V}$", None),
    ("job", r"^(?:took|got|accepted|landed|started|found|have|am starting) (?:a |an )?"
     rf"(?:[\w]+ ){{0,4}}?(?:job|position|role|gig|post) as {_SERVICE}{_V}$", None),
    # what one does "for a living", said as a present fact: not "sold cars for a living" (once),
    # "want to play music for a living" (a wish)
    ("job", rf"^(?!{_PAST}\b|{_WISH}\b)(?P<v>\w+(?: \w+){{0,3}}) for a living$", None),
    # a field of work, unless an employer is named too ("in accounting at Nike": Nike)
    ("job", rf"^(?:work|am working) in (?P<v>{INDUSTRIES})(?!.* (?:at|for) )(?: .*)?$", None),
    ("employer", rf"^(?:drive|deliver|ride) for {_V}$", "employer?"),
    ("employer", r"^(?:started working|began working|started work|found a job|landed a job"
     r"|got a job|took a job|found work|got work|have a job|have a new job|found a new job"
     rf"|got a new job|landed a new job) (?:at|with|for) {_V}$", "employer?"),
    ("employer", r"^(?:went back to|returned to|am back at|am back to|got back to|am back in)"
     r" work(?: .*)?$", "employed"),
    # work left: no employer any more, whichever it was
    ("employer", r"^(?:handed in|gave|put in|turned in|submitted|handed) (?:in )?my"
     r" (?:notice|resignation|two weeks notice)(?: .*)?$", "-"),
    ("employer", r"^(?:left|have left|walked out of) my (?:job|position|role|post)(?: (?:at|with)"
     r" (?P<v>.+)|(?: .+)?)$", "-"),
    ("employer", r"^(?:resigned|retired early|took early retirement|am jobless|am between jobs"
     r"|am (?:a )?stay at home (?:mom|mum|dad|parent|mother|father))(?: .*)?$", "-"),
    ("employer", r"^(?:am (?:now )?self employed|am my own boss|started (?:my|our) own (?:business"
     r"|company|firm|practice))(?: .*)?$", "self employed"),
    ("employer", r"^(?:got|found|have) a new job$|^(?:switched|changed) (?:companies|employers)"
     r"(?: .*)?$", "new"),
]  # fmt: skip


# A verb alone as what one does: a pastime ("i knit", "do not climb anymore", "run 5k every
# morning": a distance or a time of day says how much or when, not what).
_VERB_ALONE = re.compile(
    r"^(?P<v>[a-z]{3,})(?: \d+ ?(?:k|km|miles?|laps|kilometers|kilometres))?(?: (?:on weekends"
    r"|on the weekends?|every (?:day|week|morning|evening|night|weekend)|a lot|daily|weekly"
    r"|regularly|often|sometimes|for fun|in my (?:spare|free) time|in the (?:evenings?|mornings?)"
    r"|at night|at all|twice a week|\w+ times a week|most days))?$"
)


def pastime(predicate: str) -> tuple[str, str | None, bool] | None:
    """A predicate of a verb alone read as the pastime it names ("knit" -> hobby knitting).
    Only for a predicate that is a verb: not the object left by a take-back ("quit yoga")."""
    found = _VERB_ALONE.match(predicate)
    return check_kind("hobby", "pastime?", found.group("v"), None) if found else None
