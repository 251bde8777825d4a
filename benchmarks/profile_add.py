"""Where does a novel write spend its CPU in one big scope, before and after a change?

bench_scale.py times update_memory as a whole; this splits it by stage. Each stage function
of the write path is wrapped with a time.process_time counter (inclusive: a stage's figure
holds the stages under it, e.g. `supersede.about` is inside `route_by_topic`), the held-out
novel facts of bench_scale are written one at a time with the offline decider, and each
stage's mean CPU ms per write is printed beside the whole write's. Each code runs in its own
subprocess on its own copy of one file filled at the old schema, alternating `--rounds` times,
so the load of a shared machine falls on both alike. The decisions (op, tier, reason, texts)
of both codes are hashed: the same hash means the same decisions (a memory id in a reason is
replaced by the memory's text).

    git archive <branch point> | tar -x -C /tmp/old
    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/profile_add.py \\
        --old /tmp/old --layout 1x100000
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench_scale import _texts
from sides import run_child, tree_options

USER = "user-0"
_ID = re.compile(r"\b[0-9a-f]{8}\b")
# (module, function) pairs wrapped where the write path calls them, and their labels.
STAGES = (
    ("memman.api.core", "make_candidate", "make_candidate"),
    ("memman.write.writepath", "lexical_candidates", "retrieve"),
    ("memman.storage.fts", "bm25_ranked", "retrieve: FTS statements"),
    ("memman.storage.fts", "_read_scope", "retrieve: FTS scope size"),
    ("memman.storage.fts", "_rows_holding", "retrieve: FTS term counts"),
    ("memman.write.writepath", "with_replacing", "with_replacing"),
    ("memman.write.writepath", "WritePath._settle", "in the transaction"),
    ("memman.write.writepath", "route_by_topic", "route_by_topic"),
    ("memman.write.supersede", "about", "route_by_topic: topic.about"),
    ("memman.write.writepath", "route", "route"),
    ("memman.write.writepath", "apply_decision", "apply"),
    ("memman.write.apply", "commit", "apply: the change set"),
)
STORE_STAGES = ("active_by_hash", "active_by_topic", "memories_by_pk", "write", "apply")


def _wrap(totals: dict[str, float], label: str, function):
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            totals[label] = totals.get(label, 0.0) + time.process_time() - start

    return timed


def _measure(path: str, texts: dict) -> dict:
    from memman import MemoryManager
    from memman.config import load_settings
    from memman.storage.store import Store

    totals: dict[str, float] = {}
    for module_name, dotted, label in STAGES:
        owner = importlib.import_module(module_name)
        *owners, name = dotted.split(".")
        for part in owners:  # a method: "Class.method"
            owner = getattr(owner, part)
        if hasattr(owner, name):  # an older tree may lack a stage (fts._read_scope)
            setattr(owner, name, _wrap(totals, label, getattr(owner, name)))
    for name in STORE_STAGES:
        setattr(Store, name, _wrap(totals, f"store.{name}", getattr(Store, name)))
    settings = load_settings(db=path, decider="offline")
    decisions = []
    with MemoryManager(path, settings=settings) as mm:
        for text in texts["search"][:20]:  # warm the page cache and the statement caches
            mm.search(text, user_id=USER)
        totals.clear()
        start = time.process_time()
        for text in texts["novel"]:
            result = mm.update_memory(text, user_id=USER)
            decisions.append([str(result.op), str(result.tier), result.reason, result.content])
        whole = time.process_time() - start
        # New memories get random ids, which reasons quote (8 characters): each is named by
        # its text instead, so two runs of one code hash alike.
        named = {m.id[:8]: m.content for m in mm.list(user_id=USER, include_inactive=True)}
    for decision in decisions:
        decision[2] = _ID.sub(lambda found: named.get(found[0], found[0]), decision[2])
    writes = len(texts["novel"])
    stages = {label: round(cpu / writes * 1000, 3) for label, cpu in totals.items()}
    return {
        "write": round(whole / writes * 1000, 3),
        "stages": stages,
        "decisions": hashlib.sha256(json.dumps(decisions).encode()).hexdigest()[:16],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", default="1x100000", help="users x memories per user")
    parser.add_argument("--ops", type=int, default=200, help="novel facts written per round")
    parser.add_argument("--rounds", type=int, default=2)
    tree_options(parser)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--texts", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.db, json.loads(Path(args.texts).read_text()))))
        return
    if not args.old:
        parser.error("--old is required: a tree of the code before the change")
    users, per_user = (int(x) for x in args.layout.split("x"))
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        texts = str(Path(tmp) / "texts.json")
        Path(texts).write_text(json.dumps(_texts(users, per_user, args.ops)))
        base = str(Path(tmp) / "base.db")
        run_child(
            args.old,
            str(Path(__file__).with_name("bench_scale.py")),
            ["--child", "fill", "--db", base, "--texts", texts],
        )
        for _ in range(args.rounds):
            for side, tree in (("old", args.old), ("new", args.new)):
                db = str(Path(tmp) / f"{side}.db")
                shutil.copy(base, db)
                child = ["--child", "--db", db, "--texts", texts]
                runs[side].append(run_child(tree, __file__, child))
    labels = sorted({label for side in runs.values() for r in side for label in r["stages"]})
    print(
        f"{args.layout}, {args.ops} novel writes, mean CPU ms per write, median of "
        f"{args.rounds} rounds\n"
    )
    print("| stage | old | new |\n|---|---:|---:|")
    for label in ["write", *labels]:
        cells = []
        for side in ("old", "new"):
            values = [
                r["write"] if label == "write" else r["stages"].get(label, 0.0) for r in runs[side]
            ]
            cells.append(f"{statistics.median(values):.3f}")
        print(f"| {label} | {cells[0]} | {cells[1]} |")
    hashes = {side: {r["decisions"] for r in side_runs} for side, side_runs in runs.items()}
    print(f"\ndecisions: old {sorted(hashes['old'])}, new {sorted(hashes['new'])}")


if __name__ == "__main__":
    main()
