"""Issue 15: the crash and concurrency trials on a PostgreSQL server with pgvector, with an
embedder, so the writes store vectors and the first vector of a dimension makes its HNSW
index (memman/storage/pgvector.py ensure_index). Run by benchmarks/stress.py --pgvector URL
(or MEMMAN_TEST_PGVECTOR_URL, as `.ci/postgres pgvector run` sets it).

- race: in a fresh database, several processes open, wait at one barrier, then all write the
  first vectors of a dimension at once while another process searches; then all write the
  first vectors of a second dimension into the same database (vectors of the first exist).
- kills: a writer SIGKILLed a random moment after it opened a fresh database, most often
  during its first write (the one that makes the index); then a later write must find or
  make the index.

Each reports writes lost and duplicated (tests.reliability.audit), errors that reached a
caller, active memories without a vector, whether each dimension's index exists and is valid
(pg_index.indisvalid), and how many scans the searches made of it (pg_stat_user_indexes).
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from memman import MemoryManager
from memman.config import Settings
from memman.errors import MemmanError
from memman.storage.pgvector import index_name
from tests.postgres import direct, fresh_database
from tests.reliability import USERS, Ack, audit, pick_facts, read_acks
from tests.test_embed_custom import WordVectors

FORK = multiprocessing.get_context("fork")
FIRST_DIM, SECOND_DIM = 64, 48
_INDEX_STATE = """
    SELECT i.indisvalid, i.indisready, coalesce(s.idx_scan, 0)
    FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
    LEFT JOIN pg_stat_user_indexes s ON s.indexrelid = c.oid
    WHERE c.relname = :name
"""
_WITHOUT_VECTOR = """
    SELECT count(*) FROM long_term l WHERE l.status = 'active' AND NOT EXISTS
      (SELECT 1 FROM memory_vectors v WHERE v.memory_pk = l.pk)
"""
# Other sessions still on the database: a closed client's server process flushes its
# statistics (idx_scan) as it exits, so the counts are read once none is left.
_OTHERS = """
    SELECT count(*) FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid()
"""
_DEADLOCKS = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"


class DimVectors(WordVectors):
    """The tests' word-count embedder at another dimension, under its own model name."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim
        self.name = f"test-word-vectors-{dim}"


def vector_manager(path: str, dim: int) -> MemoryManager:
    """A manager that never calls an LLM and writes a vector of `dim` with every memory."""
    return MemoryManager(
        path, settings=Settings(db=path, decider="offline"), embedder=DimVectors(dim)
    )


def _alone(conn: sa.Connection) -> None:
    while conn.execute(sa.text(_OTHERS)).scalar():
        time.sleep(0.01)


def index_state(path: str, dim: int) -> tuple[bool, bool, int] | None:
    """(indisvalid, indisready, idx_scan) of the dimension's HNSW index; None if none."""
    with direct(path) as conn:
        _alone(conn)
        row = conn.execute(sa.text(_INDEX_STATE), {"name": index_name(dim)}).first()
    return None if row is None else (bool(row[0]), bool(row[1]), int(row[2]))


def without_vector(path: str) -> int:
    """Active memories with no vector at all (the embedder gave every write one)."""
    with direct(path) as conn:
        return int(conn.execute(sa.text(_WITHOUT_VECTOR)).scalar() or 0)


def deadlocks(path: str) -> int:
    """Deadlocks the server detected in the database (each one retried by memman)."""
    with direct(path) as conn:
        _alone(conn)
        return int(conn.execute(sa.text(_DEADLOCKS)).scalar() or 0)


def _writer(path: str, dim: int, seed: int, n: int, barrier: Any, results: Any) -> None:
    acks, errors = [], Counter()
    with vector_manager(path, dim) as mm:
        barrier.wait()
        for user, fact in pick_facts(seed, n):
            try:
                r = mm.update_memory(fact, user_id=user, source=f"w{seed}")
            except MemmanError as error:
                errors[f"{type(error).__name__}: {str(error)[:120]}"] += 1
                continue
            acks.append(Ack(user, r.op.value, r.memory_id, r.content))
    results.put(("writer", acks, errors))


