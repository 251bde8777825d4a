"""Candidate quality before/after a retrieval change: paraphrase recall among distractors.

Issue 14 asked whether the scoped FTS index (m020) changed which memories retrieval finds.
Each paraphrase pair (STS-B score >= 4, MRPC label 1) is one test: its first sentence A is
stored in a user's scope among that user's other pairs' A sentences and `--distractors` MSC
persona facts (fixed seed); its second sentence B is the query. Recall@k counts the queries
whose A comes back in the top k, through the public search (MemoryManager.search) and through
the write path's lexical candidate retrieval (retrieval.lexical_candidates). Both codes read
the same file (filled at the old schema; the new code migrates a copy), each in its own
subprocess, and every query's top-5 ids are compared between them.

    git archive 5537713 | tar -x -C /tmp/old     # the code before m020
    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/bench_candidates.py \\
        --old /tmp/old --distractors 100,2000

PostgreSQL beside SQLite (issue 15), the same code on both: `--old $PWD --pg URL` (the
"after" store is then a fresh database on that server, filled with the same rows).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sides import run_child, tree_options

SEED = 20261124
PAIRS_PER_USER = 50  # a user's other A sentences are distractors too (same genre, same words)
TOP = 5


def _users(dataset: str, distractors: int, pairs: int, crowd: int = 0) -> list[dict]:
    """Each user's pairs and MSC distractor facts, from a fixed seed; then `crowd` users of
    100 MSC facts and no pairs, who only make the file bigger (other users' rows)."""
    from bench_update import load_corpus
    from calibrate_lexical import mrpc_pairs, sts_pairs

    para = (sts_pairs if dataset == "stsb" else mrpc_pairs)()[0]
    chosen = random.Random(SEED).sample(para, min(pairs, len(para)))
    facts, _ = load_corpus()
    return [
        {
            "pairs": chosen[start : start + PAIRS_PER_USER],
            "noise": random.Random(SEED + u).sample(facts, distractors),
        }
        for u, start in enumerate(range(0, len(chosen), PAIRS_PER_USER))
    ] + [{"pairs": [], "noise": random.Random(-1 - c).sample(facts, 100)} for c in range(crowd)]


def _fill(path: str, users: list[dict]) -> list[dict]:
    """Fill the file (running code's schema); return the queries: user, expected id, text."""
    from bench_scale import _fill as fill_rows

    from memman.language.text import content_hash

    rows: list[list[str]] = []
    queries: list[dict] = []
    for u, user in enumerate(users):
        group = user["pairs"]
        kept: list[str] = []
        seen: set[str] = set()
        for i, text in enumerate([a for a, _ in group] + user["noise"]):
            digest = content_hash(text)
            if digest in seen:
                continue  # the unique hash index keeps one copy; a repeated A is not a test
            seen.add(digest)
            if i < len(group):
                queries.append({"user": f"user-{u}", "id": f"u{u}-m{len(kept)}", "q": group[i][1]})
            kept.append(text)
        rows.append(kept)
    fill_rows(path, rows)
    return queries


def _measure(path: str, queries: list[dict]) -> list[dict]:
    """Each query's top-5 ids through search and through lexical candidate retrieval."""
    from memman import MemoryManager
    from memman.config import load_settings
    from memman.storage.store import Scope
    from memman.write.retrieval import lexical_candidates

    settings = load_settings(db=path, decider="offline")
    out = []
    with MemoryManager(path, settings=settings) as mm:
        for query in queries:
            with mm.store.read() as conn:
                found = lexical_candidates(mm.store, conn, Scope(query["user"]), query["q"], TOP)
            hits = mm.search(query["q"], user_id=query["user"], limit=TOP)
            out.append({"lexical": [r.memory.id for r in found], "search": [h.id for h in hits]})
    return out


def _child(tree: str, mode: str, args: list[str]) -> object:
    return run_child(tree, __file__, ["--child", mode, *args])


def _recall(queries: list[dict], results: list[dict], route: str, k: int) -> float:
    found = sum(q["id"] in r[route][:k] for q, r in zip(queries, results, strict=True))
    return found / len(queries)


def run(
    dataset: str,
    distractors: int,
    pairs: int,
    old: str,
    new: str,
    crowd: int = 0,
    pg: str | None = None,
) -> dict:
    """Before: the old code on a SQLite file; after: the new code on a copy, or (pg given)
    the new code on a fresh PostgreSQL database filled with the same rows."""
    with tempfile.TemporaryDirectory() as tmp, _database(pg) as url:
        old_db, new_db = str(Path(tmp) / "old.db"), url or str(Path(tmp) / "new.db")
        upath, qpath = Path(tmp) / "users.json", Path(tmp) / "queries.json"
        upath.write_text(json.dumps(_users(dataset, distractors, pairs, crowd)))
        queries = _child(old, "fill", ["--db", old_db, "--users", str(upath)])
        if url:
            _child(new, "fill", ["--db", url, "--users", str(upath)])
        else:
            shutil.copy(old_db, new_db)
        qpath.write_text(json.dumps(queries))
        before = _child(old, "measure", ["--db", old_db, "--queries", str(qpath)])
        after = _child(new, "measure", ["--db", new_db, "--queries", str(qpath)])
    row = {"dataset": dataset, "distractors": distractors, "queries": len(queries), "crowd": crowd}
    for route in ("search", "lexical"):
        for k in (1, TOP):
            row[f"{route}@{k}"] = (
                _recall(queries, before, route, k),
                _recall(queries, after, route, k),
            )
        row[f"{route} same top-{TOP}"] = sum(
            b[route] == a[route] for b, a in zip(before, after, strict=True)
        )
    return row


@contextmanager
def _database(pg: str | None) -> Iterator[str | None]:
    """A fresh database on the PostgreSQL server at pg (dropped after), or None."""
    if pg is None:
        yield None
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.postgres import fresh_database

    with fresh_database(pg) as url:
        yield url


def table(rows: list[dict]) -> str:
    lines = [
        "| data | distractors/user | queries | route | recall@1 before / after"
        f" | recall@{TOP} before / after | identical top-{TOP} lists |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        for route in ("search", "lexical"):
            (b1, a1), (b5, a5) = r[f"{route}@1"], r[f"{route}@{TOP}"]
            lines.append(
                f"| {r['dataset']} | {r['distractors']} | {r['queries']} | {route}"
                f" | {b1:.3f} / {a1:.3f} | {b5:.3f} / {a5:.3f}"
                f" | {r[f'{route} same top-{TOP}']}/{r['queries']} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tree_options(parser)
    parser.add_argument("--distractors", default="100,2000", help="MSC facts per user")
    parser.add_argument("--pairs", type=int, default=1000, help="pairs sampled per data set")
    parser.add_argument("--crowd", type=int, default=0, help="other users of 100 facts each")
    parser.add_argument(
        "--pg", help="after = the new code on this PostgreSQL server (before: SQLite, --old)"
    )
    parser.add_argument("--child", choices=["fill", "measure"], help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--users", help=argparse.SUPPRESS)
    parser.add_argument("--queries", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "fill":
        print(json.dumps(_fill(args.db, json.loads(Path(args.users).read_text()))))
        return
    if args.child == "measure":
        print(json.dumps(_measure(args.db, json.loads(Path(args.queries).read_text()))))
        return
    if not args.old:
        parser.error("--old is required: a tree of the code before the change")
    rows = []
    for dataset in ("stsb", "mrpc"):
        for distractors in (int(n) for n in args.distractors.split(",")):
            rows.append(
                run(dataset, distractors, args.pairs, args.old, args.new, args.crowd, args.pg)
            )
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
