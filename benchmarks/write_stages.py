"""Where update_many's CPU per fact goes: each stage of the write path, inclusive, and the
run_sql statements inside it (the rest of a stage is Python, rows fetched and executemany).

The stages are wrapped in place (a process_time pair per call, cheaper than cProfile, whose
overhead falls on Python alone). The batch is bench_bulk's: held-out MSC facts, then restated
ones beyond the fill. --db is a filled file (bench_bulk.py --base keeps one), copied first.

    PYTHONPATH=$PWD:$PWD/benchmarks MEMMAN_DATA=/work/shared/data python \\
        benchmarks/write_stages.py --db /tmp/bench100k.db --fill 100000 --facts 2000
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from bench_bulk import STATEMENT_MODULES, USER, _texts

spent, in_sql, calls = Counter[str](), Counter[str](), Counter[str]()
_open: list[str] = []  # the stages the running code is inside


def _stage(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        _open.append(name)
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            _open.pop()
            spent[name] += time.process_time() - start
            calls[name] += 1

    return timed


def _wrap() -> None:
    import memman.storage.sql as sql
    import memman.write.decide as decide
    import memman.write.writepath as writepath
    from memman.storage.store import Store

    run_sql = sql.run_sql

    def counted(conn, statement, params=()):
        start = time.process_time()
        try:
            return run_sql(conn, statement, params)
        finally:
            for name in set(_open):
                in_sql[name] += time.process_time() - start

    for module in STATEMENT_MODULES:
        loaded = importlib.import_module(f"memman.storage.{module}")
        if hasattr(loaded, "run_sql"):
            loaded.run_sql = counted
    path = writepath.WritePath
    for owner, attribute, name in [
        (path, "_settle", "settle"),
        (path, "_route", "route"),
        (path, "_retrieve", "retrieve"),
        (path, "_about", "active_by_topic"),
        (path, "_apply_or_hold", "apply or hold"),
        (writepath, "route_by_topic", "route_by_topic"),
        (writepath, "route", "route (words)"),
        (writepath, "with_replacing", "with_replacing"),
        (Store, "lexical_ranked", "lexical_ranked (FTS)"),
        (Store, "memories_by_pk", "memories_by_pk"),
        (decide.OfflineDecider, "decide", "offline decide"),
    ]:
        setattr(owner, attribute, _stage(name, getattr(owner, attribute)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a filled file (copied, never changed)")
    parser.add_argument("--fill", type=int, required=True, help="memories the file holds")
    parser.add_argument("--facts", type=int, default=2000)
    args = parser.parse_args()
    batch = _texts(args.fill, args.facts)["batch"]
    _wrap()
    from memman import MemoryManager
    from memman.config import load_settings

    path = f"{args.db}.stages"
    shutil.copy(args.db, path)
    try:
        with MemoryManager(path, settings=load_settings(db=path, decider="offline")) as mm:
            mm.search("warm the page cache", user_id=USER)
            start = time.process_time()
            mm.update_many(batch, user_id=USER)
            total = time.process_time() - start
    finally:
        os.remove(path)
    per_fact = 1000 / len(batch)
    print(f"update_many: {total * per_fact:.3f} CPU ms per fact\n")
    print("| stage (inclusive) | calls | CPU ms/fact | run_sql | the rest |")
    print("|---|---:|---:|---:|---:|")
    for name, cpu in spent.most_common():
        sql = in_sql[name]
        print(
            f"| {name} | {calls[name]:,} | {cpu * per_fact:.3f} | {sql * per_fact:.3f}"
            f" | {(cpu - sql) * per_fact:.3f} |"
        )


if __name__ == "__main__":
    main()
