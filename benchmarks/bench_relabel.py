"""What `relabel` costs on an old store: every memory stored without a topic, read again.

    python benchmarks/bench_relabel.py [--memories 20000] [--batch 500]

MSC persona facts (train split; each persona a user) are written through update_many
(offline), then every memory's topic is set to NULL and the recorded reader version to 0 with
sqlite3, as a store from before the reader read anything looks. Reported: the time of check()
(which counts the memories awaiting relabel), of relabel(), how many it read and labelled,
and of a second relabel (only the memories no reader reads are left to read).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
from pathlib import Path

from benchmarks.timing import timed
from memman import MemoryManager

DATA = Path(os.environ.get("MEMMAN_DATA", "/work/shared/data"))
PERSONAS = DATA / "msc" / "msc_personas_all.json"


def personas(limit: int) -> list[list[str]]:
    """Persona fact lists of the train split, up to `limit` facts in all."""
    found, total = [], 0
    for dialogue in json.loads(PERSONAS.read_text())["train"]:
        for speaker in ("Speaker 1", "Speaker 2"):
            facts = dialogue[speaker][: limit - total]
            if facts:
                found.append(facts)
                total += len(facts)
            if total >= limit:
                return found
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "relabel.db")
        with MemoryManager(path) as mm:
            for n, facts in enumerate(personas(args.memories)):
                mm.update_many(facts, user_id=f"user{n}")
        conn = sqlite3.connect(path)
        conn.execute("UPDATE long_term SET subject = NULL, attribute = NULL")
        conn.execute("UPDATE store_state SET value = '0' WHERE key = 'reader_version'")
        conn.commit()
        active = conn.execute("SELECT count(*) FROM long_term WHERE status = 'active'")
        (active,) = active.fetchone()
        conn.close()
        with MemoryManager(path) as mm:
            reports = []
            check_ms = timed(lambda: reports.append(mm.check()))
            first_ms = timed(lambda: reports.append(mm.relabel(batch=args.batch)))
            again_ms = timed(lambda: reports.append(mm.relabel(batch=args.batch)))
            after = mm.check()
    print(f"store: {active} active memories, every topic NULL, reader version 0")
    due = reports[0].relabel_due
    print(f"check: {check_ms[0]:.0f} ms CPU, {check_ms[1]:.0f} ms wall; {due} due")
    first, again = reports[1], reports[2]
    print(
        f"relabel: {first_ms[0]:.0f} ms CPU, {first_ms[1]:.0f} ms wall;"
        f" read {first.read}, labelled {first.labelled}"
    )
    print(
        f"relabel again: {again_ms[0]:.0f} ms CPU, {again_ms[1]:.0f} ms wall;"
        f" read {again.read}, labelled {again.labelled}"
    )
    print(f"check after: {after.relabel_due} due, reader version {after.reader_version}")


if __name__ == "__main__":
    main()
