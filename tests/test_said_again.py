"""A fact said again word for word after a newer statement replaced it: the newest statement
holds, in the memory that held it, never as a second row (replaying a conversation's facts
twice added one row per such fact, benchmarks/bench_calls.py)."""

from __future__ import annotations

from memman import MemoryManager, Op, Tier
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401


def active(mm: MemoryManager) -> list[str]:
    return sorted(m.content for m in mm.list(user_id="ana"))


def test_a_fact_taken_back_and_said_again_replaces_the_take_back_offline(db):
    mm = MemoryManager(db)  # the take-back by the offline decider's negation rule
    first = mm.update_memory("I read a lot", user_id="ana")
    mm.update_memory("I don't read a lot", user_id="ana")
    r = mm.update_memory("I read a lot", user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id)
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


# Facts that share words and the verb with "I read a lot", shorter than the statement that
# took it back, each a memory of its own: with top_k=2 neither word retrieval (bm25 prefers
# short texts) nor the topic query (newest first) reaches the take-back.
TAKE_BACK = "I don't read a lot and am very busy with work these days"
LOOK_ALIKES = [
    "I read lots of blogs",
    "My kids read a lot",
    "I read lots of comics",
    "My wife reads a lot",
    "I read lots of poems",
]


def test_a_replaced_text_said_again_finds_its_memory_beyond_the_candidates(db):
    """The memory that replaced the text is found by the text's hash, wherever it ranks."""
    mm = MemoryManager(db, top_k=2)
    first = mm.update_memory("I read a lot", user_id="ana")
    assert mm.update_memory(TAKE_BACK, user_id="ana").op is Op.UPDATE
    for fact in LOOK_ALIKES:
        assert mm.update_memory(fact, user_id="ana").op is Op.ADD
    assert mm.get(first.memory_id, user_id="ana").content == TAKE_BACK
    rows = len(mm.list(user_id="ana"))
    r = mm.update_memory("I read a lot", user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id)
    assert len(mm.list(user_id="ana")) == rows
    assert mm.get(first.memory_id, user_id="ana").content == "I read a lot"
    last = mm.history(first.memory_id, user_id="ana")[-1]
    assert (last.op, last.content_before) == (Op.UPDATE, TAKE_BACK)
    assert "said again" in last.reason


def test_a_text_its_memory_grew_from_said_again_beyond_the_candidates_is_known(db):
    """A memory that holds the repeated text and more already says it: NOOP, found by hash."""
    mm = MemoryManager(db, top_k=2)
    first = mm.update_memory("I hike", user_id="ana")
    assert mm.update_memory("I hike a few times a year", user_id="ana").op is Op.UPDATE
    for fact in ["I hike alone", "My kids hike", "I hike daily", "My wife hikes"]:
        assert mm.update_memory(fact, user_id="ana").op is Op.ADD
    rows = len(mm.list(user_id="ana"))
    r = mm.update_memory("I hike", user_id="ana")
    assert (r.op, r.memory_id) == (Op.NOOP, first.memory_id)
    assert len(mm.list(user_id="ana")) == rows
    assert mm.get(first.memory_id, user_id="ana").content == "I hike a few times a year"
