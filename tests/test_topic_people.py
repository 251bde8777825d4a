"""Facts about another person or a pet that restate a fact of the user's: "User has a dog named
Max" / "User's dog is called Max", "User is married to Sarah" / "User's wife is Sarah", "User
studies medicine" / "User is a medical student". Each pair is one fact from two sides; the
older memory must reach the decider (or be settled by topic), never be hidden as another
person's fact."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from tests.decisions import llm_manager, replaced_by_topic


def considered(mm: MemoryManager, old: str, new: str) -> tuple[bool, Op]:
    """Write `old` then `new`; whether the old memory was among what `new` was decided against."""
    first = mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    event = next(e for e in mm.events(user_id="ana", limit=5) if e.id == r.event_id)
    return first.memory_id in event.scores or r.memory_id == first.memory_id, r.op


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have a cat named Luna", "My cat's name is Luna"),
        ("User has a dog named Max", "User's dog is called Max"),
        ("I have a sister who lives in Rome", "My sister moved to Paris"),
        ("I'm married to Tom", "My husband is Tom"),
        ("User is engaged to Marco", "User's fiance is Marco"),
        ("I study engineering at MIT", "I'm an engineering student at MIT"),
        ("User studies medicine at Edinburgh", "User is a medical student at Edinburgh"),
    ],
)
def test_a_fact_about_someone_the_user_has_reaches_the_users_fact(db, old, new):
    seen, _ = considered(MemoryManager(db), old, new)
    assert seen


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My name is Oliver", "My son's name is Noah"),
        ("I live in Berlin", "My sister's name is Anna"),
        ("I'm single", "My friend is Tom"),  # a friend is no partner
        ("I study law", "I am a graduate student"),  # "graduate" names no field
    ],
)
def test_look_alikes_stay_apart(db, old, new):
    mm = MemoryManager(db)
    _, op = considered(mm, old, new)
    assert op is Op.ADD
    assert sorted(m.content for m in mm.list(user_id="ana")) == sorted([old, new])


def test_a_partner_named_with_a_capital_is_the_relationship_status_not_an_adjective(db):
    mm = MemoryManager(db)
    single = mm.update_memory("I'm single", user_id="ana")
    sweet = mm.update_memory("My wife is sweet", user_id="ana")  # says nothing of a name
    assert sweet.op is Op.ADD
    r = mm.update_memory("My wife's name is Sarah", user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, single.memory_id)


def test_a_new_field_of_study_replaces_the_old(db, fake_openai):
    replaced_by_topic(
        llm_manager(db, fake_openai.base_url),
        fake_openai,
        "I study law at King's College",
        "I'm a nursing student now",
    )


def test_a_plural_names_the_subject_too(db):
    seen, _ = considered(MemoryManager(db), "I have two dogs", "My dog's name is Rex")
    assert seen


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My wife is Sarah", "I'm married to Sarah"),
        ("I'm married to Sarah", "My wife is Sarah"),
        ("My husband is Tom", "I'm married to Tom"),
        ("My husband is Tom", "I married Tom"),
        ("I married Tom", "My husband is Tom"),
        ("Tom is my husband", "I'm married to Tom"),
        ("User's fiance is Marco", "User is engaged to Marco"),
    ],
)
def test_a_spouse_named_either_way_is_one_memory_and_a_later_status_replaces_it(db, old, new):
    # Both say married (engaged), to the same person: the same value in other words, a NOOP.
    mm = MemoryManager(db)
    first = mm.update_memory(old, user_id="ana")
    again = mm.update_memory(new, user_id="ana")
    assert (again.op, again.tier, again.memory_id) == (Op.NOOP, Tier.TOPIC, first.memory_id)
    for status in ("I'm divorced", "I'm single"):
        r = mm.update_memory(status, user_id="ana")
        assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id)
        assert [m.content for m in mm.list(user_id="ana")] == [status]


def test_another_name_for_the_spouse_is_not_settled_offline(db):
    # "married to Anna" after "my wife is Sarah": the same status, another person; offline
    # nothing can tell a remarriage from a mistake, so both are kept, neither dropped.
    mm = MemoryManager(db)
    mm.update_memory("My wife is Sarah", user_id="ana")
    r = mm.update_memory("I'm married to Anna", user_id="ana")
    assert r.op is Op.ADD
    assert len(mm.list(user_id="ana")) == 2
