"""Everyday updates read since the third probe (issue 11, session 11: the misses of
evals/everyday_heldout2.jsonl, now a dev set): moves told every way, with whom one lives
(household), work taken or left (and work ended settling the job too), studies and schools,
quits of habits, pastimes by their gear, bedtimes, weight, a taken surname, a pregnancy, an
injury healed, hair, memberships left. Each pair is phrased otherwise than the eval cases:
the rules are families of phrasings, not sentences."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op
from tests.decisions import active, llm_manager, replaced_by_topic

# (old, new): one pair per family, each kept both (or settled on another memory) on 639db8c.
SUPERSEDED = [
    # where one lives: a move told with a direction, a home named, a new kind of home
    ("I'm based in Leeds", "We packed up and moved down to Cardiff"),
    ("User lives in Boston", "User now calls Chicago home"),
    ("I rent a flat in Camden", "We bought a house out in the countryside"),
    ("User lives in the dorms", "User moved into an apartment near campus"),
    ("I was born in Texas and still live there", "I relocated to Denver last year"),
    # with whom one lives
    ("I share a house with two friends", "I'm living on my own now"),
    ("I live at home with my parents", "I moved out of my parents' place"),
    ("I'm staying at my brother's place", "I got my own apartment"),
    # work taken
    ("User is a junior developer", "User was promoted to senior developer"),
    ("I work in marketing", "I changed careers and I'm a teacher now"),
    ("I freelance as a photographer", "I got a job as a staff photographer"),
    ("I'm a chef at Nobu", "I accepted a job at Zuma"),  # a job that names its employer
    # work left: an employer's end ends the job too
    ("I work for the post office", "I handed in my resignation"),
    ("I'm a cashier", "I've been unemployed since June"),
    ("I'm a nurse", "I stopped working after the twins were born"),
    ("I'm an engineer at Boeing", "Boeing laid me off"),
    ("I drive a bus for a living", "I'm retired now"),
    # studies and schools
    ("User is a second-year medical student", "User dropped out of med school"),
    ("I'm doing a PhD in chemistry", "I finished my PhD"),
    ("I go to Roosevelt High", "I transferred to Central High"),
    ("I attend Westfield High School", "I graduated from high school"),
    # relationships
    ("I'm engaged to Jo", "Jo and I got married last weekend"),
    ("User is single", "User has been dating someone for a month"),
    # habits quit or taken up
    ("I drink a lot of tea", "I've cut out caffeine"),
    ("User drinks beer on weekends", "User has been sober since January"),
    ("I smoke a pack a day", "I kicked the cigarette habit"),
    ("User plays the cello", "User gave up the cello two years ago"),
    ("I don't exercise at all", "I joined a gym last month"),
    ("I swim 20 laps every morning", "I haven't been swimming since the pool closed"),
    ("I knit in the evenings", "I haven't touched my knitting in months"),
    ("I'm on a paleo diet", "I stopped doing paleo"),
    # routines, the body, names
    ("I go to bed at 11pm", "These days I'm in bed by 9"),
    ("I weigh 80 kg", "I'm down to 72 kg"),
    ("My last name is Brown", "I took my wife's last name"),
    ("I'm pregnant", "We had a baby girl last week"),
    ("I have a sprained ankle", "My ankle has healed"),
    ("User has short hair", "User grew their hair long"),
    ("I have brown hair", "I dyed my hair blue"),
    # things sold, memberships left
    ("User plays on a PlayStation", "User sold their PlayStation and got a Switch"),
    ("User plays basketball on Tuesdays", "User quit the Tuesday basketball team"),
    ("I'm in a choir", "I left the choir"),
    # more ways of the same families
    ("I live in Madrid", "We've settled in Lisbon"),
    ("User lives in Manila", "User emigrated to Canada"),
    ("I work at a bank", "I'm a stay-at-home dad now"),
    ("I work at Tesco", "I started my own business"),
    ("I work for Acme", "I switched companies"),
    ("I'm a law student", "I've graduated"),
    ("I'm married", "My husband and I split"),
    ("I drink coffee every morning", "I switched from coffee to herbal tea"),
    ("I wear a Fitbit", "I replaced my Fitbit with an Apple Watch"),
    ("User goes to the gym every day", "User stopped going to the gym"),
    ("I take the bus to work", "I cycle to work these days"),
    ("My name is Samantha", "I changed my name to Sam"),
    ("I live in Queens", "Our new place is in Brooklyn"),
    ("I live alone", "I got a roommate"),
    ("I'm dating Tom", "Tom and I are no longer together"),
    ("I work at Google", "I left my job"),
    # said in another tense, or with a tail of when
    ("I work at Amazon", "I've started at Microsoft"),
    ("I'm single", "I have a girlfriend now"),
    ("I go to bed at 10", "I've been going to bed around 1am lately"),
    ("I drink a lot", "I'm sober now"),
    ("I'm a teacher", "I'm now a principal"),
    ("I have a Toyota", "I bought a Tesla"),
    ("I'm a stay-at-home mom", "I went back to work"),
    ("I'm unemployed", "I found a job at a bakery"),
    ("I'm between jobs", "I just started working at a hospital"),
    ("I have long hair", "I shaved my head"),
    ("User lives with their parents", "User now lives on their own"),  # "their": the user's
    ("User is employed", "User lost their job"),
    ("I have been vegetarian for years", "I eat meat again"),
    ("I have a beard", "I shaved off my beard"),
    ("I work at the bank", "Good news, I got a job at the hospital!"),
]


@pytest.mark.parametrize(("old", "new"), SUPERSEDED)
def test_an_everyday_update_replaces_the_old_fact_with_no_llm_call(db, fake_openai, old, new):
    replaced_by_topic(llm_manager(db, fake_openai.base_url), fake_openai, old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Berlin", "I live alone"),  # where and with whom: both hold
        ("I'm a barista", "My mom let me go to the party"),  # no work ended
        ("I have a broken wrist", "I have a broken phone"),  # a phone is no injury
        ("I run 5k every morning", "My sister runs marathons"),
        ("I go to bed at midnight", "My son goes to bed at 8"),
        ("I weigh 70 kg", "My dog weighs 30 kg"),
        ("I drive a taxi for a living", "I sold cars for a living"),  # a past job
        ("User works in retail", "User works in London"),  # a place, not a field
        ("I work in sales at Nike", "I work in marketing"),  # Nike is its employer
        ("User picked up vaping", "I picked up knitting"),
        ("I have long hair", "I dyed my hair pink"),  # a colour leaves the length
        ("I wake up early", "I wake up for work"),  # no time of day said
        ("I'm studying nursing", "I never finished school"),  # no end stated
        ("I'm married to Ann", "I have been married before"),  # a past, not a state
        ("I'm married", "I have divorced parents"),  # the parents' status
        ("I drive a Honda", "I have a mini fridge"),  # a make that names other things
    ],
)
def test_look_alikes_of_the_new_rules_both_stay(db, old, new):
    mm = MemoryManager(db)
    mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.op is Op.ADD
    assert active(mm) == sorted([old, new])


def test_a_retraction_replaces_the_memory_the_user_said_last(db, clock):
    """Two memories hold "married"; the user says the older one again, which reinforces it,
    and then takes "married" back: the memory said last is replaced, not merely the newest
    written (offline, no LLM)."""
    mm = MemoryManager(db, clock=clock)
    first = mm.update_memory("I am married to Sam", user_id="ana")
    clock.advance(days=1)
    newest = mm.update_memory("I'm married with two kids", user_id="ana")
    clock.advance(days=1)
    again = mm.update_memory("I am married to Sam", user_id="ana")
    clock.advance(days=1)
    assert (again.op, again.memory_id) == (Op.NOOP, first.memory_id)
    r = mm.update_memory("I'm not married anymore", user_id="ana")
    assert (r.op, r.memory_id) == (Op.UPDATE, first.memory_id)
    assert mm.get(newest.memory_id, user_id="ana").content == "I'm married with two kids"
