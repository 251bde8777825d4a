"""Write-path benchmark: one user scope filled with N realistic facts, then per-op latencies.

The facts are the MSC persona sentences (about 31k distinct first-person facts). To reach
100k distinct facts each is also restated about other people ("I like Metallica." -> "My
brother likes Metallica.", "My coworker Ana likes Metallica."), so the vocabulary and the
FTS5 posting lists look like a real store, not like a corpus made from a few dozen words.

Each size runs in a fresh subprocess so peak RSS (ru_maxrss) belongs to that size alone.

    python benchmarks/bench_update.py                 # 1k, 10k, 100k
    python benchmarks/bench_update.py --sizes 1000,10000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from memman import MemoryManager
from memman.config import load_settings
from memman.language.text import normalize
from memman.storage.store import Scope
from memman.write.retrieval import fts_query, lexical_candidates

try:  # the FTS5 statements live in storage since Session 7
    from memman.storage.fts import _CANDIDATES_SQL, RANK, index_key, scoped_match
except ImportError:  # an older tree run side by side (benchmarks/sides.py)
    from memman.write.retrieval import _CANDIDATES_SQL, RANK, index_key, scoped_match

IMPORT_RSS_MB = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
# MEMMAN_DATA: the shared data folder, for a checkout elsewhere than /work/main (a worktree).
SHARED = os.environ.get("MEMMAN_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
DATA = Path(SHARED) / "msc" / "msc_personas_all.json"
USER = "bench-user"
SEED = 20261122
HELD_OUT = 1000  # base facts never stored: the novel / retrieval / search queries
TOP_K = 8  # Settings.top_k default
FILL_BATCH = 1000

NAMES = """Ana Raj Priya Tom Lena Omar Sofia Kenji Maria Jamal Chloe Diego Fatima Lukas Aisha
Mateo Yuki Noah Zara Ivan Leila Hugo Mei Samuel Nadia Pedro Ingrid Kwame Elena Tariq Grace
Marco Hana Felix Amara Oscar Rosa Arjun Clara Bilal Sven Lucia Dmitri Esme Kofi Julia Ravi
Ines Theo Maya""".split()
RELATIONS = [
    ("My brother", "m"), ("My sister", "f"), ("My mom", "f"), ("My dad", "m"),
    ("My husband", "m"), ("My wife", "f"), ("My son", "m"), ("My daughter", "f"),
    ("My uncle", "m"), ("My aunt", "f"), ("My grandma", "f"), ("My grandpa", "m"),
]  # fmt: skip
NAMED = ["My friend", "My coworker", "My neighbor", "My roommate", "My cousin", "My boss"]
FEMALE_NAMES = set(
    "Ana Priya Lena Sofia Maria Chloe Fatima Aisha Yuki Zara Leila Mei Nadia Ingrid Elena "
    "Grace Hana Amara Rosa Clara Lucia Esme Julia Ines Maya".split()
)

# Verbs that stay as they are after a third-person subject (modals and past forms).
_UNCHANGED = set(
    """can cant can't cannot will won't would could should must might may had did didn't was
    wasn't went used got grew became began came made lost left lived moved won wrote met
    broke bought drove fell felt found gave heard kept knew led read ran said saw sold sang
    spent taught thought told took wore""".split()
)
_IRREGULAR = {
    "am": "is", "have": "has", "do": "does", "go": "goes", "don't": "doesn't",
    "haven't": "hasn't", "'m": "is", "'ve": "has", "'ll": "will", "'d": "would",
}  # fmt: skip
_PRONOUNS = {
    "m": {"my": "his", "me": "him", "myself": "himself", "mine": "his"},
    "f": {"my": "her", "me": "her", "myself": "herself", "mine": "hers"},
}
_OBJECT_WORD = re.compile(r"\b(my|me|myself|mine)\b", re.IGNORECASE)


def _third_person(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _UNCHANGED or low.endswith("ed"):
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def restate(fact: str, subject: str, gender: str) -> str | None:
    """The fact said about someone else, or None if it does not start with I / My."""
    pronouns = _PRONOUNS[gender]

    def rest(text: str) -> str:
        return _OBJECT_WORD.sub(lambda m: pronouns[m.group(1).lower()], text)

    if fact.startswith("My "):
        return f"{subject}'s {rest(fact[3:])}"
    match = re.match(r"I('m|'ve|'ll|'d)?\s*(\S+)?(.*)", fact)
    if not match or not fact.startswith("I") or fact[1:2] not in (" ", "'"):
        return None
    contraction, verb, tail = match.groups()
    if contraction:
        head = _IRREGULAR[contraction]
        return f"{subject} {head} {rest((verb or '') + tail)}".rstrip()
    if verb is None:
        return None
    return f"{subject} {_third_person(verb)}{rest(tail)}"


def subjects(rng: random.Random) -> list[tuple[str, str]]:
    """Three different people to restate one fact about."""
    people = [*RELATIONS]
    for _ in range(6):
        name = rng.choice(NAMES)
        people.append((f"{rng.choice(NAMED)} {name}", "f" if name in FEMALE_NAMES else "m"))
    return rng.sample(people, 3)


def load_corpus() -> tuple[list[str], list[str]]:
    """(facts to store, held-out first-person facts), distinct by normalised text, shuffled."""
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    base = sorted(
        {fact.strip() for split in raw.values() for dialog in split
         for value in dialog.values() if isinstance(value, list) for fact in value}
    )  # fmt: skip
    rng = random.Random(SEED)
    rng.shuffle(base)
    held_out, stored = base[:HELD_OUT], base[HELD_OUT:]
    seen = {normalize(f) for f in held_out}
    facts: list[str] = []
    for fact in stored:
        variants = [fact] + [restate(fact, s, g) for s, g in subjects(rng)]
        for variant in variants:
            if variant and normalize(variant) not in seen:
                seen.add(normalize(variant))
                facts.append(variant)
    rng.shuffle(facts)
    return facts, held_out


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
    }


def run_size(n: int, ops: int) -> dict:
    facts, held_out = load_corpus()
    if n > len(facts):
        raise SystemExit(f"only {len(facts)} distinct facts available, asked for {n}")
    rng = random.Random(SEED + n)
    novel_texts = held_out[:ops]
    query_texts = held_out[ops : 2 * ops]
    search_texts = held_out[2 * ops : 3 * ops]
    # The same held-out facts said about someone else ("My cousin Noah ..."): their subject
    # words (brother, friend, a name) have the long posting lists of the restated corpus.
    restated = [v for f in query_texts if (v := restate(f, *subjects(rng)[0]))]
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "bench.db")
        manager = MemoryManager(path, settings=load_settings(db=path, decider="offline"))
        scope = Scope(USER)

        # Batches of FILL_BATCH facts, results dropped: a caller holding 100k results would
        # measure its own list, not the store. The last batch shows the rate at size N.
        fill_tiers: Counter[str] = Counter()
        ingest_s = last_batch_s = 0.0
        for start in range(0, n, FILL_BATCH):
            batch = facts[start : min(n, start + FILL_BATCH)]
            begin = time.perf_counter()
            results = manager.update_many(batch, user_id=USER)
            last_batch_s = time.perf_counter() - begin
            ingest_s += last_batch_s
            fill_tiers.update(f"{r.op.value}/{r.tier.value}" for r in results)
        del results

        store = manager.store

        def retrieve(text: str) -> float:
            with store.read() as conn:
                return timed(lambda: lexical_candidates(store, conn, scope, text, TOP_K))

        for text in query_texts[:20]:  # warm the page cache and SQLAlchemy's statement cache
            retrieve(text)
        retrieval = [retrieve(t) for t in query_texts]
        retrieval_restated = [retrieve(t) for t in restated]
        search = [timed(lambda t=t: manager.search(t, user_id=USER)) for t in search_texts]

        raw = sqlite3.connect(path)
        with store.read() as conn:
            key = index_key(conn, scope)
        queries = [scoped_match(key, fts_query(t)) for t in query_texts]
        fts_only = (
            f"SELECT rowid, {RANK} AS bm25 FROM long_term_fts"
            " WHERE long_term_fts MATCH ? ORDER BY bm25 LIMIT ?"
        )
        raw_fts = [timed(lambda q=q: raw.execute(fts_only, (q, TOP_K)).fetchall()) for q in queries]
        params = [{"query": q, "user_id": USER, "agent_id": "", "limit": TOP_K} for q in queries]
        raw_join = [timed(lambda p=p: raw.execute(_CANDIDATES_SQL, p).fetchall()) for p in params]
        raw_join_restated = [
            timed(lambda p=p: raw.execute(_CANDIDATES_SQL, p).fetchall())
            for p in ({**params[0], "query": scoped_match(key, fts_query(t))} for t in restated)
        ]
        raw.close()

        duplicates = rng.sample(facts[:n], ops)
        dup = [timed(lambda f=f: manager.update_memory(f, user_id=USER)) for f in duplicates]
        novel_results = []

        def add(fact: str) -> None:
            novel_results.append(manager.update_memory(fact, user_id=USER))

        novel = [timed(lambda f=f: add(f)) for f in novel_texts]
        manager.close()
        db_mb = Path(path).stat().st_size / 1e6

    return {
        "n": n,
        "ingest_facts_per_s": n / ingest_s,
        "ingest_s": ingest_s,
        "ingest_last_batch_facts_per_s": len(batch) / last_batch_s,
        "fill_tiers": dict(fill_tiers),
        "hash_dup": summary(dup),
        "novel_add": summary(novel),
        "novel_tiers": dict(Counter(f"{r.op.value}/{r.tier.value}" for r in novel_results)),
        "retrieval": summary(retrieval),
        "search": summary(search),
        "raw_join": summary(raw_join),
        "retrieval_restated": summary(retrieval_restated),
        "raw_join_restated": summary(raw_join_restated),
        "raw_fts": summary(raw_fts),
        "db_mb": db_mb,
        "import_rss_mb": IMPORT_RSS_MB,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def table(results: list[dict]) -> str:
    rows = [
        ("offline ingest (update_many), facts/s", lambda r: f"{r['ingest_facts_per_s']:,.0f}"),
        (
            f"ingest rate of the last {FILL_BATCH:,} facts, facts/s",
            lambda r: f"{r['ingest_last_batch_facts_per_s']:,.0f}",
        ),
        ("exact duplicate update_memory (hash tier), ms", lambda r: _ms(r["hash_dup"])),
        ("novel update_memory, ms", lambda r: _ms(r["novel_add"])),
        ("candidate retrieval (lexical_candidates), ms", lambda r: _ms(r["retrieval"])),
        (
            "candidate retrieval, restated queries (My cousin Noah ...), ms",
            lambda r: _ms(r["retrieval_restated"]) if "retrieval_restated" in r else "n/a",
        ),
        (
            "raw sqlite3, same join SQL, restated queries, ms",
            lambda r: _ms(r["raw_join_restated"]) if "raw_join_restated" in r else "n/a",
        ),
        ("search(), ms", lambda r: _ms(r["search"])),
        ("raw sqlite3, same join SQL, ms", lambda r: _ms(r["raw_join"])),
        ("raw sqlite3, FTS only (no join), ms", lambda r: _ms(r["raw_fts"])),
        (
            "retrieval / raw join (p50 ratio)",
            lambda r: f"{r['retrieval']['p50'] / r['raw_join']['p50']:.1f}x",
        ),
        ("peak RSS, MB", lambda r: f"{r['peak_rss_mb']:.0f}"),
        ("RSS after importing memman, MB", lambda r: f"{r['import_rss_mb']:.0f}"),
        ("database file, MB", lambda r: f"{r['db_mb']:.0f}"),
    ]
    head = "| metric | " + " | ".join(f"N = {r['n']:,}" for r in results) + " |"
    lines = [head, "|---|" + "---:|" * len(results)]
    lines += [f"| {name} | " + " | ".join(cell(r) for r in results) + " |" for name, cell in rows]
    return "\n".join(lines)


def _ms(s: dict[str, float]) -> str:
    return f"{s['p50']:.2f} / {s['p95']:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated N")
    parser.add_argument("--ops", type=int, default=300, help="timed operations per metric")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process: one size
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one, args.ops)))
        return
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        child = subprocess.run(
            [sys.executable, __file__, "--one", str(n), "--ops", str(args.ops)],
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        )
        result = json.loads(child.stdout)
        results.append(result)
        print(json.dumps(result), file=sys.stderr, flush=True)
    print("latencies are p50 / p95 over", args.ops, "operations each\n")
    print(table(results))


if __name__ == "__main__":
    main()
