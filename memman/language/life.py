"""The phrasings of life's turns: where and with whom one lives, work taken and left, habits.

Everyday updates rarely repeat the words of the fact they replace: "We packed up and moved
down to Bristol" replaces "I'm based in Glasgow", "I live alone these days" replaces "I share
a flat with three roommates", "I took a full-time job as an art director" replaces "I
freelance as a graphic designer"; "tied the knot", "kicked the habit", "went for a pixie
cut", "stepped on the scale: 78 kg" say a marriage, smoking given up, a haircut, a weight.
These patterns read such phrasings as the attribute they state, so that supersede.py finds
the memory of the same attribute whatever its words. They are tried before the general
patterns of patterns.py (same form: attribute, pattern over the first-person predicate, fixed
value or check), being the more specific.
"""

from __future__ import annotations

import re

from memman.language.kinds import COMPANIES, DIETS, check_kind

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
# A field of study by its form or name: "linguistics", "biology", "law" (not "new york").
_FIELD = (
    r"(?:\w+ )?(?:\w+(?:ics|ogy|istry|ism|ture|ering|sophy|nomy)|law|medicine|history|english"
    r"|arts?|music|education|business|finance|sciences?|maths?|nursing|theology|classics)"
)
# A look gone to, and when: "went blonde over the summer", "am a redhead now".
_WENT = r"(?:went|have gone|am|became)"
_WHEN_SAID = r"(?: (?:now|again|over|this|last|in|for|after)\b.*)?"
# When, not where: "got my own studio in March".
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november"
    r"|december|spring|summer|autumn|fall|winter|\d{4})\b"
)
_SERVICE = r"(?:a |an |the )?"
# Settling into a new home: "finished unpacking in our new place in", "got the keys to my new
# flat in", "am loving our new house in" (not "looking for a new place in": a wish).
_SETTLING = (
    r"(?:(?:have |just )?(?:finished |am |done )?unpack(?:ing|ed)|am (?:all )?(?:settled|settling)"
    r"|settled|(?:got|picked up) the keys to|moved into|am moving into|love|am loving|am all moved"
    r" into)"
)
# What one has become: "am a night owl", "turned into an early bird".
_BECAME = r"(?:am|have become|became|turned into|have turned into|am now)"
# A partner one moves in with: "moved into my boyfriend's flat" is living with him.
_PARTNER = r"(?:boyfriend|girlfriend|partner|fiance|fiancee|husband|wife)"
# A cut of hair by its name: "got a pixie cut", "have a buzz cut", "went for a bob".
_CUT_VERB = r"(?:have|got|went for|am rocking|am sporting|went with|decided on|ended up with|tried)"
_CUTS = r"pixie|bob|buzzcut|mohawk|mullet|undercut|fade|crew cut|pompadour|ponytail|dreadlocks"
# Faiths, as their followers are called and as they are named: "catholic", "buddhism".
_FAITHS = (
    r"catholic(?:ism)?|christian(?:ity)?|protestant|muslim|islam|jewish|judaism|jew|hindu(?:ism)?"
    r"|buddhis[mt]|sikh(?:ism)?|mormon|atheist|agnostic|pagan|quaker|lutheran|baptist|methodist"
    r"|anglican|orthodox|evangelical|presbyterian|spiritual"
)
# Married anew, or married at last, in the words people use: "tied the knot", "remarried".
_WED = (
    r"(?:remarried|have remarried|got remarried|tied the knot|got hitched|walked down the aisle"
    r"|said i do|said our vows|exchanged vows|eloped)"
)
# A smoke: "have not touched a cigarette in six months" (negated by the caller).
_SMOKE = r"(?:a |one )?(?:cigarettes?|cigs?|ciggies?|smokes?|cigars?|vapes?|tobacco)"

