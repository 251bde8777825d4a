"""bench_pairs' sample, pair by pair, on several trees: what one catches that another does not.

    python benchmarks/pair_outcomes.py --tree /tmp/old --tree . [--mode local] [--out o.json]

bench_pairs counts outcomes per set; this records each pair's (op, tier, reason) so two trees
(a `git archive` of an old commit and this checkout, say) can be compared pair by pair on the
same sample (bench_pairs.sampled: same sets, size and seed). Each tree runs in its own child
process with that tree first on the path (sides.run_child), so an old tree with another
package layout runs as it was; the child imports nothing from benchmarks but memman itself.

With `--mode local` the MiniLM vectors are cached per text in `--cache` (an .npz), filled
once by this checkout's LocalEmbedder and read by every child: the model is the same in
every tree since issue 11 was filed, and a rerun then takes a fraction of bench_pairs' time.

Printed: each tree's counts per set (bench_pairs.summarise, so they can be checked against a
bench_pairs run), then for each paraphrase set the pairs the first tree catches and the
last does not (and the reverse), and for each distinct set the merges the last tree makes
and the first does not, each with both trees' op/tier/reason and the pair's cosine.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

CATCHES = ("NOOP", "UPDATE")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", action="append", required=False, default=[])
    parser.add_argument("--mode", choices=("local", "offline"), default="local")
    parser.add_argument("--sample", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/pair_outcomes_minilm.npz"))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.mode, args.cache)))
        return
    parent(args)


# --- parent: this checkout's benchmarks --------------------------------------------------


def parent(args: argparse.Namespace) -> None:
    from bench_pairs import lossless, pair_sets, sampled, summarise
    from sides import run_child

    from memman import Op

    size = args.sample if args.mode == "local" else 0
    sets = sampled(pair_sets(), size, args.seed)
    texts = {s.name: [list(p) for p in pairs] for s, pairs in sets}
    vectors: dict[str, np.ndarray] = {}
    if args.mode == "local":
        vectors = warm_cache(args.cache, [t for pairs in texts.values() for p in pairs for t in p])
    trees: dict[str, dict[str, list[dict[str, object]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        pairs_file = Path(tmp) / "pairs.json"
        pairs_file.write_text(json.dumps(texts), encoding="utf-8")
        for tree in args.tree:
            options = ["--mode", args.mode, "--cache", str(args.cache)]
            trees[tree] = run_child(tree, __file__, ["--child", str(pairs_file), *options])
    kinds = {s.name: s.kind for s, _ in sets}
    for tree, records in trees.items():
        print(f"\n{tree} ({args.mode})")
        for name, rows in records.items():
            outcomes: Counter[str] = Counter()
            kept = 0
            for (a, b), row in zip(texts[name], rows, strict=True):
                row["cosine"] = _cosine(vectors, a, b)
                outcome = f"{Op(row['op'])}/{row['tier']}"
                if row["op"] in CATCHES and not row["onto_a"]:
                    outcome += "/other"
                elif row["op"] in CATCHES:
                    kept += lossless(a, b, Op(row["op"]))
                outcomes[outcome] += 1
            summary = summarise(kinds[name], outcomes, kept)
            shown = {k: v for k, v in summary.items() if k not in ("outcomes", "pairs")}
            print(f"  {name:22} {shown}")
    if len(trees) >= 2:
        runs = list(trees.values())
        first, last = runs[0], runs[-1]
        for name, kind in kinds.items():
            compare(name, kind, texts[name], first[name], last[name])
    if args.out:
        out = {"mode": args.mode, "texts": texts, "trees": trees}
        args.out.write_text(json.dumps(out) + "\n", encoding="utf-8")


def _merged(row: dict[str, object]) -> bool:
    return row["op"] in CATCHES and bool(row["onto_a"])


def compare(name: str, kind: str, texts: list[list[str]], first: list, last: list) -> None:
    """The pairs whose merge onto A the two trees disagree on (paraphrase sets: both ways;
    distinct sets: only what the last tree merges and the first did not)."""
    both = list(enumerate(zip(first, last, strict=True)))
    lost = [i for i, (f, la) in both if _merged(f) and not _merged(la)]
    gained = [i for i, (f, la) in both if _merged(la) and not _merged(f)]
    sections = [("caught by the first only", lost)] if kind == "paraphrase" else []
    sections.append(("merged by the last only", gained))
    for title, indices in sections:
        print(f"\n{name}: {len(indices)} {title}")
        for i in indices:
            cos = last[i]["cosine"]
            print(f"  [{i}] cos {cos:.3f}" if cos is not None else f"  [{i}]")
            print(f"    A: {texts[i][0]}\n    B: {texts[i][1]}")
            for label, row in (("first", first[i]), ("last", last[i])):
                print(f"    {label}: {row['op']}/{row['tier']}: {row['reason']}")
            print(f"    why now: {'; '.join(refusals(*texts[i], cos))}")


def refusals(a: str, b: str, cosine: float | None) -> list[str]:
    """What this checkout's router and offline decider say of B written after A, test by
    test in the order memman.write.route applies them: why a cheap merge is refused (so the
    last --tree should be this checkout)."""
    from memman.config import Settings
    from memman.language.roles import meaning_difference
    from memman.language.text import added_words, content_tokens, jaccard
    from memman.language.wording import elaborates, extends
    from memman.semantic.embed import LOCAL_MODEL, cosine_thresholds
    from memman.write.route import Thresholds, _unlike

    settings = Settings()
    overlap = jaccard(content_tokens(b), content_tokens(a))
    why = [f"Jaccard {overlap:.2f}"]
    if overlap >= settings.noop_jaccard:
        adds = sorted(added_words(b, a, paraphrase_aware=False))
        why[0] += f": {meaning_difference(b, a) or (f'adds {adds}' if adds else 'NOOP')}"
    noop, novel = cosine_thresholds(settings, LOCAL_MODEL)
    if cosine is not None and cosine >= noop:
        limits = Thresholds("cosine", noop, novel)
        why.append(f"cosine {cosine:.3f}: {_unlike(b, a, limits, cosine, limits) or 'NOOP'}")
    extended = extends(b, a) or elaborates(b, a)
    why.append("decider: " + ("extends" if extended else "no extension"))
    return why


def warm_cache(path: Path, texts: list[str]) -> dict[str, np.ndarray]:
    """Every text's MiniLM vector, embedding (in batches) only those the cache lacks."""
    cache = load_cache(path)
    missing = sorted(set(texts) - cache.keys())
    if missing:
        embedder = _local_embedder()
        cache.update(zip(missing, embedder.embed(missing), strict=True))
        save_cache(path, cache)
    return cache


