"""Vectors on PostgreSQL: bytea (p001) against REAL[] (p002), and the p002 migration's time.

A database at p001 gets N memories in one scope with N random 384-dim bytea vectors (plain
inserts). The old tree (before REAL[]) then times a process's first vector search of the
scope (the whole scope read into the in-process index) and a warm one; this tree migrates
the database to p002 (timed) and times the same on REAL[]. Each side runs in its own child
process (benchmarks/sides.py), three cold searches each (a new manager per search).

    .ci/postgres run sh -c 'PYTHONPATH=$PWD python benchmarks/bench_pg_vectors.py \
        --pg "$MEMMAN_TEST_PG_URL" --old /tmp/old-tree --memories 100000'

--pgvector: on a server with pgvector, a database at p004 (REAL[], no index) gets N memories
with random unit vectors; this tree opens it (p005 builds the HNSW index: timed) and times
searches with pgvector against the in-process index (vector_search numpy) on the same rows:
a new manager's first search (three managers) and the median of warm ones, CPU and wall, and
recall@10 of pgvector against the exact search, for random queries and for queries near a
stored vector (a memory's vector plus noise: the near-duplicates the write path looks for).
With --msc the stored vectors are MiniLM's of the MSC persona facts (at most 30,913: real
embeddings, clustered as random ones are not), and 30 held-out facts are queried too. With
--users U the memories are spread over U users, and 30 users' first and second searches are
timed (many small scopes: the planner scans a scope's rows rather than the index).

    .ci/postgres pgvector run sh -c 'PYTHONPATH=$PWD python benchmarks/bench_pg_vectors.py \
        --pg "$MEMMAN_TEST_PGVECTOR_URL" --pgvector --memories 100000'
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import sqlalchemy as sa

TREE = Path(__file__).resolve().parents[1]  # this checkout: the new side

DIM = 384
MODEL = "bench-384"
FILL = """
    INSERT INTO long_term (id, user_id, content, content_hash, created_at, updated_at)
    SELECT md5('id' || i), 'u', 'fact number ' || i, md5('hash' || i),
           '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00'
    FROM generate_series(1, :n) AS i
"""


def child(url: str, cold_runs: int) -> dict:
    """A process's first search of the scope (cold: the load), then a warm one, in ms."""
    from timing import medians, timed

    from memman import MemoryManager
    from memman.storage.store import Scope

    query = np.random.default_rng(1).standard_normal(DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    cold, warm = [], []
    for _ in range(cold_runs):
        with MemoryManager(url) as mm:

            def search(mm: MemoryManager = mm) -> None:
                with mm.store.read() as conn:
                    assert len(mm.vectors.top(conn, Scope("u"), MODEL, query, 10)) == 10

            cold.append(timed(search))
            warm.append(timed(search))
    return {"cold": medians(cold), "warm": medians(warm)}


def fill(url: str, n: int) -> None:
    """A p001 database holding n memories with bytea vectors."""
    from memman import MemoryManager
    from memman.storage import postgres_schema

    p001 = postgres_schema.MIGRATIONS[:1]
    known = postgres_schema.MIGRATIONS, postgres_schema.KNOWN
    postgres_schema.MIGRATIONS, postgres_schema.KNOWN = p001, [p001[0][0]]
    try:
        MemoryManager(url).close()
    finally:
        postgres_schema.MIGRATIONS, postgres_schema.KNOWN = known
    vectors = np.random.default_rng(0).standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(FILL), {"n": n})
            pks = conn.exec_driver_sql("SELECT pk FROM long_term ORDER BY pk").scalars().all()
            # Without the change log's trigger: in one transaction on a new table its prune
            # DELETE is planned without statistics (a scan of the log per row: quadratic).
            conn.exec_driver_sql("ALTER TABLE memory_vectors DISABLE TRIGGER memory_vectors_log")
            cursor = conn.connection.driver_connection.cursor()
            with cursor.copy(
                "COPY memory_vectors (memory_pk, model, dim, vector) FROM STDIN"
            ) as cp:
                for pk, vector in zip(pks, vectors, strict=True):
                    cp.write_row((pk, MODEL, DIM, vector.tobytes()))
            conn.exec_driver_sql("ALTER TABLE memory_vectors ENABLE TRIGGER memory_vectors_log")
            conn.exec_driver_sql("ANALYZE")
    finally:
        engine.dispose()