LIFE: list[tuple[str, str, str | None]] = [
    # when one works: "work night shifts", "am on days now"; before the moves: "moved to a
    # regular nine to five" is no move
    ("work_hours", r"^(?:work|am working|moved to|switched to|changed to|went to|am on|am back on"
     r"|have|got|pull|do) (?:the |a |regular |normal |permanent |standard )*(?P<v>(?:night|day"
     r"|early|late|evening|morning|graveyard|swing|rotating|split) shifts?|nights|days"
     r"|nine to five|9 to 5)(?: (?:schedule|job|hours|now|these days|again)\b.*)?$", None),
    # where one lives
    ("residence", rf"^(?:grew up|was born|was raised) in {_V} and (?:still |now )?live there"
     r"(?: .*)?$", None),
    ("residence", rf"^(?:live|am living|reside|am based|am located|have lived) in {_V}$", None),
    ("employer", rf"^(?:{_MOVED}|jumped ship|defected) to (?P<v>{'|'.join(sorted(COMPANIES))})"
     r"(?: .*)?$", None),
    ("residence", rf"^{_MOVED} to {_V}$", None),
    ("residence", rf"^(?:my home am|home am) in {_V}$", None),
    ("residence", rf"^(?:settled|have settled|settled down|have settled down) in {_V}$", None),
    ("residence", r"^(?:my|our) (?:new |current )?(?:place|home|apartment|flat|house|address) am"
     rf" (?:now )?in {_V}$", None),
    ("residence", rf"^(?:now )?call {_V} home(?: now)?$", None),
    ("residence", rf"^(?:rent|am renting|bought|have bought|got|own|closed on|have closed on"
     rf"|purchased|signed (?:a|the) lease on) {_HOME}(?! in {_MONTH})"
     rf"(?: out| over| up| down)? in {_V}$", None),
    ("residence", rf"^{_SETTLING} (?:in |into |at )?(?:my|our) new {_HOME} in {_V}$", None),
    ("household", rf"^(?:moved|have moved|am moving) in(?:to)? (?:with )?(?:my |our )?"
     rf"(?P<v>{_PARTNER})(?:s? (?:place|flat|apartment|house|home))?(?: .*)?$", None),
    ("residence", rf"^(?:moved|have moved|am moving) into (?P<v>{_HOME}(?: .+)?)$", None),
    # with whom one lives: a household of one value ("alone", "three roommates", "parents")
    ("household", rf"^(?:live|am living|am staying) {_ALONE}(?: .*)?$", None),
    ("household", r"^(?:live|am living|am staying) (?:at home |at my parents |at my parents s"
     rf" (?:house|place) )?with {_V}$", None),
    ("household", r"^(?:live|am living) at home(?: .*)?$", "with parents"),
    ("household", r"^(?:got|have|have got|finally have) (?:a|the|my) (?:place|flat|apartment"
     r"|house|home) (?:all )?to myself(?: .*)?$", "alone"),
    ("household", rf"^share {_SHARED} with {_V}$", None),
    ("household", r"^(?:have|live with|got|have got|found)"
     r" (?P<v>(?:\w+ )?(?:roommates?|flatmates?|housemates?))$", None),
    ("household", r"^am staying (?:at|in) (?P<v>(?:my |our |a |the )?(?:\w+ )?(?:\w+ s )?"
     r"(?:place|house|home|flat|apartment|couch|spare room))(?: .*)?$", None),
    ("household", r"^(?:got|have|found|moved into) (?:the keys to )?(?:my|our) (?P<v>own"
     r" (?:place|flat|apartment|house|home|studio|condo|room|pad|bedsit))(?: .*)?$", None),
    ("household", rf"^moved out of {_PARENTS}(?: .*)?$", "moved out"),
    ("household", rf"^moved in with {_V}$", None),
    ("residence", r"^moved out(?: of (?P<v>.+))?$", "-"),
    # a child on the way: "had the baby" replaces it
    ("children", r"^am (?:pregnant|expecting)(?: .*)?$", "expecting"),
    # when one sleeps and wakes
    ("bedtime", rf"^(?:go to bed|go to sleep|fall asleep|am asleep|am in bed|turn in|get to bed"
     rf"|crash|crash out|pass out|hit the (?:hay|sack|pillow)|head to bed|go down) {_CLOCK}$",
     None),
    ("wake_time", rf"^(?:wake up|get up|am up|wake) {_CLOCK}$", None),
    ("amount:weight", rf"^(?:weigh|am down to|am up to|got down to|am at|am|weighed in at"
     r"|(?:stepped|got|hopped) on the scales?(?: \w+){0,3}?) (?P<v>(?:about |around"
     rf" |nearly |almost |over |under |just )?{_WEIGHT}.*)$", None),
    # how long one sleeps: "sleep about six hours a night", "am getting eight hours of sleep"
    ("amount:sleep", r"^(?:sleep|get|am getting|only get|only sleep|am sleeping) (?P<v>(?:about"
     r" |around |only |barely |maybe |at least )?(?:\d+|\w+) (?:hours?|hrs?)(?: of sleep)?)"
     r"(?: .*)?$", None),
    # the rent raised: "my landlord raised the rent to 1750", "they put my rent up to 900"
    ("amount:rent", r"^(?:my landlord|the landlord|they|landlord) (?:just )?(?:raised|put up"
     r"|increased|hiked|bumped up|is raising|am raising|put) (?:my |the |our )?rent(?: up)?"
     r" (?:to|by) (?P<v>\d.*)$", None),
    # a drink had: "have a beer after work", "started having a cider with lunch" (not "a wine
    # collection": a drink's word before a noun names another thing)
    ("drinks", r"^(?:have|am having) (?:a |an |the odd |the occasional |a cold )?"
     r"(?P<v>beer|wine|cocktail|whisky|whiskey|cider|lager)s?(?: (?:with|after|before|at|on|every"
     r"|in|now|again|most|each|tonight|sometimes|occasionally)\b.*)?$", "drink?"),
    # the gym one belongs to, by its name: "am a member of gold s gym", "joined the crossfit box
    # down the street" (not "the gym" alone, nor a climbing or yoga studio: one has several)
    ("gym", r"^(?:go to|am a member (?:of|at)|have a membership (?:at|with)|belong to|joined"
     r"|have joined|work out at|train at|signed up (?:at|with|for)|am signed up (?:at|with))"
     r" (?!(?:a |an |the |my |our )?(?:local )?gyms?\b)(?:a |an |the |my )?"
     r"(?!(?:\w+ ){0,3}(?:climbing|bouldering|yoga|boxing|dance|pilates|martial)\b)"
     r"(?P<v>(?:\w+ ){0,3}?(?:gym|fitness|crossfit|ymca|ywca|equinox|health club"
     r"|leisure centre|orangetheory|f45))(?: .*)?$", None),
    # a hair colour as what one is or went: "went blonde", "am a brunette now", "went grey"
    ("hair_color", rf"^{_WENT} (?:a )?(?:blonde|blond){_WHEN_SAID}$", "blonde"),
    ("hair_color", rf"^{_WENT} (?:a )?brunette{_WHEN_SAID}$", "brown"),
    ("hair_color", rf"^{_WENT} (?:a )?(?:redhead|ginger){_WHEN_SAID}$", "red"),
    ("hair_color", r"^(?:went|have gone|am going|turned) (?:grey|gray|silver)(?: .*)?$", "grey"),
    # what one sees through: "wear glasses" until "switched to contacts" or "had lasik" (not
    # "reading glasses" or sunglasses: worn beside either)
    ("eyewear", r"^(?:wear|need|am wearing|use|switched to|have switched to|went back to"
     r"|am back to|got|moved to|changed to) (?:my |a pair of |new )?(?P<v>glasses|contacts"
     r"|contact lenses|specs|spectacles|bifocals|varifocals)(?: .*)?$", None),
    ("eyewear", r"^(?:had|got|have had|went for|finally had|finally got) (?:my )?(?:lasik"
     r"|laser eye surgery|laser surgery|eye surgery|my eyes lasered|eyes lasered)(?: .*)?$", "-"),
    # what one pays: "pay $1,500 a month in rent"
    ("amount:rent", r"^(?:pay|am paying) (?P<v>\d[\d ]*(?: a month| per month| monthly)?)"
     r" (?:in|for) rent(?: .*)?$", None),
    # sleeping late or early as a kind of person: "am a night owl", "turned into an early bird"
    ("bedtime", rf"^{_BECAME} (?:a |an )?(?:real |total |bit of a )?night owl(?: .*)?$", "late"),
    ("bedtime", rf"^{_BECAME} (?:a |an )?(?:real |total |bit of a |bit of an )?(?:early bird"
     r"|morning person|early riser|early sleeper)(?: .*)?$", "early"),
    ("last_name", r"^(?:took|have taken|am taking|changed|have changed) (?:my |his |her |their )?"
     r"(?:\w+ )?(?:surname|last name|family name|married name)(?: .*)?$"
     r"|^(?:went back to|have gone back to|reverted to|am using) my maiden name(?: .*)?$", "new"),
    # school and studies
    ("school", rf"^(?:started|am starting|began|moved) (?:at|to) {_V}$", "school?"),
    ("studies", r"^am (?:a |an )?(?:(?:first|second|third|fourth|final|last|\w+) year |part time "
     r"|full time )(?P<v>\w+) student(?: .*)?$", "field?"),
    ("studies", rf"^am (?:doing|studying for|working on|pursuing|taking) (?:my |a |an )?{_DEGREE}"
     rf"(?: degree)? in {_V}$", None),
    # a student "studying medicine" studies it (not the job "student")
    ("studies", r"^am (?:a |an )?(?:(?:grad|graduate|postgrad|university|college|uni|phd|mature"
     r"|full time|part time) )?student (?:of|studying|majoring in|doing|reading)"
     r" (?!to |for |at |in )(?P<v>.+)$",
     None),
    ("studies", r"^am (?:a |an )?(?:phd|doctoral|masters|master s|grad|graduate) student"
     rf" in (?P<v>{_FIELD})(?: .*)?$", None),
    # a graduation ends studies, but not one dated years back ("graduated from yale in 2011":
    # a past degree, beside whatever one studies now)
    ("studies", r"^(?:have )?(?:dropped out|graduated|finished (?:my |their |his |her )?(?:degree"
     r"|studies|masters|phd|school|college|university|uni))(?!.* (?:and|so|but) (?:now )?(?:i|we) )"
     r"(?!.*\b(?:(?:19|20)\d\d|years ago|decades? ago|back in|class of)\b)(?: .*)?$", "-"),
    ("hobby", r"^(?:took up|have taken up|am taking up) (?!smoking|vaping|drinking|a |an |the |my"
     r" |his |her |their )(?P<v>\w+(?: \w+)?)$", None),
    # how one gets to work: "take the train to work" until "bike to work now"
    ("commute", r"^(?P<v>drive|bike|cycle|walk|run|ride (?:my |a )?(?:bike|motorbike|scooter)"
     r"|take the (?:train|bus|subway|tube|tram|metro|ferry)|get the (?:train|bus|tube)"
     r"|commute by \w+) (?:to|into|in to|in) (?:work|the office|my job|my office|the job"
     r"|school|campus|class)(?: .*)?$", None),
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
    ("injury", rf"^my (?P<v>{_BODY}) (?:(?:have|am|s) )?(?:fully |completely |finally |all |now )?"
     r"(?:healed|mended|better)(?: .*)?$", "-"),
    # what one gets about with while hurt: "am on crutches", "no longer need a cast" (not a
    # wheelchair or a cane: often for life, no injury)
    ("injury", r"^(?:am on|need|use|am using|walk with|am in|wear|am wearing) (?:a |my |an |the )?"
     r"(?P<v>crutches|cast|sling|knee brace|neck brace|moon boot|brace)(?: .*)?$", None),
    ("hair", r"^(?:shaved|have shaved) (?:my|their|his|her) head(?: .*)?$", "shaved"),
    ("hair", r"^have (?P<v>(?:\w+ ){1,2})hair$", "hair?"),
    ("hair", rf"^{_CUT_VERB} (?:a |an |my )?(?:new |little |super short )?"
     rf"(?P<v>{_CUTS}|\w+(?= (?:hair)?cut))(?: (?:hair)?cut)?(?: .*)?$", "hair?"),
    ("hair", r"^am (?:growing|letting) (?:my |their |his |her )?hair (?:grow )?(?:out|long)"
     r"(?: .*)?$", "growing out"),
    ("hair", r"^(?:cut|dyed|shaved|grew|chopped off|have cut|have dyed) (?:off )?(?:my |their"
     r" |his |her )?hair(?: off)? (?P<v>.+)$", "hair?"),
    # gluten, avoided or eaten, beside any diet ("vegetarian" and "gluten free" both hold):
    # "am celiac", "do not eat gluten" until "not celiac after all", "eat bread again"
    ("gluten", r"^(?:am|have been) (?:actually |really |strictly |fully )?(?:gluten free"
     r"|celiac|coeliac|gluten intolerant)(?: .*)?$", "free"),
    ("gluten", r"^(?:have|was diagnosed with|got diagnosed with) (?:celiac|coeliac)(?: disease)?"
     r"(?: .*)?$|^(?:avoid|cut out|stay away from|am off) gluten(?: .*)?$"
     r"|^(?:am on|follow|eat) (?:a |an )?(?:strict |strictly )?gluten free(?: diet)?(?: .*)?$",
     "free"),
    ("gluten", r"^(?:eat|can eat|am eating|started eating|am back to eating|went back to eating"
     r"|can have) (?:gluten|bread|pasta|wheat)(?: and \w+)? (?:again|now|these days)(?: .*)?$"
     r"|^(?:eat|can eat|tolerate|can tolerate|can have) gluten(?: .*)?$", "eats"),
    # a diet named as a way of eating: "switched to a mostly plant based way of eating" (not
    # "gluten free", "halal": a vegetarian may be either as well)
    ("diet", r"^(?:switched to|have switched to|went|have gone|am|eat|follow|am on|am eating"
     r"|moved to|changed to) (?:a |an )?(?:mostly |fully |entirely |strictly |largely |100 )?"
     r"(?P<v>plant based|whole food plant based|low carb|mediterranean|raw food)"
     r"(?: (?:diet|way of eating|lifestyle))?(?: .*)?$", None),
    ("diet", r"^(?:do|am doing) (?P<v>keto|paleo|atkins|whole30|intermittent fasting)(?: .*)?$",
     None),
    ("name", rf"^(?:(?:legally|officially|formally) )?(?:changed|have changed) my"
     rf" (?:first |full )?name (?:legally |officially )?to {_V}$", None),
    # an engagement called off: "called off the wedding", "the engagement is off"
    ("relationship_status", r"^(?:called off|have called off|broke off|cancell?ed|postponed"
     r" indefinitely) (?:the |my |our )?(?:wedding|engagement)(?: .*)?$", "-"),
    # back in work: "am employed again" ends "am unemployed"
    ("employer", r"^am (?!.* (?:at|by|with|for|as (?!of)) )(?:(?:gainfully )?employed"
     r" (?:again|once more|now)|back in work|in work again|working again)(?: .*)?$", "employed"),
    # what one earns: "earn $65,000 a year", "am making 72k now"
    ("amount:salary", r"^(?:earn|make|am making|am earning|am on|take home|bring in|get paid)"
     r" (?P<v>(?:about |around |over |under |almost |nearly |just )?\d[\d ]*(?: ?k\b"
     r"(?: (?:a|per) (?:year|month))?| (?:a|per) (?:year|month|hour|week)| an hour| annually"
     r"| a year))(?: .*)?$", None),
    ("relationship_status", rf"^{_WED}(?: .*)?$", "married"),
    ("relationship_status", r"^my divorce (?:was|am|have been|got) (?:finally |officially )?"
     r"(?:finali[sz]ed|final|through|official|settled)(?: .*)?$|^(?:finali[sz]ed) my divorce"
     r"(?: .*)?$|^my divorce went through(?: .*)?$", "divorced"),
    ("smoking", r"^(?:have been |am |been )?(?:cigarette|cig|smoking|vape) free(?: .*)?$", "-"),
    ("diet", rf"^eat (?P<v>{'|'.join(sorted(DIETS))})(?: now| these days| nowadays)?$", None),
    # a drink not touched: "have not touched alcohol since january" (negated by the caller)
    ("drinks", r"^(?:have )?(?:touched|had) (?:a drop(?: of (?:alcohol|booze|liquor))?|a drink"
     r"|(?:any )?(?:alcohol|booze|liquor))(?: (?:in|for|since) .+)?$", "alcohol"),
    # smoking given up in other words: "kicked the habit", "have not touched a cigarette"
    ("smoking", r"^(?:the )?(?:smoking |nicotine |cigarette )?habit(?! of)(?: .*)?$",
     "smokes"),
    ("smoking", r"^(?:stubbed out|smoked) my (?:very )?last (?:cigarette|cig|smoke|cigar)(?: .*)?$",
     "-"),
    ("smoking", rf"^(?:have )?(?:touched|had|smoked|lit) {_SMOKE}(?: (?:in|for|since) .+)?$",
     "smokes"),
    # the device one uses, by what it is: "my new phone is an iphone 15", "am on a macbook now"
    ("device", r"^my (?:new |current |old |work )?(?:phone|cell|mobile|smartphone|laptop|computer"
     r"|tablet|pc|console) am (?:now )?(?:a |an )?(?P<v>.+)$", "device?"),
    ("device", r"^am (?:on|using) (?:a |an )(?:new )?(?P<v>.+)$", "device?"),
    # a car traded in: "traded the old car in for a tesla", "swapped my civic for a rav4"
    ("car", r"^(?:traded|swapped|part exchanged|exchanged) (?:in )?(?:my |the |our )?(?:old )?"
     rf"(?:\w+ ){{0,2}}?(?:in )?(?:for|with) {_V}$", "vehicle?"),
    # faith: "am catholic", "converted to buddhism", "am no longer religious"
    ("religion", rf"^(?:am|became|have become|converted to)"
     rf" (?:a |an )?(?:devout |practicing |practising |lapsed |born again )?(?P<v>{_FAITHS})"
     r"(?: .*)?$", None),
    ("religion", r"^am religious(?: .*)?$", "religious"),  # "no longer": the caller negates
    ("religion", r"^(?:lost my faith|left the church|stopped going to (?:church|mass|temple"
     r"|the mosque|synagogue))(?: .*)?$", "-"),
    # work taken
    ("job", rf"^(?:was |got |have been |been )?promoted to {_SERVICE}{_V}$", None),
    ("job", rf"^(?:freelance|work freelance|am freelancing) as {_SERVICE}{_V}$", None),
    ("employer", r"^(?:started|am starting|start|began|took|accepted|landed|got|have)"
     r" (?:my |a |an )?(?:new |first |dream )?(?:job|position|role|gig) (?:at|with) (?P<v>.+)$",
     "employer?"),
    ("job", r"^(?:took|got|accepted|landed|started|found|have|am starting) (?:a |an )?"
     rf"(?:[\w]+ ){{0,4}}?(?:job|position|role|gig|post) as {_SERVICE}{_V}$", None),
    # what one does "for a living", said as a present fact: not "sold cars for a living" (once),
    # "want to play music for a living" (a wish)
    ("job", rf"^(?!{_PAST}\b|{_WISH}\b)(?P<v>\w+(?: \w+){{0,3}}) for a living$", None),
    # what one does as one's work: "do ux design full time" (not "on the side": a sideline)
    ("job", r"^(?:do|am doing) (?:freelance )?(?P<v>\w+(?: \w+){0,2}) (?:full time|professionally"
     r"|for work|as my job|as a career)(?: now| these days)?(?! on the side)(?: .*)?$", None),
    # a field of work, unless an employer is named too ("in accounting at Nike": Nike)
    ("job", rf"^(?:work|am working) in (?P<v>{INDUSTRIES})(?!.* (?:at|for) )(?: .*)?$", None),
    ("employer", rf"^(?:drive|deliver|ride) for {_V}$", "employer?"),
    # a first day somewhere: "started at a fintech startup on monday" (a school read before)
    ("employer", r"^(?:started|have started|am starting|began) (?:work |working )?at"
     r" (?P<v>(?:a |an )?(?:\w+ ){0,3}(?:startup|firm|company|agency|bank|studio|consultancy"
     r"|hospital|clinic|practice|charity|store|shop|restaurant|bakery|cafe|hotel|factory|warehouse"
     r"|lab))(?: (?:on|last|this|in|yesterday|today|two|a)\b.*)?$", "employer?"),
    ("employer", r"^(?:started working|began working|started work|found a job|landed a job"
     r"|got a job|took a job|found work|got work|have a job|have a new job|found a new job"
     rf"|got a new job|landed a new job) (?:at|with|for) {_V}$", "employer?"),
    # a team named with the employer: "am at amazon on the logistics team"
    ("employer", r"^am (?:now |currently )?(?:at|with) (?P<v>.+?) (?:on|in) (?:the |a )?"
     r"(?:\w+ ){0,2}(?:team|department|division|squad|unit)(?: .*)?$", "employer?"),
    ("employer", r"^(?:went back to|returned to|am back at|am back to|got back to|am back in)"
     r" work(?: .*)?$", "employed"),
    # work left: no employer any more, whichever it was
    ("employer", r"^(?:handed in|gave|put in|turned in|submitted|handed) (?:in )?my"
     r" (?:notice|resignation|two weeks notice)(?: .*)?$", "-"),
    ("employer", r"^(?:left|have left|walked out of) my (?!(?:first|summer|side|second|weekend"
     r"|holiday|evening) )(?:\w+ )?(?:job|position|role|post)"
     r"(?: (?:at|with) (?P<v>.+)|(?: .+)?)$", "-"),
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
