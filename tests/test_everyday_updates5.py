"""Everyday updates read since the fifth probe (issue 11, session 12: the misses of
evals/everyday_heldout4.jsonl, now a dev set), offline (no LLM, no embedder): a home bought
or leased, home named as such, a household of one, work by what it is, quit by its name or
taken up again, a student in a field, diets in other words, a name changed legally, a car by
its model, bedtimes and commutes in other verbs, how one describes oneself, smoking and
drinking given up in other words, an engagement called off, something worn taken off, a
role stepped down from, amounts said without "my", a salary, lead words before a colon, a
gym by its name, a computer by its make, a later clause of the user's own, a first day at a
workplace, a child moved to another school, a housemate by name, an employer known by name
moved to, a drink one can no longer take, the one holder of a role (a boss, a doctor, a bank),
what one sees through (glasses, contacts, laser surgery), a hair colour as what one went.
One test per family, each with several phrasings that are not the eval's sentences, and
look-alikes that must stay apart."""

from __future__ import annotations

import pytest

from memman import Op, Tier
from tests.decisions import answer, chat_calls, kept_apart, llm_manager, replaced_offline

FAMILIES = {
    "a home bought or leased": [
        ("I rent a flat in Leeds", "We closed on a house in York last week"),
        ("User lives in Austin", "User purchased a condo in Dallas"),
        ("I live in Cork", "ok big news: we're in Galway now, signed the lease on Friday"),
    ],
    "home named as such": [
        ("Home for me is Leeds", "We moved to Bath"),
        ("My home is Boston", "I live in Denver now"),
    ],
    "a household of one": [
        ("I live with two flatmates", "It's just me in the flat these days"),
        ("User lives with her parents", "User got her own condo last spring"),
        ("I share a house with my cousin", "I got my own studio in March"),
    ],
    "work by what it is": [
        ("I'm a nurse", "These days I do graphic design full time"),
        ("I work as a chef", "I do web development professionally now"),
    ],
    "work quit by its name": [
        ("User works at Walmart", "User quit her cashier job last week"),
        ("I work at Costa", "I left my barista job"),
        ("I work at a call centre", "I quit the call centre job, couldn't take it"),
    ],
    "work taken up again": [
        ("I'm unemployed", "I'm working again after a year off"),
        ("I'm between jobs", "I'm working again since Monday"),
        ("User is unemployed", "User is gainfully employed once more"),
    ],
    "a student in a field": [
        ("I'm doing a master's in history", "I finished that and I'm now a PhD student in law"),
        ("User studies biology", "User is a grad student in chemistry"),
    ],
    "a diet in other words": [
        ("I'm on a keto diet", "I eat pretty much everything now"),
        ("I eat vegan", "I'm vegetarian now"),
        ("I'm vegan", "I gave up being vegan last year"),
        ("User is pescatarian", "User stopped being pescatarian after the trip"),
    ],
    "a name changed legally": [
        ("My name is Ann Lee", "I legally changed my name to Ann Park"),
        ("User's name is Sam Fox", "User formally changed her name to Sam Reed"),
    ],
    "a car by its model": [
        ("I own a Ford F-150", "I sold my truck"),
        ("User owns a Toyota Land Cruiser", "User sold his car"),
    ],
    "bedtimes in other verbs": [
        ("I go to bed at midnight", "Lately I've been crashing by 10"),
        ("I usually go to bed around 1am", "These days I hit the hay at 9:30"),
    ],
    "commutes in other verbs": [
        ("I take the bus to work", "I've been biking into the office since May"),
        ("User drives to her job", "User takes the train in to work now"),
        ("I walk to work", "I've been driving to work lately"),
    ],
    "how one describes oneself": [
        ("User is Catholic", "User considers herself agnostic now"),
        ("I'm an atheist", "I identify as Buddhist these days"),
    ],
    "smoking and drinking given up in other words": [
        ("I smoke a pack a day", "I've been cigarette-free for a month"),
        ("I have a beer after work", "Haven't touched alcohol in weeks"),
        ("I drink wine with dinner", "I haven't had a drink since New Year"),
    ],
    "an engagement called off": [
        ("User is engaged to Tom", "User called off the engagement"),
        ("I'm engaged", "We called off the wedding"),
    ],
    "something worn taken off": [
        ("I have braces", "Braces came off today!"),
        ("I wear a retainer at night", "The retainer came off for good"),
        ("I have braces", "Finally got my braces off"),
    ],
    "a role stepped down from": [
        ("I coach my son's football team", "I stepped down as coach"),
        ("I volunteer at the food bank", "had to give up the food bank shifts"),
        ("User plays in a darts league", "User dropped out of the darts league"),
    ],
    "amounts said without my": [
        ("My rent is $900 a month", "rent went up to $950"),
        ("I weigh 80 kg", "down to 74 kg after the diet"),
        ("My phone number is 555-0101", "new number is 555-0199"),
        ("My number is 555-0101", "My new number is 555-0199"),
    ],
    "a salary": [
        ("I earn $40,000 a year", "I'm making 45k now"),
        ("User makes $20 an hour", "User earns $24 an hour now"),
    ],
    "lead words before a colon": [
        ("I live in Leeds", "Quick update: I'm in York now, we moved here in June"),
        ("User lives in Rome", "Big news: Home for me is Milan now"),
    ],
    "a gym by its name": [
        ("I go to Planet Fitness", "I joined the Equinox near work"),
        ("User is a member of 24 Hour Fitness", "User works out at the YMCA now"),
        ("I have a membership at Gold's Gym", "I train at a CrossFit box now"),
    ],
    "a computer by its make": [
        ("My laptop is a Dell XPS 13", "I switched to a MacBook Pro"),
        ("My laptop is an Asus Zenbook", "I'm on a MacBook Air now"),
    ],
    "a later clause of the user's own": [
        ("I earn $50,000 a year", "got promoted, I'm making 60k now"),
        ("I live in Leeds", "big changes lately, I'm based in York now"),
    ],
    "a first day at a workplace": [
        ("I work at Deloitte", "Started at a small design agency on Monday, not at a big firm"),
        ("User works at Target", "User started at a local bakery last week"),
    ],
    "a child moved to another school": [
        ("My son goes to Oakwood Elementary", "We moved our son to Hillside Primary"),
        ("My daughter attends Lincoln High", "I transferred my daughter to Westside Academy"),
    ],
    "a housemate by name, gone": [
        ("User's roommate is Kevin", "Kevin moved out, so User lives alone now"),
        ("My flatmate is Priya", "I live on my own now"),
    ],
    "an employer known by name, moved to": [
        ("I work at Google", "I moved over to Microsoft last spring"),
        ("User works at Deloitte", "User jumped ship to Accenture"),
    ],
    "a drink one can no longer take": [
        ("I drink coffee every morning", "Can't do coffee anymore, it wrecks my sleep"),
        ("I drink espresso after lunch", "I can't handle caffeine anymore"),
    ],
    "the one holder of a role": [
        ("My boss is Linda", "After the restructure I report to Omar"),
        ("User's manager is Priya", "User now reports directly to Dana"),
        ("My doctor is Dr. Patel", "I changed GPs and now see Dr. Osei"),
        ("My dentist is Dr. Kim", "My new dentist is Dr. Alvarez"),
        ("My bank is Chase", "We moved our accounts over to Ally"),
        ("User's bank is Barclays", "User switched banks to Monzo"),
        ("Our landlord is Mr. Green", "Our landlord is now Ms. Brown"),
    ],
    "what one sees through": [
        ("I wear glasses", "I've switched to contacts"),
        ("User wears contacts", "User went back to glasses"),
        ("I wear glasses", "I had laser eye surgery last spring"),
        ("I wear contact lenses", "I got LASIK, best decision ever"),
    ],
    "a hair colour as what one went": [
        ("I have brown hair", "I went blonde over the summer"),
        ("User has blonde hair", "User is a redhead now"),
        ("I have black hair", "I'm going grey"),
    ],
}
LOOK_ALIKES = [
    ("I have brown hair", "I went red in the face"),
    ("I have brown hair", "My mom went grey"),
    ("I wear glasses", "I wear sunglasses when I drive"),
    ("I wear contacts", "I need reading glasses now"),
    ("I wear glasses", "My son wears contacts"),
    ("I work at Google", "I quit my summer job at the pool"),
    ("User works at Target", "User left her weekend job"),
    ("My boss is Linda", "My boss is strict"),
    ("My boss is Linda", "My husband reports to Karen"),
    ("My doctor is Dr. Patel", "My sister's doctor is Dr. Lee"),
    ("My doctor is Dr. Patel", "My dentist is Dr. Kim"),
    ("My bank is Chase", "My sister moved her accounts to Ally"),
    ("User studies law", "User is a graduate student in New York"),
    ("I study biology", "I'm a student, studying at the community college"),
    ("I live in Austin", "I moved over to Microsoft"),
    ("I work at Google", "My brother moved to Microsoft"),
    ("I have a cat", "I can't have pets in my flat"),
    ("My phone number is 555-0101", "My number is 23 on the team"),
    ("User studies law", "User is a student in Ohio"),
    ("My son goes to Oakwood Elementary", "We moved our son to a bigger bedroom"),
    ("My roommate is Kevin", "My roommate is a nurse"),
    ("I go to Planet Fitness", "I joined a climbing gym"),
    ("I go to Planet Fitness", "My wife joined the YMCA"),
    ("My laptop is a Dell", "I work at Dell"),
    ("I play piano", "I picked up the ukulele, it's so much fun"),
    ("I live in Portland", "I grew up in Phoenix, so the rain here was new"),
    ("I live in Seattle", "Quick update: I'm in Chicago this week for a conference"),
    ("User works as a nurse", "User does pottery on the side"),
    ("I have a dog named Rex", "My sister's braces came off"),
    ("I earn $50,000 a year", "My wife earns 60k"),
    ("My rent is $900 a month", "My sister's rent went up to $1,200"),
    ("I'm engaged to Sam", "My brother called off his wedding"),
    ("I smoke", "My dad has been cigarette-free for a year"),
    ("I drink wine", "My husband hasn't touched alcohol in years"),
    ("I live with my parents", "It's just me at home tonight"),
    ("User studies law", "User's roommate is a grad student in physics"),
    ("I go to bed at 11", "My son crashes by 8"),
    ("I take the train to work", "My wife drives to work"),
    ("User is Catholic", "User's husband describes himself as agnostic"),
    ("I'm on a keto diet", "My kids eat pretty much anything"),
    ("User is married", "User called off the meeting"),
    ("User studies at Columbia", "User graduated from Yale in 2012"),
    ("I'm a teacher", "I do yoga on weekends"),
]


