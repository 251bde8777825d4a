"""How often writing one person's true facts replaces one of them (offline).

    python benchmarks/bench_personas.py [--personas .../msc_personas_all.json] [--limit N]
        [--examples 40] [--seed 1] [--json out.json]

An MSC persona's facts are all true at once ("I am a student." and "I am a dancer.", "I live
in a house." and "I live in California."), so a topic UPDATE or DELETE from one of a
persona's facts onto another nearly always loses a true fact from the prompt; the eval sets'
look-alikes count such false updates on 26 written cases each, this on every persona of MSC's
train split. Each speaker's distinct facts are written in file order through
`update_memory` as one user, on one SQLite file with no LLM configured. Prints the
decisions by op and tier, the topic replacements per 1,000 facts, and a seeded sample of
them (old -> new, reason) to judge by hand; `--json` writes all of them.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections import Counter
from pathlib import Path

from bench_conflicts import PERSONAS, persona_speakers

from memman import MemoryManager, Op, Tier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", type=Path, default=PERSONAS)
    parser.add_argument("--limit", type=int, default=None, help="only the first N speakers")
    parser.add_argument("--examples", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    speakers = persona_speakers(args.personas)[: args.limit]
    decisions: Counter[tuple[str, str]] = Counter()
    replaced: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp, MemoryManager(str(Path(tmp) / "m.db")) as mm:
        for n, facts in enumerate(speakers):
            for fact in facts:
                r = mm.update_memory(fact, user_id=f"speaker{n}")
                decisions[(r.op.value, r.tier.value)] += 1
                if r.op in (Op.UPDATE, Op.DELETE) and r.tier is Tier.TOPIC:
                    old = r.previous_content or ""
                    replaced.append({"old": old, "new": fact, "reason": r.reason})

    written = sum(decisions.values())
    print(f"{len(speakers):,} speakers, {written:,} facts written offline")
    for (op, tier), count in decisions.most_common():
        print(f"  {op}/{tier}: {count:,}")
    print(f"topic replacements between one speaker's facts: {len(replaced):,}"
          f" ({1000 * len(replaced) / written:.1f} per 1,000 facts)")  # fmt: skip
    sample = random.Random(args.seed).sample(replaced, min(args.examples, len(replaced)))
    for row in sample:
        print(f"  {row['old']!r} -> {row['new']!r}: {row['reason']}")
    if args.json:
        args.json.write_text(json.dumps(replaced, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
