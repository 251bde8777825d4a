"""Vectors on PostgreSQL (REAL[], p002): the same search results as SQLite's float32 blobs,
and a p001 database's bytea vectors converted in place, exactly, all or nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sqlalchemy as sa

from memman import MemoryManager
from memman.language.text import content_hash
from memman.models import Status
from memman.semantic.vectors import VectorIndex
from memman.storage import postgres_schema
from memman.storage.store import Scope
from memman.storage.vector_format import save_vector
from tests.postgres import direct, fresh_database, postgres_url  # noqa: F401  (fixtures)
from tests.test_cli import memman  # noqa: F401  (the CLI runner fixture)
from tests.test_semantic_vector_backends import decisions
from tests.test_semantic_vector_cache import MODEL, NOW, add

DIM = 24
ALICE, ALICE_BOT, BOB = Scope("alice"), Scope("alice", "bot"), Scope("bob")
P001 = postgres_schema.MIGRATIONS[:1]


@pytest.fixture
def pg(postgres_url):  # noqa: F811
    with fresh_database(postgres_url) as url:
        yield url


def units(n: int, seed: int) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def by_content(mm: MemoryManager) -> dict[int, str]:
    lt = mm.store.long_term
    with mm.store.read() as conn:
        return dict(conn.execute(sa.select(lt.c.pk, lt.c.content)).all())


def searched(mm: MemoryManager, index: VectorIndex, queries: np.ndarray) -> list:
    """Every scope's top k (several k) and scores of every memory, per query, with each pk
    replaced by its memory's text: the two backends' results compared as they are, cosines
    to the bit (the same float32 rows give the same dot products)."""
    text = by_content(mm)
    found = []
    with mm.store.read() as conn:
        for scope in (ALICE, ALICE_BOT, BOB):
            for query in queries:
                for k in (1, 3, 10, 1000):
                    ranked = index.top(conn, scope, MODEL, query, k)
                    found.append([(text[pk], cosine) for pk, cosine in ranked])
                scores = index.scores(conn, scope, MODEL, query, sorted(text))
                found.append(sorted((text[pk], cosine) for pk, cosine in scores.items()))
    return found


def fill(mm: MemoryManager) -> list[str]:
    """Memories of three scopes, equal vectors (pk order decides) and a zero vector."""
    vectors = units(60, seed=1)
    ids = [add(mm, f"alice fact {i}", vectors[i], scope=ALICE) for i in range(30)]
    ids += [add(mm, f"bot fact {i}", vectors[30 + i], scope=ALICE_BOT) for i in range(15)]
    ids += [add(mm, f"bob fact {i}", vectors[45 + i], scope=BOB) for i in range(15)]
    ids += [add(mm, f"same vector {i}", vectors[0], scope=ALICE) for i in range(4)]
    ids.append(add(mm, "zero vector", np.zeros(DIM, dtype=np.float32), scope=ALICE))
    return ids


def change(mm: MemoryManager, ids: list[str]) -> None:
    """Deletes, a restore, a status change, re-embeddings, another model's vector."""
    alice = {"user_id": ALICE.user_id}
    replaced = units(2, seed=2)
    mm.delete(ids[0], **alice)
    mm.delete(ids[1], **alice)
    mm.restore(ids[1], **alice)
    mm.store.write(lambda conn: mm.store.set_status(conn, ids[2], Status.ARCHIVED, NOW))
    mm.store.write(lambda conn: save_vector(conn, ids[3], MODEL, replaced[0]))
    mm.store.write(lambda conn: save_vector(conn, ids[4], "other-model", replaced[1]))
    mm.delete(ids[31], user_id=ALICE_BOT.user_id, agent_id=ALICE_BOT.agent_id)
    add(mm, "bob fact late", replaced[1], scope=BOB)


def test_vector_search_gives_the_same_results_on_both_backends(tmp_path, pg):
    """The in-process index on REAL[] rows (first a whole load, then patches from the change
    log) answers as on SQLite's blobs, and as a fresh load of the changed database."""
    queries = np.vstack([units(6, seed=3), units(1, seed=1), np.zeros((1, DIM), np.float32)])
    results = {}
    for name, db in (("sqlite", str(tmp_path / "m.db")), ("postgres", pg)):
        with MemoryManager(db) as mm:
            ids = fill(mm)
            before = searched(mm, mm.vectors, queries)  # loads each scope
            change(mm, ids)
            patched = searched(mm, mm.vectors, queries)
            assert searched(mm, VectorIndex(), queries) == patched  # a fresh load agrees
            results[name] = (before, patched)
    assert results["postgres"] == results["sqlite"]
    assert results["sqlite"][0] != results["sqlite"][1]  # the changes changed the answers


