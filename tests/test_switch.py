"""A switch to another kind of the same thing replaces the memory of the old kind with no LLM
call ("uses a standing desk" -> "switched back to a sitting desk", the demo's case); another
kind without a switch, another thing, or another place keeps both."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from memman.cli.demo import DEMO_USER, demo_facts
from tests.decisions import active

SWITCHES = [
    ("User uses a standing desk", "User switched back to a sitting desk"),
    ("I use a standing desk", "I switched to a sitting desk"),
    ("User uses a standing desk", "User switched from a standing desk to a sitting desk"),
    ("User uses a standing desk at work", "User switched back to a sitting desk"),
    ("User sleeps on a firm mattress", "User changed to a soft mattress"),
    ("User drives a manual car", "User switched to an automatic car"),
    ("User uses a standing desk", "User has switched to sitting desks"),
]


@pytest.mark.parametrize(("old", "new"), SWITCHES)
def test_a_switch_to_another_kind_replaces_the_old_kind_offline(db, old, new):
    mm = MemoryManager(db)
    first = mm.update_memory(old, user_id="ana")
    mm.update_memory("User likes hiking", user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id)
    assert "another kind of" in r.reason
    assert active(mm) == sorted([new, "User likes hiking"])


KEPT = [
    # another place: a desk at work and one at home may both be in use
    ("User uses a standing desk at work", "User switched to a sitting desk at home"),
    # another kind with no switch: two dogs, two desks may be true at once
    ("User has a black dog", "User has a brown dog"),
    ("User uses a standing desk", "User uses a sitting desk"),
    ("User has a dog", "User has a cat"),
    # a switch to a thing of no named kind, or to the same kind
    ("User uses a Kindle", "User switched to a Kobo e-reader"),
    ("User uses a desk", "User switched to a standing desk"),
    ("User uses a standing desk", "User switched to an electric standing desk"),
    # a visit, not a switch; another person's switch
    ("User went to art school", "User went to nursing school"),
    ("User uses a standing desk", "User's sister switched to a sitting desk"),
]


@pytest.mark.parametrize(("old", "new"), KEPT)
def test_no_switch_of_kind_settles_nothing_by_topic(db, old, new):
    mm = MemoryManager(db)
    mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.tier is not Tier.TOPIC
    assert old in active(mm)


def test_a_switch_two_memories_could_mean_settles_nothing(db):
    mm = MemoryManager(db)
    mm.update_memory("User uses a standing desk at work", user_id="ana")
    mm.update_memory("User uses a standing desk at home", user_id="ana")
    r = mm.update_memory("User switched to a sitting desk", user_id="ana")
    assert r.tier is not Tier.TOPIC
    assert len(active(mm)) == 3


def test_another_persons_kind_is_not_the_users(db):
    mm = MemoryManager(db)
    mm.update_memory("My sister uses a standing desk", user_id="ana")
    r = mm.update_memory("I switched to a sitting desk", user_id="ana")
    assert r.tier is not Tier.TOPIC
    assert "My sister uses a standing desk" in active(mm)


def test_the_demo_ends_with_one_desk_offline(db):
    mm = MemoryManager(db)
    for fact in demo_facts():
        mm.update_memory(fact.fact, user_id=DEMO_USER)
    desks = [m for m in active(mm, DEMO_USER) if "desk" in m]
    assert desks == ["User switched back to a sitting desk"]
