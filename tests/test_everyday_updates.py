"""Everyday updates (issue 11): one user says one fact, then another, and the newer replaces
the older by topic, or both stay. The pairs are data (tests/everyday_updates.toml, one
[probeN] per probe whose misses the reader learnt); each kind of outcome is one test here,
and the cases that are not a pair keep tests of their own below."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memman import MemoryManager, Op, Tier
from tests.decisions import (
    active,
    answer,
    chat_calls,
    kept_apart,
    llm_manager,
    replaced_by_topic,
    replaced_offline,
)

PROBES = tomllib.loads(
    (Path(__file__).parent / "everyday_updates.toml").read_text(encoding="utf-8")
)


def pairs(outcome: str) -> list:
    """Every (old, new) pair of one outcome, each named by its probe (and family) and new."""
    found = []
    for probe, cases in PROBES.items():
        listed = cases.get(outcome, [])
        families = listed.items() if isinstance(listed, dict) else [(None, listed)]
        for family, pairs_ in families:
            named = f"{probe}: {family}" if family else probe
            found += [pytest.param(old, new, id=f"{named}: {new}") for old, new in pairs_]
    return found


@pytest.mark.parametrize(("old", "new"), pairs("replaced_with_llm"))
def test_an_everyday_update_replaces_the_old_fact_with_no_llm_call(db, fake_openai, old, new):
    replaced_by_topic(llm_manager(db, fake_openai.base_url), fake_openai, old, new)


@pytest.mark.parametrize(("old", "new"), pairs("replaced_offline"))
def test_each_phrasing_of_a_family_replaces_the_old_fact_offline(db, old, new):
    replaced_offline(db, old, new)


@pytest.mark.parametrize(("old", "new"), pairs("kept_apart"))
def test_look_alikes_of_the_everyday_rules_both_stay(db, old, new):
    kept_apart(db, old, new)


@pytest.mark.parametrize(("old", "new"), pairs("updated"))
def test_the_newer_statement_updates_the_older(db, old, new):
    """ "I have kids" was read as a retraction (no count: none), so its denial looked like the
    same statement and both stayed active."""
    mm = MemoryManager(db)
    mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.op is Op.UPDATE
    assert active(mm) == [new]


@pytest.mark.parametrize(("old", "new"), pairs("shown_to_decider"))
def test_a_change_reaches_the_decider_with_the_memory_it_may_end(db, old, new):
    """Offline these stay both (no topic settles them), but the decider is shown the old
    memory: with an LLM it can replace it. On e4d5524 the fact was novel, compared with
    nothing."""
    mm = MemoryManager(db)
    first = mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.tier is Tier.OFFLINE
    assert first.memory_id[:8] in r.reason


def test_a_daughter_is_one_child_not_none(db):
    """ "I have a daughter" was read as "no children" (the article dropped, then taken for no
    count), so after "I don't have kids" it was a NOOP: the user's news was lost."""
    mm = MemoryManager(db)
    mm.update_memory("I don't have kids", user_id="ana")
    r = mm.update_memory("I have a daughter", user_id="ana")
    assert r.op is Op.UPDATE
    assert active(mm) == ["I have a daughter"]


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


@pytest.mark.parametrize(
    "news", ["Cancelled the gym, way too pricey", "I cancelled my gym, never went anyway"]
)
def test_with_an_llm_a_gym_cancelled_is_decided_with_the_gym_shown(db, fake_openai, news):
    """A take-back of "the gym" names no gym: the change cue "cancelled" shows the user's
    single-valued profile, which now holds the gym by its name (write/shown.py)."""
    mm = llm_manager(db, fake_openai.base_url)
    gym = mm.update_memory("I have a membership at Equinox", user_id="ana")
    fake_openai.script(answer("UPDATE", id=1, content=news))
    r = mm.update_memory(news, user_id="ana")
    [call] = chat_calls(fake_openai)
    assert "I have a membership at Equinox" in call["json"]["messages"][-1]["content"]
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.LLM, gym.memory_id)
