"""PostgreSQL beside SQLite: per-operation latency at one big scope, and 8 writer processes.

    .ci/postgres run env PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data \\
        python benchmarks/bench_postgres.py [--layouts 1x100000,1000x100] [--ops 200] \\
        [--writers 8] [--writes 500] [--scopes 2]

(or pass --pg URL for a server of your own; the benchmark creates and drops its own
database there). For each layout (users x memories per user) and backend a store holds MSC
persona facts (filled by plain inserts, as bench_scale does, so the index and triggers do the
work of a real write); then, for user-0, medians of an exact duplicate (hash NOOP), a novel fact
(offline decider: ADD) and search(), CPU (`time.process_time`, this client process only:
the PostgreSQL server's own CPU is not in it) and wall. Then `writers` processes each write
`writes` facts into the same `scopes` scopes (2: alice and bob), all at once: writes per
second (wall), and the audit of tests/reliability.py (acknowledged = present, none
duplicated). `--layouts none` measures the writers only.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench_scale import _fill, _measure, _texts

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.*: the workers, audit

from tests.postgres import URL_VARIABLE, fresh_database
from tests.reliability import USERS, audit, write_worker


def _users(scopes: int) -> tuple[str, ...]:
    return USERS if scopes == len(USERS) else tuple(f"user-{i}" for i in range(scopes))


def _throughput(db: str, writers: int, writes: int, scopes: int) -> dict:
    """writers processes x writes overlapping facts into `scopes` scopes on db at once."""
    from memman import MemoryManager

    MemoryManager(db).close()  # the schema exists before the writers race
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(writers) as pool:
        per_worker = pool.starmap(
            write_worker, [(db, seed, writes, _users(scopes)) for seed in range(writers)]
        )
    wall = time.perf_counter() - started
    acks = [ack for worker in per_worker for ack in worker]
    result = audit(db, acks)
    return {
        "writes": len(acks),
        "wall_s": wall,
        "per_s": len(acks) / wall,
        "present": result.present,
        "duplicated": result.duplicated,
    }


@contextmanager
def _stores(pg: str):
    """(name, db) of a fresh SQLite file and a fresh PostgreSQL database, removed after."""
    with tempfile.TemporaryDirectory() as tmp, fresh_database(pg) as url:
        yield [("sqlite", str(Path(tmp) / "bench.db")), ("postgres", url)]


def run(pg: str, layouts: list[str], ops: int, writers: int, writes: int, scopes: int) -> dict:
    found: dict = {"ops": ops, "writers": writers, "writes": writes, "scopes": scopes}
    found["layouts"] = {}
    for layout in layouts:
        users, per_user = (int(x) for x in layout.split("x"))
        texts = _texts(users, per_user, ops)
        found["layouts"][layout] = {}
        with _stores(pg) as stores:
            for name, db in stores:
                _fill(db, texts["rows"])
                found["layouts"][layout][name] = measured = _measure(db, texts)
                print(json.dumps({layout: {name: measured}}), file=sys.stderr, flush=True)
    found["throughput"] = {}
    with _stores(pg) as stores:
        for name, db in stores:
            found["throughput"][name] = _throughput(db, writers, writes, scopes)
            print(json.dumps({name: found["throughput"][name]}), file=sys.stderr, flush=True)
    return found


def table(r: dict) -> str:
    lines = [
        f"medians over {r['ops']} operations of user-0",
        "",
        "| layout (users x memories) | op | SQLite: CPU / wall ms | PostgreSQL: CPU / wall ms |",
        "|---|---|---:|---:|",
    ]
    for layout, found in r["layouts"].items():
        for op in ("hash_noop", "novel_add", "search", "open_ms"):
            s, p = found["sqlite"][op], found["postgres"][op]
            lines.append(
                f"| {layout} | {op} | {s['cpu']:.2f} / {s['wall']:.2f}"
                f" | {p['cpu']:.2f} / {p['wall']:.2f} |"
            )
    lines += [
        "",
        f"{r['writers']} writer processes x {r['writes']} overlapping facts,"
        f" {r['scopes']} shared scopes",
        "",
        "| backend | writes/s (wall) | acknowledged | present | duplicated |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, t in r["throughput"].items():
        lines.append(
            f"| {name} | {t['per_s']:.0f} | {t['writes']} | {t['present']} | {t['duplicated']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", default=os.environ.get(URL_VARIABLE), help="a server's URL")
    parser.add_argument("--layouts", default="1x100000,1000x100")
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=500, help="per writer process")
    parser.add_argument("--scopes", type=int, default=2, help="the writers' scopes")
    args = parser.parse_args()
    if not args.pg:
        parser.error(f"no server: pass --pg URL or set {URL_VARIABLE} (.ci/postgres run ...)")
    layouts = [] if args.layouts == "none" else args.layouts.split(",")
    print(table(run(args.pg, layouts, args.ops, args.writers, args.writes, args.scopes)))


if __name__ == "__main__":
    main()