def _searcher(path: str, dim: int, barrier: Any, stop: Any, results: Any) -> None:
    searches, hits, errors = 0, 0, Counter()
    with vector_manager(path, dim) as mm:
        barrier.wait()
        while not stop.is_set():
            for user in USERS:
                try:
                    hits += len(mm.search("likes old maps and jazz", user_id=user, limit=5))
                except MemmanError as error:
                    errors[f"{type(error).__name__}: {str(error)[:120]}"] += 1
                searches += 1
    results.put(("searcher", (searches, hits), errors))


def _race_round(path: str, dim: int, writers: int, writes: int, seed: int) -> dict[str, Any]:
    barrier, stop, results = FORK.Barrier(writers + 1), FORK.Event(), FORK.Queue()
    procs = [
        FORK.Process(target=_writer, args=(path, dim, seed + i, writes, barrier, results))
        for i in range(writers)
    ]
    procs.append(FORK.Process(target=_searcher, args=(path, dim, barrier, stop, results)))
    for proc in procs:
        proc.start()
    acks, errors, searched = [], Counter(), (0, 0)
    for _ in range(writers):
        _, got, failed = results.get()
        acks += got
        errors += failed
    stop.set()
    _, searched, failed = results.get()
    errors += failed
    for proc in procs:
        proc.join()
    return {"acks": acks, "errors": errors, "searches": searched}


def race(url: str, rounds: int, writers: int, writes: int) -> None:
    """Several processes write the first vectors of a dimension at once, twice per database."""
    totals: Counter = Counter()
    errors: Counter = Counter()
    invalid: list[str] = []
    started = time.time()
    for n in range(rounds):
        with fresh_database(url) as path:
            vector_manager(path, FIRST_DIM).close()  # the schema, no vector yet
            for dim in (FIRST_DIM, SECOND_DIM):
                got = _race_round(path, dim, writers, writes, seed=1000 * n + dim)
                result = audit(path, got["acks"])
                totals["attempted"] += writers * writes
                totals["acknowledged"] += result.acknowledged
                totals["lost"] += result.acknowledged - result.present
                totals["duplicated"] += result.duplicated
                totals["searches"] += got["searches"][0]
                totals["hits"] += got["searches"][1]
                errors += got["errors"]
                state = index_state(path, dim)
                totals[f"index {dim} scans"] += state[2] if state else 0
                if state is None or not state[0] or not state[1]:
                    invalid.append(f"round {n} dim {dim}: {state}")
            totals["active without a vector"] += without_vector(path)
            totals["deadlocks (retried)"] += deadlocks(path)
    print(
        f"pgvector race: {rounds} fresh databases x 2 dimensions ({FIRST_DIM}, {SECOND_DIM}),"
        f" {writers} processes writing the first vectors at once + 1 searching"
    )
    keys = ("attempted", "acknowledged", "lost", "duplicated", "active without a vector")
    for key in (*keys, "deadlocks (retried)"):
        print(f"  {key:<26} {totals[key]}")
    print(f"  errors to callers          {dict(errors) or 0}")
    print(f"  indexes missing/invalid    {len(invalid)} {invalid[:3]}")
    print(f"  searches (hits)            {totals['searches']} ({totals['hits']})")
    print(
        f"  HNSW index scans           dim {FIRST_DIM}: {totals[f'index {FIRST_DIM} scans']},"
        f" dim {SECOND_DIM}: {totals[f'index {SECOND_DIM} scans']}"
    )
    print(f"  wall                       {time.time() - started:.1f} s")


def _kill_writer(path: str, seed: int, n: int, ack_path: str, barrier: Any) -> None:
    """n writes (as crash_writer: one flushed line per acknowledged write), started with the
    other writer at the barrier."""
    with open(ack_path, "w", buffering=1) as out, vector_manager(path, FIRST_DIM) as mm:
        barrier.wait()
        for user, fact in pick_facts(seed, n):
            r = mm.update_memory(fact, user_id=user)
            out.write(Ack(user, r.op.value, r.memory_id, r.content).line() + "\n")