def test_the_write_path_decides_the_same_on_both_backends(tmp_path, pg):
    """The suite's semantic cases (test_semantic_vector_backends.FACTS, fake embedder)."""
    from memman.semantic.embed import register_embedder
    from tests.test_semantic_retrieval import FakeEmbedder

    register_embedder("fake", lambda settings: FakeEmbedder("fake-1"))
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake") as mm:
        expected = decisions(mm)
    with MemoryManager(pg, embedder="fake") as mm:
        assert decisions(mm) == expected


def p001_database(url: str, monkeypatch) -> np.ndarray:
    """A database at p001 holding memories with bytea vectors as p001's memman wrote them
    (float32 bytes); returns the vectors, in the order of the memories' pks. The rows are
    inserted directly: today's write path needs columns later migrations add (p006)."""
    with monkeypatch.context() as patched:
        patched.setattr(postgres_schema, "MIGRATIONS", P001)
        patched.setattr(postgres_schema, "KNOWN", [name for name, _ in P001])
        MemoryManager(url).close()
    with direct(url) as conn:
        for i in range(12):
            text = f"fact number {i}"
            conn.execute(
                sa.text(
                    "INSERT INTO long_term (id, user_id, content, content_hash, created_at,"
                    " updated_at) VALUES (:id, :user, :text, :hash, :now, :now)"
                ),
                {
                    "id": f"{i:032x}",
                    "user": "u" if i % 3 else "v",
                    "text": text,
                    "hash": content_hash(text),
                    "now": NOW,
                },
            )
    vectors = units(12, seed=4)
    # Of user v's (every third): a subnormal, a signed zero, a large float, infinities, NaN.
    vectors[0, :4] = [0.0, -0.0, 1e-40, -3.4e38]
    vectors[3, :3] = [np.inf, -np.inf, np.nan]
    with direct(url) as conn:
        pks = conn.exec_driver_sql("SELECT pk FROM long_term ORDER BY pk").scalars().all()
        for pk, vector in zip(pks, vectors, strict=True):
            conn.execute(
                sa.text("INSERT INTO memory_vectors VALUES (:pk, :model, :dim, :blob)"),
                {"pk": pk, "model": MODEL, "dim": DIM, "blob": vector.tobytes()},
            )
    return vectors


def stored_vectors(url: str) -> tuple[str, list[str], np.ndarray]:
    """The vector column's type, the migrations recorded, and the vectors as float32."""
    with direct(url) as conn:
        kind = conn.exec_driver_sql(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = 'memory_vectors'::regclass AND attname = 'vector'"
        ).scalar_one()
        done = postgres_schema.applied(conn)
        rows = conn.exec_driver_sql("SELECT vector FROM memory_vectors ORDER BY memory_pk").all()
    if kind == "bytea":
        return kind, done, np.vstack([np.frombuffer(v, dtype=np.float32) for (v,) in rows])
    return kind, done, np.array([v for (v,) in rows], dtype=np.float32)


def test_p002_turns_p001s_bytea_vectors_into_the_same_floats(pg, monkeypatch):
    vectors = p001_database(pg, monkeypatch)
    with MemoryManager(pg) as mm:
        assert mm.check().orphan_vectors == 0
        query = units(1, seed=5)[0]
        with mm.store.read() as conn:
            ranked = mm.vectors.top(conn, Scope("u"), MODEL, query, 3)
    kind, done, got = stored_vectors(pg)
    assert (kind, done) == ("real[]", postgres_schema.KNOWN)
    assert got.tobytes() == vectors.tobytes()  # bit for bit, NaN and -0.0 included
    expected = sorted((i for i in range(12) if i % 3), key=lambda i: -float(vectors[i] @ query))
    assert [pk - 1 for pk, _ in ranked] == expected[:3]


