"""Scale benchmark: does one user's latency depend on the other users in the file?

Each layout (users x memories per user) is filled once with MSC persona facts (restated
about other people to reach 100k distinct facts, as bench_update does), at the schema of the
old code; a copy is opened by the new code, which migrates it (the open is timed: that is the
m020 rebuild). Then, for the first user, both codes time the same operations: an exact
duplicate (hash NOOP), a novel fact (offline decider: ADD) and search(). CPU time
(time.process_time) is the figure to trust on a shared machine; wall time is beside it.

    git archive <branch point> | tar -x -C /tmp/old     # the code before the change
    MEMMAN_DATA=/work/shared/data python benchmarks/bench_scale.py --old /tmp/old \\
        --layouts 1x1000,1x10000,1x100000,1000x100
    MEMMAN_DATA=/work/shared/data python benchmarks/bench_scale.py --old /tmp/old \\
        --layouts 1x1000000 --synthetic      # 1M distinct rows: see synthetic_facts

Each code runs in its own subprocess (PYTHONPATH=<tree>) so neither imports the other.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

from sides import answer_child, child_options, run_child, tree_options
from timing import medians, timed

SEED = 20261124
STAMP = "2025-01-01T00:00:00.000+00:00"
INSERT_BATCH = 10_000


def synthetic_facts(facts: list[str], held_out: list[str], n: int) -> list[str]:
    """n distinct facts: the MSC corpus, then more of its first-person facts said about other
    people, each number in them redrawn with as many digits.

    load_corpus reaches its ~114k distinct facts by restating each first-person fact about
    three people (bench_update.subjects: a relative, or "My coworker Omar"); this continues
    the same draw, so the new rows have the corpus's words in the corpus's proportions (a
    relative or a named person, the same verbs and objects) and no word is invented except
    the redrawn numbers. Held-out facts stay out, so the queries remain novel.
    """
    from bench_update import NAMED, RELATIONS, restate, subjects

    from memman.language.text import normalize

    rng = random.Random(SEED)
    seen = {normalize(fact) for fact in held_out + facts}
    # Facts said in the first person, not restated already ("My uncle likes ..."): a fact
    # restated twice would name two people and double their words' share.
    restated = tuple(subject for subject, _ in RELATIONS) + tuple(NAMED)
    firsts = [
        fact
        for fact in facts
        if fact.startswith(("I ", "I'", "My ")) and not fact.startswith(restated)
    ]
    out = list(facts[:n])
    while len(out) < n:
        subject, gender = subjects(rng)[0]
        fact = restate(rng.choice(firsts), subject, gender)
        if fact is None:
            continue
        fact = _DIGITS.sub(lambda m: str(rng.randrange(10 ** len(m[0]))).zfill(len(m[0])), fact)
        if normalize(fact) not in seen:
            seen.add(normalize(fact))
            out.append(fact)
    return out


_DIGITS = re.compile(r"\d+")


def _texts(users: int, per_user: int, ops: int, synthetic: bool = False) -> dict:
    """Every user's facts, and the target user's duplicates, novel facts and search queries."""
    from bench_update import load_corpus

    facts, held_out = load_corpus()
    if synthetic:
        facts = synthetic_facts(facts, held_out, users * per_user)
    if users * per_user > len(facts):
        # Users share facts (persona facts recur across people); within a user they differ.
        rng = random.Random(SEED)
        rows = [rng.sample(facts, per_user) for _ in range(users)]
    else:
        rows = [facts[u * per_user : (u + 1) * per_user] for u in range(users)]
    rng = random.Random(SEED + users)
    return {
        "rows": rows,
        "duplicates": rng.sample(rows[0], min(ops, per_user)),
        "novel": held_out[:ops],
        "search": held_out[ops : 2 * ops],
    }


def _fill(path: str, rows: list[list[str]]) -> None:
    """The store at the running code's schema, its long_term rows written in bulk.

    Plain inserts (the FTS triggers, or PostgreSQL's generated tsvector, index them) instead
    of update_many: a 100k store fills in seconds, and the codes compared then measure one
    identical store. path: a SQLite file or a PostgreSQL URL (bench_postgres.py).
    """
    import sqlalchemy as sa

    from memman import MemoryManager
    from memman.language.text import content_hash
    from memman.language.topic import about

    MemoryManager(path).close()  # creates and migrates
    engine = sa.create_engine(path if "://" in path else f"sqlite:///{path}")
    insert = sa.text(
        "INSERT INTO long_term (id, user_id, content, content_hash, subject, attribute,"
        " created_at, updated_at, observed_at) VALUES (:id, :u, :c, :h, :s, :a, :t, :t, :t)"
    )

    def values():
        for u, facts in enumerate(rows):
            for i, fact in enumerate(facts):
                topic = about(fact)
                yield {
                    "id": f"u{u}-m{i}", "u": f"user-{u}", "c": fact, "h": content_hash(fact),
                    "s": topic and topic.subject, "a": topic and topic.attribute, "t": STAMP,
                }  # fmt: skip

    batch: list[dict] = []
    with engine.begin() as conn:
        for row in values():
            batch.append(row)
            if len(batch) == INSERT_BATCH:
                conn.execute(insert, batch)
                batch.clear()
        if batch:
            conn.execute(insert, batch)
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql("ANALYZE")  # fresh statistics, as autovacuum would give
    engine.dispose()


def _measure(path: str, texts: dict) -> dict:
    from memman import MemoryManager
    from memman.config import load_settings

    settings = load_settings(db=path, decider="offline")
    opened = timed(lambda: MemoryManager(path, settings=settings).close())
    user = "user-0"
    with MemoryManager(path, settings=settings) as mm:
        for text in texts["search"][:20]:  # warm the page cache and the statement caches
            mm.search(text, user_id=user)
        search = [timed(lambda t=t: mm.search(t, user_id=user)) for t in texts["search"]]
        noop = [timed(lambda t=t: mm.update_memory(t, user_id=user)) for t in texts["duplicates"]]
        novel = [timed(lambda t=t: mm.update_memory(t, user_id=user)) for t in texts["novel"]]
    return {
        "open_ms": {"cpu": opened[0], "wall": opened[1]},
        "hash_noop": medians(noop),
        "novel_add": medians(novel),
        "search": medians(search),
    }


def _child(tree: str, mode: str, path: str, texts_path: str) -> dict:
    return run_child(tree, __file__, ["--child", mode, "--db", path, "--texts", texts_path])


def run_layout(layout: str, old: str, new: str, ops: int, synthetic: bool = False) -> dict:
    users, per_user = (int(x) for x in layout.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        texts_path = str(Path(tmp) / "texts.json")
        Path(texts_path).write_text(json.dumps(_texts(users, per_user, ops, synthetic)))
        old_db, new_db = str(Path(tmp) / "old.db"), str(Path(tmp) / "new.db")
        _child(old, "fill", old_db, texts_path)
        shutil.copy(old_db, new_db)
        return {
            "layout": layout,
            "rows": users * per_user,
            "old": _child(old, "measure", old_db, texts_path),
            "new": _child(new, "measure", new_db, texts_path),
        }


def table(results: list[dict]) -> str:
    lines = [
        "| file (users x memories) | op | before: CPU / wall ms | after: CPU / wall ms"
        " | CPU ratio |",
        "|---|---|---:|---:|---:|",
    ]
    for r in results:
        for op in ("hash_noop", "novel_add", "search"):
            before, after = r["old"][op], r["new"][op]
            lines.append(
                f"| {r['layout']} | {op} | {before['cpu']:.2f} / {before['wall']:.2f}"
                f" | {after['cpu']:.2f} / {after['wall']:.2f}"
                f" | {before['cpu'] / max(after['cpu'], 1e-9):.1f}x |"
            )
        before, after = r["old"]["open_ms"], r["new"]["open_ms"]
        lines.append(
            f"| {r['layout']} | open (after: incl. migrating)"
            f" | {before['cpu']:.0f} / {before['wall']:.0f}"
            f" | {after['cpu']:.0f} / {after['wall']:.0f} | |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", default="1x1000,1x10000,1x100000,1000x100")
    parser.add_argument("--ops", type=int, default=200, help="timed operations per metric")
    parser.add_argument(
        "--synthetic",
        action="store_true",
        help="distinct rows beyond the corpus's ~114k facts (synthetic_facts), not shared ones",
    )
    tree_options(parser)
    child_options(parser, ["fill", "measure"])
    args = parser.parse_args()
    modes = {
        "fill": lambda texts: _fill(args.db, texts["rows"]),
        "measure": lambda texts: _measure(args.db, texts),
    }
    if answer_child(args, modes):
        return
    if not args.old:
        parser.error("--old is required: a tree of the code before the change")
    results = []
    for layout in args.layouts.split(","):
        results.append(run_layout(layout, args.old, args.new, args.ops, args.synthetic))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    print(f"medians over {args.ops} operations each, user-0 of the file\n")
    print(table(results))


if __name__ == "__main__":
    main()
