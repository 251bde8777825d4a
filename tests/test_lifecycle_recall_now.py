"""Short-term facts in recall: the "right now" part of context(), recall counts, promotion of
recalled facts through update_memory, and expired facts never shown."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from memman.errors import InvalidInputError
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401


def test_context_shows_relevant_short_term_facts_first(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.update_memory("User flies to Tokyo every spring", user_id="u")
        gate = mm.remember_short_term("User is at the airport, gate B12", user_id="u",
                                      session_id="s1", category="location")  # fmt: skip
        mm.remember_short_term("User has a headache today", user_id="u", session_id="s1")
        mm.remember_short_term("User is at the airport in Oslo", user_id="other", session_id="x")
        block = mm.context("which gate at the airport for Tokyo", user_id="u")
    assert [f.id for f in block.short_term] == [gate.id]  # the headache shares no word
    assert [h.content for h in block.hits] == ["User flies to Tokyo every spring"]
    right_now, remembered = block.text.split("What you remember")
    assert right_now.startswith("Right now")
    assert "- User is at the airport, gate B12 (until 2026-01-01 06:00)" in right_now
    assert "Tokyo" in remembered and "Oslo" not in block.text


def test_only_short_term_facts_make_a_block_without_nothing_relevant(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.remember_short_term("User is cooking dinner right now", user_id="u", session_id="s")
        block = mm.context("dinner", user_id="u")
    assert block.hits == [] and len(block.short_term) == 1
    assert "nothing relevant" not in block.text and "cooking dinner" in block.text


def test_an_expired_fact_is_never_shown_even_before_consolidate(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.remember_short_term(
            "User is at the gym", user_id="u", session_id="s1", category="location"
        )  # fmt: skip (TTL 6 h)
        assert len(mm.context("gym", user_id="u").short_term) == 1
        clock.advance(hours=6)
        block = mm.context("gym", user_id="u")
        assert block.short_term == [] and "gym" not in block.text
        mm.consolidate()  # expired now; and a promoted fact leaves short-term too
        assert mm.context("gym", user_id="u").short_term == []


def test_each_context_that_shows_a_fact_counts_one_recall(db, clock):
    with MemoryManager(db, clock=clock, promote_recall_spacing_hours=0) as mm:
        fact = mm.remember_short_term("User is training for a marathon", user_id="u",
                                      session_id="s1")  # fmt: skip
        mm.context("marathon training plan", user_id="u")
        mm.context("marathon", user_id="u")
        mm.context("knitting", user_id="u")  # not relevant: not shown, not counted
        mm.search("marathon", user_id="u")  # search returns long-term memories only
        assert mm.context("marathon", user_id="u", max_tokens=5).short_term == []  # cut: no
        [stored] = mm.short_term(user_id="u")
    assert stored.id == fact.id and stored.recall_count == 2


def test_recalls_within_the_spacing_are_one_occasion(db, clock):
    with MemoryManager(db, clock=clock) as mm:  # promote_recall_spacing_hours = 4
        mm.remember_short_term("User is training for a marathon", user_id="u", session_id="s1")
        for _ in range(5):  # five turns of one conversation, ten minutes apart
            mm.context("marathon", user_id="u")
            clock.advance(minutes=10)
        assert mm.short_term(user_id="u")[0].recall_count == 1
        clock.advance(hours=4)  # 4 h 50 min after the counted recall
        mm.context("marathon", user_id="u")
        [stored] = mm.short_term(user_id="u")
    assert stored.recall_count == 2 and stored.last_recalled_at == "2026-01-01T04:50:00.000+00:00"


def test_a_conversation_about_where_the_user_is_does_not_make_it_a_lasting_fact(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.remember_short_term(
            "User is at the airport right now", user_id="u", session_id="s1", category="location"
        )  # fmt: skip (TTL 6 h)
        for question in ["airport lounge", "airport wifi", "food at the airport", "airport"]:
            assert len(mm.context(question, user_id="u").short_term) == 1
            clock.advance(minutes=20)
        assert [c.action for c in mm.consolidate().changes] == []  # one occasion, unexpired
        clock.advance(hours=6)
        assert [c.action for c in mm.consolidate().changes] == ["expire"]
        assert mm.list(user_id="u") == []


def test_a_recalled_fact_is_promoted_through_update_memory(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        fact = mm.remember_short_term("User is learning to sail", user_id="u", session_id="s1",
                                      category="Hobby", importance=7)  # fmt: skip
        for _ in range(2):  # on two occasions, spaced by promote_recall_spacing_hours
            mm.context("sail lessons", user_id="u")
            clock.advance(hours=4)
        assert mm.consolidate().changes == []  # 2 recalls < promote_min_recalls (3)
        mm.context("learning to sail", user_id="u")
        dry = mm.consolidate(dry_run=True)
        assert [(c.action, c.target) for c in dry.changes] == [("promote", f"short_term:{fact.id}")]
        assert mm.list(user_id="u") == []
        [change] = mm.consolidate().changes
        assert change.action == "promote" and "recalled on 3 occasions" in change.detail
        [memory] = mm.list(user_id="u")
        assert (memory.content, memory.category, memory.importance) == (
            "User is learning to sail",
            "hobby",
            7.0,
        )
        [event] = mm.history(memory.id, user_id="u")
        assert (event.op, event.tier, event.source) == (Op.ADD, Tier.NOVEL, "promotion")
        assert mm.short_term(user_id="u") == []
        assert mm.context("sail", user_id="u").short_term == []  # now long-term only


def test_promotion_of_a_known_fact_is_decided_not_duplicated(db, clock):
    with MemoryManager(db, clock=clock, promote_min_recalls=1) as mm:
        known = mm.update_memory("User is learning to sail", user_id="u", importance=4)
        mm.remember_short_term("user is learning to sail.", user_id="u", session_id="s1",
                               importance=8)  # fmt: skip
        mm.context("sail", user_id="u")
        mm.consolidate()
        [memory] = mm.list(user_id="u")
        assert memory.id == known.memory_id and memory.importance == 8.0
        assert [e.op for e in mm.history(known.memory_id, user_id="u")] == [Op.ADD, Op.NOOP]


def test_an_expired_fact_is_not_promoted_however_often_recalled(db, clock):
    with MemoryManager(db, clock=clock, promote_min_recalls=1) as mm:
        mm.remember_short_term("User is at the dentist", user_id="u", session_id="s1",
                               category="location")  # fmt: skip
        mm.context("dentist", user_id="u")
        clock.advance(hours=7)
        [change] = mm.consolidate().changes
        assert change.action == "expire"
        assert mm.list(user_id="u") == []


@pytest.mark.parametrize(("field", "value"), [("importance", 0), ("category", " ")])
def test_remember_short_term_validates_like_update_memory(db, field, value):
    with MemoryManager(db) as mm:
        with pytest.raises(InvalidInputError, match=field):
            mm.remember_short_term("User is at home", user_id="u", session_id="s",
                                   **{field: value})  # fmt: skip
        assert mm.short_term(user_id="u") == []
