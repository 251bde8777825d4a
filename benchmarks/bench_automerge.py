"""FTS5 'automerge' (and 'crisismerge') values side by side: single writes, bulk ingest, search.

A file's FTS5 merge settings live in the index's config row, so one code can compare them:
each case copies a base file, writes the settings into that copy, and times, in its own child
process (the same tree), one of

- single: the held-out novel facts written one at a time with update_memory (offline
  decider), then search() of other held-out facts on the index those writes left behind;
- bulk: update_many of bench_bulk's batch (held-out facts, then restated stored ones).

Bases: 1 x 5,000 and 1 x 100,000 (bench_scale's plain inserts: a compact index, fragmented by
the timed writes themselves), an empty file, and 1 x 5,000 written one update_memory at a
time with the setting in effect (each setting its own base, as a file that always had it:
the setting decides its segments before the timed part too; also 1 x 100,000, case 5). The
cases alternate by round, their order rotated, so the load of a shared machine falls on each
alike. CPU time (time.process_time) is the figure; the index's segment count after the timed
part is printed beside it.

    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/bench_automerge.py \\
        --settings 8,4,2 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench_scale import _fill
from sides import BENCHMARKS, answer_child, child_options, run_child
from timing import medians, timed

USER = "user-0"
# (name, fill, facts written, fill written one fact at a time under the setting): single
# writes at two sizes, bulk ingest at bench_bulk's two. A plain-insert fill is one transaction
# (a compact index, as a file migrated to a new setting); a fill of one update_memory per fact
# is the history the setting shapes (at 100k, ~3 minutes a setting).
CASES = (
    ("single", 5000, 400, False),
    ("single", 100_000, 400, False),
    ("bulk", 0, 5000, False),
    ("bulk", 100_000, 2000, False),
    ("single", 5000, 400, True),
    ("single", 100_000, 400, True),
)


def _texts(fill: int, facts: int) -> dict:
    """user-0's fill, the facts written, and search queries (held-out facts not written)."""
    from bench_update import load_corpus

    stored, held_out = load_corpus()
    return {
        "rows": [stored[:fill]] if fill else [],
        "single": held_out[:facts],
        "search": held_out[facts : facts + 200],
        "bulk": (held_out + stored[fill:])[:facts],
    }


def _configure(path: str, setting: str) -> None:
    """Write 'automerge' (and 'crisismerge' when given as "a/c") into the file's FTS config."""
    automerge, _, crisis = setting.partition("/")
    with sqlite3.connect(path) as conn:
        insert = "INSERT INTO long_term_fts (long_term_fts, rank) VALUES (?, ?)"
        conn.execute(insert, ("automerge", int(automerge)))
        if crisis:
            conn.execute(insert, ("crisismerge", int(crisis)))
    conn.close()


def _write_fill(path: str, setting: str, rows: list[str]) -> None:
    """A file of rows written one update_memory at a time, the setting in effect throughout."""
    from memman import MemoryManager
    from memman.config import load_settings

    MemoryManager(path).close()
    _configure(path, setting)
    with MemoryManager(path, settings=load_settings(db=path, decider="offline")) as mm:
        for text in rows:
            mm.update_memory(text, user_id=USER)


def _segments(path: str) -> int:
    """The index's segments: FTS5 numbers each page of a segment (segid << 37) + ..."""
    with sqlite3.connect(path) as conn:
        (n,) = conn.execute(
            "SELECT count(DISTINCT id >> 37) FROM long_term_fts_data WHERE id >= 1 << 37"
        ).fetchone()
    conn.close()
    return n


