"""Embedding failures never lose a fact: it is parked, and retry_pending() embeds it again.

The embedder is the deterministic bag-of-words fake of test_semantic_retrieval.py, switched
to fail on demand the way a real backend does (raising EmbeddingError).
"""

from __future__ import annotations

import numpy as np
import pytest
import sqlalchemy as sa

from memman import MemoryManager, Op, Tier
from memman.errors import EmbeddingError
from memman.semantic.embed import register_embedder
from memman.storage.vector_format import decoded
from tests.decisions import answer, llm_manager
from tests.postgres import db_on_each_backend, direct, postgres_url  # noqa: F401
from tests.test_semantic_retrieval import FakeEmbedder

DOWN = "embedding request failed: APIConnectionError: Connection error."


class FlakyEmbedder(FakeEmbedder):
    """The fake embedder, failing like an unreachable server while `down`, or for a batch
    holding one of the `poison` texts (so a test can fail one particular call)."""

    down = False
    poison: frozenset[str] = frozenset()

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.down or self.poison & set(texts):
            self.calls.append(list(texts))
            raise EmbeddingError(DOWN)
        return super().embed(texts)


@pytest.fixture
def flaky():
    built: list[FlakyEmbedder] = []

    def factory(settings):
        built.append(FlakyEmbedder("flaky-1"))
        return built[-1]

    register_embedder("flaky", factory)
    return built


def rows(path, sql: str) -> list[tuple]:
    with direct(str(path)) as conn:
        return [tuple(row) for row in conn.execute(sa.text(sql))]


def stored(path) -> list[tuple[str, int]]:
    """Active memories with how many vectors each has: never a memory without its vector."""
    return rows(
        path,
        "SELECT l.content, count(v.memory_pk) FROM long_term l"
        " LEFT JOIN memory_vectors v ON v.memory_pk = l.pk"
        " WHERE l.status = 'active' GROUP BY l.pk ORDER BY l.pk",
    )


def test_failed_embedding_parks_the_fact_and_retry_embeds_it(db, flaky):
    path = db
    with MemoryManager(str(path), embedder="flaky") as mm:
        (embedder,) = flaky
        embedder.down = True
        parked = mm.update_memory("Loves shellfish", user_id="u", source="msg-1")
        assert (parked.op, parked.tier, parked.memory_id) == (Op.PENDING, Tier.PENDING, None)
        assert parked.reason.startswith(
            f"embedding failed, fact parked as pending #{parked.pending_id}"
        )
        (item,) = mm.pending(user_id="u")
        assert (item.content, item.source, item.error) == ("Loves shellfish", "msg-1", DOWN)
        (event,) = mm.events(user_id="u")
        assert (event.op, event.model, event.error) == (Op.PENDING, "flaky-1", DOWN)
        assert stored(path) == []

        embedder.down = False
        (retried,) = mm.retry_pending()
        assert (retried.op, retried.tier) == (Op.ADD, Tier.NOVEL)
        assert mm.pending() == []
    assert stored(path) == [("Loves shellfish", 1)]


def test_failed_retry_keeps_the_fact_pending(db, flaky):
    with MemoryManager(db, embedder="flaky") as mm:
        flaky[0].down = True
        mm.update_memory("Loves shellfish", user_id="u")
        (again,) = mm.retry_pending()
        assert again.op is Op.PENDING
        (item,) = mm.pending()
        assert item.attempts == 2


def test_exact_repeat_is_settled_by_the_hash_tier_while_the_embedder_is_down(db, flaky):
    path = db
    with MemoryManager(str(path), embedder="flaky") as mm:
        first = mm.update_memory("Loves shellfish", user_id="u")
        flaky[0].down = True
        repeat = mm.update_memory("loves  SHELLFISH.", user_id="u", source="msg-2")
        assert (repeat.op, repeat.tier, repeat.memory_id) == (Op.NOOP, Tier.HASH, first.memory_id)
        assert mm.update_memory("Enjoys prawns", user_id="u").op is Op.PENDING
        assert mm.get(first.memory_id, user_id="u").sources == ["msg-2"]
    assert stored(path) == [("Loves shellfish", 1)]


def test_batch_with_the_embedder_down_parks_every_new_fact_in_order(db, flaky):
    path = db
    facts = ["Has two cats", "Works at a bank", "has two cats.", "Plays the cello"]
    with MemoryManager(str(path), embedder="flaky") as mm:
        mm.update_memory("Works at a bank", user_id="u")
        flaky[0].down = True
        results = mm.update_many(facts, user_id="u", chunk_size=3)
        assert [(r.op, r.tier) for r in results] == [
            (Op.PENDING, Tier.PENDING),
            (Op.NOOP, Tier.HASH),  # an exact repeat needs no vector
            (Op.PENDING, Tier.PENDING),
            (Op.PENDING, Tier.PENDING),
        ]
        assert [p.content for p in mm.pending()] == [
            "Has two cats",
            "has two cats.",
            "Plays the cello",
        ]
        assert stored(path) == [("Works at a bank", 1)]

        flaky[0].down = False
        retried = mm.retry_pending()
        assert [(r.op, r.tier) for r in retried] == [
            (Op.ADD, Tier.NOVEL),
            (Op.NOOP, Tier.HASH),
            (Op.ADD, Tier.NOVEL),
        ]
    assert stored(path) == [("Works at a bank", 1), ("Has two cats", 1), ("Plays the cello", 1)]


def test_llm_update_whose_new_text_cannot_be_embedded_is_parked(db, flaky, fake_openai):
    path = db
    old, new = "User supports Arsenal", "User supports Chelsea now"
    current = "User supports Chelsea (switched from Arsenal)"
    with llm_manager(
        str(path), fake_openai.base_url, embedder="flaky", llm_max_retries=0, novel_cosine=0.0
    ) as mm:
        mm.update_memory(old, user_id="u")
        embedder = flaky[0]
        embedder.poison = frozenset([current])
        fake_openai.script(answer("UPDATE", id=1, content=current))
        parked = mm.update_memory(new, user_id="u")
        assert parked.op is Op.PENDING and DOWN in parked.reason
        assert embedder.calls[-1] == [current]  # embedded after deciding, before writing
        assert [m.content for m in mm.list(user_id="u")] == [old]  # untouched

        embedder.poison = frozenset()
        fake_openai.script(answer("UPDATE", id=1, content=current))
        (retried,) = mm.retry_pending()
        assert (retried.op, retried.content) == (Op.UPDATE, current)
    assert stored(path) == [(current, 1)]
    (vector,) = rows(path, "SELECT vector FROM memory_vectors")[0]
    assert np.allclose(decoded(vector), FakeEmbedder("x").embed([current]))


def test_reindex_failure_keeps_the_finished_batches_and_resumes(db, flaky):
    path = db
    facts = ["Loves shellfish", "Works at a bank", "Has two cats", "Plays the cello"]
    with MemoryManager(path) as mm:
        mm.update_many(facts, user_id="u")
    with MemoryManager(path, embedder="flaky") as mm:
        flaky[0].poison = frozenset(["Has two cats"])  # the second batch fails
        with pytest.raises(EmbeddingError, match=r"2 of 4 memories embedded and kept"):
            mm.reindex(batch=2)
        assert [count for _, count in stored(path)] == [1, 1, 0, 0]
        flaky[0].poison = frozenset()
        assert mm.reindex(batch=2) == 2
    assert [count for _, count in stored(path)] == [1, 1, 1, 1]
