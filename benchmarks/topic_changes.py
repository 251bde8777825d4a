"""Which MSC persona facts get another topic from this tree's extractor than from a commit's.

    python benchmarks/topic_changes.py --base <commit> [--sample 60] [--seed 1] [--match RE]

An extractor rule meant for one phrasing ("my wife is Sarah") can catch facts it was not
meant for ("my wife is sweet"). This runs `memman.language.topic.about` of the working tree
and of `--base` (its `memman` package, read with `git archive`), each in a child process of
its own (sides.py), over every distinct MSC persona fact, counts the facts whose topic
changed and prints a seeded uniform sample of them to judge by hand; `--match` keeps only
changes whose facts match a regular expression (case-insensitive).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from sides import run_child

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MEMMAN_DATA", ROOT.parent / "shared" / "data"))
PERSONAS = DATA / "msc" / "msc_personas_all.json"


def base_tree(commit: str) -> str:
    """The `memman` package as it was at `commit`, unpacked into a temporary folder: the
    extractor spans several modules, so the whole package is read from that commit."""
    folder = tempfile.mkdtemp()
    archive = subprocess.run(
        ["git", "archive", commit, "memman"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    return folder


def persona_facts(path: Path = PERSONAS) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    facts: dict[str, None] = {}
    for split in data.values():
        for dialogue in split:
            for name, said in dialogue.items():
                if name.startswith("Speaker"):
                    facts.update(dict.fromkeys(said))
    return list(facts)


def topics() -> list[list | None]:
    """The child's part: the topic of every fact by this process's memman, as JSON lists."""
    try:
        from memman.language.topic import about
    except ModuleNotFoundError:  # a commit from before the package had its folders
        from memman.topic import about  # type: ignore[no-redef]

    found = [about(fact) for fact in persona_facts()]
    return [None if t is None else [t.subject, t.attribute, t.value, t.retracted] for t in found]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="the commit whose extractor to compare")
    parser.add_argument("--emit", action="store_true", help="(child) print this tree's topics")
    parser.add_argument("--sample", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--match", help="only changed facts matching this regular expression")
    args = parser.parse_args()
    if args.emit:
        print(json.dumps(topics()))
        return
    if not args.base:
        parser.error("--base is required")
    olds = run_child(base_tree(args.base), __file__, ["--emit"])
    news = run_child(str(ROOT), __file__, ["--emit"])
    facts = persona_facts()
    changed = [(f, was, now) for f, was, now in zip(facts, olds, news, strict=True) if was != now]
    if args.match:
        wanted = re.compile(args.match, re.I)
        changed = [c for c in changed if wanted.search(c[0])]
    share = len(changed) / len(facts)
    print(f"{len(facts)} distinct MSC facts, {len(changed)} ({share:.2%}) get another topic")
    print("new attributes:", dict(Counter(c[2][1] if c[2] else None for c in changed)))
    sample = random.Random(args.seed).sample(changed, min(args.sample, len(changed)))
    for fact, was, now in sample:
        print(f"{fact!r}\n    {was} -> {now}")


if __name__ == "__main__":
    main()
