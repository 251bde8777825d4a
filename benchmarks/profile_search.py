"""Where does one scope's search spend its CPU, before and after a retrieval change?

bench_scale.py reported 1 user x 100k search 3.11 -> 3.93 ms CPU after m020. This splits
search() into its parts and times each statement _bm25_ranked may run, side by side: the
bounded scope-size count, the top-then-filter query, FTS5 alone with the two-column bm25 and
with the default weights, and the scoped MATCH. Each code runs in its own subprocess on its
own copy of one file filled at the old schema (the new code migrates its copy on the first
open, before any timing), alternating
`--rounds` times; every figure is a time.process_time median over the queries.

    git archive 5537713 | tar -x -C /tmp/old
    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/profile_search.py \\
        --old /tmp/old --layout 1x100000
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench_scale import _fill, _texts
from sides import answer_child, child_options, run_child, tree_options

USER = "user-0"
K = 20  # the search pool: limit 5 x recall_pool_factor 4


def _median_ms(fn, items: list[str]) -> float:
    samples = []
    for item in items:
        start = time.process_time()
        fn(item)
        samples.append((time.process_time() - start) * 1000)
    return round(statistics.median(samples), 3)


def _statements(path: str, queries: list[str]) -> dict[str, float]:
    """Each statement _bm25_ranked may run, on a plain sqlite3 connection (no SQLAlchemy)."""
    from memman.storage.store import Scope
    from memman.write import retrieval

    try:  # the FTS5 statements live in storage since Session 7
        from memman.storage import fts as lexical
    except ImportError:
        lexical = retrieval
    conn = sqlite3.connect(path)
    params = {"user_id": USER, "agent_id": "", "limit": K, "overfetch": 4 * K, "cap": 1000}
    fts = "SELECT rowid FROM long_term_fts WHERE long_term_fts MATCH :query ORDER BY {} LIMIT 80"
    timed = {"fts_alone_default_bm25": fts.format("bm25(long_term_fts)")}
    if hasattr(lexical, "_TOP_THEN_FILTER_SQL"):  # m020's big-scope route
        timed["top_then_filter"] = lexical._TOP_THEN_FILTER_SQL
    if hasattr(lexical, "_SCOPE_SIZE_SQL"):  # m020's big-scope route
        timed["scope_size_count"] = lexical._SCOPE_SIZE_SQL
        timed["fts_alone_rank_1_0"] = fts.format(lexical.RANK)
    out = {}
    for name, sql in timed.items():
        for query in queries[:20]:  # warm the page cache
            conn.execute(sql, {**params, "query": query}).fetchall()
        run = lambda q, s=sql: conn.execute(s, {**params, "query": q}).fetchall()  # noqa: E731
        out[name] = _median_ms(run, queries)
    if hasattr(lexical, "index_key"):  # m021: each word keyed by its scope
        (scope_id,) = conn.execute(
            "SELECT id FROM fts_scopes WHERE user_id = ? AND agent_id = ''", (USER,)
        ).fetchone()
        key = f"q{scope_id}j"
        scoped = lambda q: lexical.scoped_match(key, q)  # noqa: E731
    elif hasattr(lexical, "scoped_match"):  # m020: the scope token ANDed in
        scoped = lambda q: lexical.scoped_match(Scope(USER), q)  # noqa: E731
    else:
        scoped = None
    if scoped is not None:
        out["scoped_join"] = _median_ms(
            lambda q: conn.execute(
                lexical._CANDIDATES_SQL, {**params, "query": scoped(q)}
            ).fetchall(),
            queries,
        )
    conn.close()
    return out


def _measure(path: str, texts: list[str]) -> dict[str, float]:
    """search() and its _bm25_ranked part, then the statements alone."""
    from memman import MemoryManager
    from memman.config import load_settings
    from memman.storage.store import Store
    from memman.write import retrieval

    ranked_ms: list[float] = []
    # Since Session 7 the lexical statements are Store.lexical_ranked's.
    owner, name = (
        (Store, "lexical_ranked")
        if hasattr(Store, "lexical_ranked")
        else (retrieval, "_bm25_ranked")
    )
    inner = getattr(owner, name)

    def timed_ranked(*args, **kwargs):
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            ranked_ms.append((time.process_time() - start) * 1000)

    setattr(owner, name, timed_ranked)
    with MemoryManager(path, settings=load_settings(db=path, decider="offline")) as mm:
        for text in texts[:20]:
            mm.search(text, user_id=USER)
        ranked_ms.clear()
        out = {"search": _median_ms(lambda t: mm.search(t, user_id=USER), texts)}
    out["_bm25_ranked"] = round(statistics.median(ranked_ms), 3)
    queries = [q for q in map(retrieval.fts_query, texts) if q]
    return {**out, **_statements(path, queries)}


def _child(tree: str, args: list[str]) -> dict:
    return run_child(tree, __file__, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tree_options(parser)
    parser.add_argument("--layout", default="1x100000")
    parser.add_argument("--ops", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    child_options(parser, ["fill", "measure"])
    args = parser.parse_args()
    modes = {
        "fill": lambda texts: _fill(args.db, texts["rows"]),
        "measure": lambda texts: _measure(args.db, texts["search"]),
    }
    if answer_child(args, modes):
        return
    if not args.old:
        parser.error("--old is required: a tree of the code before the change")
    users, per_user = (int(x) for x in args.layout.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        texts = str(Path(tmp) / "texts.json")
        Path(texts).write_text(json.dumps(_texts(users, per_user, args.ops)))
        dbs = {"before": str(Path(tmp) / "old.db"), "after": str(Path(tmp) / "new.db")}
        _child(args.old, ["--child", "fill", "--db", dbs["before"], "--texts", texts])
        shutil.copy(dbs["before"], dbs["after"])
        for round_ in range(args.rounds):
            for label, tree in (("before", args.old), ("after", args.new)):
                figures = _child(tree, ["--child", "measure", "--db", dbs[label], "--texts", texts])
                print(json.dumps({"round": round_ + 1, "code": label, **figures}), flush=True)


if __name__ == "__main__":
    main()
