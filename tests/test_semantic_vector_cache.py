"""The cached cosine matrix follows every change, patched in place, and matches a fresh load."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from memman import MemoryManager
from memman.language.text import content_hash
from memman.semantic.vectors import VectorIndex
from memman.storage.changes import NewVector
from memman.storage.store import Scope
from memman.storage.vector_format import save_vector
from tests.postgres import fresh_database, postgres_url  # noqa: F401

SCOPE = Scope("u")
MODEL = "m"
NOW = "2026-01-01T00:00:00.000+00:00"
RNG = np.random.default_rng(0)


def unit(dim: int = 8) -> np.ndarray:
    vector = RNG.standard_normal(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def insert(mm: MemoryManager, conn, text: str, scope: Scope = SCOPE) -> str:
    """A bare active memory of the scope, in the caller's transaction: the tests' one row write."""
    return mm.store.insert_memory(
        conn,
        scope,
        content=text,
        content_hash=content_hash(text),
        now=NOW,
        source=None,
        metadata={},
    )


def add(mm: MemoryManager, text: str, vector: np.ndarray, scope: Scope = SCOPE) -> str:
    def write(conn):
        memory_id = insert(mm, conn, text, scope)
        # The store's vector write (on PostgreSQL with pgvector it makes the dimension's index).
        mm.store.save_vectors(conn, [NewVector(memory_id, MODEL, vector)])
        return memory_id

    return mm.store.write(write, scope=scope)


def ranking(
    mm: MemoryManager, index: VectorIndex, query: np.ndarray, k: int = 100
) -> list[tuple[int, float]]:
    with mm.store.read() as conn:
        return index.top(conn, SCOPE, MODEL, query, k)


def test_patched_cache_matches_a_fresh_load_after_adds_updates_and_deletes(tmp_path):
    path = str(tmp_path / "m.db")
    query = unit()
    with MemoryManager(path) as mm, MemoryManager(path) as other:
        ids = [add(mm, f"fact {i}", unit()) for i in range(20)]
        assert len(ranking(mm, mm.vectors, query)) == 20  # cache built
        ids += [add(mm, f"fact {i}", unit()) for i in range(20, 25)]
        mm.store.write(lambda conn: save_vector(conn, ids[3], MODEL, unit()))  # re-embedded
        mm.delete(ids[0], user_id=SCOPE.user_id)
        other.delete(ids[7], user_id=SCOPE.user_id)  # another process's writes are seen too
        add(other, "from elsewhere", unit())
        add(other, "other scope", unit(), scope=Scope("v"))
        mm.restore(ids[0], user_id=SCOPE.user_id)
        patched = ranking(mm, mm.vectors, query)
        assert patched == ranking(mm, VectorIndex(), query)
        assert len(patched) == 25


def test_rolled_back_changes_never_stay_in_the_cache(tmp_path):
    query = unit()
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        add(mm, "kept", unit())

        def write_then_fail(conn):
            memory_id = insert(mm, conn, "gone")
            save_vector(conn, memory_id, MODEL, query)
            assert mm.vectors.top(conn, SCOPE, MODEL, query, 5)[0][1] == pytest.approx(1.0)
            raise RuntimeError("abort")

        with pytest.raises(RuntimeError):
            mm.store.write(write_then_fail)
        add(mm, "written after the rollback", unit())
        assert ranking(mm, mm.vectors, query) == ranking(mm, VectorIndex(), query)
        assert len(ranking(mm, mm.vectors, query)) == 2


def test_the_cache_keeps_to_its_budget_and_answers_the_same_after_evictions(tmp_path):
    scopes = [Scope(f"user-{i}") for i in range(4)]
    query = unit()
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        for scope in scopes:
            for i in range(10):
                add(mm, f"{scope.user_id} fact {i}", unit(), scope=scope)
        unbounded = VectorIndex()
        with mm.store.read() as conn:
            one_scope = [unbounded.top(conn, s, MODEL, query, 3) for s in scopes[:1]]
        per_scope = unbounded.cached_bytes  # one 10-row matrix with its spare capacity
        bounded = VectorIndex(max_bytes=2 * per_scope)

        def search(scope: Scope) -> list[tuple[int, float]]:
            with mm.store.read() as conn:
                return bounded.top(conn, scope, MODEL, query, 3)

        first = [search(s) for s in scopes]  # four scopes through a two-scope budget
        assert bounded.cached_bytes == 2 * per_scope
        search(scopes[2])
        search(scopes[0])  # evicted by now: reloaded, and another scope goes
        assert bounded.cached_bytes == 2 * per_scope
        assert [search(s) for s in scopes] == first  # eviction never changes an answer
        assert first[0] == one_scope[0]
        # A single scope over the whole budget stays cached while it is being searched.
        tiny = VectorIndex(max_bytes=1)
        with mm.store.read() as conn:
            assert tiny.top(conn, scopes[1], MODEL, query, 3) == first[1]
        assert tiny.cached_bytes == per_scope


def test_a_load_holds_exactly_the_scopes_active_vectors_after_deletes_and_updates(tmp_path):
    """The matrix is filled in chunks from the cursor: more rows than one chunk, rows of
    another scope, another model (another dim) and a memory without a vector around it."""
    n = 2500  # above the 1024-row load chunk
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        vectors = [unit() for _ in range(n)]

        def write_many(conn):
            ids = []
            for i, vector in enumerate(vectors):
                text = f"fact {i}"
                ids.append(insert(mm, conn, text))
                save_vector(conn, ids[-1], MODEL, vector)
                save_vector(conn, ids[-1], "other-model", unit(16))
            return ids

        ids = mm.store.write(write_many)
        add(mm, "other scope", unit(), scope=Scope("v"))
        mm.store.write(lambda conn: insert(mm, conn, "no vector"))
        query = unit()
        patched = VectorIndex()
        assert len(ranking(mm, patched, query, n)) == n  # built before the changes below
        expected = dict(zip(ids, vectors, strict=True))
        for memory_id in ids[::7]:
            mm.delete(memory_id, user_id=SCOPE.user_id)
            del expected[memory_id]
        for memory_id in [m for m in ids[3::11] if m in expected]:  # active ones re-embedded
            expected[memory_id] = unit()
            mm.store.write(lambda conn, m=memory_id: save_vector(conn, m, MODEL, expected[m]))

        with mm.store.read() as conn:
            pk_of = dict(conn.exec_driver_sql("SELECT id, pk FROM long_term").fetchall())
        pks = np.array([pk_of[memory_id] for memory_id in expected])
        cosines = np.einsum("ij,j->i", np.stack(list(expected.values())), query)
        order = np.lexsort((pks, -cosines))
        want = [(int(pks[i]), float(cosines[i])) for i in order]

        fresh = VectorIndex()
        assert ranking(mm, fresh, query, n) == want
        assert ranking(mm, patched, query, n) == want
        with mm.store.read() as conn:
            scores = fresh.scores(conn, SCOPE, MODEL, query, [int(pk) for pk in pks])
            assert fresh.top(conn, Scope("nobody"), MODEL, query, 5) == []
        assert scores == dict(want)


def test_a_change_committed_after_another_scopes_later_one_is_seen(postgres_url):  # noqa: F811
    """PostgreSQL writes of two scopes run side by side, so their change-log numbers commit
    out of order: SCOPE's write takes its number, Scope("v")'s takes a higher one and commits
    first, and a search of SCOPE runs in between. Once SCOPE's write commits, its vector is
    in the cache (the cache follows its own scope's log, not the log's global end)."""
    query = unit()
    held, release = threading.Event(), threading.Event()

    def held_open(conn) -> None:
        memory_id = insert(other, conn, "late")
        save_vector(conn, memory_id, MODEL, query)
        held.set()
        release.wait()

    def write_late() -> None:
        try:
            other.store.write(held_open, scope=SCOPE)
        finally:
            held.set()  # also when the write failed: the test goes on (and fails) instead

    with fresh_database(postgres_url) as db, MemoryManager(db) as mm, MemoryManager(db) as other:
        add(mm, "kept", unit())
        assert len(ranking(mm, mm.vectors, query)) == 1  # the cache is built
        writer = threading.Thread(target=write_late)
        writer.start()
        try:
            held.wait()
            add(mm, "other scope", unit(), scope=Scope("v"))  # a higher number, committed first
            assert len(ranking(mm, mm.vectors, query)) == 1  # "late" is not committed yet
        finally:
            release.set()
            writer.join()
        patched = ranking(mm, mm.vectors, query)
        assert len(patched) == 2 and patched[0][1] == pytest.approx(1.0)
        assert patched == ranking(mm, VectorIndex(), query)
