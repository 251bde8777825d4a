"""What a row count kept per scope would save a single write, measured in plain sqlite3.

storage/fts.py reads the scope's size every transaction (`_SCOPE_SQL`: a count of up to
COMMON_TERM_ROWS + 1 entries of long_term_scope) to decide whether common terms re-rank. A
count kept in fts_scopes by long_term's insert trigger would make that one row read, and make
every INSERT pay an UPDATE of that row. This times, on copies of one file of N memories (one
user, bench_scale's fill), the read as it is, the read of a kept count, and the INSERT of a
novel memory (its FTS5 trigger included) with the trigger as it is and as an upsert that
counts. Each statement is timed alone (CPU, median of batches); INSERTs are rolled back, so
every one meets the same file. Not landed: see RESULTS.md, "FTS candidate query".

    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/scope_count.py --memories 5000
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from bench_scale import STAMP, _fill

USER = "user-0"
BATCH = 200
_ADD_SCOPE = (
    "INSERT OR IGNORE INTO fts_scopes (user_id, agent_id) VALUES (new.user_id, new.agent_id)"
)
_COUNT_SCOPE = (
    "INSERT INTO fts_scopes (user_id, agent_id, n) VALUES (new.user_id, new.agent_id, 1)"
    " ON CONFLICT (user_id, agent_id) DO UPDATE SET n = n + 1"
)
_KEPT_SQL = "SELECT id, n, total_changes() FROM fts_scopes WHERE user_id = ? AND agent_id = ?"
_INSERT = (
    "INSERT INTO long_term (id, user_id, content, content_hash, created_at, updated_at,"
    " observed_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _per_call(run, calls: int) -> float:
    """Median CPU us per call over batches of BATCH calls."""
    samples = []
    for _ in range(calls // BATCH):
        start = time.process_time()
        for _ in range(BATCH):
            run()
        samples.append((time.process_time() - start) / BATCH * 1e6)
    return statistics.median(samples)


def _counting(path: str) -> None:
    """The file with fts_scopes.n kept by long_term's insert trigger."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("ALTER TABLE fts_scopes ADD COLUMN n INTEGER NOT NULL DEFAULT 0")
    conn.execute(
        "UPDATE fts_scopes SET n = (SELECT count(*) FROM long_term"
        " WHERE user_id = fts_scopes.user_id AND agent_id = fts_scopes.agent_id)"
    )
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'long_term_ai'").fetchone()
    conn.execute("DROP TRIGGER long_term_ai")
    conn.execute(sql.replace(_ADD_SCOPE, _COUNT_SCOPE))
    conn.close()


def _inserts(path: str, facts: list[str], calls: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    rows = iter(facts * (calls // len(facts) + 1))

    def insert() -> None:
        conn.execute("BEGIN IMMEDIATE")
        text = next(rows)
        conn.execute(_INSERT, (uuid.uuid4().hex, USER, text, uuid.uuid4().hex, *[STAMP] * 3))
        conn.execute("ROLLBACK")

    begin_rollback = _per_call(lambda: conn.execute("BEGIN IMMEDIATE").execute("ROLLBACK"), calls)
    spent = _per_call(insert, calls) - begin_rollback
    conn.close()
    return spent


def main() -> None:
    from bench_update import load_corpus

    from memman.storage.fts import _SCOPE_SQL, COMMON_TERM_ROWS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=4000)
    args = parser.parse_args()
    stored, held_out = load_corpus()
    with tempfile.TemporaryDirectory() as tmp:
        plain, counted = str(Path(tmp) / "plain.db"), str(Path(tmp) / "counted.db")
        _fill(plain, [stored[: args.memories]])
        shutil.copy(plain, counted)
        _counting(counted)
        conn = sqlite3.connect(counted)
        params = {"user_id": USER, "agent_id": "", "rows": COMMON_TERM_ROWS + 1}
        (agent,) = conn.execute("SELECT agent_id FROM fts_scopes").fetchone()
        params["agent_id"] = agent
        scope = _per_call(lambda: conn.execute(_SCOPE_SQL, params).fetchall(), args.calls)
        kept = _per_call(lambda: conn.execute(_KEPT_SQL, (USER, agent)).fetchall(), args.calls)
        conn.close()
        facts = held_out[:BATCH]
        as_is, counting = _inserts(plain, facts, args.calls), _inserts(counted, facts, args.calls)
    print(f"1 x {args.memories:,} memories, CPU us per statement (median of batches of {BATCH})\n")
    print("| statement | as is | count kept per scope |\n|---|---:|---:|")
    print(f"| scope key and size (_SCOPE_SQL / one fts_scopes row) | {scope:.1f} | {kept:.1f} |")
    print(f"| INSERT long_term (+ triggers) | {as_is:.1f} | {counting:.1f} |")
    print(f"| sum for a novel ADD | {scope + as_is:.1f} | {kept + counting:.1f} |")


if __name__ == "__main__":
    main()
