"""Everyday updates read since the fourth probe (issue 11, session 11: the misses of
evals/everyday_heldout3.jsonl, now a dev set), offline (no LLM, no embedder): a message in the
past tense without its "I", a statement followed by a comment, a new home settled into, a
town alone, with whom one lives, a new job or a team, marriage and divorce in other words,
smoking given up, amounts of weight, sleep and rent, early birds and night owls, haircuts,
devices, a car traded in, faith, crutches, quits said as "done with", diets as ways of eating,
schools by name and children by "my boy", shifts, a surname taken, a pet given away by its
kind, gluten eaten again, drinking taken up, a housemate gone. One
test per family, each with several phrasings that are not the eval's sentences, and
look-alikes that must stay apart."""

from __future__ import annotations

import pytest

from tests.decisions import kept_apart, replaced_offline

FAMILIES = {
    "past tense without its I": [
        ("I work at Target", "Handed in my notice yesterday"),
        ("I own a Mazda", "Sold my car last week"),
        ("I weigh 90 kg", "Got on the scales today: 84 kg"),
        ("I work at Deloitte", "Started a new job at a bakery"),
        ("I'm a stay-at-home mom", "Went back to work in May"),
        ("I drive a Honda", "Traded my Honda in for a Kia"),
    ],
    "a statement, then a comment": [
        ("I have a Hulu subscription", "I cancelled Hulu, the shows got boring"),
        ("I have a Spotify subscription", "Cancelled Spotify, nothing I like on there"),
        ("I go to bed at midnight", "I'm a morning person now, up with the sun"),
        ("User plays in a Sunday hockey league", "User is done with hockey, bad back"),
        ("I have long hair", "Got a bob, so much easier to manage!"),
    ],
    "a new home settled into": [
        ("I live in Leeds", "Just got the keys to our new flat in Sheffield!"),
        ("User lives in Ohio", "User is all settled in their new house in Texas"),
        ("I live in Paris", "I love my new apartment in Lyon"),
        ("I live in Austin", "Finished unpacking at our new home in Dallas"),
    ],
    "a town alone": [
        ("I'm in Melbourne", "We moved to Perth"),
        ("User is in Boston", "User relocated to Miami"),
        ("I'm in New York now", "I live in Phoenix"),
    ],
    "with whom one lives": [
        ("I share a flat with two flatmates", "I've got the place to myself now"),
        ("User lives with her parents", "User moved into her partner's house"),
        ("I live with my parents", "I moved into my fiance's flat"),
        ("I live alone", "I moved into my boyfriend's place"),
        ("I have three roommates", "I finally have a flat all to myself"),
    ],
    "a new job or a team": [
        ("I work at Deloitte", "I started my new job at a startup"),
        ("I work for IBM", "I start my new position with Oracle"),
        ("I'm at Google on the Maps team", "I joined Meta"),
        ("User is with Ford in the finance department", "User accepted an offer from GM"),
    ],
    "marriage and divorce in other words": [
        ("User is divorced", "User remarried last year"),
        ("I'm engaged to Sam", "We tied the knot in June"),
        ("I'm single", "Sam and I got hitched"),
        ("I'm engaged", "I eloped with Chris last month"),
        ("I'm married", "My divorce was finalised last week"),
        ("User is separated", "User's divorce went through"),
    ],
    "smoking given up": [
        ("I smoke about a pack a day", "I haven't touched a cigarette in weeks"),
        ("User smokes", "User kicked the habit"),
        ("I smoke cigars", "I smoked my last cigar at New Year"),
        ("I'm a smoker", "I haven't had a smoke since March"),
    ],
    "weight, sleep and rent": [
        ("I weigh 85 kilos", "Stepped on the scale: 79 kg"),
        ("I weigh 200 pounds", "I'm 185 pounds now"),
        ("I sleep six hours a night", "I get eight hours of sleep now"),
        ("User sleeps 5 hours", "User is getting 7 hours of sleep"),
        ("I pay 900 a month in rent", "My landlord put the rent up to 1000"),
        ("User pays 1200 in rent", "User's landlord is raising the rent to 1300"),
        ("My commute is about 50 minutes", "Now it only takes me 20 minutes to get to work"),
        ("My commute is 30 minutes", "It takes me 45 minutes to drive to work these days"),
    ],
    "when one works": [
        ("User works night shifts", "User is back on days"),
        ("I work nights", "I'm on days now"),
        ("I work the early shift", "I moved to a normal 9 to 5"),
        ("I work a nine to five", "I work the graveyard shift now"),
    ],
    "a surname taken, a pet given away by its kind": [
        ("User's name is Maria Lopez", "User went back to her maiden name"),
        ("My name is Tom Hill", "I changed my last name after the wedding"),
        ("I have a labrador", "We rehomed the dog last month"),
        ("User has a budgie", "User gave the bird to a neighbour"),
    ],
    "gluten avoided, then eaten again": [
        ("I have celiac disease", "Turns out I'm not celiac, I can eat bread again"),
        ("I don't eat gluten", "I can eat gluten again"),
        ("User is on a gluten free diet", "User eats pasta again"),
        ("I'm gluten intolerant", "I started eating bread again"),
    ],
    "drinking taken up, a housemate gone": [
        ("I don't drink alcohol", "I've started having a beer after work"),
        ("User doesn't drink", "User started having a cider with lunch"),
        ("User lives with a roommate named Kim", "Kim moved out last week"),
        ("I live with my friend Alex", "Alex moved out, so it's just me now"),
    ],
    "early birds and night owls": [
        ("I'm a night owl", "I've become an early bird"),
        ("I go to bed at 2am", "I'm a morning person now"),
        ("User is an early riser", "User is a total night owl these days"),
    ],
    "haircuts": [
        ("I have long hair", "I got a pixie cut"),
        ("User has a buzz cut", "User is growing his hair out"),
        ("I have a bob", "I went for an undercut"),
        ("I have shoulder length hair", "I got a short haircut"),
    ],
    "devices": [
        ("User has a Samsung Galaxy", "User's new phone is an iPhone 15"),
        ("My laptop is a ThinkPad", "I'm on a MacBook now"),
        ("I use an iPhone", "My phone is a Pixel 8 now"),
    ],
    "a car traded in": [
        ("I drive a Honda Civic", "Traded the old car in for a Tesla"),
        ("I drive a Ford", "Swapped the Ford in for a Toyota"),
    ],
    "faith": [
        ("User is Catholic", "User converted to Buddhism"),
        ("I'm a Christian", "I'm an atheist now"),
        ("I am Jewish", "I became a Buddhist"),
        ("I'm religious", "I'm no longer religious"),
    ],
    "crutches and casts": [
        ("User is on crutches after knee surgery", "User no longer needs crutches"),
        ("I'm in a cast", "I don't need the cast anymore"),
        ("I'm in a sling", "I don't need the sling anymore"),
    ],
    "quits said as done with": [
        ("I play in a Sunday football league", "I'm done with football"),
        ("User is learning the violin", "User gave up on violin lessons"),
        ("I play chess at a club", "I'm through with chess"),
    ],
    "diets as ways of eating": [
        ("User follows a keto diet", "User switched to a plant-based diet"),
        ("I'm vegetarian", "I eat mostly plant based now"),
        ("I'm on a paleo diet", "I switched to low carb"),
    ],
    "schools by name, children by my boy": [
        ("User attends Ohio State", "User transferred to Michigan State"),
        ("My son goes to Westfield Primary", "My boy started at Oakridge Academy"),
        ("My daughter goes to Hill Primary", "My little girl started at Park Academy"),
    ],
}
LOOK_ALIKES = [
    ("I live in Madrid", "Ted moved to Barcelona"),  # a name before the verb
    ("I own a Mazda", "Sold some old books online"),  # nothing held the books
    ("I have a Netflix subscription", "I cancelled my dentist appointment, too busy"),
    ("I live in Rome", "My sister just got the keys to her new flat in Milan"),
    ("I live in Oslo", "I'm looking for a new place in Bergen"),  # a wish
    ("I live in Austin", "I'm in Tokyo for work"),  # a trip
    ("I live in Austin", "I'm in Medical School"),
    ("I live in Leeds", "I'm in love"),
    ("I live with roommates", "My boyfriend moved into a new flat"),
    ("I'm married to Chris", "My sister tied the knot"),
    ("I smoke", "I kicked the habit of biting my nails"),
    ("I smoke", "My dad hasn't touched a cigarette in years"),
    ("I sleep 8 hours", "My baby sleeps 12 hours"),
    ("I'm a night owl", "My husband is an early bird"),
    ("I have long hair", "I got a pay cut"),
    ("I have long hair", "My daughter got a pixie cut"),
    ("I have long hair", "I have a short temper"),
    ("I use an iPhone", "I'm on my phone all day"),
    ("I have a ThinkPad", "My wife's laptop is a MacBook"),
    ("I'm Catholic", "My wife is Jewish"),
    ("I'm on crutches", "My son is on crutches"),
    ("I play football", "I'm done with my homework"),
    ("I'm vegetarian", "I'm gluten free"),  # both hold
    ("I'm gluten free", "I'm vegetarian"),
    ("I work nights", "I work late on Fridays"),  # no shift named
    ("I work nights", "I moved to Nine Elms"),  # a move
    ("My commute is 30 minutes", "It takes my son 10 minutes to walk to school"),
    ("I don't drink alcohol", "I started having headaches"),
    ("I don't drink alcohol", "I have a wine collection"),  # a collection, not a drink
    ("My name is Jessica", "I took my husband's surname"),  # a first name alone
    ("I'm gluten free", "I eat pasta every day"),  # gluten-free pasta, maybe
    ("I have a dog", "I got a puppy"),  # a second dog
    ("I have a parrot", "I got another bird"),
    ("I have a hamster", "My daughter gave her hamster away"),
    ("My son goes to Hill Primary", "My girl friend started at Park Academy"),
]


@pytest.mark.parametrize(
    ("old", "new"),
    [pytest.param(old, new, id=f"{family}: {new}") for family, pairs in FAMILIES.items()
     for old, new in pairs],
)  # fmt: skip
def test_each_phrasing_of_a_family_replaces_the_old_fact_offline(db, old, new):
    replaced_offline(db, old, new)


@pytest.mark.parametrize(("old", "new"), LOOK_ALIKES)
def test_look_alikes_of_the_new_families_both_stay(db, old, new):
    kept_apart(db, old, new)
