"""A fact said again word for word after a newer statement replaced it: the newest statement
holds, in the memory that held it, never as a second row (replaying a conversation's facts
twice added one row per such fact, benchmarks/bench_calls.py)."""

from __future__ import annotations

from memman import MemoryManager, Op, Tier
from tests.decisions import llm_manager


def active(mm: MemoryManager) -> list[str]:
    return sorted(m.content for m in mm.list(user_id="ana"))


def test_a_fact_taken_back_and_said_again_replaces_the_take_back_with_no_llm_call(
    db, fake_openai
):
    with MemoryManager(db) as offline:  # the take-back by the offline decider's negation rule
        first = offline.update_memory("I read a lot", user_id="ana")
        offline.update_memory("I don't read a lot", user_id="ana")
    mm = llm_manager(db, fake_openai.base_url)  # any call would get a 500 from the empty script
    r = mm.update_memory("I read a lot", user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id)
    assert fake_openai.requests == []
    assert active(mm) == ["I read a lot"]
    contents = [e.content_after for e in mm.history(first.memory_id, user_id="ana")]
    assert contents == ["I read a lot", "I don't read a lot", "I read a lot"]


def test_a_value_replaced_and_said_again_is_current_again(db):
    mm = MemoryManager(db)
    first = mm.update_memory("I live in Berlin", user_id="ana")
    mm.update_memory("I moved to Munich", user_id="ana")
    r = mm.update_memory("I live in Berlin", user_id="ana")
    assert (r.op, r.memory_id) == (Op.UPDATE, first.memory_id)
    assert active(mm) == ["I live in Berlin"]


def test_an_older_statement_said_again_stays_in_the_history(db):
    mm = MemoryManager(db)
    first = mm.update_memory("I read a lot", user_id="ana", observed_at="2026-01-01T00:00:00Z")
    mm.update_memory("I don't read a lot", user_id="ana", observed_at="2026-03-01T00:00:00Z")
    mm.update_memory("I read a lot", user_id="ana", observed_at="2026-02-01T00:00:00Z")
    assert active(mm) == ["I don't read a lot"]
    assert mm.get(first.memory_id, user_id="ana").content == "I don't read a lot"


def test_a_refinement_said_again_short_is_known_not_a_step_back(db):
    mm = MemoryManager(db)
    mm.update_memory("I like jazz", user_id="ana")
    mm.update_memory("I like jazz and blues", user_id="ana")
    r = mm.update_memory("I like jazz", user_id="ana")
    assert r.op is Op.NOOP
    assert active(mm) == ["I like jazz and blues"]


def test_having_pets_takes_no_pet_back(db):
    """"I have pets" was read as "I have no pets" and replaced the dog (the replay's chains)."""
    mm = MemoryManager(db)
    mm.update_memory("I have a dog", user_id="ana")
    mm.update_memory("I have pets", user_id="ana")
    assert "I have a dog" in active(mm)
    r = mm.update_memory("I have no pets", user_id="ana")
    assert r.op is Op.UPDATE
