"""What the write path's cheap tiers do to labelled pairs: false merges, caught paraphrases.

    python benchmarks/bench_pairs.py [--modes offline,local] [--sample 1500] [--json out.json]

For each pair (A, B) of a data set, A is stored for a fresh user (one SQLite file, one user id
per pair, offline decider: no LLM), then B is written through update_memory, and the op and
tier that settled B are recorded. Data (/work/shared/data, see its README):

- STS-B train + dev: score <= 2 distinct, score >= 4 paraphrase.
- MRPC train: label 0 distinct, label 1 paraphrase.
- SICK train + trial: NEUTRAL distinct; CONTRADICTION on its own; ENTAILMENT with relatedness
  >= 4.5 paraphrase (SICK's entailments include "a man is playing a guitar" -> "a man is
  playing an instrument"; the relatedness cut keeps the near-equivalent ones).

Reported per data set and mode:

- false merges (distinct pairs, and SICK contradictions): B settled as NOOP (any tier), or as
  an UPDATE of A (an offline extension or negation take-back included): A and B are then no
  longer both active as themselves.
- lossless / lossy: the false merges split by whether the merge loses a word. A NOOP is
  lossless when B says nothing A does not (B's wording inside A's, `lossless`), an UPDATE of A
  when B says all A said; either way with the same negations. The rest are lossy. Issue 11
  item 6 makes the lossless NOOP a goal ("a statement that an active memory already contains
  word for word is a NOOP"), yet a distinct set's label still counts it a false merge.
- swallowed (SICK contradictions): B settled as NOOP, so the contradiction is lost.
- caught (paraphrase sets): B settled as NOOP or as an UPDATE of A.
- novel (paraphrase sets): B settled by the "novel" tier, an ADD no decider saw: with an LLM
  configured such a paraphrase is still stored as a second memory (the cost of the routing
  cuts that save calls, memman/write/pertinent.py).

Modes: `offline` (lexical tiers only) and `local` (embedder="local", MiniLM; skipped with a
message when the model cannot load). The local mode embeds every sentence, so by default it
runs on a sample of `--sample` pairs per set, drawn with a fixed seed; the offline mode runs
every pair unless `--sample-offline` is given.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import tempfile
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from calibrate_lexical import DATA, Pair, mrpc_pairs, sts_pairs

from memman import MemoryManager, Op
from memman.errors import ConfigError, EmbeddingError
from memman.language.text import negations
from memman.language.wording import wording

SICK_PARAPHRASE_RELATEDNESS = 4.5


def sick_pairs() -> tuple[list[Pair], list[Pair], list[Pair]]:
    """(paraphrases, distinct, contradictions) from SICK train and trial (header row)."""
    para: list[Pair] = []
    neutral: list[Pair] = []
    contra: list[Pair] = []
    for name in ("SICK_train.txt", "SICK_trial.txt"):
        with (DATA / "sick" / name).open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                pair = (row["sentence_A"], row["sentence_B"])
                judgment = row["entailment_judgment"]
                if judgment == "NEUTRAL":
                    neutral.append(pair)
                elif judgment == "CONTRADICTION":
                    contra.append(pair)
                elif float(row["relatedness_score"]) >= SICK_PARAPHRASE_RELATEDNESS:
                    para.append(pair)
    return para, neutral, contra


@dataclass(frozen=True)
class PairSet:
    name: str
    kind: str  # "distinct", "contradiction" or "paraphrase"
    pairs: list[Pair]


def pair_sets() -> list[PairSet]:
    sts_para, sts_non = sts_pairs()
    mrpc_para, mrpc_non = mrpc_pairs()
    sick_para, sick_neutral, sick_contra = sick_pairs()
    return [
        PairSet("STS-B <= 2", "distinct", sts_non),
        PairSet("MRPC 0", "distinct", mrpc_non),
        PairSet("SICK NEUTRAL", "distinct", sick_neutral),
        PairSet("SICK CONTRADICTION", "contradiction", sick_contra),
        PairSet("STS-B >= 4", "paraphrase", sts_para),
        PairSet("MRPC 1", "paraphrase", mrpc_para),
        PairSet("SICK ENTAIL >= 4.5", "paraphrase", sick_para),
    ]


def sampled(sets: list[PairSet], size: int, seed: int) -> list[tuple[PairSet, list[Pair]]]:
    """Each set with its pairs, or `size` of them drawn with one generator seeded once, set
    after set in order (0: every pair): the same sample in every run and every tool."""
    rng = random.Random(seed)
    return [
        (s, rng.sample(s.pairs, size) if size and len(s.pairs) > size else s.pairs) for s in sets
    ]


# Spellings of one word that words() splits or keeps apart: "U.S." / "US", "mid-year" /
# "midyear", "Nestlé" / "Nestle". Joined and folded before the lossless test only.
_INNER_MARK = re.compile(r"(?<=\w)[.\-](?=\w)")


def _folded_wording(text: str) -> list[str]:
    """wording(text) (every word but articles and fillers, in order) with diacritics dropped
    and the dots and hyphens inside a word removed."""
    plain = "".join(
        ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)
    )
    return list(wording(_INNER_MARK.sub("", plain)))


def _inside(shorter: str, longer: str) -> bool:
    """Every word of the shorter's folded wording in the longer's, in the same order (other
    words may come between), and the same negations."""
    rest = iter(_folded_wording(longer))
    kept = all(w in rest for w in _folded_wording(shorter))
    return kept and negations(shorter) == negations(longer)


def lossless(a: str, b: str, op: Op) -> bool:
    """Merging B onto A loses no word: a NOOP keeps A, so B must say nothing A does not; an
    UPDATE keeps B, so B must say all A said. Word order counts ("will perhaps" / "perhaps
    will" is lossy), and so do particles, pronouns and quantifiers ("although it's first" /
    "which is first" is lossy): wording keeps them."""
    return _inside(b, a) if op is Op.NOOP else _inside(a, b)


def run(mm: MemoryManager, prefix: str, pairs: list[Pair]) -> tuple[Counter[str], int]:
    """Outcome of writing B after A for each pair ("op/tier", "op/tier/other" if not onto A),
    and how many of the merges onto A are lossless."""
    outcomes: Counter[str] = Counter()
    kept = 0
    for index, (a, b) in enumerate(pairs):
        user = f"{prefix}-{index}"
        stored = mm.update_memory(a, user_id=user)
        result = mm.update_memory(b, user_id=user)
        onto_a = result.memory_id == stored.memory_id
        outcome = f"{result.op}/{result.tier}"
        if result.op in (Op.NOOP, Op.UPDATE) and not onto_a:
            outcome += "/other"
        elif result.op in (Op.NOOP, Op.UPDATE):
            kept += lossless(a, b, result.op)
        outcomes[outcome] += 1
    return outcomes, kept


def summarise(kind: str, outcomes: Counter[str], kept: int) -> dict[str, object]:
    total = sum(outcomes.values())
    noop = sum(n for o, n in outcomes.items() if o.startswith(f"{Op.NOOP}/"))
    update = sum(n for o, n in outcomes.items() if o.startswith(f"{Op.UPDATE}/"))
    merged = noop + update
    row: dict[str, object] = {"pairs": total, "outcomes": dict(sorted(outcomes.items()))}
    if kind == "paraphrase":
        row["caught"] = merged
        row["novel"] = outcomes.get(f"{Op.ADD}/novel", 0)
    else:
        row["false_merges"] = merged
        row["lossless"] = kept
        row["lossy"] = merged - kept
    if kind == "contradiction":
        row["swallowed"] = noop
    return row


def percent(count: int, total: int) -> str:
    return f"{100 * count / total:5.1f} %" if total else "  n/a"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modes", default="offline,local")
    parser.add_argument("--sample", type=int, default=1500, help="pairs per set, local mode")
    parser.add_argument("--sample-offline", type=int, default=0, help="0: every pair")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sets = pair_sets()
    results: dict[str, dict[str, object]] = {}
    for mode in args.modes.split(","):
        size = args.sample if mode == "local" else args.sample_offline
        embedder = "local" if mode == "local" else "none"
        with tempfile.TemporaryDirectory() as tmp:
            try:
                mm = MemoryManager(str(Path(tmp) / "pairs.db"), embedder=embedder)
                if mode == "local":
                    mm.embedder.embed(["warm up"])  # load the model now, not inside the timing
            except (ConfigError, EmbeddingError) as error:
                print(f"{mode}: skipped ({error})")
                continue
            with mm:
                started = time.perf_counter()
                table: dict[str, object] = {}
                for pair_set, pairs in sampled(sets, size, args.seed):
                    outcomes, kept = run(mm, f"{mode}-{pair_set.name}", pairs)
                    table[pair_set.name] = {
                        "kind": pair_set.kind,
                        **summarise(pair_set.kind, outcomes, kept),
                    }
                elapsed = time.perf_counter() - started
        results[mode] = {"seconds": round(elapsed, 1), "sample": size or None, "sets": table}
        print_table(mode, results[mode])
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def print_table(mode: str, result: dict[str, object]) -> None:
    sample = f"sample {result['sample']}/set, seed fixed" if result["sample"] else "all pairs"
    print(f"\nmode {mode} ({sample}, {result['seconds']} s)")
    header = ["false merges", "lossless", "lossy", "swallowed", "caught", "novel"]
    print(f"{'set':22} {'pairs':>6}  " + "  ".join(f"{h:>16}" for h in header))
    sets = result["sets"]
    assert isinstance(sets, dict)
    for name, row in sets.items():
        total = row["pairs"]
        cells = []
        for key in ("false_merges", "lossless", "lossy", "swallowed", "caught", "novel"):
            count = row.get(key)
            cells.append(f"{count:>6} {percent(count, total)}" if count is not None else "")
        print(f"{name:22} {total:>6}  " + "  ".join(f"{c:>16}" for c in cells))
        merged = {o: n for o, n in row["outcomes"].items() if not o.startswith(f"{Op.ADD}/")}
        if merged:
            print(f"{'':22}        by op/tier: {merged}")


if __name__ == "__main__":
    main()
