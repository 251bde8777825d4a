"""Old and new code side by side: one benchmark script, run as a child process per tree.

A benchmark that compares code before and after a change runs its measuring part once per
tree (a `git archive` of the old commit, this checkout for the new), each in its own process
with that tree first on the path, so both import their own memman. The child prints its
result as JSON on its last stdout line; its stderr (progress, errors) stays on the terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent


def tree_options(parser: argparse.ArgumentParser) -> None:
    """--old (the tree before the change) and --new (default: this checkout)."""
    parser.add_argument("--old", help="a tree of the code before the change (git archive)")
    parser.add_argument("--new", default=str(BENCHMARKS.parent))


def run_child(tree: str, script: str, args: list[str]) -> Any:
    """Run `script args...` with tree's memman; the JSON its last stdout line holds."""
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{BENCHMARKS}"}
    out = subprocess.run(
        [sys.executable, script, *args], env=env, check=True, stdout=subprocess.PIPE, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def child_options(parser: argparse.ArgumentParser, modes: list[str]) -> None:
    """The hidden --child MODE, --db and --texts a script passes its own child (run_child)."""
    parser.add_argument("--child", choices=modes, help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--texts", help=argparse.SUPPRESS)


def answer_child(args: argparse.Namespace, modes: dict[str, Callable[[Any], Any]]) -> bool:
    """As a child: run the mode on the --texts JSON and print its result ({} for None) as
    JSON, the last stdout line run_child reads; False when this process is no child."""
    if not args.child:
        return False
    result = modes[args.child](json.loads(Path(args.texts).read_text()))
    print(json.dumps({} if result is None else result))
    return True
