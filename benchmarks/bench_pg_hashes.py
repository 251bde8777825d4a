"""active_hashes on PostgreSQL: the override's one statement against Store's seek per hash
(written for SQLite's planner, a round trip each here) and the IN list of 065454b.

    .ci/postgres run python benchmarks/bench_pg_hashes.py [--hashes 500]
"""

from __future__ import annotations

import argparse
import os

import sqlalchemy as sa

from benchmarks.timing import medians, timed
from memman import MemoryManager
from memman.language.text import content_hash
from memman.scope import Scope
from memman.storage.memories import MemoryRows
from tests.postgres import fresh_database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hashes", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    url = os.environ["MEMMAN_TEST_PG_URL"]
    scope = Scope("u")
    with fresh_database(url) as db, MemoryManager(db) as mm:
        facts = [f"User fact number {i} about thing {i * 7}" for i in range(args.hashes)]
        mm.update_many(facts, user_id="u")
        hashes = [content_hash(f) for f in facts]
        lt = mm.store.long_term
        in_list = (
            sa.select(lt.c.content_hash)
            .where(lt.c.user_id == "u", lt.c.agent_id == scope.agent_key)
            .where(lt.c.content_hash.in_(hashes), lt.c.status == "active")
        )
        ways = {
            "one statement (PostgresStore)": lambda c: mm.store.active_hashes(c, scope, hashes),
            "a seek per hash (Store)": lambda c: MemoryRows.active_hashes(
                mm.store, c, scope, hashes
            ),
            "IN list (065454b)": lambda c: set(c.execute(in_list).scalars()),
        }
        for name, way in ways.items():
            samples = []
            for _ in range(args.rounds):
                with mm.store.read() as conn:
                    samples.append(timed(lambda: way(conn)))  # noqa: B023 (called at once)
                    assert len(way(conn)) == args.hashes
            m = medians(samples)
            cpu, wall = m["cpu"], m["wall"]
            print(f"{name:32} {cpu:6.2f} ms CPU {wall:6.2f} ms wall, {args.hashes} hashes")


if __name__ == "__main__":
    main()
