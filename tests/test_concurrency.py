"""Concurrent writers on one store (a SQLite file, or one PostgreSQL database as several app
servers share it): no "database is locked", nothing lost, no copies.

Processes (multiprocessing "spawn") and threads sharing one MemoryManager write heavily
overlapping facts; afterwards every acknowledged memory is active with its text, and no
text is active twice in a scope. benchmarks/stress.py prints the same figures.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from memman.models import Op
from memman.storage.backends import is_postgres_url
from tests.decisions import answer, llm_manager
from tests.postgres import fresh_database, postgres_url  # noqa: F401
from tests.reliability import (
    acked_writes,
    audit,
    integrity_problems,
    offline_manager,
    pick_facts,
    write_worker,
)

WRITERS = 8


@pytest.fixture(params=["sqlite", "postgres"])
def shared(request, tmp_path) -> Iterator[str]:
    """The store every writer opens: a SQLite file, then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "shared.db")
        return
    with fresh_database(request.getfixturevalue("postgres_url")) as url:
        yield url


def sound(path: str) -> list[str]:
    """SQLite's own checks of the file; PostgreSQL checks its pages itself."""
    return [] if is_postgres_url(path) else integrity_problems(path)


@pytest.mark.slow
def test_processes_writing_overlapping_facts_lose_nothing(shared):
    path = shared
    with multiprocessing.get_context("spawn").Pool(WRITERS) as pool:
        # A StoreBusyError or "database is locked" in any worker re-raises here.
        per_worker = pool.starmap(write_worker, [(path, seed, 500) for seed in range(WRITERS)])
    acks = [ack for worker in per_worker for ack in worker]

    result = audit(path, acks)

    assert (result.acknowledged, result.present, result.duplicated) == (WRITERS * 500,) * 2 + (0,)
    assert {ack.op for ack in acks} == {Op.ADD.value, Op.NOOP.value}
    assert sound(path) == []


def test_threads_sharing_one_manager_lose_nothing(shared):
    path = shared
    with offline_manager(path) as mm, ThreadPoolExecutor(WRITERS) as pool:
        written = pool.map(lambda seed: acked_writes(mm, seed, 60), range(WRITERS))
        acks = [ack for worker in written for ack in worker]

    result = audit(path, acks)

    assert (result.acknowledged, result.present, result.duplicated) == (WRITERS * 60,) * 2 + (0,)
    assert sound(path) == []


def test_threads_reading_while_writing_see_consistent_rows(shared):
    """Readers never block on writers (WAL) and never see a half-applied decision."""
    path = shared
    with offline_manager(path) as mm:

        def write(seed: int) -> None:
            for user, fact in pick_facts(seed, 40):
                mm.update_memory(fact, user_id=user)

        def read(seed: int) -> int:
            seen = 0
            for user, fact in pick_facts(seed, 40):
                for hit in mm.search(fact, user_id=user):
                    assert hit.memory.user_id == user
                    seen += 1
                memories = mm.list(user_id=user)
                assert len({m.content for m in memories}) == len(memories)
            return seen

        with ThreadPoolExecutor(WRITERS) as pool:
            writers = [pool.submit(write, seed) for seed in range(4)]
            readers = [pool.submit(read, seed) for seed in range(4, 8)]
            for future in writers + readers:
                future.result()


def test_threads_whose_llm_decisions_race_store_no_copies(shared, fake_openai):
    """An LLM decision is made outside the write lock; applying it re-checks the store, so two
    threads deciding ADD for the same text at once still store it once."""
    fake_openai.script(*[answer("ADD") for _ in range(WRITERS * 25)])
    path = shared
    with llm_manager(path, fake_openai.base_url, llm_max_retries=0) as mm:
        with ThreadPoolExecutor(WRITERS) as pool:
            written = pool.map(lambda seed: acked_writes(mm, seed, 25), range(WRITERS))
            acks = [ack for worker in written for ack in worker]
        assert mm.pending() == []

    result = audit(path, acks)

    assert len(fake_openai.requests) > WRITERS  # the LLM tier was really exercised
    assert (result.acknowledged, result.present, result.duplicated) == (WRITERS * 25,) * 2 + (0,)
