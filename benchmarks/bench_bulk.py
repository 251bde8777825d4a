"""Bulk ingest into a big scope (issue 14): update_many of held-out facts into one user of 100k.

One file is filled with MSC persona facts for user-0 (bench_scale's plain inserts, the FTS
triggers index them); each round copies it and times one update_many of the batch (offline
decider, no embedder) with CPU (time.process_time) and wall clocks. The batch mixes facts
never stored (bench_update's held-out ones) with restated facts beyond the fill, so it holds
novel facts, paraphrases of stored ones and topic conflicts. The old code (a `git archive`
tree) and this tree each run in their own subprocess on copies of the same file.

    git archive <branch point> | tar -x -C /tmp/bulk_old
    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/bench_bulk.py \\
        --old /tmp/bulk_old [--fill 100000] [--facts 5000] [--rounds 3] [--profile]

--imports N exports the first N memories of the filled user and times import_jsonl of them into
an empty store (raw copy) and into a store holding one memory (merging: decided in chunks).
--compare writes the batch into two fresh stores, one fact at a time and with update_many, and
says whether the stores (contents, statuses, event kinds per memory) and decisions are equal.
--profile prints cProfile's top functions (by own time) of one round of this tree, and CPU per
SQL statement (the write path's run_sql statements; executemany is not among them).
--base FILE keeps the filled file between runs (filled when missing, copied after). --alternate
runs one round per child process, the trees taking turns to go first (load drifts between
rounds on a shared machine), and takes medians over the rounds.
--split says, without cProfile (whose overhead falls on Python, not on SQLite), how each
tree's CPU per fact divides: the run_sql statements (their execute; rows fetched later count
as the rest), the executemany inserts, and the rest (Python, rows fetched), median of rounds.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import itertools
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_scale import _fill
from sides import answer_child, child_options, run_child, tree_options
from timing import medians, timed

USER = "user-0"
# The storage modules whose run_sql statements --split and --profile count.
STATEMENT_MODULES = ("store", "memories", "events", "pending", "fts", "fts_counts", "vector_rows")


def _texts(fill: int, facts: int) -> dict:
    """The fill of user-0, then the batch: held-out facts first, restated ones after."""
    from bench_update import load_corpus

    stored, held_out = load_corpus()
    if fill + facts > len(stored) + len(held_out):
        raise SystemExit(f"only {len(stored) + len(held_out)} distinct facts available")
    batch = (held_out + stored[fill:])[:facts]
    return {"rows": [stored[:fill]], "batch": batch}


def _count_statements() -> dict[str, list[float]]:
    """Wrap run_sql (where the write path's per-fact statements go) to sum CPU per statement,
    and the executemany inserts under the key "executemany"."""
    import memman.storage.sql

    spent: dict[str, list[float]] = {}
    original, insert_many = memman.storage.sql.run_sql, memman.storage.sql.insert_many

    def add(key: str, cpu: float) -> None:
        entry = spent.setdefault(key, [0, 0.0])
        entry[0] += 1
        entry[1] += time.process_time() - cpu

    def counted(conn, sql, params=()):
        cpu = time.process_time()
        try:
            return original(conn, sql, params)
        finally:
            add(" ".join(sql.split()), cpu)

    def inserted(*args):
        cpu = time.process_time()
        try:
            return insert_many(*args)
        finally:
            add("executemany", cpu)

    for name in STATEMENT_MODULES:
        try:
            module = importlib.import_module(f"memman.storage.{name}")
        except ModuleNotFoundError:  # an older tree (sides.py runs both with this script)
            continue
        module.run_sql = counted
        if hasattr(module, "insert_many"):
            module.insert_many = inserted
    return spent


def _split(spent: dict[str, list[float]], cpu_ms: float, facts: int) -> dict[str, float]:
    """CPU ms per fact: run_sql statements, executemany, the rest (Python)."""
    many = spent.get("executemany", [0, 0.0])[1] * 1000
    statements = sum(cpu for key, (_, cpu) in spent.items() if key != "executemany") * 1000
    return {
        "statements": statements / facts,
        "executemany": many / facts,
        "rest": (cpu_ms - statements - many) / facts,
    }


def _measure(
    base: str, batch: list[str], rounds: int, chunk: int | None, profile: bool, split: bool
) -> dict:
    from memman import MemoryManager
    from memman.config import load_settings

    samples, ops, splits = [], {}, []
    spent = _count_statements() if profile or split else {}
    for round_ in range(rounds):
        path = f"{base}.round{round_}"
        shutil.copy(base, path)
        settings = load_settings(db=path, decider="offline")
        with MemoryManager(path, settings=settings) as mm:
            mm.search("warm the page cache", user_id=USER)
            results: list = []

            def run(mm=mm, results=results) -> None:
                results.extend(mm.update_many(batch, user_id=USER, chunk_size=chunk))

            if profile and round_ == 0:
                profiler = cProfile.Profile()
                samples.append(timed(lambda run=run, p=profiler: p.runcall(run)))
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
                print(out.getvalue(), file=sys.stderr)
                for sql, (n, cpu) in sorted(spent.items(), key=lambda kv: -kv[1][1])[:8]:
                    per_fact = cpu * 1000 / len(batch)
                    print(f"{n:7d} calls {per_fact:6.3f} ms/fact  {sql[-110:]}", file=sys.stderr)
            else:
                spent.clear()
                samples.append(timed(run))
                if split:
                    splits.append(_split(spent, samples[-1][0], len(batch)))
            ops = {}
            for result in results:
                ops[result.op.value] = ops.get(result.op.value, 0) + 1
            active = mm.stats(user_id=USER)
        os.remove(path)
    times = medians(samples)
    return {
        "split": {k: statistics.median(s[k] for s in splits) for k in splits[0]} if splits else {},
        "ms": times,
        "facts_per_s": {k: len(batch) / (v / 1000) for k, v in times.items()},
        "ops": ops,
        "stats": active,
    }


def _snapshot(mm) -> list[tuple]:
    rows = []
    for memory in mm.export(user_id=USER, include_inactive=True):
        events = tuple((e.op.value, e.tier.value) for e in mm.history(memory.id, user_id=USER))
        rows.append((memory.content, memory.status.value, memory.subject, memory.attribute, events))
    return sorted(rows)


def _compare(folder: str, batch: list[str]) -> dict:
    """One at a time vs update_many into fresh stores: the same decisions and store?"""
    from memman import MemoryManager

    def write(name: str, bulk: bool) -> tuple[list, list]:
        with MemoryManager(str(Path(folder) / name), decider="offline") as mm:
            if bulk:
                results = mm.update_many(batch, user_id=USER)
            else:
                results = [mm.update_memory(fact, user_id=USER) for fact in batch]
            return [(r.op.value, r.tier.value) for r in results], _snapshot(mm)

    single, bulk = write("single.db", False), write("bulk.db", True)
    return {
        "same_decisions": single[0] == bulk[0],
        "same_store": single[1] == bulk[1],
        "memories": len(bulk[1]),
    }


def _imports(base: str, n: int) -> dict:
    """CPU records/s of a raw and a merging import of n exported memories of user-0."""
    from memman import MemoryManager

    with MemoryManager(base, decider="offline") as source:
        lines = list(itertools.islice(source.export_jsonl(user_id=USER), n))
    rates = {}
    for kind in ("raw", "merge"):
        path = f"{base}.{kind}"
        with MemoryManager(path, decider="offline") as mm:
            if kind == "merge":
                mm.update_memory("A fact so the store is not empty", user_id=USER)
            cpu, wall = timed(lambda mm=mm: mm.import_jsonl(lines))
            rates[kind] = {"cpu": n / (cpu / 1000), "wall": n / (wall / 1000)}
        os.remove(path)
    return rates


def _pooled(runs: list[dict]) -> dict:
    """One tree's one-round results (--alternate) as one: medians over the rounds."""
    pooled = {**runs[-1]}
    for key in ("split", "ms", "facts_per_s"):
        if runs[0][key]:
            pooled[key] = {k: statistics.median(r[key][k] for r in runs) for k in runs[0][key]}
    return pooled


def _child(tree: str, args: list[str]) -> dict:
    return run_child(tree, __file__, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tree_options(parser)
    parser.add_argument("--fill", type=int, default=100_000, help="memories of user-0 first")
    parser.add_argument("--facts", type=int, default=5000, help="facts in the timed batch")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunk", type=int, help="update_many chunk_size (default: setting)")
    parser.add_argument("--profile", action="store_true", help="cProfile one round (new)")
    parser.add_argument("--split", action="store_true", help="CPU: statements vs the rest")
    parser.add_argument("--compare", action="store_true", help="bulk vs one at a time (new)")
    parser.add_argument("--imports", type=int, help="time import_jsonl of this many memories")
    parser.add_argument("--base", help="a filled file kept between runs (filled when missing)")
    parser.add_argument("--alternate", action="store_true", help="a child per tree per round")
    child_options(parser, ["fill", "measure", "compare", "imports"])
    args = parser.parse_args()
    modes = {
        "fill": lambda texts: _fill(args.db, texts["rows"]),
        "compare": lambda texts: _compare(str(Path(args.db).parent), texts["batch"]),
        "imports": lambda texts: _imports(args.db, args.imports),
        "measure": lambda texts: _measure(
            args.db, texts["batch"], args.rounds, args.chunk, args.profile, args.split
        ),
    }
    if answer_child(args, modes):
        return
    trees = {"old": args.old, "new": args.new} if args.old else {"new": args.new}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        texts = str(Path(tmp) / "texts.json")
        Path(texts).write_text(json.dumps(_texts(args.fill, args.facts)))
        base = str(Path(tmp) / "base.db")
        if args.compare:
            compared = _child(args.new, ["--child", "compare", "--db", base, "--texts", texts])
            print(f"one at a time vs update_many, fresh stores: {compared}")
        if args.base and Path(args.base).exists():
            shutil.copy(args.base, base)
        else:
            # Filled by the old tree when there is one: the new code migrates an older file
            # on open (outside the timed part), the old cannot open a newer one.
            _child(args.old or args.new, ["--child", "fill", "--db", base, "--texts", texts])
            if args.base:
                shutil.copy(base, args.base)
        child = ["--child", "measure", "--db", base, "--texts", texts]
        child += ["--chunk", str(args.chunk)] if args.chunk else []
        child += ["--split"] if args.split else []
        if args.alternate:  # one round per child, the trees taking turns to go first
            rounds: dict[str, list[dict]] = {name: [] for name in trees}
            for r in range(args.rounds):
                for name in list(trees) if r % 2 == 0 else list(trees)[::-1]:
                    rounds[name].append(_child(trees[name], [*child, "--rounds", "1"]))
            results = {name: _pooled(runs) for name, runs in rounds.items()}
        for name, tree in trees.items():
            if not args.alternate:
                extra = ["--rounds", str(args.rounds)]
                extra += ["--profile"] if args.profile and name == "new" else []
                results[name] = _child(tree, [*child, *extra])
            print(json.dumps({name: results[name]}), file=sys.stderr, flush=True)
            if args.imports:
                child = ["--child", "imports", "--db", base, "--texts", texts]
                rates = _child(tree, [*child, "--imports", str(args.imports)])
                print(f"{name}: import_jsonl of {args.imports} records/s (CPU, wall): {rates}")
    print(f"update_many of {args.facts} facts into user-0 of {args.fill:,} memories,")
    print(f"medians over {args.rounds} rounds (offline decider, no embedder)\n")
    print("| code | CPU s | wall s | facts/s CPU | facts/s wall | ops |")
    print("|---|---:|---:|---:|---:|---|")
    for name, r in results.items():
        ops = ", ".join(f"{op} {n}" for op, n in sorted(r["ops"].items()))
        print(
            f"| {name} | {r['ms']['cpu'] / 1000:.2f} | {r['ms']['wall'] / 1000:.2f}"
            f" | {r['facts_per_s']['cpu']:,.0f} | {r['facts_per_s']['wall']:,.0f} | {ops} |"
        )
    if args.split:
        print("\n| code | statements ms/fact | executemany ms/fact | rest (Python) ms/fact |")
        print("|---|---:|---:|---:|")
        for name, r in results.items():
            parts = " | ".join(
                f"{r['split'][k]:.3f}" for k in ("statements", "executemany", "rest")
            )
            print(f"| {name} | {parts} |")


if __name__ == "__main__":
    main()