def kills(url: str, workdir: Path, trials: int) -> None:
    """Two writers start the first vector writes of a fresh database at once; one is
    SIGKILLed soon after, the other makes its 20 writes (every other trial: none, so the
    killed one is alone); then a later write."""
    rng = random.Random("stress-pgvector-kill")
    counts: Counter = Counter()
    failures: list[tuple[int, list[str]]] = []
    for trial in range(trials):
        with fresh_database(url) as path:
            vector_manager(path, FIRST_DIM).close()  # the schema, no vector yet
            ack_path, other_acks = (workdir / f"pgv-{trial}-{who}.jsonl" for who in "ko")
            barrier = FORK.Barrier(3)
            writer, other = (
                FORK.Process(target=_kill_writer, args=(path, seed, n, str(out), barrier))
                for seed, n, out in (
                    (trial, 100_000, ack_path),
                    (-trial, 20 * (trial % 2), other_acks),
                )
            )
            writer.start()
            other.start()
            barrier.wait()
            time.sleep(rng.uniform(0.0, 0.1))
            writer.kill()
            writer.join()
            other.join()
            counts["survivor failed"] += other.exitcode != 0
            acks = read_acks(str(ack_path))
            counts["acknowledged"] += len(acks)
            counts["killed before the first ack"] += not acks
            problems = []
            state = index_state(path, FIRST_DIM)
            counts["index after the kill: " + ("none" if state is None else "exists")] += 1
            if state is not None and not (state[0] and state[1]):
                problems.append(f"invalid index after the kill: {state}")
            result = audit(path, acks + read_acks(str(other_acks)))
            if result.present != result.acknowledged or result.duplicated:
                problems.append(f"lost or duplicated: {result}")
            try:
                with vector_manager(path, FIRST_DIM) as mm:
                    mm.update_memory(f"User {trial} collects brass keys", user_id="carol")
                    mm.search("brass keys", user_id="carol")
            except MemmanError as error:
                problems.append(f"later write: {error}")
            state = index_state(path, FIRST_DIM)
            if state is None or not (state[0] and state[1]):
                problems.append(f"index after a later write: {state}")
            counts["deadlocks (retried)"] += deadlocks(path)
            if without_vector(path):
                problems.append("active memories without a vector")
            if problems:
                failures.append((trial, problems))
    print(
        f"pgvector kills: {trials} SIGKILL trials, 2 writers start the first vector writes at"
        " once (every other trial: 1), one killed 0-100 ms after the start"
    )
    for key, value in sorted(counts.items()):
        print(f"  {key:<36} {value}")
    print(f"  failures found                       {len(failures)}")
    for failure in failures[:5]:
        print(f"    {failure}")


_FILL = [
    "INSERT INTO long_term (id, user_id, content, content_hash, created_at, updated_at)"
    " SELECT 'fill-' || g, 'filler', 'filler fact ' || g, md5(g::text), '2026-01-01',"
    " '2026-01-01' FROM generate_series(1, {rows}) AS g",
    "INSERT INTO memory_vectors (memory_pk, model, dim, vector)"
    " SELECT l.pk, 'filler-384', 384, ARRAY(SELECT random()::real + 0 * l.pk"
    " FROM generate_series(1, 384)) FROM long_term l WHERE l.user_id = 'filler'",
]


def new_dimension(url: str, rows: int) -> None:
    """The first write of a new dimension into a table that holds `rows` vectors of another
    (a model switch): its CREATE INDEX scans them, holding a SHARE lock on memory_vectors
    (every vector writer waits) until it commits."""
    with fresh_database(url) as path:
        vector_manager(path, FIRST_DIM).close()
        with direct(path) as conn:
            for statement in _FILL:
                conn.exec_driver_sql(statement.format(rows=rows))
            conn.exec_driver_sql("ANALYZE memory_vectors")
        with vector_manager(path, SECOND_DIM) as mm:
            walls = []
            for n in range(3):
                started = time.perf_counter()
                mm.update_memory(f"User collects brass keys number {n}", user_id="u")
                walls.append(1000 * (time.perf_counter() - started))
        print(
            f"pgvector new dimension: first writes of dim {SECOND_DIM} beside {rows} vectors of"
            f" dim 384: {', '.join(f'{wall:.0f}' for wall in walls)} ms wall"
            f" (the first makes the index); index {index_state(path, SECOND_DIM)}"
        )
