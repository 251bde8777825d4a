"""Reliability figures for issue 6: concurrency, crashes, fuzzing. Run from the repo root:

    python -m benchmarks.stress [--writers 8] [--writes 500] [--crash-trials 100]
                                [--lifecycle-trials 25] [--fuzz 2000]
                                [--parallel-workers 4] [--parallel-rounds 10] [--only NAME]
                                [--pg URL] [--pgvector URL] [--pgvector-rounds 5]

With --pg (or MEMMAN_TEST_PG_URL, as `.ci/postgres run` sets it) the concurrency and crash
sections run again on PostgreSQL, each in fresh databases on that server (dropped after):
several processes standing in for app servers that share one database. With --pgvector (or
MEMMAN_TEST_PGVECTOR_URL, as `.ci/postgres pgvector run` sets it) the trials of
benchmarks/stress_pgvector.py run first: writes with vectors, the HNSW index creation race,
kills during the first vector write (--only pgvector: those alone).

Prints writes attempted / acknowledged / present / duplicated under concurrent writers,
errors that reached a caller, throughput, SIGKILL crash trials (writes, batches, opens,
consolidation, LLM extraction) and the failures found, and fuzz cases run with the store
corruptions found (target 0 for every failure count). Issue 12: retry_pending() and
flush() run by several processes at once, some SIGKILLed mid-run (facts decided twice,
messages extracted twice, facts lost: target 0).
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import multiprocessing
import os
import random
import shutil
import sqlite3
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import sqlite_utils

from benchmarks import stress_pgvector
from memman import MemoryManager
from memman.errors import MemmanError
from memman.storage import postgres_schema
from memman.storage.backends import is_postgres_url
from memman.storage.migrations import migrations
from tests.decisions import NEW, OLD, llm_manager
from tests.fake_openai import FakeOpenAI, Reply, chat_completion
from tests.postgres import PGVECTOR_URL_VARIABLE, URL_VARIABLE, direct, fresh_database
from tests.reliability import (
    Ack,
    audit,
    consolidate_writer,
    crash_writer,
    extract_writer,
    extraction_reply,
    integrity_problems,
    lost_by_consolidation,
    lost_messages,
    offline_manager,
    pick_facts,
    read_acks,
    seed_near_duplicates,
)
from tests.test_embed_custom import WordVectors

# new_store(name): the store of that name, made on first use (a file, or a fresh database).
NewStore = Callable[[str], str]


def timed_writer(path: str, seed: int, n: int) -> tuple[list[Ack], Counter, float, float]:
    """Like tests.reliability.write_worker, but counts errors instead of stopping at one."""
    acks, errors = [], Counter()
    with offline_manager(path) as mm:
        started = time.time()
        for user, fact in pick_facts(seed, n):
            try:
                r = mm.update_memory(fact, user_id=user)
            except MemmanError as error:
                errors[type(error).__name__] += 1
                continue
            acks.append(Ack(user, r.op.value, r.memory_id, r.content))
        return acks, errors, started, time.time()


def concurrency(new_store: NewStore, writers: int, writes: int) -> None:
    path = new_store("concurrent")
    offline_manager(path).close()
    with multiprocessing.get_context("spawn").Pool(writers) as pool:
        runs = pool.starmap(timed_writer, [(path, seed, writes) for seed in range(writers)])
    acks = [ack for run in runs for ack in run[0]]
    errors = sum((run[1] for run in runs), Counter())
    seconds = max(run[3] for run in runs) - min(run[2] for run in runs)
    result = audit(path, acks)
    print(
        f"concurrency ({_backend(path)}): {writers} processes x {writes} update_memory calls,"
        " overlapping facts"
    )
    print(f"  writes attempted     {writers * writes}")
    print(f"  acknowledged         {result.acknowledged}")
    print(f"  present              {result.present}")
    print(f"  duplicated (active)  {result.duplicated}")
    print(f"  errors to callers    {dict(errors) or 0}")
    print(f"  integrity problems   {len(integrity_problems(path))}")
    print(f"  throughput           {len(acks) / seconds:.0f} writes/s over {seconds:.1f} s")


def _backend(path: str) -> str:
    return "PostgreSQL" if is_postgres_url(path) else "SQLite"


def _half_migrated(path: str) -> tuple[bool, bool]:
    """(no schema at all, some migrations but not all) of a store a kill left behind."""
    if is_postgres_url(path):
        with direct(path) as conn:
            applied = postgres_schema.applied(conn)
        return not applied, applied not in ([], postgres_schema.KNOWN)
    schema = sqlite_utils.Database(path)
    try:
        names = schema.table_names()
        return not names, bool(names) and bool(list(migrations.pending(schema)))
    finally:
        schema.close()


def crashes(workdir: Path, new_store: NewStore, trials: int) -> None:
    fork = multiprocessing.get_context("fork")
    rng = random.Random("stress-crash")
    failures, acknowledged, unmigrated = [], 0, 0
    modes = ["single", "batch", "open"]
    for trial in range(trials):
        mode = modes[trial % len(modes)]
        path = new_store(f"fresh-{trial}" if mode == "open" else f"crash-{mode}")
        ack_path = workdir / f"acks-{trial}.jsonl"
        writer = fork.Process(target=crash_writer, args=(str(path), mode, trial, str(ack_path)))
        writer.start()
        time.sleep(rng.uniform(0.0, 0.03 if mode == "open" else 0.4))
        writer.kill()
        writer.join()
        problems = integrity_problems(str(path))
        acks = read_acks(str(ack_path)) if ack_path.exists() else []
        acknowledged += len(acks)
        if mode == "open":
            empty, half = _half_migrated(path)
            unmigrated += empty
            if half:
                problems.append("half-migrated schema")
        else:
            result = audit(str(path), acks)
            if result.present != result.acknowledged or result.duplicated:
                problems.append(f"lost or duplicated: {result}")
        try:
            with offline_manager(str(path)) as mm:
                mm.stats()
        except MemmanError as error:
            problems.append(f"reopen: {error}")
        if problems:
            failures.append((trial, mode, problems))
    print(
        f"crashes ({_backend(path)}): {trials} SIGKILL trials (single writes, update_many"
        " batches, fresh store open)"
    )
    print(f"  writes acknowledged before a kill  {acknowledged}")
    print(f"  fresh files killed before migrated {unmigrated} (then reopened and migrated)")
    print(f"  failures found                     {len(failures)}")
    for failure in failures[:5]:
        print(f"    {failure}")


def lifecycle_crashes(workdir: Path, trials: int) -> None:
    """SIGKILL during consolidate() (100 near-duplicate pairs) and during slow LLM extraction."""
    fork = multiprocessing.get_context("fork")
    rng = random.Random("stress-lifecycle")
    seeded = workdir / "seeded.db"
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    ids = seed_near_duplicates(str(seeded), lambda: start, 100)
    month_later = (start + dt.timedelta(days=30)).isoformat()
    failures, phases = [], Counter()  # None: before opening, False: mid-run, True: after
    for trial in range(trials):
        path, ack_path = workdir / f"consolidate-{trial}.db", workdir / f"cons-{trial}.jsonl"
        shutil.copy(seeded, path)
        writer = fork.Process(
            target=consolidate_writer, args=(str(path), month_later, str(ack_path))
        )
        writer.start()
        time.sleep(rng.uniform(0.0, 0.4))
        writer.kill()
        writer.join()
        acks = ack_path.read_text() if ack_path.exists() else ""
        phases['"merged"' in acks if '"opened"' in acks else None] += 1
        problems = integrity_problems(str(path)) + lost_by_consolidation(str(path), ids)
        if audit(str(path), []).duplicated:
            problems.append("an active text stored twice")
        if problems:
            failures.append((trial, "consolidate", problems))
    server = FakeOpenAI().start()
    server.script(*(extraction_reply(n, 0.05) for n in range(40 * trials)))
    path = workdir / "extract.db"
    with MemoryManager(str(path), llm_model="fake-model", llm_base_url=server.base_url):
        pass  # import the LLM client before forking
    acked = 0
    try:
        for trial in range(trials):
            ack_path = workdir / f"extract-{trial}.jsonl"
            writer = fork.Process(
                target=extract_writer, args=(str(path), server.base_url, trial, str(ack_path))
            )
            writer.start()
            time.sleep(rng.uniform(0.05, 0.6))
            writer.kill()
            writer.join()
            acked += ack_path.read_text().count('"buffered"') if ack_path.exists() else 0
            problems = integrity_problems(str(path)) + lost_messages(str(path), str(ack_path))
            if problems:
                failures.append((trial, "extract", problems))
    finally:
        server.stop()
    with sqlite3.connect(path) as conn:
        left, extracted = conn.execute(
            "SELECT count(*) - count(extracted_at), count(extracted_at) FROM message_buffer"
        ).fetchone()
    print(f"lifecycle crashes: {trials} SIGKILL trials during consolidate(), {trials} during")
    print("  LLM extraction (fake server answering in 50 ms)")
    print(
        f"  consolidation kills before open / mid-run / after  {phases[None]} / {phases[False]}"
        f" / {phases[True]}"
    )
    print(f"  messages acknowledged as buffered        {acked}")
    print(f"  ... of which extracted / still buffered  {extracted} / {left}")
    print(f"  extraction requests sent                 {len(server.requests)}")
    print(f"  failures found                           {len(failures)}")
    for failure in failures[:5]:
        print(f"    {failure}")


def hostile_text(rng: random.Random) -> str:
    pieces = [
        "User likes tea", '"', "'", "NEAR(", " AND ", "-", "*", ":", "\x00", "\ud800",
        "'); DROP TABLE long_term;--", "{{ x }}", "寿司", "🍣", "\u202e", " ", "\n",
    ]  # fmt: skip
    text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
    return text * rng.choice([1, 1, 1, 500])


def fuzz(workdir: Path, cases: int) -> None:
    path = str(workdir / "fuzz.db")
    rng = random.Random("stress-fuzz")
    outcomes: Counter = Counter()
    with offline_manager(path) as mm:
        for _ in range(cases):
            text = hostile_text(rng)
            for call in (
                lambda t=text: mm.update_memory(t, user_id="alice", metadata={"t": t}),
                lambda t=text: mm.search(t, user_id="alice"),
            ):
                try:
                    call()
                    outcomes["ok"] += 1
                except MemmanError as error:
                    outcomes[type(error).__name__] += 1
                except Exception as error:  # the figure this benchmark exists to show is 0
                    outcomes[f"UNTYPED {type(error).__name__}"] += 1
    corruptions = integrity_problems(path)
    print(f"input fuzz: {cases} hostile facts and {cases} hostile queries")
    print(f"  outcomes             {dict(outcomes)}")
    print(f"  store corruptions    {len(corruptions)}")


def llm_fuzz(workdir: Path, cases: int) -> None:
    rng = random.Random("stress-llm")
    server = FakeOpenAI().start()
    outcomes: Counter = Counter()
    leaks = 0
    mm = llm_manager(str(workdir / "llm.db"), server.base_url, llm_max_retries=0, llm_timeout_s=2)
    try:
        mm.update_memory(OLD, user_id="alice")
        mm.update_memory(OLD, user_id="bob")
        bob = [(m.content, m.status) for m in mm.list(user_id="bob", include_inactive=True)]
        for _ in range(cases):
            fields = {
                "op": rng.choice(["ADD", "UPDATE", "DELETE", "NOOP", "MERGE", "", None]),
                "id": rng.choice([1, 2, 0, -1, 2**63, "1", None]),
                "content": rng.choice(["User sits", "", "x" * 5000, hostile_text(rng)]),
                "reason": "fuzz",
            }
            body = rng.choice(
                [
                    chat_completion(tool_args={"decision": fields}),
                    chat_completion(tool_args=hostile_text(rng)),
                    hostile_text(rng).encode("utf-8", "surrogatepass"),  # not even UTF-8
                ]
            )
            server.script(Reply(body=body))
            try:
                result = mm.update_memory(f"{NEW} {rng.random()}", user_id="alice")
                outcomes[result.op.value] += 1
            except Exception as error:  # the figure this benchmark exists to show is 0
                outcomes[f"RAISED {type(error).__name__}"] += 1
            now = [(m.content, m.status) for m in mm.list(user_id="bob", include_inactive=True)]
            leaks += now != bob
    finally:
        mm.close()
        server.stop()
    print(f"LLM fuzz: {cases} random answers from the fake OpenAI server")
    print(f"  outcomes             {dict(outcomes)}")
    print(f"  other-scope changes  {leaks}")
    print(f"  store corruptions    {len(integrity_problems(str(workdir / 'llm.db')))}")


def _lease_worker(path: str, job: str, sessions: list[str]) -> None:
    """retry_pending() or flush() every session, as one of several processes."""
    with MemoryManager(path, embedder=WordVectors()) as mm:
        if job == "retry":
            mm.retry_pending()
        else:
            for session in sessions:
                mm.flush(session)


def _later(seconds: float):
    """A clock past every lease a killed worker could hold."""
    return lambda: dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)


def _decisions_by(path: str, column: str, where: str) -> Counter:
    """Decisions (folded repeats counted) per candidate or per message source."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            f"SELECT {column}, sum(repeat_count) FROM events WHERE {where} GROUP BY {column}"
        ).fetchall()
    return Counter(dict(rows))


