"""Semantic tier figures: paraphrase recall among distractors, hybrid latency, ingest rate.

    pip install torch==2.13.0 && pip install -e ".[local,vec]"
    python benchmarks/bench_semantic.py [--pairs 500] [--distractors 10000]

- recall@1/@5: STS-B paraphrase pairs (score >= 4); every first sentence is stored among
  MSC persona facts as distractors, every second sentence is the query.
- hybrid p50: candidate retrieval on a 100k-memory scope. The 100k vectors are random unit
  vectors (embedding 100k texts on CPU takes minutes and the cosine cost depends only on the
  matrix size); the texts are MSC facts, so BM25 sees realistic posting lists. Each vector
  backend (`--vector-search numpy,sqlite-vec`; sqlite-vec needs `.[vec]`) searches the same
  file, taking turns query by query; its first query (numpy builds its cache) is shown apart.
- ingest: update_many of 2,000 MSC facts with local embeddings into a fresh store, then the
  same facts again (all repeats), model warmed up; median of `--ingest-rounds` rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import numpy as np
from calibrate_lexical import DATA, sts_pairs

from memman import MemoryManager
from memman.language.text import content_hash
from memman.storage.store import Scope
from memman.storage.vector_format import save_vector
from memman.write.retrieval import hybrid_candidates, lexical_candidates

SCOPE = Scope("bench")
NOW = "2026-01-01T00:00:00.000+00:00"


def msc_facts() -> list[str]:
    data = json.loads((DATA / "msc" / "msc_personas_all.json").read_text(encoding="utf-8"))
    facts = [
        fact
        for split in data.values()
        for persona in split
        for speaker in persona.values()
        if isinstance(speaker, list)  # skip non-fact fields
        for fact in speaker
    ]
    return list(dict.fromkeys(facts))


def fill(mm: MemoryManager, texts: list[str], vectors: np.ndarray) -> None:
    """Store texts with their vectors directly (no routing), 5,000 per transaction."""

    def write(conn, texts, vectors):
        for text, vector in zip(texts, vectors, strict=True):
            memory_id = mm.store.insert_memory(
                conn,
                SCOPE,
                content=text,
                content_hash=content_hash(text),
                now=NOW,
                source=None,
                metadata={},
            )
            save_vector(conn, memory_id, mm.embedder.name, vector)

    for start in range(0, len(texts), 5000):
        end = start + 5000
        mm.store.write(lambda conn, s=start, e=end: write(conn, texts[s:e], vectors[s:e]))


def recall(mm: MemoryManager, pairs, distractors: list[str]) -> dict[str, tuple[float, float]]:
    by_hash: dict[str, str] = {}
    for text in [a for a, _ in pairs] + distractors:
        by_hash.setdefault(content_hash(text), text)  # the store keeps one per normalised text
    stored = list(by_hash.values())
    fill(mm, stored, mm.embedder.embed(stored))
    queries = mm.embedder.embed([b for _, b in pairs])
    hits = {"lexical": [], "embedding": [], "hybrid": []}
    with mm.store.read() as conn:
        for (a, b), q in zip(pairs, queries, strict=True):
            lex = [r.memory.content for r in lexical_candidates(mm.store, conn, SCOPE, b, 5)]
            top = mm.vectors.top(conn, SCOPE, mm.embedder.name, q, 5)
            emb = [mm.store.memories_by_pk(conn, [pk])[pk].content for pk, _ in top]
            hyb = [
                r.memory.content
                for r in hybrid_candidates(
                    mm.store, conn, SCOPE, b, 5, index=mm.vectors, model=mm.embedder.name, vector=q
                )
            ]
            for name, ranked in (("lexical", lex), ("embedding", emb), ("hybrid", hyb)):
                found = [content_hash(text) for text in ranked]
                hits[name].append(found.index(content_hash(a)) if content_hash(a) in found else 99)
    return {n: (np.mean([r < 1 for r in h]), np.mean([r < 5 for r in h])) for n, h in hits.items()}


def latency(
    mm: MemoryManager, facts: list[str], size: int, backends: list[str]
) -> dict[str, tuple[float, float]]:
    """(first query, p50) in ms per vector backend, on one file, the backends taking turns."""
    rng = np.random.default_rng(0)
    texts = (facts * (size // len(facts) + 1))[:size]
    texts = [f"{t} #{i}" for i, t in enumerate(texts)]
    vectors = rng.standard_normal((size, mm.embedder.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    fill(mm, texts, vectors)
    queries = facts[:200]
    qv = mm.embedder.embed(queries)
    managers = {name: MemoryManager(mm.path, vector_search=name) for name in backends}
    times: dict[str, list[float]] = {name: [] for name in backends}
    try:
        with ExitStack() as stack:
            reads = {name: stack.enter_context(m.store.read()) for name, m in managers.items()}
            for text, vector in zip(queries, qv, strict=True):
                for name, m in managers.items():  # the first query builds numpy's cache
                    start = time.perf_counter()
                    hybrid_candidates(
                        m.store,
                        reads[name],
                        SCOPE,
                        text,
                        8,
                        index=m.vectors,
                        model=mm.embedder.name,
                        vector=vector,
                    )
                    times[name].append((time.perf_counter() - start) * 1000)
    finally:
        for m in managers.values():
            m.close()
    return {name: (t[0], statistics.median(t[1:])) for name, t in times.items()}


def ingest(folder: Path, facts: list[str], n: int, rounds: int) -> dict[str, list[float]]:
    """facts/s of `update_many` of n MSC facts with the local model, one rate per round.

    "fresh": into a new store (every fact embedded and written); "repeat": the same facts
    again (all exact repeats, settled by the hash tier). The model is warmed up first: its
    first encode pays a one-off start-up cost of seconds.
    """
    batch = facts[-n:]
    rates: dict[str, list[float]] = {"fresh": [], "repeat": []}
    for round_ in range(rounds):
        with MemoryManager(str(folder / f"ingest-{round_}.db"), embedder="local") as mm:
            mm.embedder.embed(facts[:64])
            for kind in rates:
                start = time.perf_counter()
                mm.update_many(batch, user_id="ingest")
                rates[kind].append(len(batch) / (time.perf_counter() - start))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--distractors", type=int, default=10_000)
    parser.add_argument("--latency-size", type=int, default=100_000)
    parser.add_argument("--vector-search", default="numpy,sqlite-vec")  # backends to time
    parser.add_argument("--ingest", type=int, default=2000)
    parser.add_argument("--ingest-rounds", type=int, default=3)
    args = parser.parse_args()
    facts = msc_facts()
    para, _ = sts_pairs()
    with tempfile.TemporaryDirectory() as tmp:
        with MemoryManager(str(Path(tmp) / "r.db"), embedder="local") as mm:
            for name, (r1, r5) in recall(mm, para[: args.pairs], facts[: args.distractors]).items():
                print(f"recall {name}: @1 {r1:.3f} @5 {r5:.3f}")
        with MemoryManager(str(Path(tmp) / "l.db"), embedder="local") as mm:
            backends = args.vector_search.split(",")
            for name, (first, p50) in latency(mm, facts, args.latency_size, backends).items():
                print(
                    f"hybrid at {args.latency_size} ({name}): p50 {p50:.1f} ms,"
                    f" first query {first:.0f} ms"
                )
        for kind, rates in ingest(Path(tmp), facts, args.ingest, args.ingest_rounds).items():
            print(
                f"ingest {kind}: {statistics.median(rates):.0f} facts/s median of"
                f" {len(rates)} ({', '.join(f'{r:.0f}' for r in rates)})"
            )


if __name__ == "__main__":
    main()
