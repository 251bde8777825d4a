"""Lifecycle figures: consolidate over 100k memories with planted near-duplicates; search p50.

    python benchmarks/bench_consolidate.py [--memories 100000] [--planted 0.1]

Distinct facts are MSC persona facts (deduplicated by their content-token set, so no two
originals are near-identical to begin with), stored directly as an old import would (no
routing), confidence 0.9 (under the protected level). A planted duplicate is an original
with a small edit that keeps it near-identical (an added stopword, a changed article, a
lost full stop, different case). Reported: wall time and peak RSS of one consolidate run,
planted duplicates merged, and distinct originals wrongly merged together.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

from bench_semantic import msc_facts

from memman import MemoryManager
from memman.store import Scope
from memman.text import content_hash, content_tokens

SCOPE = Scope("bench")
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
EDITS = [
    lambda t: t.replace("I ", "I really ", 1),
    lambda t: t.rstrip(".") if t.endswith(".") else t + ".",
    lambda t: t.upper(),
    lambda t: t.replace(" a ", " the ", 1) if " a " in t else "Also, " + t,
]


def originals(count: int) -> list[str]:
    seen: set[frozenset[str]] = set()
    out = []
    for fact in msc_facts():
        tokens = content_tokens(fact)
        if len(tokens) >= 3 and tokens not in seen:
            seen.add(tokens)
            out.append(fact)
    if len(out) < count:  # MSC has ~60k distinct facts: number the rest apart
        out += [f"{f} (note {i} zq{i})" for i, f in enumerate(out[: count - len(out)])]
    return out[:count]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--planted", type=float, default=0.1)
    args = parser.parse_args()
    rng = random.Random(4)
    n_planted = int(args.memories * args.planted)
    facts = originals(args.memories - n_planted)
    planted: dict[str, int] = {}  # planted text -> index of its original
    for index in rng.sample(range(len(facts)), n_planted):
        for edit in rng.sample(EDITS, len(EDITS)):
            text = edit(facts[index])
            if content_hash(text) != content_hash(facts[index]) and text not in planted:
                planted[text] = index
                break
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "bench.db")
        with MemoryManager(path, clock=lambda: NOW) as mm:
            stamp = NOW.isoformat(timespec="milliseconds")
            origin: dict[str, int] = {}

            def fill(conn) -> None:
                for index, text in [*enumerate(facts), *((i, t) for t, i in planted.items())]:
                    memory_id = mm.store.insert_memory(
                        conn, SCOPE, content=text, content_hash=content_hash(text), now=stamp,
                        source=None, metadata={},
                    )  # fmt: skip
                    origin[memory_id] = index
                conn.exec_driver_sql("UPDATE long_term SET confidence = 0.9")

            started = time.perf_counter()
            mm.store.write(fill)
            print(f"stored {len(origin):,} memories in {time.perf_counter() - started:.1f} s")
            queries = rng.sample(facts, 200)
            latencies = []
            for query in queries:
                t0 = time.perf_counter()
                mm.search(query, user_id=SCOPE.user_id, limit=5)
                latencies.append((time.perf_counter() - t0) * 1000)
            rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            started = time.perf_counter()
            report = mm.consolidate(max_ops=10 * args.memories)
            seconds = time.perf_counter() - started
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        merges = [c for c in report.changes if c.action == "merge"]
        found = wrong = 0
        for change in merges:
            members = [change.target, *change.related]
            found += len(members) - 1
            wrong += len({origin[m] for m in members}) - 1
    planted_merged = found - wrong
    print(f"search p50 {statistics.median(latencies):.1f} ms, "
          f"p95 {statistics.quantiles(latencies, n=20)[18]:.1f} ms (200 queries, limit 5)")
    print(f"consolidate: {seconds:.1f} s, peak RSS {rss / 1024:.0f} MB "
          f"(before the run {rss_before / 1024:.0f} MB)")
    print(f"planted duplicates: {len(planted):,}; merged {planted_merged:,} "
          f"({planted_merged / len(planted):.1%}); distinct originals wrongly merged: {wrong}; "
          f"clusters rejected as chains: {len(report.rejected_clusters)}")  # fmt: skip


if __name__ == "__main__":
    main()