def _cosine(vectors: dict[str, np.ndarray], a: str, b: str) -> float | None:
    if a not in vectors or b not in vectors:
        return None
    return round(float(vectors[a] @ vectors[b]), 4)


# --- both sides --------------------------------------------------------------------------


def load_cache(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        return {}
    with np.load(path) as data:
        return dict(zip(data["texts"].tolist(), data["vectors"], strict=True))


def save_cache(path: Path, cache: dict[str, np.ndarray]) -> None:
    names = list(cache)
    np.savez(path, texts=np.array(names), vectors=np.stack([cache[t] for t in names]))


def _local_embedder():  # the tree's own class, whichever module holds it
    """The tree's LocalEmbedder (memman.semantic.local_model now, memman.local_model when
    issue 11 was filed)."""
    for module in ("memman.semantic.local_model", "memman.local_model"):
        try:
            return importlib.import_module(module).LocalEmbedder()
        except ModuleNotFoundError:
            continue
    raise SystemExit("no LocalEmbedder in this tree")


# --- child: the tree's memman only --------------------------------------------------------


class CachedEmbedder:
    """The local model's vectors from the cache; a text the cache lacks is embedded by the
    tree's own LocalEmbedder (loaded on first need) and added."""

    name = "all-minilm-l6-v2"  # the local model's name: its calibrated cosine thresholds

    def __init__(self, cache: dict[str, np.ndarray]):
        self.cache = cache
        self.dim = len(next(iter(cache.values())))
        self.added = 0
        self._model = None

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self._model = self._model or _local_embedder()
            self.cache.update(zip(missing, self._model.embed(missing), strict=True))
            self.added += len(missing)
        return np.stack([self.cache[t] for t in texts]).astype(np.float32)


def child(pairs_file: Path, mode: str, cache_path: Path) -> dict[str, list[dict[str, object]]]:
    """(op, tier, reason, onto A) of B written after A, per pair, as bench_pairs.run writes
    them: one store, one user per pair."""
    from memman import MemoryManager

    texts = json.loads(pairs_file.read_text(encoding="utf-8"))
    embedder = CachedEmbedder(load_cache(cache_path)) if mode == "local" else "none"
    records: dict[str, list[dict[str, object]]] = {}
    with (
        tempfile.TemporaryDirectory() as tmp,
        MemoryManager(str(Path(tmp) / "pairs.db"), embedder=embedder) as mm,
    ):
        for name, pairs in texts.items():
            rows = records.setdefault(name, [])
            for index, (a, b) in enumerate(pairs):
                user = f"{mode}-{name}-{index}"
                stored = mm.update_memory(a, user_id=user)
                result = mm.update_memory(b, user_id=user)
                rows.append(
                    {
                        "op": _value(result.op),
                        "tier": _value(result.tier),
                        "reason": result.reason,
                        "onto_a": result.memory_id == stored.memory_id,
                    }
                )
    if isinstance(embedder, CachedEmbedder) and embedder.added:
        print(f"{embedder.added} texts embedded beyond the cache", file=sys.stderr)
        save_cache(cache_path, embedder.cache)
    return records


def _value(member: object) -> str:
    return str(getattr(member, "value", member))


if __name__ == "__main__":
    main()
