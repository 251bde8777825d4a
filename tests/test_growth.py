"""Bounded growth: repeats fold into one event, the message buffer is pruned and capped, the
WAL has a size limit, and stats shows how big the store is."""

from __future__ import annotations

import sqlite3

import pytest

from memman import MemoryManager, Op
from memman.errors import InvalidInputError
from tests.clock import Clock
from tests.test_cli import db, memman  # noqa: F401 (fixtures)


def rows(path: str, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def test_a_repeated_fact_is_one_event_row_that_counts_its_repeats(tmp_path):
    path = str(tmp_path / "m.db")
    clock = Clock()
    with MemoryManager(path, clock=clock) as mm:
        added = mm.update_memory("User likes green tea", user_id="u", source="s0")
        for n in range(1, 50):
            clock.advance(minutes=1)
            repeat = mm.update_memory("User likes green tea", user_id="u", source=f"s{n}")
            assert repeat.op is Op.NOOP
        history = mm.history(added.memory_id, user_id="u")
        assert [(e.op, e.repeat_count) for e in history] == [(Op.ADD, 1), (Op.NOOP, 49)]
        noop = history[1]
        assert noop.created_at < noop.last_at == mm._now()  # first and last time
        # where the repeats came from:
        assert mm.get(added.memory_id, user_id="u").sources[-1] == "s49"
        assert mm.stats(user_id="u")["decisions"]["NOOP"] == {"hash": 49}  # same audit value
        mm.update_memory("User likes green tea a lot", user_id="u")  # something else between
        mm.update_memory("User likes green tea", user_id="u")
    assert rows(path, "SELECT count(*) FROM events") <= [(5,)]


def test_extracted_messages_are_pruned_after_the_retention(tmp_path):
    path = str(tmp_path / "m.db")
    clock = Clock()
    with MemoryManager(path, clock=clock, message_retention_days=1) as mm:
        mm.observe([{"role": "user", "content": "I keep bees"}], user_id="u", session_id="a")
        mm.flush("a", user_id="u")
        assert rows(path, "SELECT count(*) FROM message_buffer") == [(1,)]  # kept a day
        clock.advance(days=2)
        mm.observe([{"role": "user", "content": "I own a kayak"}], user_id="u", session_id="b")
        mm.flush("b", user_id="u")
        assert rows(path, "SELECT content FROM message_buffer") == [("I own a kayak",)]
        assert len(mm.list(user_id="u")) == 2


def test_a_message_longer_than_the_cap_is_refused_before_anything_is_buffered(tmp_path):
    path = str(tmp_path / "m.db")
    with (
        MemoryManager(path, max_message_chars=1000) as mm,
        pytest.raises(InvalidInputError, match="max_message_chars"),
    ):
        mm.observe(
            [{"role": "user", "content": "fine"}, {"role": "user", "content": "x" * 1001}],
            user_id="u",
            session_id="s",
        )
    assert rows(path, "SELECT count(*) FROM message_buffer") == [(0,)]


def test_the_wal_has_a_size_limit_and_stats_shows_the_sizes(tmp_path, memman, db):  # noqa: F811
    with MemoryManager(db, journal_size_limit_mb=1) as mm:
        mm.update_memory("User likes green tea", user_id="u")
        with mm.store.read() as conn:
            limit = conn.exec_driver_sql("PRAGMA journal_size_limit").scalar()
        assert limit == 1024 * 1024
        storage = mm.stats()["storage"]
        assert storage["file_bytes"] > 0 and storage["wal_bytes"] >= 0
        assert storage["rows"]["long_term"] == 1 and storage["rows"]["events"] == 1
    shown = memman("stats", "--db", db)
    assert shown.code == 0
    assert "file bytes" in shown.out and "wal bytes" in shown.out and "rows in events" in shown.out


def test_a_flush_prunes_its_own_scope_and_consolidate_every_scope(tmp_path):
    """A flush's prune names its scope (tests/test_scope_predicate.py), so a user who never
    flushes again keeps extracted messages until consolidate prunes them."""
    path = str(tmp_path / "m.db")
    clock = Clock()
    with MemoryManager(path, clock=clock, message_retention_days=1) as mm:
        mm.observe([{"role": "user", "content": "I keep bees"}], user_id="u", session_id="a")
        mm.flush("a", user_id="u")
        clock.advance(days=2)
        mm.observe([{"role": "user", "content": "I own a kayak"}], user_id="v", session_id="b")
        mm.flush("b", user_id="v")
        assert rows(path, "SELECT user_id FROM message_buffer ORDER BY id") == [("u",), ("v",)]
        mm.consolidate()
        assert rows(path, "SELECT user_id FROM message_buffer") == [("v",)]
