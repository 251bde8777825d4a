"""What the library swaps cost (session 7): settings, opening a store, one write.

Config moved from a hand-rolled merge to pydantic-settings (it builds its sources on every
load_settings call), and the store's busy retry from a loop to tenacity (a Retrying object
around every write transaction). Each tree, in its own process (benchmarks/sides.py), times
load_settings(), opening and closing a MemoryManager on an existing file, and
update_memory of a fact the scope already holds (a hash NOOP: one short write transaction
with its audit event, so the retry wrapper is a larger share than in any other write), and
of a novel fact (random words: an ADD without an LLM).

    git archive <before> | tar -x -C /tmp/old
    PYTHONPATH=$PWD python benchmarks/bench_open.py --old /tmp/old
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import sys
import tempfile

from sides import run_child, tree_options
from timing import medians, timed


def _measure(repeat: int) -> dict[str, dict[str, float]]:
    """In the child: medians (CPU and wall ms) of each operation, `repeat` samples each."""
    from memman import MemoryManager, load_settings

    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)  # no memman.toml of the caller's
        path = os.path.join(folder, "m.db")
        with MemoryManager(path, decider="offline") as mm:
            mm.update_memory("User likes green tea", user_id="u")

        def open_close() -> None:
            with MemoryManager(path, decider="offline"):
                pass

        letters = random.Random(7)
        novel = [
            " ".join("".join(letters.choices(string.ascii_lowercase, k=7)) for _ in range(6))
            for _ in range(repeat + 1)
        ]
        with MemoryManager(path, decider="offline") as mm:
            noop = [
                timed(lambda: mm.update_memory("User likes green tea", user_id="u"))
                for _ in range(repeat + 1)
            ]
            add = [timed(lambda f=fact: mm.update_memory(f, user_id="u")) for fact in novel]
        return {
            "load_settings": medians([timed(load_settings) for _ in range(repeat)]),
            "open_close": medians([timed(open_close) for _ in range(repeat)]),
            "update_memory_hash_noop": medians(noop[1:]),  # the first warms caches
            "update_memory_novel": medians(add[1:]),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tree_options(parser)
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.repeat)))
        return
    sides = {"new": args.new} if args.old is None else {"old": args.old, "new": args.new}
    results = {
        side: run_child(tree, __file__, ["--child", "--repeat", str(args.repeat)])
        for side, tree in sides.items()
    }
    for operation in results["new"]:
        row = "  ".join(
            f"{side} {r[operation]['cpu']:.3f} cpu / {r[operation]['wall']:.3f} wall ms"
            for side, r in results.items()
        )
        print(f"{operation:26} {row}", file=sys.stdout)


if __name__ == "__main__":
    main()
