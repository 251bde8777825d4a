"""Which MSC persona facts get another topic from this tree's extractor than from a commit's.

    python benchmarks/topic_changes.py --base <commit> [--sample 60] [--seed 1] [--match RE]

An extractor rule meant for one phrasing ("my wife is Sarah") can catch facts it was not
meant for ("my wife is sweet"). This runs `memman.language.topic.about` of the working tree and of
`--base` (its topic.py, read with `git show`) over every distinct MSC persona fact, counts
the facts whose topic changed and prints a seeded uniform sample of them to judge by hand;
`--match` keeps only changes whose facts match a regular expression (case-insensitive).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import ModuleType

from memman.language import topic as current

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MEMMAN_DATA", ROOT.parent / "shared" / "data"))
PERSONAS = DATA / "msc" / "msc_personas_all.json"


def base_module(commit: str) -> ModuleType:
    """topic.py as it was at `commit`, imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{commit}:memman/language/topic.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    folder = Path(tempfile.mkdtemp())
    path = folder / "topic_base.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("topic_base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["topic_base"] = module
    spec.loader.exec_module(module)
    return module


def persona_facts(path: Path = PERSONAS) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    facts: dict[str, None] = {}
    for split in data.values():
        for dialogue in split:
            for name, said in dialogue.items():
                if name.startswith("Speaker"):
                    facts.update(dict.fromkeys(said))
    return list(facts)


def _plain(topic: object) -> tuple | None:
    """A topic of either module as a tuple (the two Topic classes never compare equal)."""
    if topic is None:
        return None
    return (topic.subject, topic.attribute, topic.value, topic.retracted)  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit whose topic.py to compare")
    parser.add_argument("--sample", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--match", help="only changed facts matching this regular expression")
    args = parser.parse_args()
    base = base_module(args.base)
    facts = persona_facts()
    changed = []
    for fact in facts:
        was, now = _plain(base.about(fact)), _plain(current.about(fact))
        if was != now:
            changed.append((fact, was, now))
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