def fill_real(url: str, vectors: np.ndarray, users: int = 1) -> None:
    """A database at p004 (REAL[] vectors, no pgvector index) holding a memory per vector, of
    user u (or, of users > 1, of users u0, u1, ... in turn)."""
    from memman import MemoryManager
    from memman.storage import postgres_schema

    p004 = postgres_schema.MIGRATIONS[:4]
    known = postgres_schema.MIGRATIONS, postgres_schema.KNOWN
    postgres_schema.MIGRATIONS, postgres_schema.KNOWN = p004, [name for name, _ in p004]
    try:
        MemoryManager(url).close()
    finally:
        postgres_schema.MIGRATIONS, postgres_schema.KNOWN = known
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(FILL), {"n": len(vectors)})
            if users > 1:
                spread = "UPDATE long_term SET user_id = 'u' || mod(pk, :users)"
                conn.execute(sa.text(spread), {"users": users})
            pks = conn.exec_driver_sql("SELECT pk FROM long_term ORDER BY pk").scalars().all()
            conn.exec_driver_sql("ALTER TABLE memory_vectors DISABLE TRIGGER memory_vectors_log")
            cursor = conn.connection.driver_connection.cursor()
            sql = "COPY memory_vectors (memory_pk, model, dim, vector) FROM STDIN (FORMAT BINARY)"
            with cursor.copy(sql) as cp:
                cp.set_types(["int8", "text", "int8", "float4[]"])
                for pk, vector in zip(pks, vectors, strict=True):
                    cp.write_row((pk, MODEL, DIM, vector.tolist()))
            conn.exec_driver_sql("ALTER TABLE memory_vectors ENABLE TRIGGER memory_vectors_log")
            conn.exec_driver_sql("ANALYZE")
    finally:
        engine.dispose()


def stored_vectors(n: int) -> np.ndarray:
    vectors = np.random.default_rng(0).standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def msc_vectors(n: int) -> tuple[np.ndarray, np.ndarray]:
    """MiniLM vectors of up to n MSC persona facts (stored), and of 30 facts held out (the
    queries: new facts looking for related stored ones, as the write path does)."""
    from bench_semantic import msc_facts

    from memman.config import Settings
    from memman.semantic.embed import make_embedder

    facts = msc_facts()
    held_out = np.random.default_rng(2).choice(len(facts), 30, replace=False)
    queries = [facts[i] for i in held_out]
    stored = [fact for i, fact in enumerate(facts) if i not in set(held_out)][:n]
    embedder = make_embedder(Settings(embedder="local"))
    assert embedder is not None
    return embedder.embed(stored), embedder.embed(queries)


def _searches(url: str, search: str, cold_runs: int, asked: dict[str, np.ndarray]) -> dict:
    """A new manager's first search (cold_runs managers), then every query warm: the medians
    of CPU and wall ms, and the top 10 found per query."""
    from timing import medians, timed

    from memman import MemoryManager
    from memman.storage.store import Scope

    def top(mm: MemoryManager, query: np.ndarray) -> set[int]:
        with mm.store.read() as conn:
            return {pk for pk, _ in mm.vectors.top(conn, Scope("u"), MODEL, query, 10)}

    cold, warm, found = [], [], {}
    for _ in range(cold_runs):
        with MemoryManager(url, vector_search=search) as mm:
            cold.append(timed(lambda mm=mm: top(mm, asked["random"][0])))
    with MemoryManager(url, vector_search=search) as mm:
        for kind, matrix in asked.items():
            found[kind] = []
            for query in matrix:
                warm.append(timed(lambda q=query, into=found[kind]: into.append(top(mm, q))))
    return {"cold": medians(cold), "warm": medians(warm), "found": found}


def pgvector_searches(
    url: str, stored: np.ndarray, facts: np.ndarray | None, cold_runs: int, ef_values: list[int]
) -> dict:
    """numpy's and pgvector's (per hnsw.ef_search floor) times, and pgvector's recall@10
    against the exact search; for the near queries also whether the memory they were made
    from came first (recall@1: the exact search finds it first for every one)."""
    from memman.storage import pgvector

    rng = np.random.default_rng(1)
    random = rng.standard_normal((30, DIM)).astype(np.float32)
    sources = rng.choice(len(stored), 30, replace=False)
    near = stored[sources] + 0.5 * rng.standard_normal((30, DIM)).astype(np.float32) / np.sqrt(DIM)
    asked = {"random": random, "near": near}
    if facts is not None:
        asked["held-out facts"] = facts.copy()
    for matrix in asked.values():
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    exact = _searches(url, "numpy", cold_runs, asked)
    result: dict = {"numpy": {"cold": exact["cold"], "warm": exact["warm"]}}
    for ef in ef_values:
        pgvector.EF_SEARCH_MIN = ef  # the floor the searches of this tree use
        hnsw = _searches(url, "pgvector", cold_runs, asked)
        recall = {
            kind: float(
                np.mean(
                    [
                        len(a & b) / 10
                        for a, b in zip(hnsw["found"][kind], exact["found"][kind], strict=True)
                    ]
                )
            )
            for kind in asked
        }
        source_pks = [int(pk) + 1 for pk in sources]  # FILL numbers the memories from 1
        recall["near@1"] = float(
            np.mean(
                [pk in found for pk, found in zip(source_pks, hnsw["found"]["near"], strict=True)]
            )
        )
        result[f"pgvector ef_search {ef}"] = {
            "cold": hnsw["cold"],
            "warm": hnsw["warm"],
            "recall@10": recall,
        }
    return result