def _measure(path: str, kind: str, texts: dict) -> dict:
    import memman.storage.fts as fts
    from memman import MemoryManager
    from memman.config import load_settings

    spent = [0.0]
    ranked = fts.bm25_ranked

    def counted(*args, **kwargs):
        start = time.process_time()
        try:
            return ranked(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - start

    fts.bm25_ranked = counted
    settings = load_settings(db=path, decider="offline")
    out: dict = {}
    with MemoryManager(path, settings=settings) as mm:
        for text in texts["search"][:20]:  # warm the page cache and the statement caches
            mm.search(text, user_id=USER)
        spent[0] = 0.0
        if kind == "bulk":
            cpu, _ = timed(lambda: mm.update_many(texts["bulk"], user_id=USER))
            out["facts_per_s"] = len(texts["bulk"]) / (cpu / 1000)
            out["fts_ms"] = spent[0] * 1000 / len(texts["bulk"])
        else:
            writes = [timed(lambda t=t: mm.update_memory(t, user_id=USER)) for t in texts["single"]]
            out["write_ms"] = medians(writes)["cpu"]
            out["fts_ms"] = spent[0] * 1000 / len(texts["single"])
            search = [timed(lambda t=t: mm.search(t, user_id=USER)) for t in texts["search"]]
            out["search_ms"] = medians(search)["cpu"]
    out["segments"] = _segments(path)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", default="8,4,2", help="automerge[/crisismerge], ...")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", default="0,1,2,3", help="indexes into CASES")
    child_options(parser, ["fill", "write", "measure"])
    parser.add_argument("--setting", help=argparse.SUPPRESS)
    parser.add_argument("--kind", help=argparse.SUPPRESS)
    args = parser.parse_args()
    tree = str(BENCHMARKS.parent)
    modes = {
        "fill": lambda texts: _fill(args.db, texts["rows"]),
        "write": lambda texts: _write_fill(args.db, args.setting, texts["rows"][0]),
        "measure": lambda texts: _measure(args.db, args.kind, texts),
    }
    if answer_child(args, modes):
        return
    settings = args.settings.split(",")
    cases = [CASES[int(i)] for i in args.cases.split(",")]
    runs: dict[tuple, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, fill, facts, written in cases:
            name = f"{kind}-{fill}-{facts}" + ("-written" if written else "")
            texts = str(Path(tmp) / f"{name}.json")
            Path(texts).write_text(json.dumps(_texts(fill, facts)))
            bases = {s: str(Path(tmp) / f"{name}-{s.replace('/', '-')}.db") for s in settings}
            if written:
                for setting, base in bases.items():
                    child = ["--child", "write", "--setting", setting, "--db", base]
                    run_child(tree, __file__, [*child, "--texts", texts])
            else:
                base = bases[settings[0]]
                run_child(tree, __file__, ["--child", "fill", "--db", base, "--texts", texts])
                bases = dict.fromkeys(settings, base)
            for round_ in range(args.rounds):
                shift = round_ % len(settings)
                for setting in settings[shift:] + settings[:shift]:
                    db = str(Path(tmp) / "case.db")
                    shutil.copy(bases[setting], db)
                    _configure(db, setting)
                    child = ["--child", "measure", "--kind", kind, "--db", db, "--texts", texts]
                    result = run_child(tree, __file__, child)
                    runs.setdefault((name, setting), []).append(result)
                    for suffix in ("", "-wal", "-shm"):
                        if os.path.exists(db + suffix):
                            os.remove(db + suffix)
            for base in set(bases.values()):
                os.remove(base)
            print(json.dumps({name: {s: runs[(name, s)] for s in settings}}))
    print(f"\nmedians of {args.rounds} rounds, CPU; segments: the index after the timed part\n")
    print("| case | setting | write ms | FTS ms / fact | search ms | facts/s | segments |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (name, setting), results in runs.items():
        cells = []
        for key in ("write_ms", "fts_ms", "search_ms", "facts_per_s", "segments"):
            values = [r[key] for r in results if key in r]
            form = ",.0f" if key in ("facts_per_s", "segments") else ".3f"
            cells.append(format(statistics.median(values), form) if values else "")
        print(f"| {name} | {setting} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
