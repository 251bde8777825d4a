"""Would a cap on common query terms pay? Candidate SQL with and without it, one big scope.

A fact holding a word most of the scope's memories hold ("like") makes FTS5 score every such
row. The cap tried here counts each query term's rows in the scope (a bounded count per term,
through the keyed index of m021) and drops the terms held by more than `--share` of the scope,
then runs retrieval's candidate statement on the rest (all of them if none is left). Reported:
CPU medians/means/maxima of both over the held-out MSC queries, how many terms the cap
dropped, and in how many queries the top 5 stayed the same. Nothing here is used by memman:
the cap is not in retrieval.py (see RESULTS.md, Session 6).

    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/bench_common_terms.py \\
        --layout 1x100000 --share 0.1
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench_scale import _fill, _texts

from memman.write import retrieval

USER = "user-0"
K = 20  # the search pool: limit 5 x recall_pool_factor 4
_COUNT_SQL = (
    "SELECT count(*) FROM (SELECT 1 FROM long_term_fts WHERE long_term_fts MATCH ? LIMIT ?)"
)


def _stats(samples: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(samples), 3),
        "mean": round(statistics.fmean(samples), 3),
        "max": round(max(samples), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", default="1x100000")
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--ops", type=int, default=400)
    args = parser.parse_args()
    users, per_user = (int(x) for x in args.layout.split("x"))
    texts = _texts(users, per_user, args.ops // 2)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "scale.db")
        _fill(path, texts["rows"])
        conn = sqlite3.connect(path)
        (scope_id,) = conn.execute(
            "SELECT id FROM fts_scopes WHERE user_id = ? AND agent_id = ''", (USER,)
        ).fetchone()
        key = f"q{scope_id}j"
        cap = max(1, int(args.share * per_user))
        params = {"user_id": USER, "agent_id": "", "limit": K, "overfetch": K * 4}
        queries = [q for q in map(retrieval.fts_query, texts["search"] + texts["novel"]) if q]
        dropped = 0

        def full(query: str) -> list[int]:
            match = retrieval.scoped_match(key, query)
            rows = conn.execute(retrieval._TOP_THEN_FILTER_SQL, {**params, "query": match})
            return [row[0] for row in rows]

        def capped(query: str) -> list[int]:
            nonlocal dropped
            kept = []
            for phrase in retrieval._PHRASE.findall(query):
                match = retrieval.scoped_match(key, f'"{phrase}"')
                (rows,) = conn.execute(_COUNT_SQL, (match, cap + 1)).fetchone()
                if rows <= cap:
                    kept.append(match)
                else:
                    dropped += 1
            match = " OR ".join(kept) or retrieval.scoped_match(key, query)
            rows = conn.execute(retrieval._TOP_THEN_FILTER_SQL, {**params, "query": match})
            return [row[0] for row in rows]

        report = {}
        for name, fn in (("full", full), ("capped", capped)):
            for query in queries[:20]:  # warm the page cache
                fn(query)
            dropped = 0
            samples = []
            for query in queries:
                start = time.process_time()
                fn(query)
                samples.append((time.process_time() - start) * 1000)
            report[name] = _stats(samples)
        dropped_in_run = dropped
        same = sum(full(q)[:5] == capped(q)[:5] for q in queries)
        terms = sum(len(retrieval._PHRASE.findall(q)) for q in queries)
        print(f"{args.layout}, cap: terms held by > {args.share:.0%} of the scope ({cap} rows)")
        print(f"CPU ms without cap: {report['full']}")
        print(f"CPU ms with cap:    {report['capped']}")
        print(f"terms dropped: {dropped_in_run} of {terms}; same top 5: {same} of {len(queries)}")
        conn.close()


if __name__ == "__main__":
    main()
