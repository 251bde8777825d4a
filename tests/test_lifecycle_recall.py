"""Recall: blended ranking, load-time dedup, reinforcement, and the context block."""

from __future__ import annotations

import datetime as dt

import pytest

from memman import MemoryManager
from memman.errors import InvalidInputError
from memman.lifecycle.block import approx_tokens
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401
from tests.test_lifecycle_consolidate import loose_import, set_columns


def test_near_duplicates_that_slipped_in_collapse_to_one_hit(db, clock):
    # An import that considered nothing related (novel_jaccard 0.99) stored both paraphrases.
    with MemoryManager(db, clock=clock, novel_jaccard=0.99) as loose:
        first = loose.update_memory("User likes green tea in the morning", user_id="u")
        second = loose.update_memory("User likes green tea every morning", user_id="u")
        other = loose.update_memory("User likes green smoothies", user_id="u")
    assert len({first.memory_id, second.memory_id, other.memory_id}) == 3
    with MemoryManager(db, clock=clock) as mm:
        hits = mm.search("green tea morning", user_id="u", limit=5)
    ids = [h.id for h in hits]
    assert other.memory_id in ids
    tea = [h for h in hits if h.id in (first.memory_id, second.memory_id)]
    assert len(tea) == 1
    assert set(tea[0].collapsed_ids) == {first.memory_id, second.memory_id} - {tea[0].id}


def test_a_full_limit_still_lists_what_folds_into_the_kept_hits(db, clock):
    with MemoryManager(db, clock=clock, novel_jaccard=0.99) as loose:
        first = loose.update_memory("User likes green tea in the morning", user_id="u")
        loose.update_memory("User likes green smoothies", user_id="u")
        clock.advance(days=400)  # the newer paraphrase is kept; the older one comes after
        second = loose.update_memory("User likes green tea every morning", user_id="u")
    with MemoryManager(db, clock=clock) as mm:
        [hit] = mm.search("green tea morning", user_id="u", limit=1)
    assert {hit.id, *hit.collapsed_ids} == {first.memory_id, second.memory_id}


def test_a_negated_near_duplicate_is_not_collapsed(db, clock):
    # update_memory would let the newer statement replace the older; an import need not.
    loose_import(db, clock, ["User eats meat on weekends", "User never eats meat on weekends"])
    with MemoryManager(db, clock=clock) as mm:
        hits = mm.search("meat weekends", user_id="u")
    assert len(hits) == 2
    assert all(h.collapsed_ids == [] for h in hits)


def test_recall_never_returns_deleted_or_replaced_text(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        cat = mm.update_memory("User has a cat", user_id="u")
        updated = mm.update_memory("User has a cat named Tom", user_id="u")
        assert updated.memory_id == cat.memory_id  # offline: strictly extends -> UPDATE
        dog = mm.update_memory("User walks a dog", user_id="u")
        mm.delete(dog.memory_id, user_id="u")
        assert [h.content for h in mm.search("cat", user_id="u")] == ["User has a cat named Tom"]
        assert mm.search("dog walks", user_id="u") == []
        assert len(mm.history(cat.memory_id, user_id="u")) == 2  # history still shows the old text


def test_recency_breaks_a_relevance_tie(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        old = mm.update_memory("User plays chess on Mondays", user_id="u")
        clock.advance(days=90)
        new = mm.update_memory("User plays chess on Fridays", user_id="u")
        hits = mm.search("chess", user_id="u")
    assert [h.id for h in hits] == [new.memory_id, old.memory_id]
    assert hits[0].score > hits[1].score


def test_relevance_outweighs_recency_by_default(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        exact = mm.update_memory("User speaks fluent Portuguese", user_id="u")
        clock.advance(days=60)
        mm.update_memory("User speaks some German at work", user_id="u")
        hits = mm.search("fluent Portuguese", user_id="u")
    assert hits[0].id == exact.memory_id


def test_returned_memories_are_reinforced(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        kept = mm.update_memory("User collects vinyl records", user_id="u")
        clock.advance(hours=5)
        mm.search("vinyl", user_id="u")
        mm.search("records vinyl", user_id="u")
        memory = mm.get(kept.memory_id, user_id="u")
    assert memory.access_count == 2
    assert dt.datetime.fromisoformat(memory.last_accessed_at) == clock.now


def test_search_is_scoped(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.update_memory("User likes sailing", user_id="a")
        assert mm.search("sailing", user_id="b") == []
        assert mm.get(mm.search("sailing", user_id="a")[0].id, user_id="a").access_count == 1


def test_context_renders_dates_within_the_budget(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        for i in range(30):
            mm.update_memory(f"User visited museum number {i} in Lisbon", user_id="u")
        block = mm.context("museum Lisbon", user_id="u", max_tokens=120)
        assert block.approx_tokens <= 120
        assert approx_tokens(block.text) == block.approx_tokens
        assert 0 < len(block.hits) < 20
        assert "(1 January 2026)" in block.text
        for hit in block.hits:
            assert hit.content in block.text
        bigger = mm.context("museum Lisbon", user_id="u", max_tokens=2000)
        assert len(bigger.hits) > len(block.hits)


def test_context_keeps_template_syntax_in_a_fact_verbatim(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.update_memory("User's nickname is {{ boss }} {% raw %}", user_id="u")
        block = mm.context("nickname", user_id="u")
    assert "User's nickname is {{ boss }} {% raw %}" in block.text


def test_context_with_nothing_relevant(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        block = mm.context("anything", user_id="nobody")
    assert block.hits == []
    assert "nothing relevant" in block.text


def test_context_refuses_a_bad_budget(db, clock):
    with MemoryManager(db, clock=clock) as mm, pytest.raises(InvalidInputError):
        mm.context("x", user_id="u", max_tokens=0)


def test_a_near_duplicate_with_a_detail_of_its_own_is_not_folded_away(db, clock):
    # Both stored as a loose import would (the write path would make them one memory); the
    # shorter one more important, so it ranks first and the longer is checked against it.
    shorter, _ = loose_import(
        db,
        clock,
        [
            "User likes to go fishing on the lake",
            "User likes to go fishing on the lake and the ocean",
        ],
    )
    set_columns(db, [shorter], importance=10)
    with MemoryManager(db, clock=clock) as mm:
        hits = mm.search("fishing lake", user_id="u")
    assert sorted(h.content for h in hits) == [
        "User likes to go fishing on the lake",
        "User likes to go fishing on the lake and the ocean",
    ]


def test_a_pool_larger_than_one_statement_binds_is_read_in_chunks(db, clock, monkeypatch):
    # SQLite binds at most 32,766 variables per statement; shrink the chunk instead of
    # storing 33k memories.
    monkeypatch.setattr("memman.storage.sql.PKS_PER_STATEMENT", 3)
    pets = ["cat", "dog", "parrot", "hamster", "tortoise", "goldfish", "rabbit"]
    with MemoryManager(db, clock=clock) as mm:
        mm.update_many(
            [f"User adopted a {pet} in {1990 + i}" for i, pet in enumerate(pets)], user_id="u"
        )
        hits = mm.search("User adopted", user_id="u", limit=7)
    assert sorted(h.content.split()[3] for h in hits) == sorted(pets)
