"""Consolidation at scale: 100k memories with 10 % planted near-duplicates.

    python benchmarks/bench_consolidate.py [--memories 100000] [--planted 0.1]

Distinct facts: the MSC persona facts (~30k distinct texts), then, to reach the size asked
for, pairs of two different MSC facts joined into one memory ("I like Metallica. I have two
dogs."), as a store that keeps a few facts per row would hold. Originals are deduplicated by
consolidate's own merge test (memman.language.wording: the same words in the same order once
case, punctuation, articles and fillers are set aside), so no two originals are one fact by
that test. They are stored directly as an old import would (no routing), confidence 0.9
(under the protected level). A planted duplicate is an original with an edit an import or a
re-phrasing makes (an added "really", a lost or added full stop, "a" -> "the", an "Also, "
prefix). Offline, with no LLM configured.

Reported: wall time and peak RSS of one consolidate run (RSS is the process's peak, after
the store was filled), planted duplicates merged into their original, distinct originals
wrongly merged together, clusters rejected as chains, ambiguous clusters left for an LLM.
Works against older memman trees too (`PYTHONPATH=/path/to/old/tree`), for side by side runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import resource
import tempfile
import time
from pathlib import Path

from bench_semantic import msc_facts

from memman import MemoryManager
from memman.language.text import content_hash
from memman.language.wording import wording
from memman.storage.store import Scope

SCOPE = Scope("bench")
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
EDITS = [
    lambda t: t.replace("I ", "I really ", 1),
    lambda t: t.rstrip(".") if t.endswith(".") else t + ".",
    lambda t: t.replace(" a ", " the ", 1) if " a " in t else "Also, " + t,
    lambda t: "Also, " + t,
]


def originals(count: int, rng: random.Random) -> list[str]:
    """count facts, no two of them the same by consolidate's merge test."""
    seen: set[tuple[str, ...]] = set()
    out: list[str] = []

    def keep(fact: str) -> None:
        key = wording(fact)
        if len(key) >= 3 and key not in seen:
            seen.add(key)
            out.append(fact)

    singles = msc_facts()
    for fact in singles:
        keep(fact)
    while len(out) < count:
        first, second = rng.sample(singles, 2)
        keep(f"{first.rstrip('.')}. {second}")
    return out[:count]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--planted", type=float, default=0.1)
    args = parser.parse_args()
    rng = random.Random(4)
    n_planted = int(args.memories * args.planted)
    facts = originals(args.memories - n_planted, rng)
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
                        source=None, metadata={}, confidence=0.9,
                    )  # fmt: skip
                    origin[memory_id] = index

            started = time.perf_counter()
            mm.store.write(fill)
            took = time.perf_counter() - started
            print(f"stored {len(origin):,} memories ({len(facts):,} originals, "
                  f"{len(planted):,} planted) in {took:.1f} s")  # fmt: skip
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
    ambiguous = getattr(report, "ambiguous_clusters", [])  # older trees have none
    print(
        f"consolidate: {seconds:.1f} s, peak RSS {rss / 1024:.0f} MB "
        f"(before the run {rss_before / 1024:.0f} MB)"
    )
    print(f"planted duplicates: {len(planted):,}; merged {planted_merged:,} "
          f"({planted_merged / len(planted):.1%}); distinct originals wrongly merged: {wrong}; "
          f"clusters rejected as chains: {len(report.rejected_clusters)}; "
          f"ambiguous clusters left for an LLM: {len(ambiguous)}")  # fmt: skip


if __name__ == "__main__":
    main()
