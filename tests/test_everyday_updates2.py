"""Everyday updates read since the second held-out probe (issue 11: the misses of
evals/everyday_dev.jsonl and evals/everyday_heldout.jsonl, now both dev sets): devices (phone,
computer, console), diets said by what one eats, sobriety, school transfers, changed majors
and the year of school, a pastime said by its verb alone or not done "in years", a start at
an employer, working from home or the office, and the two sides of work (an employer and a
job: "retired" ends either)."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from tests.decisions import active, llm_manager, replaced_by_topic

# (old, new): one pair per class of phrasing, each kept both on e4d5524.
SUPERSEDED = [
    # a phone or a computer: the one in use now
    ("I use a Samsung Galaxy", "I switched to an iPhone 15"),
    ("User has a Dell laptop", "User bought a MacBook Air"),
    ("I play on a PS3", "I upgraded to a PS4"),  # one console line, a newer model
    # a diet said by what one eats
    ("I eat anything", "I've become vegetarian"),
    ("User is vegetarian", "User eats salmon and chicken now"),
    # sober: no alcohol, whichever drink the memory names
    ("I drink beer on weekends", "I'm teetotal these days"),
    # a school transfer, a changed major
    ("User attends Hollins University", "User transferred to Emory"),
    ("I'm studying history", "I switched my major to economics"),
    # a pastime not done for a while: the negated present perfect, a verb alone
    ("I go swimming every week", "I haven't been swimming since the pool closed"),
    ("I go hiking on weekends", "I haven't hiked in years"),
    ("I sew in my spare time", "I don't sew anymore"),
    # a start date at a new employer; where one works; the year of school
    ("I work at Costco", "I start at Walmart next week"),
    ("I work remotely", "I'm working from the office again"),
    ("I'm a freshman at Ohio State", "I'm a sophomore now"),
]


@pytest.mark.parametrize(("old", "new"), SUPERSEDED)
def test_an_everyday_update_replaces_the_old_fact_with_no_llm_call(db, fake_openai, old, new):
    replaced_by_topic(llm_manager(db, fake_openai.base_url), fake_openai, old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a new employer for a job that names none: a barista may change cafés (settled since
        # offline11 instead: "I retired" after a job, a new employer after "a chef at Nobu")
        ("I'm a barista", "I accepted a job at Starbucks"),
        ("I work at Google", "I'm a software engineer now"),  # a job beside an employer
    ],
)
def test_a_change_reaches_the_decider_with_the_memory_it_may_end(db, old, new):
    """Offline these stay both (no topic settles them), but the decider is shown the old
    memory: with an LLM it can replace it. On e4d5524 the fact was novel, compared with
    nothing."""
    mm = MemoryManager(db)
    first = mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.tier is Tier.OFFLINE
    assert first.memory_id[:8] in r.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have an iPhone", "My daughter has an Android phone"),
        ("I have a PS5", "I also bought an Xbox"),  # two consoles, two lines
        ("I work at Google", "My husband retired last year"),
        ("I'm vegan", "My son eats chicken"),
        ("I drink wine", "My brother is sober now"),
        ("I'm studying law", "My sister transferred to Yale"),
        ("I go to Leeds University", "I transferred to the Denver office"),  # work, not school
        ("I have a MacBook", "I have a cat"),
        ("I have a Dell laptop", "I bought two computer monitors"),  # no computer named
        ("I sew", "My mom sews"),
        ("I work at Costco", "I start at 8am on Mondays"),  # a time, not an employer
        ("I work from home", "My wife works in the office"),
        ("I work from home on Fridays", "I go to the office on Tuesdays"),  # a schedule
        ("I'm a senior at Yale", "My brother is a freshman"),
    ],
)
def test_look_alikes_of_the_new_rules_both_stay(db, old, new):
    mm = MemoryManager(db)
    mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.op is Op.ADD
    assert active(mm) == sorted([old, new])
