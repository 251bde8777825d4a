"""Two facts of one person that are both true stay (issue 11, session 13).

An MSC persona's facts are all true at once; writing each persona's facts offline
(benchmarks/bench_personas.py) replaced one with another 414 times in 54,000 facts. Among
them: a kind of home taken for a place, a second job said with "also", "I have a son" taken
for a count of all the children, a height read as an age, a past job as the current one.
"""

from __future__ import annotations

import pytest

from tests.decisions import kept_apart, replaced_offline

BOTH_TRUE = [
    ("I live in a house.", "I live in Washington state."),
    ("I live in a condo.", "I live in California."),
    ("I just moved into my first home.", "I recently moved to this country."),
    ("I grew up in an apartment.", "I grew up in Michigan."),
    ("I am 22 years old.", "I am 5' 3\"."),
    ("I am a receptionist for a lawyer.", "I also work at my family's grocery store."),
    ("I'm a musician.", "I also work as a custodian to help pay the bills."),
    ("I am a teacher and a baker.", "I am an ex chef."),
    ("I am a student.", "I am a dancer."),
    ("I have kids.", "I have a son."),
    ("I have three kids.", "I have a son who plays football."),
    ("I have three kids.", "I am pregnant with twins."),
    ("I am studying radiology full time.", "I study on the weekends."),
    ("I am studying chemistry.", "I study a lot."),
    ("I drive an older corvette.", "I drive everywhere."),
    ("I have a ford f150.", "My car is black."),
    ("I was born in 1990.", "I was born in Ohio."),
]


@pytest.mark.parametrize(("old", "new"), BOTH_TRUE)
def test_offline_two_true_facts_of_one_person_both_stay(db, old, new):
    kept_apart(db, old, new)


STILL_REPLACED = [
    ("I live in a house.", "I live in a condo now."),
    ("I rent a flat in the city centre", "We just bought a house out in the suburbs"),
    ("I rent a flat in Camden", "We bought a house out in the countryside"),
    ("I live in a flat.", "We just moved into a house."),
    ("I have two kids.", "I have one son and two daughters."),
    ("I'm a student", "I graduated and now I work as a paralegal"),
    ("I study at UCLA", "I transferred to Stanford"),
    ("I am 22 years old.", "I just turned 23."),
    ("I was born in Ohio.", "I was actually born in Kentucky."),
]


@pytest.mark.parametrize(("old", "new"), STILL_REPLACED)
def test_offline_a_new_value_of_the_same_sense_still_replaces(db, old, new):
    replaced_offline(db, old, new)
