"""Write STS-B (train + dev) and MRPC (train) as labelled pairs for `memman calibrate`.

Same definitions as calibrate_lexical.py (paraphrase = STS >= 4 or MRPC 1; different =
STS <= 2 or MRPC 0), so the lexical and cosine thresholds rest on the same pairs:

    python benchmarks/semantic_pairs.py /tmp/pairs.jsonl
    MEMMAN_EMBEDDER=local memman calibrate /tmp/pairs.jsonl --config memman.toml
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from calibrate_lexical import mrpc_pairs, sts_pairs


def main(out: Path) -> None:
    rows = []
    for same, different in (sts_pairs(), mrpc_pairs()):
        rows += [{"text_a": a, "text_b": b, "label": "same"} for a, b in same]
        rows += [{"text_a": a, "text_b": b, "label": "different"} for a, b in different]
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"{len(rows)} pairs written to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