def tenant_searches(url: str, users: int) -> dict:
    """Memories spread over `users` scopes: each search type's first and second search of 30
    scopes, medians (numpy's first one loads the scope: its ~n/users rows)."""
    from timing import medians, timed

    from memman import MemoryManager
    from memman.storage.store import Scope

    query = stored_vectors(1)[0]
    result = {}
    for search in ("pgvector", "numpy"):
        first, second = [], []
        with MemoryManager(url, vector_search=search) as mm:
            for scope in [Scope(f"u{user}") for user in range(1, 31)]:

                def top(mm: MemoryManager = mm, scope: Scope = scope) -> None:
                    with mm.store.read() as conn:
                        assert len(mm.vectors.top(conn, scope, MODEL, query, 10)) == 10

                first.append(timed(top))
                second.append(timed(top))
        result[search] = {"first": medians(first), "second": medians(second)}
    return result


def pgvector_main(
    pg: str, n: int, cold_runs: int, ef_values: list[int], msc: bool, users: int
) -> None:
    """--pgvector: see the module docstring."""
    sys.path.insert(0, str(TREE))
    from memman import MemoryManager
    from tests.postgres import fresh_database

    stored, facts = msc_vectors(n) if msc else (stored_vectors(n), None)
    with fresh_database(pg) as url:
        fill_real(url, stored, users)
        started = time.perf_counter()
        MemoryManager(url).close()  # p005: CREATE INDEX ... USING hnsw
        p005_s = time.perf_counter() - started
        if users > 1:
            scoped = {"users": users, **tenant_searches(url, users)}
            print(json.dumps({"memories": len(stored), "p005_s": p005_s, **scoped}), flush=True)
            return
        searches = pgvector_searches(url, stored, facts, cold_runs, ef_values)
        result = {"memories": len(stored), "msc": msc, "p005_s": p005_s, **searches}
        print(json.dumps(result), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", required=True, help="a PostgreSQL URL (a database is created)")
    parser.add_argument("--old", help="a tree of the code before REAL[]")
    parser.add_argument("--pgvector", action="store_true", help="pgvector HNSW against numpy")
    parser.add_argument("--ef-search", type=int, nargs="+", default=[100], help="floors to try")
    parser.add_argument("--msc", action="store_true", help="MiniLM vectors of MSC facts")
    parser.add_argument("--users", type=int, default=1, help="spread the memories over users")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.cold_runs)))
        return
    if args.pgvector:
        pgvector_main(args.pg, args.memories, args.cold_runs, args.ef_search, args.msc, args.users)
        return
    if not args.old:
        parser.error("--old is required (unless --pgvector)")
    from sides import run_child

    sys.path.insert(0, str(TREE))  # tests.postgres: a throwaway database
    from tests.postgres import fresh_database

    with fresh_database(args.pg) as url:
        fill(url, args.memories)
        child_args = ["--pg", args.pg, "--old", args.old, "--cold-runs", str(args.cold_runs)]
        before = run_child(args.old, __file__, [*child_args, "--child", url])
        from memman import MemoryManager

        started = time.perf_counter()
        MemoryManager(url).close()  # p002
        migrate_s = time.perf_counter() - started
        after = run_child(str(TREE), __file__, [*child_args, "--child", url])
        # Printed before the database is dropped: a failed drop loses no figures.
        result = {"memories": args.memories, "bytea": before, "real[]": after, "p002_s": migrate_s}
        print(json.dumps(result), flush=True)
        sys.stderr.write(
            f"{args.memories} memories, 384 dims: p002 migration {migrate_s:.1f} s\n"
            f"first search (load), median wall ms: bytea {before['cold']['wall']:.0f},"
            f" REAL[] {after['cold']['wall']:.0f}; warm: bytea {before['warm']['wall']:.1f},"
            f" REAL[] {after['warm']['wall']:.1f}\n"
        )


if __name__ == "__main__":
    main()
