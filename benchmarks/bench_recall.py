"""Recall latency: mm.search and mm.context at 100k memories in one scope, lexical and hybrid.

    python benchmarks/bench_recall.py [--memories 100000] [--queries 200]

The memories are the ~30k distinct MSC persona facts, then numbered copies of them ("... #7")
up to the size asked for (so every word's posting list grows with the store, as in
bench_semantic.py), stored directly (no routing), each with a random unit vector of 384
dimensions (MiniLM's size; the cosine cost depends only on the matrix, and embedding 100k
texts on CPU takes minutes). Hybrid search uses an embedder that returns a random unit vector
per query, so its figures exclude the model's encode time, which is timed apart with the real
local model when it is installed. Two query kinds: "keywords" (three content words of a
stored fact, like a user asking about a topic) and "sentences" (a whole stored fact, like
context() called with the user's last message). The lexical and hybrid managers take turns
query by query on one file; every search includes its reinforcement write. Reported: p50 and
p95 in ms (hybrid's first query, which builds the vector cache, is shown apart).

With the local model installed it also checks the recall_min_cosine default (0.3) on STS-B
dev: the share of sentence pairs at or above it per gold similarity band (0-5), i.e. how
many unrelated memories a cosine-only hit would let in and how many related ones it keeps.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_semantic import msc_facts
from calibrate_lexical import DATA

from memman import MemoryManager
from memman.errors import ConfigError
from memman.language.text import STOPWORDS, content_hash, words
from memman.semantic.embed import register_embedder
from memman.semantic.local_model import LocalEmbedder
from memman.storage.store import Scope
from memman.storage.vector_format import save_vector

SCOPE = Scope("bench")
STORED = "2026-01-01T00:00:00.000+00:00"
NOW = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
MODEL = "bench-random"
DIM = 384


class RandomEmbedder:
    """A unit vector per text, seeded by the text: costs microseconds, finds nothing real."""

    name = MODEL
    dim = DIM

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            row = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
            rows.append(row / np.linalg.norm(row))
        return np.stack(rows)


def fill(mm: MemoryManager, texts: list[str]) -> None:
    """Store texts with random vectors directly (no routing), 5,000 per transaction."""
    rng = np.random.default_rng(0)

    def write(conn, chunk: list[str]) -> None:
        vectors = rng.standard_normal((len(chunk), DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for text, vector in zip(chunk, vectors, strict=True):
            memory_id = mm.store.insert_memory(
                conn, SCOPE, content=text, content_hash=content_hash(text), now=STORED,
                source=None, metadata={},
            )  # fmt: skip
            save_vector(conn, memory_id, MODEL, vector)

    for start in range(0, len(texts), 5000):
        mm.store.write(lambda conn, s=start: write(conn, texts[s : s + 5000]))


def memories(count: int) -> tuple[list[str], list[str]]:
    """(the stored texts, the distinct MSC facts they start with)."""
    distinct = list({content_hash(f): f for f in msc_facts()}.values())
    copies = [f"{t} #{i}" for i, t in enumerate(distinct * (count // len(distinct)))]
    return (distinct + copies)[:count], distinct


def keywords(fact: str) -> str:
    return " ".join([w for w in words(fact) if w not in STOPWORDS][:3])


def percentiles(times: list[float]) -> str:
    p95 = statistics.quantiles(times, n=20)[18]
    return f"p50 {statistics.median(times):5.1f} ms, p95 {p95:5.1f} ms"


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    texts, facts = memories(args.memories)
    register_embedder(MODEL, lambda settings: RandomEmbedder())
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "bench.db")
        managers = {
            "lexical": MemoryManager(path, clock=lambda: NOW),
            "hybrid": MemoryManager(path, clock=lambda: NOW, embedder=MODEL),
        }
        started = time.perf_counter()
        fill(managers["lexical"], texts)
        print(f"stored {len(texts):,} memories in {time.perf_counter() - started:.1f} s")
        sample = rng.sample(facts, args.queries)
        kinds = {"keywords": [keywords(f) for f in sample], "sentences": sample}
        first = timed(lambda: managers["hybrid"].search(sample[0], user_id=SCOPE.user_id))
        print(f"hybrid first search (loads {len(texts):,} vectors): {first:.0f} ms")
        for kind, queries in kinds.items():
            times: dict[str, list[float]] = {name: [] for name in managers}
            context: list[float] = []
            for query in queries:
                for name, mm in managers.items():
                    times[name].append(
                        timed(lambda mm=mm, q=query: mm.search(q, user_id=SCOPE.user_id, limit=5))
                    )
                context.append(
                    timed(lambda q=query: managers["lexical"].context(q, user_id=SCOPE.user_id))
                )
            for name, t in times.items():
                print(f"search {kind:9} {name:7}: {percentiles(t)}  ({len(t)} queries, limit 5)")
            print(f"context {kind:8} lexical: {percentiles(context)}  (limit 20, 500 tokens)")
        for mm in managers.values():
            mm.close()
    encode_time(sample[:50])
    cosine_floor()


def encode_time(queries: list[str]) -> None:
    """The real model's per-query encode time: what hybrid recall adds on top."""
    try:
        model = LocalEmbedder()
    except ConfigError as error:
        print(f"local model not available ({error}); query encode time not measured")
        return
    model.embed(queries[:5])  # warm up
    times = [timed(lambda q=q: model.embed([q])) for q in queries]
    print(f"local MiniLM query encode: {percentiles(times)}  ({len(times)} queries, 1 per call)")


def cosine_floor(floor: float = 0.3) -> None:
    """Share of STS-B dev pairs with MiniLM cosine >= floor, per gold similarity band."""
    try:
        model = LocalEmbedder()
    except ConfigError:
        return
    pairs = []
    for line in (DATA / "stsbenchmark" / "sts-dev.csv").read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) >= 7:
            pairs.append((float(fields[4]), fields[5], fields[6]))
    a = model.embed([p[1] for p in pairs])
    b = model.embed([p[2] for p in pairs])
    cosines = (a * b).sum(axis=1)
    for low, high in ((0, 1), (1, 2), (2, 3), (3, 4), (4, 5.01)):
        band = [c for (score, _, _), c in zip(pairs, cosines, strict=True) if low <= score < high]
        share = sum(c >= floor for c in band) / len(band)
        print(f"STS-B dev gold {low}-{min(high, 5):g}: {len(band):4} pairs, "
              f"{share:6.1%} at cosine >= {floor}")  # fmt: skip


if __name__ == "__main__":
    main()
