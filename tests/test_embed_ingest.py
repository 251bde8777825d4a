"""Batch ingest with an embedder: embedded one chunk ahead, repeats never embedded.

Uses the deterministic fake embedder of test_semantic_retrieval.py, which records its calls.
"""

from __future__ import annotations

import sqlite3

import pytest

from memman import MemoryManager, Op, Tier
from memman.semantic.embed import Lookahead
from tests.test_semantic_retrieval import fake_embedder  # noqa: F401 (fixture)


def vector_count(path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0]


def test_reimported_batch_costs_no_embedding(tmp_path, fake_embedder):  # noqa: F811
    facts = ["Loves shellfish", "Works at a bank", "Has two cats"]
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake") as mm:
        mm.update_many(facts, user_id="u")
        (embedder,) = fake_embedder
        embedder.calls.clear()
        again = mm.update_many([*facts, "Plays the cello"], user_id="u")
        assert [(r.op, r.tier) for r in again] == [(Op.NOOP, Tier.HASH)] * 3 + [
            (Op.ADD, Tier.NOVEL)
        ]
        assert embedder.calls == [["Plays the cello"]]
        # Another scope holds none of these: everything is embedded there.
        embedder.calls.clear()
        mm.update_many(facts, user_id="v")
        assert embedder.calls == [facts]


def test_a_text_repeated_in_one_batch_is_embedded_once(tmp_path, fake_embedder):  # noqa: F811
    facts = ["Loves shellfish", "Has two cats", "Loves shellfish"]
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake") as mm:
        results = mm.update_many(facts, user_id="u")
    assert [r.op for r in results] == [Op.ADD, Op.ADD, Op.NOOP]
    assert fake_embedder[0].calls == [["Loves shellfish", "Has two cats"]]


def test_a_skipped_repeat_whose_memory_changed_in_the_batch_is_embedded(
    tmp_path,
    fake_embedder,  # noqa: F811
):
    path = tmp_path / "m.db"
    with MemoryManager(str(path), embedder="fake") as mm:
        mm.update_memory("Lives in Berlin", user_id="u")
        (embedder,) = fake_embedder
        embedder.calls.clear()
        # The first fact refines the stored one; the second repeated the old text when the
        # batch began (so it was not embedded) but no longer matches anything stored.
        first, second = mm.update_many(
            ["Lives in Berlin since 2019", "Lives in Berlin"], user_id="u"
        )
        assert first.op is Op.UPDATE
        assert second.op is not Op.PENDING
        assert ["Lives in Berlin"] in embedder.calls  # embedded when it turned out to be needed
        active = mm.list(user_id="u")
    assert vector_count(path) == len(active)


def test_chunks_are_embedded_one_batch_ahead_in_order(tmp_path, fake_embedder):  # noqa: F811
    facts = [f"Fact number {i} about topic{i}" for i in range(10)]
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake") as mm:
        results = mm.update_many(facts, user_id="u", chunk_size=4)
    assert [r.op for r in results] == [Op.ADD] * 10
    assert fake_embedder[0].calls == [facts[0:4], facts[4:8], facts[8:10]]


def test_lookahead_serves_any_range_and_keeps_one_batch_ahead():
    seen: list[list[int]] = []

    def work(batch):
        seen.append(list(batch))
        return [item * 10 for item in batch]

    with Lookahead(work, list(range(10)), 4) as ahead:
        assert ahead.take(0, 4) == [0, 10, 20, 30]
        assert ahead.take(3, 7) == [30, 40, 50, 60]  # a chunk that ends mid-batch
        assert ahead.take(7, 10) == [70, 80, 90]
    assert seen == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_blas_runs_on_one_thread_during_a_batch_and_is_restored_after():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads() -> list[int]:
        pools = threadpoolctl.threadpool_info()  # OpenMP pools (torch's) are left alone
        return [pool["num_threads"] for pool in pools if pool["user_api"] == "blas"]

    before = blas_threads()
    seen: list[list[int]] = []

    def work(batch: list[int]) -> list[int]:
        seen.append(blas_threads())  # on the lookahead thread, while the consumer writes
        return list(batch)

    with Lookahead(work, [1, 2], 1) as ahead:
        assert ahead.take(0, 2) == [1, 2]
        assert blas_threads() == [1] * len(before)
    assert seen and all(threads == [1] * len(before) for threads in seen)
    assert blas_threads() == before
