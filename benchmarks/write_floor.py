"""What SQLite alone costs of a novel write at N memories: the floor under update_memory.

bench_vs_mem0.py compares whole writes; this says how much of memman's is SQLite's own work,
which no change to memman's Python can remove. One user holds N memories (as in
bench_vs_mem0: MSC persona facts, the store filled by bench_scale._fill), then the held-out
novel facts are written one at a time with update_memory (offline decider). Every statement
the write path sends through run_sql and insert_many is recorded with its parameters, and the
statements of each write are then replayed in plain sqlite3 (the same parameterised SQL, so
sqlite3's statement cache serves them as it serves memman; BEGIN IMMEDIATE ... COMMIT, WAL,
synchronous=NORMAL) on a copy of the file as it was before the writes. Only ADDs whose
statements were all recorded are counted (an UPDATE also runs a SQLAlchemy statement, seen
by SQLAlchemy's before_cursor_execute event).

Also timed on another copy: the least an ADD can cost with memman's schema, one transaction
holding one long_term INSERT (its FTS5 trigger indexes it) and one events INSERT, nothing read.

    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/write_floor.py \\
        --memories 5000 --ops 300
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench_scale import STAMP, _fill
from bench_vs_mem0 import _texts

USER = "user-0"


def _recording(log: list[tuple[str, str, Any]]) -> None:
    """Make the write path's run_sql and insert_many also append (kind, sql, params) to log."""
    import memman.storage.sql as sql

    run_sql, insert_many = sql.run_sql, sql.insert_many

    def recorded_run_sql(conn, statement, params=()):
        if not statement.startswith("BEGIN"):  # the replay begins its own transaction
            log.append(("one", statement, params))
        return run_sql(conn, statement, params)

    def recorded_insert_many(conn, table, scope, rows):
        if rows:
            scoped = [{"user_id": scope.user_id, "agent_id": scope.agent_key, **r} for r in rows]
            columns, marks = ", ".join(scoped[0]), ", ".join("?" * len(scoped[0]))
            statement = f"INSERT INTO {table} ({columns}) VALUES ({marks})"
            log.append(("many", statement, [list(r.values()) for r in scoped]))
        return insert_many(conn, table, scope, rows)

    for module in list(sys.modules.values()):
        if module is not None and module.__name__.startswith("memman"):
            if getattr(module, "run_sql", None) is run_sql:
                module.run_sql = recorded_run_sql
            if getattr(module, "insert_many", None) is insert_many:
                module.insert_many = recorded_insert_many


