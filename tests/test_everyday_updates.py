"""Everyday updates the extractor reads since session 10 (issue 11, the everyday probe in
evals/everyday_dev.jsonl): each class of phrasing is read as the attribute it changes, so the
newer statement replaces the old one by topic, with no LLM call, although the two share no
word ("I'm vegetarian" / "I started eating fish again")."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op
from tests.decisions import active, llm_manager, replaced_by_topic

# (old, new): one pair per class of phrasing, each kept both before.
SUPERSEDED = [
    # a name the user asks to be called by
    ("My name is Ann", "Call me Annie"),
    ("My name is Margaret", "My friends call me Maggie"),
    ("I'm called Jonathan", "I prefer to be called Jon"),
    # children: a birth, an ordinal, becoming a parent
    ("I have two kids", "We just had our third child"),
    ("We have two children", "We just had a baby girl"),
    ("I have no children", "My wife gave birth to our first son"),
    ("I don't have kids", "I'm a dad now"),
    # diet: starting to eat what the diet excludes, or going over to another diet
    ("I'm vegetarian", "I started eating fish again"),
    ("User is vegan", "User started eating chicken again"),
    ("I'm pescatarian", "I've gone fully vegetarian"),
    # the car: by make or kind, and a sale of "my car" ends whatever make it was
    ("I drive a Honda Civic", "I sold my car and bike to work now"),
    ("I drive a Toyota Corolla", "I got rid of my car"),
    ("I don't have a car", "I bought a used Honda Accord"),
    ("User drives a Ford F-150", "User traded in the truck for a Tesla"),
    # age by birthday
    ("I am 62", "Today is my 63rd birthday"),
    ("User is 45 years old", "User celebrated their 46th birthday"),
    # favourites said with "now" / "new"
    ("My favourite colour is blue", "Green is my favourite colour now"),
    ("My favourite movie is Inception", "My new favourite film is Dune"),
    # a pet by its name, given away or rehomed
    ("I have a cat named Luna", "Luna died last month"),
    ("We have a rabbit", "We gave our rabbit to a neighbour"),
    ("I have a parrot named Kiwi", "We had to rehome Kiwi"),
    ("User has a goldfish", "User's goldfish died"),
    # drinking again, a job left at a named place, smoke-free, widowed
    ("I don't drink", "I started drinking again"),
    ("I work night shifts at the hospital", "I quit my job at the hospital"),
    ("I'm a smoker", "I've been smoke-free since January"),
    ("I'm married to Alex", "I'm a widow now"),
    # a later clause saying what holds now
    ("I'm a student", "I graduated and now I work as a paralegal"),
    ("I'm based in Austin", "I packed up and moved to Seattle"),
    # drinks by the cup, pastimes done or gone, an opener, a school level
    ("I have two cups of tea a day", "I gave up tea"),
    ("User goes running every morning", "User gave up running after a knee injury"),
    ("I do yoga twice a week", "I quit yoga"),
    ("I'm allergic to cats", "Turns out I'm not allergic to cats"),
    ("I'm in middle school", "I started high school this fall"),
]


@pytest.mark.parametrize(("old", "new"), SUPERSEDED)
def test_an_everyday_update_replaces_the_old_fact_with_no_llm_call(db, fake_openai, old, new):
    replaced_by_topic(llm_manager(db, fake_openai.base_url), fake_openai, old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have a daughter", "I have a cat"),  # "a daughter" counts one child, not none
        ("I'm vegetarian", "My husband started eating fish again"),  # another person's diet
        ("I drive a Honda Civic", "My wife sold her car"),
        ("I drive a Honda Civic", "I bought a bike"),  # a bike is no car
        ("I have two kids", "My sister just had her third child"),
        ("I have a dog named Rex", "We adopted a second dog"),
        ("I play tennis", "I started playing chess"),
        ("My name is Laura", "My dog is called Annie"),
        ("I drive a Honda Civic", "I drive to work now"),  # a commute, not a car
        ("I'm learning German", "I like dogs and now I have a cat"),
    ],
)
def test_look_alikes_of_the_everyday_rules_both_stay(db, old, new):
    mm = MemoryManager(db)
    mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.op is Op.ADD
    assert active(mm) == sorted([old, new])


def test_a_daughter_is_one_child_not_none(db):
    """ "I have a daughter" was read as "no children" (the article dropped, then taken for no
    count), so after "I don't have kids" it was a NOOP: the user's news was lost."""
    mm = MemoryManager(db)
    mm.update_memory("I don't have kids", user_id="ana")
    r = mm.update_memory("I have a daughter", user_id="ana")
    assert r.op is Op.UPDATE
    assert active(mm) == ["I have a daughter"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have kids", "I don't have any kids"),
        ("User has children", "User doesn't have any children"),
    ],
)
def test_having_children_uncounted_is_not_having_none(db, old, new):
    """ "I have kids" was read as a retraction (no count: none), so its denial looked like the
    same statement and both stayed active."""
    mm = MemoryManager(db)
    mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.op is Op.UPDATE
    assert active(mm) == [new]


def test_a_value_said_again_meets_an_older_memory_of_the_attribute(db):
    """The newest memory of a single-valued attribute settled nothing ("My girlfriend's name
    is Luis" holds more than "I have a girlfriend"), yet an older one states the same value in
    other words: a NOOP onto it, not a second row (bench_calls' replay re-added one)."""
    mm = MemoryManager(db)
    mm.update_memory("I have a boyfriend", user_id="ana")
    mm.update_memory("My girlfriend's name is Luis", user_id="ana")
    r = mm.update_memory("I have a girlfriend", user_id="ana")
    assert r.op is Op.NOOP
    assert active(mm) == ["I have a boyfriend", "My girlfriend's name is Luis"]
