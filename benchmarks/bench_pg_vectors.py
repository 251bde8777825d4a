"""Vectors on PostgreSQL: bytea (p001) against REAL[] (p002), and the p002 migration's time.

A database at p001 gets N memories in one scope with N random 384-dim bytea vectors (plain
inserts). The old tree (before REAL[]) then times a process's first vector search of the
scope (the whole scope read into the in-process index) and a warm one; this tree migrates
the database to p002 (timed) and times the same on REAL[]. Each side runs in its own child
process (benchmarks/sides.py), three cold searches each (a new manager per search).

    .ci/postgres run sh -c 'PYTHONPATH=$PWD python benchmarks/bench_pg_vectors.py \
        --pg "$MEMMAN_TEST_PG_URL" --old /tmp/old-tree --memories 100000'
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", required=True, help="a PostgreSQL URL (a database is created)")
    parser.add_argument("--old", required=True, help="a tree of the code before REAL[]")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.cold_runs)))
        return
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
