"""Calibrate the router's Jaccard thresholds on human-labelled sentence pairs.

The router settles a candidate as NOOP without the LLM when its stopword-aware token Jaccard
with a memory is at least `noop_jaccard` (and no negation or number differs), and ADDs it
without the LLM when every memory is below `novel_jaccard`. This script measures, on STS-B
(train + dev) and MRPC (train), how often paraphrases and non-paraphrases pass each
threshold, so the defaults rest on data:

- NOOP tier: a non-paraphrase at or above the threshold (with no negation/number difference)
  is a wrongly merged fact, so that rate must be near 0.
- novel tier: a paraphrase below the threshold skips the decider and is stored twice.

Paraphrase = STS score >= 4 or MRPC label 1; non-paraphrase = STS score <= 2 or MRPC 0.

    python benchmarks/calibrate_lexical.py
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from memman.language.text import content_tokens, jaccard, polarity_or_number_differs

# The shared data sit beside the repository; MEMMAN_DATA points elsewhere (a git worktree
# or a copy of the repository is not beside them).
DATA = Path(
    os.environ.get("MEMMAN_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)
THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]

Pair = tuple[str, str]


def sts_pairs() -> tuple[list[Pair], list[Pair]]:
    """(paraphrases, non-paraphrases) from STS-B train and dev."""
    para: list[Pair] = []
    non: list[Pair] = []
    for name in ("sts-train.csv", "sts-dev.csv"):
        text = (DATA / "stsbenchmark" / name).read_text(encoding="utf-8")
        for line in text.splitlines():
            # Some lines carry extra tab-separated source columns after the second sentence.
            fields = line.split("\t")
            if len(fields) < 7:
                continue
            score, s1, s2 = float(fields[4]), fields[5], fields[6]
            if score >= 4:
                para.append((s1, s2))
            elif score <= 2:
                non.append((s1, s2))
    return para, non


def mrpc_pairs() -> tuple[list[Pair], list[Pair]]:
    """(paraphrases, non-paraphrases) from MRPC train (header row, UTF-8 with BOM)."""
    path = DATA / "mrpc" / "msr_paraphrase_train.txt"
    para: list[Pair] = []
    non: list[Pair] = []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            pair = (row["#1 String"], row["#2 String"])
            (para if row["Quality"] == "1" else non).append(pair)
    return para, non


def scored(pairs: list[Pair]) -> list[tuple[float, bool]]:
    """(token Jaccard, negation/number differs) for each pair."""
    return [
        (jaccard(content_tokens(a), content_tokens(b)), polarity_or_number_differs(a, b))
        for a, b in pairs
    ]


def share(values: list[bool]) -> str:
    return f"{100 * sum(values) / len(values):.1f} %" if values else "n/a"


def report(name: str, para: list[Pair], non: list[Pair]) -> str:
    p, n = scored(para), scored(non)
    lines = [
        f"### {name}: {len(para):,} paraphrases, {len(non):,} non-paraphrases",
        "",
        f"negation/number differs: {share([d for _, d in p])} of paraphrases, "
        f"{share([d for _, d in n])} of non-paraphrases",
        "",
        "| t | paraphrases J ≥ t | non-paraphrases J ≥ t"
        " | non-paraphrases J ≥ t, no negation/number difference | paraphrases J < t |",
        "|---:|---:|---:|---:|---:|",
    ]
    for t in THRESHOLDS:
        lines.append(
            f"| {t:.2f} | {share([j >= t for j, _ in p])} | {share([j >= t for j, _ in n])}"
            f" | {share([j >= t and not d for j, d in n])} | {share([j < t for j, _ in p])} |"
        )
    return "\n".join(lines)


def main() -> None:
    sts_para, sts_non = sts_pairs()
    mrpc_para, mrpc_non = mrpc_pairs()
    print(report("STS-B train+dev (para: score ≥ 4, non: score ≤ 2)", sts_para, sts_non))
    print()
    print(report("MRPC train (label 1 / 0)", mrpc_para, mrpc_non))
    print()
    print(report("both", sts_para + mrpc_para, sts_non + mrpc_non))


if __name__ == "__main__":
    main()