@pytest.mark.parametrize(
    ("old", "new"),
    [pair for pairs in FAMILIES.values() for pair in pairs],
    ids=[f"{family}: {new}" for family, pairs in FAMILIES.items() for _, new in pairs],
)
def test_each_phrasing_of_a_family_replaces_the_old_fact_offline(db, old, new):
    replaced_offline(db, old, new)


@pytest.mark.parametrize(("old", "new"), LOOK_ALIKES)
def test_look_alikes_of_the_new_families_both_stay(db, old, new):
    kept_apart(db, old, new)


@pytest.mark.parametrize(
    "news", ["Cancelled the gym, way too pricey", "I cancelled my gym, never went anyway"]
)
def test_with_an_llm_a_gym_cancelled_is_decided_with_the_gym_shown(db, fake_openai, news):
    """A take-back of "the gym" names no gym: the change cue "cancelled" shows the user's
    single-valued profile, which now holds the gym by its name (write/shown.py)."""
    mm = llm_manager(db, fake_openai.base_url)
    gym = mm.update_memory("I have a membership at Equinox", user_id="ana")
    fake_openai.script(answer("UPDATE", id=1, content=news))
    r = mm.update_memory(news, user_id="ana")
    [call] = chat_calls(fake_openai)
    assert "I have a membership at Equinox" in call["json"]["messages"][-1]["content"]
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.LLM, gym.memory_id)
