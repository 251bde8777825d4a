"""Facts written as labels, and how a thing is said of it (issue 11, session 13).

mem0's extraction prompt writes "Name is John"; notes and pasted profiles read "Location:
Leeds". The first was filed as a person called Name, the second as nothing, so a newer value
said in words was added beside the old one offline. And "My job is killing me" was read as
the job "killing me": it replaced "I work as a nurse", losing the job from the prompt.
"""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op
from tests.decisions import active, kept_apart, replaced_offline

LABELS = [
    ("Name is John", "My name is Jack"),
    ("Location: Leeds", "I moved to York last month"),
    ("Job: barista", "I work as a paralegal now"),
    ("User's job: barista", "User works as a paralegal now"),
    ("Employer: Acme", "I just started at Initech"),
    ("Age: 34", "I just turned 35"),
    ("Relationship status: single", "I got married in June"),
    ("Favourite movies are Alien and Heat", "My favourite movies are Up and Coco"),
    ("Monthly rent is £950", "My landlord raised the rent to £1,100 a month"),
    ("Rent: $1,200/month", "My rent went up to $1,350"),
    ("I drive a Honda Civic", "Car: Tesla Model 3"),
    ("Update: I moved to York", "I live in Leeds now"),
]


@pytest.mark.parametrize(("old", "new"), LABELS)
def test_offline_a_label_and_a_sentence_of_one_attribute_replace_each_other(db, old, new):
    replaced_offline(db, old, new)


@pytest.mark.parametrize(
    ("old", "new"), [("User's monthly rent is £950", "User's rent is £1,100 a month")]
)
def test_offline_how_often_an_amount_is_paid_is_not_what_it_is(db, old, new):
    replaced_offline(db, old, new)


@pytest.mark.parametrize(("old", "none"), [("I have a dog named Rex", "Pets: none")])
def test_offline_a_label_of_none_takes_the_attribute_back(db, old, none):
    mm = MemoryManager(db)
    mm.update_memory(old, user_id="ana")
    r = mm.update_memory(none, user_id="ana")
    assert r.op in (Op.UPDATE, Op.DELETE), r.reason
    assert old not in active(mm)


NOT_A_VALUE = [
    ("I work as a nurse at St Mary's", "My job is killing me"),
    ("I work as a nurse at St Mary's", "My job is so stressful lately"),
    ("I drive a Honda Civic", "My car is in the shop"),
    ("I use an iPhone 12", "My phone is dead again"),
]


@pytest.mark.parametrize(("old", "new"), NOT_A_VALUE)
def test_offline_how_a_thing_is_never_replaces_what_it_is(db, old, new):
    kept_apart(db, old, new)


# Labels that are none, or another's: each must leave the first fact alone.
NO_LABEL = [
    ("I live in Berlin", "Sister: lives in Rome"),
    ("I'm vegetarian", "Anna is vegan"),
    ("My son is 4", "My daughter is 7"),
    ("My birthday is on March 12", "Dinner is at 7"),
]


@pytest.mark.parametrize(("old", "new"), NO_LABEL)
def test_offline_what_is_no_label_of_the_users_stays_beside_it(db, old, new):
    kept_apart(db, old, new)


def test_offline_a_date_said_with_on_is_still_a_birthday(db):
    replaced_offline(db, "My birthday is on March 12", "My birthday is on March 21")
