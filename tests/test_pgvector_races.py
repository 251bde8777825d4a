"""The first vectors of a dimension make its HNSW index (memman/storage/pgvector.py
ensure_index, under the advisory lock INDEX_LOCK): writers that race to make it, and one
SIGKILLed while it makes it or waits to, lose no write, double none, and leave one valid
index (or none, which the next write makes).

The races are set up without timing: the test holds the lock a writer needs (INDEX_LOCK, or a
lock on memory_vectors that CREATE INDEX waits for), waits until the server shows the writers
queued on it (pg_locks), then lets go or kills. benchmarks/stress_pgvector.py runs the same at
random moments, many times.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa

from memman import MemoryManager
from memman.config import Settings
from memman.storage.pgvector import INDEX_LOCK, index_name
from tests.postgres import fresh_database, pgvector_url  # noqa: F401
from tests.reliability import Ack, audit, read_acks
from tests.test_embed_custom import WordVectors

FORK = multiprocessing.get_context("fork")
_WAITING_FOR_INDEX_LOCK = f"""
    SELECT count(*) FROM pg_locks
    WHERE locktype = 'advisory' AND NOT granted AND objid = {INDEX_LOCK}::oid
"""
# A session that holds INDEX_LOCK and waits for a lock on memory_vectors: CREATE INDEX.
_MAKING_THE_INDEX = f"""
    SELECT count(*) FROM pg_locks w JOIN pg_locks a ON a.pid = w.pid
    WHERE NOT w.granted AND w.relation = 'memory_vectors'::regclass
      AND a.locktype = 'advisory' AND a.granted AND a.objid = {INDEX_LOCK}::oid
"""
_INDEX = """
    SELECT i.indisvalid AND i.indisready FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
    WHERE c.relname = :name
"""


@pytest.fixture
def db(pgvector_url) -> Iterator[str]:  # noqa: F811
    with fresh_database(pgvector_url) as url:
        manager(url).close()  # the schema, and no vector yet
        yield url


def manager(db: str) -> MemoryManager:
    """Offline decisions, a vector with every write, and a lock wait long enough for the
    test to hold a lock however slowly the writers start (no timing in the test)."""
    settings = Settings(db=db, decider="offline", busy_timeout_s=600, busy_patience_s=600)
    return MemoryManager(db, settings=settings, embedder=WordVectors())


def write(db: str, user: str, fact: str, ack_path: str) -> None:
    with open(ack_path, "w", buffering=1) as out, manager(db) as mm:
        r = mm.update_memory(fact, user_id=user)
        out.write(Ack(user, r.op.value, r.memory_id, r.content).line() + "\n")


def wait_for(conn: sa.Connection, sql: str, count: int, writers: list) -> None:
    """Until the server shows `count` sessions in the state `sql` counts (an event the
    writers cause, however slowly they start), failing if a writer exits first."""
    while conn.exec_driver_sql(sql).scalar() < count:
        assert all(w.is_alive() for w in writers), "a writer exited before it queued"
        time.sleep(0.01)


def index_valid(conn: sa.Connection) -> bool | None:
    return conn.execute(sa.text(_INDEX), {"name": index_name(WordVectors.dim)}).scalar()


def held(db: str, statements: list[str]) -> Callable[[], None]:
    """Run statements in an open transaction of a connection of its own; the function that
    ends it (a rollback)."""
    engine = sa.create_engine(db)
    conn = engine.connect()
    conn.begin()
    for statement in statements:
        conn.exec_driver_sql(statement)

    def release() -> None:
        conn.rollback()
        conn.close()
        engine.dispose()

    return release


def test_writers_racing_to_make_the_first_index_each_keep_their_write(db, tmp_path):
    release = held(db, [f"SELECT pg_advisory_xact_lock({INDEX_LOCK})"])
    facts = ["User likes old maps", "User owns a green teapot", "User visited Lisbon"]
    acks = [tmp_path / f"acks-{n}.jsonl" for n in range(len(facts))]
    # Three users: writes of one scope queue on its lock before they reach INDEX_LOCK.
    writers = [
        FORK.Process(target=write, args=(db, f"u{n}", fact, str(out)))
        for n, (fact, out) in enumerate(zip(facts, acks, strict=True))
    ]
    for writer in writers:
        writer.start()
    engine = sa.create_engine(db, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        # Each has looked for the index, found none, and queues to make it.
        wait_for(conn, _WAITING_FOR_INDEX_LOCK, len(writers), writers)
        release()
        for writer in writers:
            writer.join()
        assert [w.exitcode for w in writers] == [0] * len(writers)
        assert index_valid(conn) is True
        names = conn.exec_driver_sql(
            "SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'memory_vectors_hnsw_%%'"
        ).scalar()
        assert names == 1
    engine.dispose()
    written = [ack for out in acks for ack in read_acks(str(out))]
    result = audit(db, written)
    assert (result.acknowledged, result.present, result.duplicated) == (3, 3, 0)
    with manager(db) as mm:
        hits = mm.search("teapot", user_id="u1")
    assert [hit.memory.content for hit in hits][:1] == ["User owns a green teapot"]


@pytest.mark.parametrize(
    ("blocking", "waiting"),
    [
        (f"SELECT pg_advisory_xact_lock({INDEX_LOCK})", _WAITING_FOR_INDEX_LOCK),
        ("LOCK TABLE memory_vectors IN ROW EXCLUSIVE MODE", _MAKING_THE_INDEX),
    ],
    ids=["queued-for-the-lock", "making-the-index"],
)
def test_a_writer_killed_at_the_first_index_loses_nothing_and_the_next_write_makes_it(
    db, tmp_path, blocking, waiting
):
    release = held(db, [blocking])
    ack_path = tmp_path / "acks.jsonl"
    writer = FORK.Process(target=write, args=(db, "u", "User likes old maps", str(ack_path)))
    writer.start()
    engine = sa.create_engine(db, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        wait_for(conn, waiting, 1, [writer])
        writer.kill()  # SIGKILL inside its first write's transaction
        writer.join()
        release()  # the server rolls the dead client's transaction back, index and all
        assert read_acks(str(ack_path)) == []
        with manager(db) as mm:
            later = mm.update_memory("User owns a green teapot", user_id="u")
            hits = mm.search("teapot", user_id="u")
        assert [hit.memory.id for hit in hits][:1] == [later.memory_id]
        assert index_valid(conn) is True
    engine.dispose()
    result = audit(db, [Ack("u", later.op.value, later.memory_id, later.content)])
    assert (result.present, result.duplicated) == (1, 0)
