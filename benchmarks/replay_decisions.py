"""Same decisions? Replay MSC facts into fresh stores with two trees and compare every outcome.

A change meant to make the write path cheaper must not change a decision. Each tree (its
own process, benchmarks/sides.py) writes the first N facts of bench_update's corpus (MSC
persona facts and their restatements, shuffled: novel facts, paraphrases and topic
conflicts) into one user of a fresh store, offline decider, once with update_memory one at a
time and once with update_many. Per fact it records the op, the tier, the memory it landed
on (named by the text that created it, since ids are random), the content before and after,
and the reason with ids named the same way. The trees' lists must be equal.

    git archive <branch point> | tar -x -C /tmp/replay_old
    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/replay_decisions.py \\
        --old /tmp/replay_old [--facts 2000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from sides import run_child, tree_options

USER = "user-0"


def _outcomes(path: str, facts: list[str], bulk: bool) -> list[list]:
    """Each fact's decision and the memories its audit event scored, memory ids (and their
    8-character prefixes, as reasons quote them) replaced by the text that created them."""
    from memman import MemoryManager

    with MemoryManager(path, decider="offline") as mm:
        if bulk:
            results = mm.update_many(facts, user_id=USER)
        else:
            results = [mm.update_memory(fact, user_id=USER) for fact in facts]
        names: dict[str, str] = {}
        scored: dict[int, list[str]] = {}
        for memory in mm.export(user_id=USER, include_inactive=True):
            history = mm.history(memory.id, user_id=USER)
            names[memory.id] = names[memory.id[:8]] = f"<{history[0].candidate}>"
            scored.update((event.id, sorted(event.scores)) for event in history)

    longest_first = sorted(names.items(), key=lambda item: -len(item[0]))

    def named(text: str | None) -> str | None:
        for memory_id, name in longest_first:
            text = text.replace(memory_id, name) if text else text
        return text

    return [
        [
            result.op.value,
            result.tier.value,
            named(result.memory_id),
            result.previous_content,
            result.content,
            named(result.reason),
            sorted(named(key) for key in scored.get(result.event_id or 0, [])),
        ]
        for result in results
    ]


def _summary(outcomes: list[list]) -> dict:
    text = json.dumps(outcomes, sort_keys=True).encode()
    return {
        "sha256": hashlib.sha256(text).hexdigest()[:16],
        "ops": dict(Counter(f"{op} {tier}" for op, tier, *_ in outcomes)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tree_options(parser)
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--child", help=argparse.SUPPRESS)  # the facts file
    args = parser.parse_args()
    if args.child:
        facts = json.loads(Path(args.child).read_text())
        with tempfile.TemporaryDirectory() as tmp:
            single = _outcomes(str(Path(tmp) / "single.db"), facts, bulk=False)
            bulk = _outcomes(str(Path(tmp) / "bulk.db"), facts, bulk=True)
        print(json.dumps({"single": single, "bulk": bulk}))
        return
    from bench_update import load_corpus

    facts = load_corpus()[0][: args.facts]
    trees = {"old": args.old, "new": args.new} if args.old else {"new": args.new}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "facts.json"
        path.write_text(json.dumps(facts))
        child = ["--child", str(path)]
        runs = {name: run_child(tree, __file__, child) for name, tree in trees.items()}
    for name, run in runs.items():
        for way in ("single", "bulk"):
            print(f"{name} {way}: {json.dumps(_summary(run[way]))}")
    if args.old:
        for way in ("single", "bulk"):
            old, new = runs["old"][way], runs["new"][way]
            differ = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
            print(f"{way}: {len(facts) - len(differ)} of {len(facts)} facts decided the same")
            for i in differ[:5]:
                print(f"  fact {i}: old {old[i]}\n          new {new[i]}")
        if any(runs["old"][w] != runs["new"][w] for w in ("single", "bulk")):
            sys.exit(1)


if __name__ == "__main__":
    main()
