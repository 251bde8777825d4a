"""PostgreSQL beside SQLite: per-operation latency at one big scope, and 8 writer processes.

    .ci/postgres run env PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data \\
        python benchmarks/bench_postgres.py [--layouts 1x100000,1000x100] [--ops 200] \\
        [--writers 8] [--writes 500] [--scopes 2] [--threads]

(or pass --pg URL for a server of your own; the benchmark creates and drops its own
database there). For each layout (users x memories per user) and backend a store holds MSC
persona facts (filled by plain inserts, as bench_scale does, so the index and triggers do the
work of a real write); then, for user-0, medians of an exact duplicate (hash NOOP), a novel fact
(offline decider: ADD) and search(), CPU (`time.process_time`, this client process only:
the PostgreSQL server's own CPU is not in it) and wall. Then `writers` processes each write
`writes` facts into the same `scopes` scopes (2: alice and bob), all at once: writes per
second (wall), and the audit of tests/reliability.py (acknowledged = present, none
duplicated), and on PostgreSQL how many writers wait for a lock on average (pg_stat_activity
sampled every 20 ms: what a lock per scope removes, whatever the machine's CPU allows);
`--threads`: threads of this process sharing one MemoryManager instead.
`--layouts none` measures the writers only.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_scale import _fill, _measure, _texts

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.*: the workers, audit

from tests.postgres import URL_VARIABLE, fresh_database
from tests.reliability import USERS, Ack, audit, offline_manager, pick_facts, write_worker


def _users(scopes: int) -> tuple[str, ...]:
    return USERS if scopes == len(USERS) else tuple(f"user-{i}" for i in range(scopes))


def _thread_writer(mm: Any, seed: int, writes: int, users: tuple[str, ...]) -> list[Ack]:
    """write_worker's calls on a manager the threads share."""
    acks = []
    for user, fact in pick_facts(seed, writes, users):
        result = mm.update_memory(fact, user_id=user, source=f"t{seed}")
        acks.append(Ack(user, result.op.value, result.memory_id, result.content))
    return acks


# Sessions of this database waiting for an advisory lock (memman's write locks).
_LOCK_WAITS = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
    " AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
)


@contextmanager
def _lock_waits(db: str, every_s: float = 0.02):
    """Samples, every every_s while the block runs, of how many writers wait for a lock
    (PostgreSQL only; an empty list on SQLite)."""
    samples: list[int] = []
    if not db.startswith("postgresql"):
        yield samples
        return
    import sqlalchemy as sa

    stop = threading.Event()
    engine = sa.create_engine(db)

    def sample() -> None:
        with engine.connect() as conn:
            while not stop.wait(every_s):
                samples.append(conn.exec_driver_sql(_LOCK_WAITS).scalar())
                conn.rollback()

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        yield samples
    finally:
        stop.set()
        sampler.join()
        engine.dispose()


def _throughput(db: str, writers: int, writes: int, scopes: int, threads: bool) -> dict:
    """writers processes (threads of this one, sharing one manager) x writes overlapping
    facts into `scopes` scopes on db at once."""
    from memman import MemoryManager

    MemoryManager(db).close()  # the schema exists before the writers race
    started = time.perf_counter()
    with _lock_waits(db) as waits:
        per_worker = _write_all(db, writers, writes, scopes, threads)
    wall = time.perf_counter() - started
    acks = [ack for worker in per_worker for ack in worker]
    result = audit(db, acks)
    return {
        "writes": len(acks),
        "wall_s": wall,
        "per_s": len(acks) / wall,
        "present": result.present,
        "duplicated": result.duplicated,
        "waiting": sum(waits) / len(waits) if waits else None,
    }


def _write_all(db: str, writers: int, writes: int, scopes: int, threads: bool) -> list[list[Ack]]:
    if threads:
        with offline_manager(db) as mm, ThreadPoolExecutor(writers) as pool:
            runs = [
                pool.submit(_thread_writer, mm, seed, writes, _users(scopes))
                for seed in range(writers)
            ]
            per_worker = [run.result() for run in runs]
    else:
        with multiprocessing.get_context("spawn").Pool(writers) as pool:
            per_worker = pool.starmap(
                write_worker, [(db, seed, writes, _users(scopes)) for seed in range(writers)]
            )
    return per_worker


@contextmanager
def _stores(pg: str):
    """(name, db) of a fresh SQLite file and a fresh PostgreSQL database, removed after."""
    with tempfile.TemporaryDirectory() as tmp, fresh_database(pg) as url:
        yield [("sqlite", str(Path(tmp) / "bench.db")), ("postgres", url)]


def run(
    pg: str, layouts: list[str], ops: int, writers: int, writes: int, scopes: int, threads: bool
) -> dict:
    found: dict = {"ops": ops, "writers": writers, "writes": writes, "scopes": scopes}
    found["kind"] = "threads of one process" if threads else "processes"
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
            found["throughput"][name] = _throughput(db, writers, writes, scopes, threads)
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
        f"{r['writers']} writer {r['kind']} x {r['writes']} overlapping facts,"
        f" {r['scopes']} shared scopes",
        "",
        "| backend | writes/s (wall) | acknowledged | present | duplicated | waiting for a lock |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, t in r["throughput"].items():
        waiting = "" if t["waiting"] is None else f"{t['waiting']:.2f}"
        lines.append(
            f"| {name} | {t['per_s']:.0f} | {t['writes']} | {t['present']} | {t['duplicated']}"
            f" | {waiting} |"
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
    parser.add_argument(
        "--threads", action="store_true", help="writers as threads sharing one manager"
    )
    args = parser.parse_args()
    if not args.pg:
        parser.error(f"no server: pass --pg URL or set {URL_VARIABLE} (.ci/postgres run ...)")
    layouts = [] if args.layouts == "none" else args.layouts.split(",")
    found = run(args.pg, layouts, args.ops, args.writers, args.writes, args.scopes, args.threads)
    print(table(found))


if __name__ == "__main__":
    main()
