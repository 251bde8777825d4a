"""Common query terms in a big scope: the candidate query with and without the re-rank.

A fact holding a word most of the scope's memories hold ("like") makes FTS5 score every such
row. In a scope of more than fts.COMMON_TERM_ROWS rows, terms held by more rows than
that only re-rank the rows holding a rarer term (fts._rerank_match). This times
retrieval's ranked candidate query (the scope lookup, the term counts and the FTS statement)
as landed and with the plain OR of every term instead of _rerank_match (as before, but with
the landed scope lookup and its bounded row count, ~0.09 ms at 100k), over the held-out MSC
queries, and counts the queries whose top k stayed the same.

    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/bench_common_terms.py \\
        --layout 1x100000 --k 8          # k 8: the write path's top_k; 20: search's pool
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_scale import _fill, _texts

from memman import MemoryManager
from memman.storage import fts
from memman.storage.store import Scope
from memman.write.retrieval import fts_terms

USER = Scope("user-0")


def _stats(samples: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(samples), 3),
        "mean": round(statistics.fmean(samples), 3),
        "max": round(max(samples), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", default="1x100000")
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--ops", type=int, default=400, help="queries (held-out MSC facts)")
    parser.add_argument("--synthetic", action="store_true", help="see bench_scale --synthetic")
    args = parser.parse_args()
    users, per_user = (int(x) for x in args.layout.split("x"))
    texts = _texts(users, per_user, args.ops // 2, args.synthetic)
    queries = texts["search"] + texts["novel"]
    rerank = fts._rerank_match
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "scale.db")
        _fill(path, texts["rows"])
        with MemoryManager(path) as mm, mm.store.read() as read:

            def ranked(query: str) -> list[int]:
                terms = fts_terms(query)
                return [pk for pk, _ in mm.store.lexical_ranked(read, USER, terms, args.k)]

            report, tops = {}, {}

            def plain(conn: object, phrases: list[str]) -> str:
                return " OR ".join(phrases)

            for name, match in (("plain", plain), ("re-rank", rerank)):
                fts._rerank_match = match
                for query in queries[:20]:  # warm the page cache
                    ranked(query)
                samples = []
                for query in queries:
                    start = time.process_time()
                    ranked(query)
                    samples.append((time.process_time() - start) * 1000)
                report[name] = _stats(samples)
                tops[name] = [ranked(query) for query in queries]
    same = sum(a == b for a, b in zip(tops["plain"], tops["re-rank"], strict=True))
    same5 = sum(a[:5] == b[:5] for a, b in zip(tops["plain"], tops["re-rank"], strict=True))
    print(
        f"{args.layout}, k {args.k}, COMMON_TERM_ROWS {fts.COMMON_TERM_ROWS},"
        f" {len(queries)} queries"
    )
    print(f"CPU ms, plain OR: {report['plain']}")
    print(f"CPU ms, re-rank:  {report['re-rank']}")
    print(f"same top {args.k}: {same}; same top 5: {same5}")


if __name__ == "__main__":
    main()
