"""Peak RSS of a search over one 100k-memory scope with the local embedder (issue 14).

The file is filled once with plain inserts: N memories for one user, each with a 384-dim
vector stored under the local model's name. The vectors are deterministic random unit
vectors, not the model's (embedding 100k texts would take minutes and the matrix costs the
same bytes either way). The search path then runs with the real local model loaded: each
code, in a fresh subprocess (PYTHONPATH=<tree>), opens the file with `embedder="local"`,
embeds one query (the model is resident), then calls search(), whose first call loads the
scope's matrix. `ru_maxrss` is read after each step, so the table shows what the model and
the matrix load each add. Both codes must return the same hits.

    git archive <branch point> | tar -x -C /tmp/old     # the code before the change
    python benchmarks/bench_rss.py --old /tmp/old --n 100000
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from sides import run_child, tree_options

SEED = 20261124
STAMP = "2025-01-01T00:00:00.000+00:00"
DIM = 384
INSERT_BATCH = 10_000
USER = "user-0"
QUERY = "which fact is about topic 42 and thing 7"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _fill(path: str, n: int) -> None:
    """N memories of one scope, each with a vector, at the running code's schema."""
    import sqlite3

    import numpy as np

    from memman import MemoryManager
    from memman.language.text import content_hash
    from memman.semantic.embed import LOCAL_MODEL

    MemoryManager(path).close()
    conn = sqlite3.connect(path)
    rng = np.random.default_rng(SEED)
    for start in range(0, n, INSERT_BATCH):
        ids = range(start, min(n, start + INSERT_BATCH))
        texts = [f"fact number {i} about topic {i % 997} and thing {i % 89}" for i in ids]
        conn.executemany(
            "INSERT INTO long_term (id, user_id, content, content_hash, created_at, updated_at,"
            " observed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (f"m{i}", USER, t, content_hash(t), STAMP, STAMP, STAMP)
                for i, t in zip(ids, texts, strict=True)
            ],
        )
        vectors = rng.standard_normal((len(ids), DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        conn.executemany(
            "INSERT INTO memory_vectors (memory_pk, model, dim, vector)"
            " SELECT pk, ?, ?, ? FROM long_term WHERE id = ?",
            [(LOCAL_MODEL, DIM, v.tobytes(), f"m{i}") for i, v in zip(ids, vectors, strict=True)],
        )
    conn.commit()
    conn.close()


def _measure(path: str) -> dict:
    import memman
    from memman import MemoryManager
    from memman.semantic.embed import LOCAL_MODEL
    from memman.storage.store import Scope

    steps = {"code": str(Path(memman.__file__).parents[1]), "import": _peak_mb()}
    with MemoryManager(path, embedder="local") as mm:
        mm.embedder.embed([QUERY])
        steps["model loaded"] = _peak_mb()
        started = time.perf_counter()
        hits = mm.search(QUERY, user_id=USER, limit=10)
        steps["first search s"] = time.perf_counter() - started
        steps["first search"] = _peak_mb()
        steps["hits"] = [hit.id for hit in hits]
        with mm.store.read() as conn:  # the cosine ranking alone, to compare the matrices
            top = mm.vectors.top(conn, Scope(USER), LOCAL_MODEL, mm.embedder.embed([QUERY])[0], 10)
        steps["top"] = [[pk, round(cosine, 6)] for pk, cosine in top]
        steps["cached MB"] = mm.vectors.cached_bytes / 2**20
    return steps


def _child(tree: str, mode: str, path: str, n: int) -> dict:
    return run_child(tree, __file__, ["--child", mode, "--db", path, "--n", str(n)])


def table(n: int, runs: dict[str, list[dict]]) -> str:
    lines = [
        f"| code ({n:,} memories, one scope) | after imports | model loaded | first search"
        " (matrix loaded): peak RSS | first search s | cached matrix |",
        "|---|---|---|---|---|---|",
    ]
    for name, results in runs.items():
        for r in results:
            lines.append(
                f"| {name} | {r['import']:.0f} MB | {r['model loaded']:.0f} MB"
                f" | **{r['first search']:.0f} MB** | {r['first search s']:.2f}"
                f" | {r['cached MB']:.0f} MB |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=2, help="fresh processes per code")
    tree_options(parser)
    parser.add_argument("--child", choices=["fill", "measure"], help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "fill":
        _fill(args.db, args.n)
        print(json.dumps({}))
        return
    if args.child == "measure":
        print(json.dumps(_measure(args.db)))
        return
    if not args.old:
        parser.error("--old is required: a tree of the code before the change")
    with tempfile.TemporaryDirectory() as tmp:
        base = str(Path(tmp) / "base.db")
        _child(args.old, "fill", base, args.n)
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(args.runs):
            for name, tree in (("before", args.old), ("after", args.new)):
                db = str(Path(tmp) / f"{name}.db")
                shutil.copy(base, db)  # a search writes access counts: each run its own copy
                runs[name].append(_child(tree, "measure", db, args.n))
                print(json.dumps({name: runs[name][-1]}), file=sys.stderr, flush=True)
    hits = {json.dumps([r["hits"], r["top"]]) for results in runs.values() for r in results}
    print(table(args.n, runs))
    print(f"\nsame search hits and cosine top 10 in every run: {len(hits) == 1}")


if __name__ == "__main__":
    main()
