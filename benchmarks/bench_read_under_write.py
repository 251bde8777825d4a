"""Search latency in one process while another process imports 100,000 memories (issue 29).

    python benchmarks/bench_read_under_write.py [--memories 100000] [--pg-url URL]

A store holds a reader's 1,000 memories. A second process imports an export of --memories
memories of another user (import_jsonl: batches of 500 in write transactions, then an ADD
event for each memory that came without one); meanwhile this process runs `search` for the
reader in a loop, timing each call with time.perf_counter (wall) and time.process_time (CPU).
The same searches are timed first with no writer (baseline). Printed: p50, p99 and max of
each, how many searches ran, and how many raised (StoreBusyError before issue 29's fix: the
search's access counts waited for the importer's write lock).

--pg-url: the same on PostgreSQL, in a fresh database made on that server (dropped after).
Not a test: figures depend on the machine; compare figures of one run only.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from memman import MemmanError, MemoryManager

READER = "reader"
QUERIES = ("green tea", "stamps from land", "bicycle garage", "favourite city", "chess club")
TOPICS = ("green tea", "stamps", "bicycle", "city", "chess", "jazz", "hiking", "cooking")


def reader_facts(n: int) -> list[str]:
    return [
        f"User's note {i} about {TOPICS[i % len(TOPICS)]} and item {i * 7919 % 1000}"
        for i in range(n)
    ]


def write_export(path: Path, memories: int) -> None:
    """An export of `memories` memories of user "bulk", from one real line as the template."""
    with MemoryManager(":memory:") as mm:
        mm.update_memory("User likes green tea", user_id="bulk")
        (template,) = (json.loads(line) for line in mm.export_jsonl())
    with path.open("w", encoding="utf-8") as out:
        for i in range(memories):
            line = {
                **template,
                "id": uuid.uuid4().hex,
                "content": f"User collects stamps from land number {i} near {TOPICS[i % 8]}",
                "subject": None,
                "attribute": None,
            }
            out.write(json.dumps(line) + "\n")


def importer(db: str, export: str, started: multiprocessing.Event) -> None:
    with MemoryManager(db) as mm:
        started.set()
        report = mm.import_jsonl(export)
    print(f"  importer: {report.copied} copied, {report.events_written} events written", flush=True)


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered):7.2f}  p99 {p99:7.2f}  max {ordered[-1]:8.2f} ms"


def searches(mm: MemoryManager, until) -> tuple[list[float], list[float], int]:
    """(wall ms, CPU ms, errors) of search calls run until until() is true."""
    wall, cpu, errors, n = [], [], 0, 0
    while not until():
        query = QUERIES[n % len(QUERIES)]
        n += 1
        c, w = time.process_time(), time.perf_counter()
        try:
            mm.search(query, user_id=READER, limit=5)
        except MemmanError as error:
            errors += 1
            print(f"  search raised {type(error).__name__}: {error}", flush=True)
        wall.append((time.perf_counter() - w) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return wall, cpu, errors


def run(db: str, memories: int, patience_s: float) -> None:
    with MemoryManager(db, busy_patience_s=patience_s) as mm:
        mm.update_many(reader_facts(1000), user_id=READER)
        count = iter(range(500))
        wall, cpu, errors = searches(mm, lambda: next(count, None) is None)
        print(f"  no writer      ({len(wall)} searches, {errors} raised)")
        print(f"    wall {percentiles(wall)}\n    cpu  {percentiles(cpu)}")
        with tempfile.TemporaryDirectory() as tmp:
            export = Path(tmp) / "export.jsonl"
            write_export(export, memories)
            context = multiprocessing.get_context("spawn")
            started = context.Event()
            writer = context.Process(target=importer, args=(db, str(export), started))
            began = time.perf_counter()
            writer.start()
            started.wait()
            wall, cpu, errors = searches(mm, lambda: not writer.is_alive())
            writer.join()
            took = time.perf_counter() - began
        print(
            f"  while importing {memories} memories ({took:.1f} s; {len(wall)} searches,"
            f" {errors} raised)"
        )
        print(f"    wall {percentiles(wall)}\n    cpu  {percentiles(cpu)}")
        counted = sum(m.access_count for m in mm.list(user_id=READER))
        print(f"  access counts written: {counted} of {5 * (500 + len(wall))} hits returned")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--pg-url", help="a PostgreSQL server to run the same on")
    parser.add_argument(
        "--patience", type=float, default=60.0, help="busy_patience_s of the searching process"
    )
    args = parser.parse_args()
    import memman

    print(f"memman from {Path(memman.__file__).parent}; python {sys.version.split()[0]}")
    print("SQLite:")
    with tempfile.TemporaryDirectory() as tmp:
        run(str(Path(tmp) / "m.db"), args.memories, args.patience)
    if args.pg_url:
        print("PostgreSQL:")
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.postgres import fresh_database

        with fresh_database(args.pg_url) as url:
            run(url, args.memories, args.patience)


if __name__ == "__main__":
    main()