def test_a_crash_during_p002_leaves_the_p001_vectors(pg, monkeypatch):
    """The process dies after the table was rewritten, before the commit: the server rolls
    the transaction back, and the next open migrates."""
    vectors = p001_database(pg, monkeypatch)
    code = textwrap.dedent(
        """
        import os, sys
        from memman import MemoryManager
        from memman.storage import postgres_schema

        def convert_then_die(conn, convert=postgres_schema.MIGRATIONS[1][1]):
            convert(conn)
            os._exit(9)  # no commit, no clean close

        postgres_schema.MIGRATIONS[1] = (postgres_schema.MIGRATIONS[1][0], convert_then_die)
        MemoryManager(sys.argv[1])
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    died = subprocess.run([sys.executable, "-c", code, pg], env=env, capture_output=True)
    assert died.returncode == 9, died.stderr.decode()
    kind, done, got = stored_vectors(pg)
    assert (kind, done) == ("bytea", ["p001_schema"])
    assert got.tobytes() == vectors.tobytes()
    MemoryManager(pg).close()
    kind, done, got = stored_vectors(pg)
    assert (kind, done, got.tobytes()) == ("real[]", postgres_schema.KNOWN, vectors.tobytes())


def test_stats_say_which_vector_path_is_used(tmp_path, pg, memman):  # noqa: F811
    """This server has no pgvector: stats say so, and that the in-process index searches the
    REAL[] vectors (tests/test_pgvector.py: a server with it)."""
    with MemoryManager(pg) as mm:
        assert mm.stats()["vectors"] == {
            "embedding_model": None,
            "search": "numpy",
            "stored_as": "REAL[]",
            "pgvector": "not available",
        }
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert mm.stats()["vectors"] == {
            "embedding_model": None,
            "search": "numpy",
            "stored_as": "float32 BLOB",
        }
    run = memman("stats", "--db", pg)
    assert run.code == 0
    assert "numpy, vectors stored as REAL[]" in run.out
    assert re.search(r"pgvector on the server\s*│\s*not available", run.out)


def test_a_catalog_offering_pgvector_that_cannot_be_created_is_not_used(pg, monkeypatch):
    """This server has no pgvector; the catalog's answer says it has: p005's CREATE
    EXTENSION fails, which leaves the extension out, not the migration."""
    from memman.storage import pgvector

    monkeypatch.setattr(pgvector, "OFFERED_SQL", "SELECT false, true")
    with MemoryManager(pg) as mm:
        vectors = mm.stats()["vectors"]
    assert (vectors["search"], vectors["pgvector"]) == ("numpy", "available, not installed")
    with direct(pg) as conn:
        assert postgres_schema.applied(conn) == postgres_schema.KNOWN


def test_vector_writes_seek_the_change_log_and_keep_its_last_100k_rows(pg):
    """p001's prune scanned the log on every vector write of a transaction on a new database
    (planned before the table had statistics): N writes read N^2/2 rows."""
    MemoryManager(pg).close()
    with direct(pg) as conn:
        conn.exec_driver_sql(
            "INSERT INTO long_term (id, user_id, content, content_hash, created_at, updated_at)"
            " SELECT md5(i::text), 'u', 'fact ' || i, md5(i::text), 'x', 'x'"
            " FROM generate_series(1, 500) AS i"
        )
        conn.exec_driver_sql("INSERT INTO memory_vectors SELECT pk, 'm', 2, '{1,2}' FROM long_term")
        scans = conn.exec_driver_sql(
            "SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname = 'vector_log'"
        ).scalar_one()
        assert scans == 0
        # A log past its length is cut to the last 100k rows by the next write.
        conn.exec_driver_sql(
            "INSERT INTO vector_log (user_id, agent_id, memory_pk, token)"
            " SELECT 'u', '', 1, '\\x00' FROM generate_series(1, 100000)"
        )
        conn.exec_driver_sql("UPDATE memory_vectors SET vector = '{3,4}' WHERE memory_pk = 1")
        count, first, last = conn.exec_driver_sql(
            "SELECT count(*), min(seq), max(seq) FROM vector_log"
        ).one()
    assert (count, last - first + 1) == (100_000, 100_000)
    assert last == 500 + 100_000 + 1


def test_pgvector_is_refused_where_the_server_lacks_it(pg):
    from memman.errors import ConfigError

    with pytest.raises(ConfigError, match="vector_search 'pgvector' needs"):
        MemoryManager(pg, vector_search="pgvector")
    with MemoryManager(pg) as mm:
        assert mm.vector_search == "numpy"
