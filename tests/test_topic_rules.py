"""The topic rules of the conflict suite's second pass: take-backs by object, recounts,
corrections and the phrasings the extractor reads since. Each pair is an everyday update the
offline path kept both sides of before; now it is settled by topic with no LLM call."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from memman.language.attributes import ENDED
from memman.language.topic import Topic, about
from tests.decisions import active, llm_manager, replaced_by_topic


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("I sold my motorcycle", Topic("user", ENDED, "motorcycle", True)),
        ("User cancelled the gym membership", Topic("user", ENDED, "gym membership", True)),
        ("I gave up energy drinks", Topic("user", ENDED, "energy drinks", True)),
        ("Forget what I said about learning Rust", Topic("user", ENDED, "learning rust", True)),
        ("User's hamster Peanut died", Topic("user", "pets", "hamster", True)),
        ("My roommate moved out", Topic("user", "household", "roommate", True)),
        ("Lena and I broke up", Topic("user", "relationship_status", "single")),
        ("I'm a non-smoker", Topic("user", "smoking", None, True)),
        ("User is in their early twenties", Topic("user", "age", "early twenties")),
        ("My main hobby is pottery now", Topic("user", "favorite:hobby", "pottery")),
        (
            "These days Radiohead is the group I love most",
            Topic("user", "favorite:band", "radiohead"),
        ),
        ("My rent is $1,200 a month", Topic("user", "amount:rent", "1 200 a month")),
        (
            "User is originally from Indiana, not Ohio",
            Topic("user", "hometown", "indiana", replaces="ohio"),
        ),
        ("User drinks tea instead of coffee", Topic("user", "drinks", "tea", replaces="coffee")),
        # Not an amount: the number is part of a name; not a take-back: a trade.
        ("My truck is a black Ford F150", None),
        ("I sold cars for a living", Topic("user", "verb:sold", "cars for a living")),
        # Capitalised, but nobody's name: two such facts are not two people's.
        ("Someone is cutting a tomato", None),
        ("Everyone likes pizza", None),
        ("Jon likes pizza", Topic("jon", "likes", "pizza")),
    ],
)  # fmt: skip
def test_the_extractor_reads_the_new_phrasings(text, topic):
    assert about(text) == topic


# (old, new): the new statement supersedes the old one, which shares few or no words with it.
SUPERSEDED = [
    # a take-back names what it ends, whatever the memory's verb
    ("I own a motorcycle", "I sold my motorcycle"),
    ("User has a gym membership", "User cancelled the gym membership"),
    ("I'm taking night classes in accounting", "I dropped my accounting night classes"),
    ("I drink energy drinks", "I gave up energy drinks"),
    ("I'm learning German", "I stopped learning German"),
    ("User wears glasses", "User doesn't wear glasses anymore since the laser surgery"),
    ("User has a dog named Bruno", "User no longer has Bruno, he was rehomed"),
    ("User has a hamster named Peanut", "User's hamster Peanut died"),
    ("I have a roommate", "My roommate moved out, I live alone now"),
    ("I'm learning Rust", "Forget what I said about learning Rust, that was a mistake"),
    # the same thing counted anew
    ("User runs 5 km three times a week", "User runs 10 km three times a week"),
    ("I smoke 10 cigarettes a day", "I smoke 3 cigarettes a day now"),
    ("I've lived in Chicago for 3 years", "I've lived in Chicago for 4 years"),
    ("User speaks three languages", "User speaks four languages"),
    ("I play tennis twice a week", "I play tennis four times a week"),
    ("I'm in my second year of nursing school", "I'm in my third year of nursing school"),
    ("My rent is $1,200 a month", "My rent went up to $1,350 a month"),
    # corrections and phrasings
    ("User is originally from Ohio", "User is originally from Indiana, not Ohio"),
    # a correction said with "now": before, read as no correction, and a new name that
    # starts like the old one ("Chris" / "Christina") was taken for it said another way
    ("User goes by Chris", "User prefers to be called Christina now, not Chris"),
    ("My name is Dan", "My name is Daniel, not Dan"),
    ("I work at Meta", "I work at Google these days, not Meta"),
    ("User drinks coffee every morning", "User drinks green tea every morning instead of coffee"),
    ("I have a girlfriend named Lena", "Lena and I broke up, I'm single now"),
    ("User is a non-smoker", "User picked up vaping during exams"),
    ("My main hobby is woodworking", "My main hobby is pottery now"),
    ("My favorite band is Coldplay", "These days Radiohead is the group I love most"),
    ("User is in their early twenties", "User is 31"),
    ("I am employed", "I'm not employed at the moment"),
    ("User is a high school senior", "User started university in September"),
    ("I'm a teacher at Lincoln High", "I changed careers and now write software for a bank"),
    ("I don't have kids", "My daughter was born in March"),
    ("User rents an apartment in Brooklyn", "User bought a house in New Jersey and moved there"),
    # an amount of a thing named in two words
    ("User's team budget is $2.5 million", "User's team budget is $1.8 million"),
    ("My monthly rent is $900", "My monthly rent went up to $950"),
]


@pytest.mark.parametrize(("old", "new"), SUPERSEDED)
def test_the_newer_statement_replaces_the_old_with_no_llm_call(db, fake_openai, old, new):
    replaced_by_topic(llm_manager(db, fake_openai.base_url), fake_openai, old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I visited Paris in 2019", "I visited Paris in 2022"),  # two events, not a recount
        ("I have two cats", "I have two goldfish"),
        ("I quit smoking five years ago", "I quit my job in May"),
        ("I love German films", "I stopped learning German"),  # another verb's German
        ("I like dogs", "I like dogs but not cats"),  # a later clause's "not" is its own
        ("My sister runs 5 km a day", "I run 10 km a day"),
        ("I own boat number 1", "I own boat number 2"),  # a number that names, not counts
    ],
)
def test_look_alikes_of_the_new_rules_both_stay(db, old, new):
    mm = MemoryManager(db)
    mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.op is Op.ADD
    assert active(mm) == sorted([old, new])


def test_a_take_back_that_two_memories_could_mean_settles_nothing(db):
    mm = MemoryManager(db)
    mm.update_memory("I own a red bike", user_id="ana")
    mm.update_memory("I own a blue bike", user_id="ana")
    r = mm.update_memory("I sold my bike", user_id="ana")
    assert r.tier is not Tier.TOPIC
    assert "I own a red bike" in active(mm) and "I own a blue bike" in active(mm)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Berlin", "I'm based in Berlin"),
        ("User works at Google", "User is employed at Google"),
        ("I have two kids", "I have 2 children"),
        ("User is vegetarian", "User follows a vegetarian diet"),
        ("I am a software engineer", "I work as a software engineer"),
        ("User grew up in Manchester", "User is originally from Manchester"),
        ("User's name is Priya", "User is called Priya"),
    ],
)
def test_a_single_value_restated_in_other_words_is_a_noop_with_no_llm_call(
    db, fake_openai, old, new
):
    mm = llm_manager(db, fake_openai.base_url)
    first = mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.NOOP, Tier.TOPIC, first.memory_id)
    assert fake_openai.requests == []
    assert active(mm) == [old]


def test_a_restatement_that_adds_a_detail_is_not_a_noop(db):
    mm = MemoryManager(db)
    first = mm.update_memory("I live in Berlin", user_id="ana")
    r = mm.update_memory("I'm based in Berlin with my wife", user_id="ana")
    assert r.op is not Op.NOOP
    assert mm.get(first.memory_id, user_id="ana").status.value in ("active", "superseded")
    assert "I'm based in Berlin with my wife" in active(mm)


@pytest.mark.parametrize(
    ("text", "employer"),
    [
        # where, when, how long or for whom in the family: no employer named
        ("User now works standing at a kitchen counter", None),
        ("User works sitting at his desk", None),
        ("I work at home", None),
        ("I work at night", None),
        ("I have worked there for four years", None),
        ("I work at two jobs", None),
        ("I work for fun", None),
        # an organisation named, also after a spot or a span
        ("I work from home for Acme", "acme"),
        ("I work at a nursing home", "nursing home"),
        ("I work at the bookstore 4 days a week", "bookstore 4"),
        ("I work at the front desk at Best Western", "best western"),
        ("I have worked at Apple for 7 years", "apple"),
        ("I work for my dad at a car dealership", "car dealership"),
    ],
)
def test_works_at_a_spot_names_no_employer(text, employer):
    topic = about(text)
    assert topic is not None
    assert (topic.attribute == "employer", topic.value if employer else None) == (
        employer is not None,
        employer,
    )


def test_working_standing_at_a_counter_keeps_the_employer(db):
    mm = MemoryManager(db)
    mm.update_memory("User works at Google", user_id="ana")
    r = mm.update_memory("User now works standing at a kitchen counter", user_id="ana")
    assert r.op is Op.ADD
    assert active(mm) == ["User now works standing at a kitchen counter", "User works at Google"]
