"""Time pgvector's HNSW build (p005's ensure_index) over N random 384-dim vectors at given
session settings: maintenance_work_mem and max_parallel_maintenance_workers.

    .ci/postgres pgvector run sh -c 'PYTHONPATH=$PWD:$PWD/benchmarks python \
        benchmarks/bench_hnsw_build.py --pg "$MEMMAN_TEST_PGVECTOR_URL" 64MB:2 64MB:0'

Each MEM:WORKERS pair is SET (not LOCAL: as a server's configuration would be seen) in a
transaction where ensure_index then builds the index; it is rolled back, so every build starts
from the same table (filled once by bench_pg_vectors.fill_real: a database at p004). This
tree's ensure_index raises maintenance_work_mem to pgvector.BUILD_MEMORY when the session's is
lower; an older tree's builds with the session's value.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import sqlalchemy as sa
from bench_pg_vectors import TREE, fill_real, stored_vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", required=True, help="a PostgreSQL URL (a database is created)")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("settings", nargs="+", help="MEM:WORKERS, e.g. 64MB:2")
    args = parser.parse_args()
    sys.path.insert(0, str(TREE))
    from memman.storage import pgvector
    from tests.postgres import fresh_database

    with fresh_database(args.pg) as url:
        fill_real(url, stored_vectors(args.memories))
        engine = sa.create_engine(url)
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS vector")
                conn.commit()
                for setting in args.settings:
                    memory, workers = setting.split(":")
                    conn.exec_driver_sql(f"SET maintenance_work_mem = '{memory}'")
                    conn.exec_driver_sql(f"SET max_parallel_maintenance_workers = {int(workers)}")
                    started = time.perf_counter()
                    pgvector.ensure_index(conn, 384)
                    build_s = time.perf_counter() - started
                    conn.rollback()
                    result = {"memories": args.memories, "session": setting, "build_s": build_s}
                    print(json.dumps(result), flush=True)
        finally:
            engine.dispose()


if __name__ == "__main__":
    main()
