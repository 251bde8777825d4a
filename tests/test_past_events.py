"""Past events read as current facts (issue 11, session 12), offline on a SQLite file.

- A change said not to have happened ("I never dyed my hair blue", "I never moved to
  Berlin") states no current value: it took back "I have blue hair" / "I live in Berlin",
  though the hair may be blue by birth and the user born in Berlin.
- "I am a student, studying medicine" was the job "student" (it replaced "I work as a
  nurse"'s neighbour facts as a job would); it is what the user studies.
- A graduation dated years back ("I graduated from Yale in 2011") is a past degree: it ended
  whatever the user studies now.
"""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from tests.decisions import active, kept_apart, replaced_offline


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have blue hair", "I never dyed my hair blue"),
        ("User has pink hair", "User never dyed her hair pink, it's a wig"),
        ("I have red hair", "I've never coloured my hair red, it's natural"),
        ("I have short hair", "I never cut my hair short"),
        ("I live in Berlin", "I never moved to Berlin, I was born here"),
        ("I live in Leeds", "I didn't relocate to Leeds, I grew up here"),
    ],
)
def test_offline_a_change_that_never_happened_takes_nothing_back(db, old, new):
    kept_apart(db, old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [("I have long hair", "I don't have long hair anymore"), ("I smoke", "I never smoked")],
)
def test_offline_a_state_denied_still_takes_it_back(db, old, new):
    replaced_offline(db, old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I'm studying law", "I am a student, studying medicine"),
        ("User studies history", "User is a student, studying engineering"),
        ("I study biology", "I'm a grad student studying physics"),
        ("I'm studying nursing", "I'm a student of architecture"),
    ],
)
def test_offline_a_student_studying_a_field_changes_the_studies(db, old, new):
    mm = MemoryManager(db)
    first = mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id), new
    assert active(mm) == [new]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I work as a barista", "I am a student, studying medicine"),
        ("User is a nurse", "User is a student, studying engineering"),
    ],
)
def test_offline_a_student_studying_a_field_is_no_new_job(db, old, new):
    kept_apart(db, old, new)


@pytest.mark.parametrize(
    "past",
    [
        "I graduated from Yale in 2011",
        "I graduated from Oxford back in 2009",
        "User finished his degree at MIT years ago",
        "I graduated from Harvard in 2015, go Crimson",
    ],
)
def test_offline_a_dated_graduation_leaves_the_current_studies(db, past):
    kept_apart(db, "User studies at Columbia", past)


def test_offline_a_graduation_still_ends_the_studies(db):
    mm = MemoryManager(db)
    first = mm.update_memory("User studies at Columbia", user_id="ana")
    r = mm.update_memory("I just graduated!", user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id)
