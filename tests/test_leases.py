"""retry_pending() and flush() from several processes: each row is worked on by one of them
(on one SQLite file, and on one PostgreSQL database).

Workers are forked and held at their first embedding call (after they chose what to work
on) until every worker has either reached it or finished: without claims, all of them would
then decide the same parked facts and extract the same messages. A worker killed while it
holds a claim keeps its rows only until the lease lapses (the injected clock moves past it).
"""

from __future__ import annotations

import multiprocessing
from collections import Counter

import sqlalchemy as sa

from memman import MemoryManager, Op
from tests.clock import Clock
from tests.postgres import db_on_each_backend, direct, postgres_url  # noqa: F401
from tests.test_embed_custom import WordVectors

FORK = multiprocessing.get_context("fork")
WORKERS = 3
FACTS = [f"User collects stamps from country number {n}" for n in range(12)]


class GatedVectors(WordVectors):
    """Reports "embedding" on its first call, then waits for `go` (a held worker)."""

    def __init__(self, reports, go) -> None:
        super().__init__()
        self.reports, self.go = reports, go

    def embed(self, texts):
        if not self.calls:
            self.reports.put("embedding")
            self.go.wait()
        return super().embed(texts)


def manager(path: str, embedder=None, clock=None) -> MemoryManager:
    return MemoryManager(path, embedder=embedder or WordVectors(), clock=clock or Clock())


def retry_worker(path: str, reports, go) -> None:
    with manager(path, GatedVectors(reports, go)) as mm:
        mm.retry_pending()
    reports.put("done")


def flush_worker(path: str, reports, go) -> None:
    with manager(path, GatedVectors(reports, go)) as mm:
        mm.flush("s1", user_id="u")
    reports.put("done")


def run_held(target, path: str) -> None:
    """Start WORKERS processes; release them once each is held or done; all must exit 0."""
    reports, go = FORK.Queue(), FORK.Event()
    workers = [FORK.Process(target=target, args=(path, reports, go)) for _ in range(WORKERS)]
    for worker in workers:
        worker.start()
    first = [reports.get(timeout=120) for _ in workers]  # a safety net, never a measurement
    go.set()
    for worker in workers:
        worker.join()
    assert [worker.exitcode for worker in workers] == [0] * WORKERS, first


def park(path: str, facts: list[str]) -> None:
    model = WordVectors()
    model.failing = True
    with manager(path, model) as mm:
        for fact in facts:
            assert mm.update_memory(fact, user_id="u").op is Op.PENDING


def rows(path: str, sql: str) -> list[tuple]:
    with direct(path) as conn:
        return [tuple(row) for row in conn.execute(sa.text(sql))]


def test_parallel_retries_decide_each_parked_fact_once(db):
    path = db
    park(path, FACTS)

    run_held(retry_worker, path)

    decided = Counter(
        candidate
        for (candidate,) in rows(path, "SELECT candidate FROM events WHERE op != 'PENDING'")
    )
    assert decided == Counter(FACTS)  # each decided once, none lost
    assert rows(path, "SELECT count(*) FROM pending") == [(0,)]
    active = rows(path, "SELECT content FROM long_term WHERE status = 'active'")
    assert sorted(content for (content,) in active) == sorted(FACTS)


def test_parallel_flushes_extract_each_message_once(db):
    path = db
    messages = [{"role": "user", "content": fact} for fact in FACTS]
    with manager(path, clock=Clock()) as mm:
        mm.observe(messages, user_id="u", session_id="s1")

    run_held(flush_worker, path)

    sources = Counter(source for (source,) in rows(path, "SELECT source FROM events"))
    assert len(sources) == len(FACTS) and set(sources.values()) == {1}
    assert rows(path, "SELECT count(*) FROM message_buffer WHERE extracted_at IS NULL") == [(0,)]


def held_retry(path: str, reports, go) -> None:
    """Claims a parked fact, reports, and waits for a kill that comes before `go`."""
    with manager(path, GatedVectors(reports, go)) as mm:
        mm.retry_pending()


def test_a_killed_workers_claim_lapses_and_its_fact_is_decided_once(db):
    path = db
    park(path, FACTS[:1])
    reports, go = FORK.Queue(), FORK.Event()
    worker = FORK.Process(target=held_retry, args=(path, reports, go))
    worker.start()
    assert reports.get(timeout=120) == "embedding"  # it holds the claim now
    worker.kill()
    worker.join()

    clock = Clock()
    with manager(path, clock=clock) as mm:
        assert mm.retry_pending() == []  # the dead worker's lease has not lapsed yet
        assert len(mm.pending()) == 1  # and the fact is still there
        clock.advance(seconds=mm.settings.lease_s)
        assert [r.op for r in mm.retry_pending()] == [Op.ADD]
    assert rows(path, "SELECT count(*) FROM events WHERE op = 'ADD'") == [(1,)]


def held_flush(path: str, reports, go) -> None:
    """Claims the session's messages, reports, and waits for a kill that comes before `go`."""
    with manager(path, GatedVectors(reports, go)) as mm:
        mm.flush("s1", user_id="u")


def test_a_killed_flushs_messages_wait_for_its_lease_then_are_extracted_once(db):
    path = db
    with manager(path) as mm:
        mm.observe([{"role": "user", "content": FACTS[0]}], user_id="u", session_id="s1")
    reports, go = FORK.Queue(), FORK.Event()
    worker = FORK.Process(target=held_flush, args=(path, reports, go))
    worker.start()
    assert reports.get(timeout=120) == "embedding"
    worker.kill()
    worker.join()

    clock = Clock()
    with manager(path, clock=clock) as mm:
        assert mm.flush("s1", user_id="u").extracted_messages == 0  # still the dead worker's
        clock.advance(seconds=mm.settings.lease_s)
        assert mm.flush("s1", user_id="u").extracted_messages == 1
        assert mm.flush("s1", user_id="u").extracted_messages == 0
    assert rows(path, "SELECT op FROM events") == [("ADD",)]
