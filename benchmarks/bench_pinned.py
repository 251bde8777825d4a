"""The context block's "pinned" test over a scope's rows: json_extract on every row (Session
8) against the guarded form memories._pinned now builds ("{}" skipped, json_valid first).

    python benchmarks/bench_pinned.py [--rows 100000] [--reps 40]

Runs the scope-filtered count SQLite does for the core-memories query, once on rows that all
hold metadata and once on rows 90 % of which hold "{}", alternating the two predicates;
CPU ms medians (benchmarks/timing.py).
"""

from __future__ import annotations

import argparse
import json
import sqlite3

from timing import medians, timed

_QUERY = (
    "SELECT count(*) FROM t WHERE user_id = 'u' AND status = 'active'"
    " AND (category IN ('safety', 'constraint') OR {} = 1)"
)
PREDICATES = {
    "json_extract (before)": "json_extract(metadata, '$.pinned')",
    "guarded (after)": (
        "CASE WHEN metadata = '{}' THEN NULL"
        " WHEN json_valid(metadata) THEN json_extract(metadata, '$.pinned') END"
    ),
}


def table(rows: int, with_metadata: float) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (user_id, status, category, metadata)")
    every = round(1 / with_metadata)
    conn.executemany(
        "INSERT INTO t VALUES ('u', 'active', NULL, ?)",
        (
            (json.dumps({"origin": "bench", "n": n}) if n % every == 0 else "{}",)
            for n in range(rows)
        ),
    )
    return conn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=40)
    args = parser.parse_args()
    for share in (1.0, 0.1):
        conn = table(args.rows, share)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in PREDICATES}
        for _ in range(args.reps):
            for name, predicate in PREDICATES.items():
                query = _QUERY.format(predicate)
                samples[name].append(timed(lambda q=query, c=conn: c.execute(q).fetchone()))
        for name, timings in samples.items():
            print(f"{share:.0%} rows with metadata, {name}: {medians(timings)['cpu']:.1f} ms CPU")


if __name__ == "__main__":
    main()