def parallel_leases(workdir: Path, workers: int, rounds: int) -> None:
    """Issue 12: several processes retry the same parked facts and flush the same sessions,
    one of them SIGKILLed at a random moment each round; a last pass after the leases lapse
    settles what the killed ones held."""
    fork = multiprocessing.get_context("fork")
    rng = random.Random("stress-leases")
    twice = {"retry": 0, "flush": 0}
    lost = {"retry": 0, "flush": 0}
    total = {"retry": 0, "flush": 0}
    kills = 0
    for trial in range(rounds):
        for job in ("retry", "flush"):
            path = str(workdir / f"lease-{job}-{trial}.db")
            facts = [f"I have visited city number {n} on trip {trial}" for n in range(100)]
            sessions = [f"s{n}" for n in range(10)]
            model = WordVectors()
            model.failing = True
            with MemoryManager(path, embedder=model) as mm:
                if job == "retry":
                    for fact in facts:
                        mm.update_memory(fact, user_id="u")
                else:
                    for n, fact in enumerate(facts):
                        message = [{"role": "user", "content": fact}]
                        mm.observe(message, user_id="u", session_id=sessions[n % 10])
            total[job] += len(facts)
            procs = [
                fork.Process(target=_lease_worker, args=(path, job, rng.sample(sessions, 10)))
                for _ in range(workers)
            ]
            for proc in procs:
                proc.start()
            time.sleep(rng.uniform(0.0, 0.3))
            procs[0].kill()
            for proc in procs:
                proc.join()
            kills += procs[0].exitcode == -9
            with MemoryManager(path, embedder=WordVectors(), clock=_later(301)) as mm:
                if job == "retry":
                    mm.retry_pending()
                else:
                    for session in sessions:
                        mm.flush(session)
                active = {m.content for m in mm.list(user_id="u", limit=len(facts) + 1)}
            column = "candidate" if job == "retry" else "source"
            decided = _decisions_by(path, column, "op != 'PENDING'")
            twice[job] += sum(1 for n in decided.values() if n > 1)
            lost[job] += len(set(facts) - active)
    print(f"parallel leases: {rounds} rounds x {workers} processes, one SIGKILLed per round")
    print(f"  kills that landed before the worker finished  {kills} of {2 * rounds}")
    print(
        f"  retry_pending: parked {total['retry']}, decided twice {twice['retry']},"
        f" lost {lost['retry']}"
    )
    print(
        f"  flush: messages {total['flush']}, extracted twice {twice['flush']},"
        f" lost {lost['flush']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--crash-trials", type=int, default=120)
    parser.add_argument("--lifecycle-trials", type=int, default=25)
    parser.add_argument("--fuzz", type=int, default=2000)
    parser.add_argument("--parallel-workers", type=int, default=4)
    parser.add_argument("--parallel-rounds", type=int, default=10)
    parser.add_argument("--only", choices=["leases", "pgvector"], help="Run this section alone.")
    parser.add_argument("--pg", default=os.environ.get(URL_VARIABLE), help="a server's URL")
    parser.add_argument(
        "--pgvector",
        default=os.environ.get(PGVECTOR_URL_VARIABLE),
        help="a server with pgvector (benchmarks/stress_pgvector.py)",
    )
    parser.add_argument("--pgvector-rounds", type=int, default=5)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # instructor logs every failed call; the counts say it
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as databases:
        workdir = Path(tmp)
        if args.pgvector:
            stress_pgvector.race(args.pgvector, args.pgvector_rounds, args.writers, args.writes)
            stress_pgvector.kills(args.pgvector, workdir, args.crash_trials)
            stress_pgvector.new_dimension(args.pgvector, 100_000)
        if args.only == "pgvector":
            return
        parallel_leases(workdir, args.parallel_workers, args.parallel_rounds)
        if args.only == "leases":
            return
        stores: list[NewStore] = [lambda name: str(workdir / f"{name}.db")]
        if args.pg:
            made: dict[str, str] = {}
            stores.append(
                lambda name: (
                    made.get(name)
                    or made.setdefault(name, databases.enter_context(fresh_database(args.pg)))
                )
            )
        for new_store in stores:
            concurrency(new_store, args.writers, args.writes)
            crashes(workdir, new_store, args.crash_trials)
        lifecycle_crashes(workdir, args.lifecycle_trials)
        fuzz(workdir, args.fuzz)
        llm_fuzz(workdir, args.fuzz // 10)


if __name__ == "__main__":
    main()
