"""numpy and sqlite-vec give the same vector search results on the same file.

The sqlite-vec tests skip where the `vec` extra is not installed (`.ci/run` installs it).
Vectors are stored the same way whichever backend wrote them, so files move freely between
the two.
"""

from __future__ import annotations

import re
import sqlite3
import sys

import numpy as np
import pytest

from memman import MemoryManager
from memman.errors import ConfigError
from memman.models import Op, Status, Tier
from memman.semantic.embed import register_embedder
from memman.storage.store import Scope
from memman.storage.vector_format import save_vector
from tests.test_semantic_retrieval import FakeEmbedder
from tests.test_semantic_vector_cache import MODEL, NOW, add

DIM = 16
ALICE, ALICE_BOT, BOB = Scope("alice"), Scope("alice", "bot"), Scope("bob")
RNG = np.random.default_rng(7)


def unit(dim: int = DIM) -> np.ndarray:
    vector = RNG.standard_normal(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


@pytest.fixture
def sqlite_vec():
    """Skip unless the vec extra is installed; then the backend must load."""
    pytest.importorskip("sqlite_vec", reason="the vec extra (sqlite-vec) is not installed")
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        pytest.importorskip("pysqlite3", reason="this sqlite3 cannot load extensions")


@pytest.fixture
def fake_embedder():
    register_embedder("fake", lambda settings: FakeEmbedder("fake-1"))


def top(mm: MemoryManager, scope: Scope, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    with mm.store.read() as conn:
        return mm.vectors.top(conn, scope, MODEL, query, k)


def scores(mm: MemoryManager, scope: Scope, query: np.ndarray, pks: list[int]) -> dict:
    with mm.store.read() as conn:
        return mm.vectors.scores(conn, scope, MODEL, query, pks)


def assert_same(numpy_mm: MemoryManager, vec_mm: MemoryManager, queries, pks: list[int]) -> None:
    """Same ids in the same order and cosines within 1e-5, for every scope, query and k."""
    for scope in (ALICE, ALICE_BOT, BOB):
        for query in queries:
            for k in (1, 3, 10, 1000):
                expected, got = top(numpy_mm, scope, query, k), top(vec_mm, scope, query, k)
                assert len(expected) == min(k, len(active_pks(numpy_mm, scope)))
                assert [pk for pk, _ in got] == [pk for pk, _ in expected]
                assert np.allclose([c for _, c in got], [c for _, c in expected], atol=1e-5)
            expected, got = scores(numpy_mm, scope, query, pks), scores(vec_mm, scope, query, pks)
            assert got.keys() == expected.keys()
            assert np.allclose([got[pk] for pk in got], [expected[pk] for pk in got], atol=1e-5)


def pks_of(mm: MemoryManager, ids: list[str]) -> list[int]:
    lt = mm.store.long_term
    with mm.store.read() as conn:
        pk = dict(conn.execute(lt.select().with_only_columns(lt.c.id, lt.c.pk)).all())
    return [pk[memory_id] for memory_id in ids]


def active_pks(mm: MemoryManager, scope: Scope) -> set[int]:
    with mm.store.read() as conn:
        return set(pks_of(mm, [m.id for m in mm.store.list(conn, scope)]))


def test_same_results_through_writes_deletes_status_changes_and_scopes(tmp_path, sqlite_vec):
    path = str(tmp_path / "m.db")
    tie = unit()
    with MemoryManager(path) as numpy_mm, MemoryManager(path, vector_search="sqlite-vec") as vec_mm:
        stored = {i: unit() for i in range(40)}
        ids = [add(numpy_mm, f"alice fact {i}", v, scope=ALICE) for i, v in stored.items()]
        ids += [add(vec_mm, f"bot fact {i}", unit(), scope=ALICE_BOT) for i in range(15)]
        ids += [add(vec_mm, f"bob fact {i}", unit(), scope=BOB) for i in range(15)]
        tied = [add(numpy_mm, f"same vector {i}", tie, scope=ALICE) for i in range(5)]
        add(vec_mm, "same vector for bob", tie, scope=BOB)
        add(numpy_mm, "zero vector", np.zeros(DIM, dtype=np.float32), scope=ALICE)
        queries = [tie, np.zeros(DIM, dtype=np.float32), stored[3], *(unit() for _ in range(8))]
        all_pks = list(range(1, 200))
        assert_same(numpy_mm, vec_mm, queries, all_pks)

        # Equal cosines come out lowest pk first, also where k cuts the tie.
        for mm in (numpy_mm, vec_mm):
            ranked = top(mm, ALICE, tie, 3)
            assert [c for _, c in ranked] == pytest.approx([1.0] * 3, abs=1e-5)
            assert [pk for pk, _ in ranked] == sorted(pks_of(mm, tied))[:3]

        # Writes by either backend, deletes, restores, status changes, re-embeddings, and
        # another model's vectors (never mixed in).
        alice = {"user_id": ALICE.user_id}
        bot = {"user_id": ALICE_BOT.user_id, "agent_id": ALICE_BOT.agent_id}
        numpy_mm.delete(ids[0], **alice)
        vec_mm.delete(ids[1], **alice)
        numpy_mm.restore(ids[1], **alice)
        vec_mm.delete(tied[0], **alice)
        vec_mm.store.write(lambda conn: vec_mm.store.set_status(conn, ids[2], Status.ARCHIVED, NOW))
        numpy_mm.store.write(lambda conn: save_vector(conn, ids[3], MODEL, unit()))
        vec_mm.store.write(lambda conn: save_vector(conn, ids[4], MODEL, tie))
        numpy_mm.store.write(lambda conn: save_vector(conn, ids[5], "other-model", tie))
        vec_mm.delete(ids[45], **bot)  # a bot memory
        assert_same(numpy_mm, vec_mm, queries, all_pks)

        # No leak between scopes: only the scope's active memories, in both backends.
        for mm in (numpy_mm, vec_mm):
            for scope in (ALICE, ALICE_BOT, BOB):
                found = {pk for pk, _ in top(mm, scope, tie, 1000)}
                assert found == active_pks(mm, scope)
            assert scores(mm, BOB, tie, sorted(active_pks(mm, ALICE))) == {}


def test_numpy_ties_equal_vectors_exactly_and_orders_them_by_pk(tmp_path):
    # 14 rows of 384 dimensions: BLAS gemv scores the last rows with another kernel, 1 ulp
    # away from the equal rows before them.
    same = unit(384)
    query = same + unit(384)
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        for i in range(7):
            add(mm, f"other {i}", unit(384), scope=ALICE)
            add(mm, f"same {i}", same, scope=ALICE)
        ranked = top(mm, ALICE, query / np.linalg.norm(query), 7)
        expected = pks_of(mm, [mm.list(user_id="alice")[i].id for i in range(1, 14, 2)])
    assert [pk for pk, _ in ranked] == expected
    assert len({cosine for _, cosine in ranked}) == 1


FACTS = [
    "Loves shellfish",
    "Enjoys prawns",
    "Works at a bank in Berlin",
    "Lives in Berlin",
    "Lives in Berlin since 2019",
    "Has two cats",
    "Has two cats named Miso and Tofu",
    "Never eats shellfish",
    "Likes green tea",
    "Enjoys green tea",
    "Drives a red car",
]


def decisions(mm: MemoryManager) -> list[tuple]:
    """Each result, with memory ids replaced by the order in which they first appeared."""
    results = [mm.update_memory(fact, user_id="u") for fact in FACTS]
    results += mm.update_many(FACTS[::-1], user_id="v")  # several facts in one transaction
    ordinal: dict[str, int] = {}
    for r in results:
        ordinal.setdefault(r.memory_id[:8], len(ordinal))

    def same_ids(text: str) -> str:
        return re.sub(r"\b[0-9a-f]{8}\b", lambda m: f"#{ordinal[m.group()]}", text)

    return [
        (r.op, r.tier, same_ids(r.reason), r.content, ordinal[r.memory_id[:8]]) for r in results
    ]


def test_the_write_path_decides_the_same_with_either_backend(tmp_path, sqlite_vec, fake_embedder):
    with MemoryManager(str(tmp_path / "numpy.db"), embedder="fake") as mm:
        expected = decisions(mm)
    with MemoryManager(str(tmp_path / "vec.db"), embedder="fake", vector_search="sqlite-vec") as mm:
        assert decisions(mm) == expected
    assert (Op.NOOP, Tier.SEMANTIC) in {(op, tier) for op, tier, *_ in expected}


def test_an_in_memory_store_searches_with_sqlite_vec(sqlite_vec, fake_embedder):
    with MemoryManager(":memory:", embedder="fake", vector_search="sqlite-vec") as mm:
        mm.update_memory("Loves shellfish", user_id="u")
        assert mm.update_memory("Enjoys prawns", user_id="u").tier is Tier.SEMANTIC


def test_a_file_written_with_sqlite_vec_searches_with_numpy_only(
    tmp_path, sqlite_vec, fake_embedder
):
    path = str(tmp_path / "m.db")
    with MemoryManager(path, embedder="fake", vector_search="sqlite-vec") as mm:
        mm.update_many(FACTS, user_id="u")
        query = mm.embedder.embed(["Enjoys shrimp"])[0]
        with mm.store.read() as conn:
            expected = mm.vectors.top(conn, Scope("u"), "fake-1", query, 5)
        assert mm.backup(tmp_path / "copy.db").exists()  # the backup API across drivers
    for copy in (path, str(tmp_path / "copy.db")):
        with MemoryManager(copy, embedder="fake", vector_search="numpy") as mm:  # stdlib sqlite3
            assert mm.store.dbapi is sqlite3
            assert mm.check().ok
            with mm.store.read() as conn:
                got = mm.vectors.top(conn, Scope("u"), "fake-1", query, 5)
            assert [pk for pk, _ in got] == [pk for pk, _ in expected]
            assert np.allclose([c for _, c in got], [c for _, c in expected], atol=1e-5)
            assert mm.update_memory("Loves shrimp", user_id="u").op is Op.NOOP
            assert mm.search("Berlin", user_id="u")


def test_the_environment_chooses_the_backend(tmp_path, monkeypatch, sqlite_vec):
    monkeypatch.setenv("MEMMAN_VECTOR_SEARCH", "sqlite-vec")
    with MemoryManager(str(tmp_path / "m.db")) as mm, mm.store.read() as conn:
        assert conn.exec_driver_sql("SELECT vec_version()").scalar().startswith("v")


def test_unknown_backend_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="unknown vector_search 'faiss'"):
        MemoryManager(str(tmp_path / "m.db"), vector_search="faiss")


def test_sqlite_vec_without_the_extra_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)  # import sqlite_vec now fails
    with pytest.raises(ConfigError, match=r"memman\[vec\]"):
        MemoryManager(str(tmp_path / "m.db"), vector_search="sqlite-vec")
    assert not (tmp_path / "m.db").exists()
