"""Category and importance are first-class: stored in long_term's columns, kept across NOOP and
UPDATE (max importance), carried through pending, ranked by recall, protected by consolidation."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op
from memman.errors import InvalidInputError
from tests.decisions import answer, llm_manager
from tests.fake_openai import Reply
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401
from tests.test_lifecycle_consolidate import TWINS, dump


def test_add_stores_category_and_importance_in_the_columns(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        given = mm.update_memory("User is allergic to peanuts", user_id="u",
                                 category=" Safety ", importance=9)  # fmt: skip
        plain = mm.update_memory("User likes jazz", user_id="u")
        allergy, jazz = mm.get(given.memory_id, user_id="u"), mm.get(plain.memory_id, user_id="u")
    assert (allergy.category, allergy.importance, allergy.metadata) == ("safety", 9.0, {})
    assert (jazz.category, jazz.importance) == (None, 5.0)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("importance", 0),
        ("importance", 11),
        ("importance", 10.5),
        ("importance", float("nan")),
        ("importance", "high"),
        ("importance", True),
        ("category", ""),
        ("category", "   "),
        ("category", 7),
        ("category", "x" * 65),
    ],
)
def test_bad_category_or_importance_is_refused_before_anything_is_written(db, field, value):
    with MemoryManager(db) as mm:
        with pytest.raises(InvalidInputError, match=field):
            mm.update_memory("User likes jazz", user_id="u", **{field: value})
        with pytest.raises(InvalidInputError, match=f"fact #0: {field}"):
            mm.update_many(["User likes jazz", "User likes tea"], user_id="u", **{field: value})
        assert mm.list(user_id="u") == []
        assert mm.events(user_id="u") == []


def test_noop_keeps_the_category_and_the_higher_importance(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        first = mm.update_memory("User is allergic to peanuts", user_id="u", importance=9)
        lower = mm.update_memory("user is allergic to peanuts.", user_id="u",
                                 category="health", importance=3)  # fmt: skip
        assert (lower.op, lower.memory_id) == (Op.NOOP, first.memory_id)
        memory = mm.get(first.memory_id, user_id="u")
        assert (memory.category, memory.importance) == ("health", 9.0)  # filled, not lowered
        mm.update_memory("User is allergic to peanuts", user_id="u",
                         category="safety", importance=10)  # fmt: skip
        memory = mm.get(first.memory_id, user_id="u")
    assert (memory.category, memory.importance) == ("health", 10.0)  # kept, raised


def test_update_keeps_the_category_and_the_higher_importance(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        cat = mm.update_memory("User has a cat", user_id="u", category="pets", importance=4)
        named = mm.update_memory("User has a cat named Tom", user_id="u",
                                 category="relationship", importance=6)  # fmt: skip
        assert (named.op, named.memory_id) == (Op.UPDATE, cat.memory_id)  # offline extension
        memory = mm.get(cat.memory_id, user_id="u")
    assert (memory.content, memory.category, memory.importance) == (
        "User has a cat named Tom",
        "pets",
        6.0,
    )


def test_update_many_applies_them_to_every_fact(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        results = mm.update_many(["User lives in Lisbon", "User works as a nurse"],
                                 user_id="u", category="profile", importance=7)  # fmt: skip
        stored = [mm.get(r.memory_id, user_id="u") for r in results]
    assert [(m.category, m.importance) for m in stored] == [("profile", 7.0)] * 2


def test_a_parked_fact_keeps_its_category_and_importance(tmp_path, fake_openai):
    with llm_manager(str(tmp_path / "m.db"), fake_openai.base_url, llm_max_retries=0) as mm:
        old = mm.update_memory("User supports Arsenal", user_id="u")
        fake_openai.script(Reply(500, {"error": {"message": "boom"}}))
        parked = mm.update_memory("User supports Chelsea now", user_id="u",
                                  category="work", importance=8)  # fmt: skip
        assert parked.op is Op.PENDING
        [pending] = mm.pending(user_id="u")
        assert (pending.category, pending.importance) == ("work", 8.0)
        fake_openai.script(answer("UPDATE", id=1, content="User supports Chelsea"))
        [retried] = mm.retry_pending()
        assert (retried.op, retried.memory_id) == (Op.UPDATE, old.memory_id)
        memory = mm.get(old.memory_id, user_id="u")
    assert (memory.category, memory.importance) == ("work", 8.0)


def test_importance_breaks_a_relevance_tie_in_recall(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        low = mm.update_memory("User plays chess on Mondays", user_id="u", importance=2)
        high = mm.update_memory("User plays chess on Fridays", user_id="u", importance=9)
        hits = mm.search("chess", user_id="u")
    assert [h.id for h in hits] == [high.memory_id, low.memory_id]


def test_a_protected_category_given_on_write_protects_the_memory(db, clock):
    with MemoryManager(db, clock=clock, novel_jaccard=0.99) as mm:
        for fact in TWINS:  # near-identical: would merge, then decay, if not protected
            mm.update_memory(fact, user_id="u", category="Constraint")
        clock.advance(days=400)
        before = dump(db)
        report = mm.consolidate()
    assert report.changes == []
    assert dump(db) == before
