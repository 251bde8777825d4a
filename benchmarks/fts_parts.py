"""Where the candidate query's CPU goes in a big scope: what bounds bulk ingest (issue 14).

For each held-out MSC fact, the landed MATCH (fts._rerank_match: rows holding a rare term,
scored as the OR of all) is run four ways, each timed alone on the same read transaction:

- first row: the statement, the MATCH parsed and one row found (no bm25);
- bm25 of the first row: the same plus bm25's IDF, which walks every phrase's whole posting
  list (each phrase appears twice in the re-rank MATCH);
- every row: every matching row's rowid, no bm25;
- ranked: bm25 of every matching row, sorted, the top k * OVERFETCH (the write path's query
  without its join).

so IDF ~ (bm25 of the first row - first row), rows ~ (every row - first row), and bm25 per
row and the sort ~ (ranked - bm25 of the first row - rows).

    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/fts_parts.py \\
        --layout 1x100000 [--optimize]

--optimize merges the filled index's segments into one (FTS5 'optimize') before timing.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench_scale import _fill, _texts

from memman import MemoryManager
from memman.storage import fts
from memman.storage.fts_counts import KeptCounts
from memman.storage.sql import run_sql
from memman.storage.store import Scope
from memman.write.retrieval import fts_terms

USER = Scope("user-0")
_FROM = "FROM long_term_fts WHERE long_term_fts MATCH :query"
WAYS = {
    "first row": f"SELECT rowid {_FROM} LIMIT 1",
    "bm25 of the first row": f"SELECT rowid, {fts.RANK} {_FROM} LIMIT 1",
    "every row": f"SELECT rowid {_FROM}",
    "ranked": f"SELECT rowid, {fts.RANK} AS b {_FROM} ORDER BY b LIMIT :top",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", default="1x100000")
    parser.add_argument("--ops", type=int, default=400, help="queries (held-out MSC facts)")
    parser.add_argument("--optimize", action="store_true", help="one FTS segment first")
    args = parser.parse_args()
    users, per_user = (int(x) for x in args.layout.split("x"))
    texts = _texts(users, per_user, args.ops // 2, False)
    spent: dict[str, list[float]] = {way: [] for way in WAYS}
    matched: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "scale.db")
        _fill(path, texts["rows"])
        if args.optimize:
            with sqlite3.connect(path) as db:
                cpu = time.process_time()
                db.execute("INSERT INTO long_term_fts(long_term_fts) VALUES('optimize')")
                print(f"optimize: {(time.process_time() - cpu) * 1000:.0f} ms CPU")
        with MemoryManager(path) as mm, mm.store.read() as read:
            for fact in texts["search"] + texts["novel"]:
                counts = KeptCounts(read, USER, fts.COMMON_TERM_ROWS)
                found = counts.scope_index(lambda bound: fts._read_scope(read, USER, bound))
                if found is None or not fts_terms(fact):
                    continue
                key, large = found
                phrases = [fts.scoped_match(key, fts.quoted(t)) for t in fts_terms(fact)]
                query = fts._rerank_match(read, phrases, counts) if large else " OR ".join(phrases)
                params = {"query": query, "top": 8 * fts.OVERFETCH}
                for way, sql in WAYS.items():
                    cpu = time.process_time()
                    rows = run_sql(read, sql, params).fetchall()
                    spent[way].append((time.process_time() - cpu) * 1000)
                    if way == "every row":
                        matched.append(len(rows))
    print(f"{len(matched)} queries, {args.layout}; CPU ms per query (median / mean)")
    for way, samples in spent.items():
        print(f"  {way:22s} {statistics.median(samples):.3f} / {statistics.fmean(samples):.3f}")
    print(f"  rows matched: {statistics.median(matched):.0f} / {statistics.fmean(matched):.0f}")


if __name__ == "__main__":
    main()