def _copy(source: str, target: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        if Path(source + suffix).exists():
            shutil.copy(source + suffix, target + suffix)


def _raw(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _memman_writes(path: str, texts: dict) -> list[tuple[str, float, list, bool]]:
    """(op, CPU s, recorded statements, all recorded?) of each novel write."""
    import sqlalchemy as sa

    from memman import MemoryManager
    from memman.config import load_settings

    log: list[tuple[str, str, Any]] = []
    _recording(log)
    through_sqlalchemy: list[str] = []  # statements the recording does not see
    writes = []
    with MemoryManager(path, settings=load_settings(db=path, decider="offline")) as mm:
        sa.event.listen(
            mm.store.engine,
            "before_cursor_execute",
            lambda conn, cursor, statement, *rest: through_sqlalchemy.append(statement),
        )
        for text in texts["novel"]:
            log.clear()
            through_sqlalchemy.clear()
            start = time.process_time()
            op = mm.update_memory(text, user_id=USER).op.value
            cpu = time.process_time() - start
            writes.append((op, cpu, list(log), not through_sqlalchemy))
    return writes


def _label(statement: str) -> str:
    """A statement's first words, as a name for its row in the table."""
    return " ".join(statement.split())[:60]


def _replay(path: str, writes: list) -> tuple[list[tuple[float, float]], list[dict[str, float]]]:
    """(CPU s before COMMIT, CPU s of COMMIT) of each write's statements in plain sqlite3,
    and each write's CPU s per statement (by _label)."""
    conn = _raw(path)
    times, per_statement = [], []
    for _, _, statements, _ in writes:
        each: dict[str, float] = {}
        start = time.process_time()
        conn.execute("BEGIN IMMEDIATE")
        for kind, statement, params in statements:
            began = time.process_time()
            if kind == "one":
                conn.execute(statement, params).fetchall()
            else:
                conn.executemany(statement, params)
            label = _label(statement)
            each[label] = each.get(label, 0.0) + time.process_time() - began
        body = time.process_time()
        conn.execute("COMMIT")
        times.append((body - start, time.process_time() - body))
        per_statement.append(each)
    conn.close()
    return times, per_statement


def _bare_adds(path: str, texts: list[str]) -> list[float]:
    """CPU s of one long_term INSERT (with its FTS5 trigger) and one event in a transaction."""
    conn = _raw(path)
    times = []
    for text in texts:
        memory_id = uuid.uuid4().hex
        start = time.process_time()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO long_term (id, user_id, agent_id, content, content_hash, created_at,"
            " updated_at, observed_at) VALUES (?, ?, '', ?, ?, ?, ?, ?)",
            (memory_id, USER, text, uuid.uuid4().hex, STAMP, STAMP, STAMP),
        )
        conn.execute(
            "INSERT INTO events (user_id, agent_id, memory_id, op, tier, candidate,"
            " content_after, reason, created_at) VALUES (?, '', ?, 'ADD', 'novel', ?, ?, '', ?)",
            (USER, memory_id, text, text, STAMP),
        )
        conn.execute("COMMIT")
        times.append(time.process_time() - start)
    conn.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--ops", type=int, default=300, help="novel facts written")
    args = parser.parse_args()
    texts = _texts(args.memories, args.ops)
    with tempfile.TemporaryDirectory() as tmp:
        base, replayed, bare = (str(Path(tmp) / f"{n}.db") for n in ("base", "replay", "bare"))
        _fill(base, [texts["stored"]])
        from memman import MemoryManager

        with MemoryManager(base) as mm:  # the warm-up writes bench_vs_mem0 makes
            for text in texts["warm"]:
                mm.update_memory(text, user_id=USER)
        _copy(base, replayed)
        _copy(base, bare)
        writes = _memman_writes(base, texts)
        replay, per_statement = _replay(replayed, writes)
        bare_adds = _bare_adds(bare, texts["novel"])
    kept = [i for i, (op, _, _, whole) in enumerate(writes) if op == "ADD" and whole]

    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:.3f} | {statistics.mean(values) * 1000:.3f}"

    print(f"{args.memories} memories, {len(kept)} of {len(writes)} novel writes counted (ADDs)\n")
    print("| CPU ms per ADD | median | mean |\n|---|---:|---:|")
    print(f"| memman update_memory | {ms([writes[i][1] for i in kept])} |")
    print(f"| its statements replayed in sqlite3 | {ms([sum(replay[i]) for i in kept])} |")
    print(f"| ... before COMMIT | {ms([replay[i][0] for i in kept])} |")
    print(f"| ... COMMIT | {ms([replay[i][1] for i in kept])} |")
    print(f"| bare ADD: one row (FTS5 trigger) + one event | {ms(bare_adds)} |")
    labels = sorted({label for i in kept for label in per_statement[i]})
    mean = {
        label: statistics.mean(per_statement[i].get(label, 0.0) for i in kept) for label in labels
    }
    print("\n| replayed statement (first words) | mean CPU ms per ADD |\n|---|---:|")
    for label in sorted(labels, key=mean.__getitem__, reverse=True):
        print(f"| `{label}` | {mean[label] * 1000:.3f} |")
    statements = statistics.mean(len(writes[i][2]) for i in kept)
    print(f"\nstatements per ADD (run_sql / executemany calls): {statements:.1f}")


if __name__ == "__main__":
    main()
