"""Ingest with local embeddings, split into its two costs, side by side in one process.

    pip install torch==2.13.0 && pip install -e ".[local]"
    python benchmarks/bench_ingest.py [--facts 2000] [--rounds 5]

Each round, taking turns on the same 2,000 MSC persona facts (the last ones of the shared
set; model warmed up first):
- model: the local embedder alone, one embed() call for all facts (texts/s);
- write path: update_many into a fresh store with an embedder that returns the model's
  vectors precomputed, so only hashing, retrieval, routing and SQLite are timed (facts/s);
- ingest: update_many into a fresh store with the local model (facts/s), the issue 5 target.
Medians over rounds; the machine is noisy, so compare figures from the same run only.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_semantic import msc_facts

from memman import MemoryManager
from memman.semantic.local_model import LocalEmbedder


class Precomputed:
    """The model's own vectors, looked up instead of computed."""

    def __init__(self, model: LocalEmbedder, texts: list[str]):
        self.name, self.dim = model.name, model.dim
        self._vectors = dict(zip(texts, model.embed(texts), strict=True))

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vectors[text] for text in texts])


def rate(n: int, run) -> float:
    start = time.perf_counter()
    run()
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    facts = msc_facts()[-args.facts :]
    model = LocalEmbedder()
    model.embed(facts[:64])  # the first call pays a one-off start-up of seconds
    precomputed = Precomputed(model, facts)
    rates: dict[str, list[float]] = {"model": [], "write path": [], "ingest": []}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            rates["model"].append(rate(len(facts), lambda: model.embed(facts)))
            for kind, embedder in (("write path", precomputed), ("ingest", model)):
                path = str(Path(tmp) / f"{kind}-{round_}.db")
                with MemoryManager(path, embedder=embedder) as mm:
                    rates[kind].append(
                        rate(len(facts), lambda mm=mm: mm.update_many(facts, user_id="bench"))
                    )
    for kind, values in rates.items():
        unit = "texts/s" if kind == "model" else "facts/s"
        print(
            f"{kind}: {statistics.median(values):.0f} {unit} median of {len(values)}"
            f" ({', '.join(f'{v:.0f}' for v in values)})"
        )


if __name__ == "__main__":
    main()
