"""A read never waits for a writer (issue 29, item 1).

search, context and search_short_term count what they return (access counts, short-term
recalls); the counting is a write. While another connection holds a write transaction they
still answer at once, and the counts are written once the lock is free. The holder is a
second manager on the same store inside memman's own write door, holding the lock until the
test lets it go (events, no sleeping); its transaction also locks the user's rows, as a
PostgreSQL writer of that user would. busy_patience_s is small, so a read that waited for
the lock would raise StoreBusyError instead of hanging.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from memman import MemoryManager
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401

IMPATIENT = {"busy_timeout_s": 0.05, "busy_patience_s": 0.2}


@contextmanager
def write_lock_held(db: str) -> Iterator[None]:
    """Another manager's write transaction, open (user u's rows locked) until the block ends."""
    holding, release = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def hold(conn: sa.Connection) -> None:
        for table, count in (("long_term", "access_count"), ("short_term", "recall_count")):
            conn.execute(sa.text(f"UPDATE {table} SET {count} = {count} WHERE user_id = 'u'"))
        holding.set()
        assert release.wait(60), "the test never released the lock"

    with MemoryManager(db, decider="offline") as other:

        def run() -> None:
            try:
                other.store.write(hold)
            except BaseException as error:  # reported below
                failures.append(error)
                holding.set()

        holder = threading.Thread(target=run)
        holder.start()
        try:
            assert holding.wait(60), "the holder never took the lock"
            assert not failures, failures
            yield
        finally:
            release.set()
            holder.join(60)
    assert not failures, failures


def test_search_and_context_answer_while_another_writer_holds_the_lock(db):
    with MemoryManager(db, decider="offline", **IMPATIENT) as mm:
        mm.update_memory("User likes green tea", user_id="u")
        mm.remember_short_term("User is drinking green tea now", user_id="u", session_id="s")
        with write_lock_held(db):
            hits = mm.search("green tea", user_id="u")
            block = mm.context("green tea", user_id="u")
            short = mm.search_short_term("green tea", user_id="u")
        assert [h.content for h in hits] == ["User likes green tea"]
        assert "User likes green tea" in block.text
        assert [f.content for f in block.short_term] == ["User is drinking green tea now"]
        assert [h.fact.content for h in short] == ["User is drinking green tea now"]

        # The lock is free again: the next read writes what waited, and its own count.
        mm.search("green tea", user_id="u")
        (memory,) = mm.list(user_id="u")
        assert memory.access_count == 3
        (fact,) = mm.short_term(user_id="u")
        assert fact.recall_count == 1  # recalls closer than the spacing count once


def test_a_read_alone_counts_at_once(db):
    with MemoryManager(db, decider="offline") as mm:
        mm.update_memory("User likes green tea", user_id="u")
        mm.search("green tea", user_id="u")
        assert mm.list(user_id="u")[0].access_count == 1
