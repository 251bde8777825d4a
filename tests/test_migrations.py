"""Ordered migrations recorded in the database: a blank file, a reopened file, an older file."""

from __future__ import annotations

import sqlite3

import pytest
import sqlite_utils

from memman import MemoryManager, Op
from memman.language.text import content_hash
from memman.scope import Scope
from memman.storage.migrations import migrations

FIRST_MIGRATIONS = ["m001_long_term", "m002_events", "m003_pending"]

LONG_TERM_COLUMNS = {
    "pk": int,
    "id": str,
    "user_id": str,
    "agent_id": str,
    "category": str,
    "content": str,
    "content_hash": str,
    "importance": float,
    "confidence": float,
    "repetition_count": int,
    "access_count": int,
    "last_accessed_at": str,
    "created_at": str,
    "updated_at": str,
    "status": str,
    "sources": str,
    "metadata": str,
}

EVENT_COLUMNS = {
    "id", "user_id", "agent_id", "memory_id", "op", "tier", "candidate", "content_before",
    "content_after", "reason", "scores", "model", "prompt_template", "prompt_hash", "latency_ms",
    "attempts", "tokens", "error", "source", "created_at",
}  # fmt: skip

PENDING_COLUMNS = {
    "id", "user_id", "agent_id", "content", "source", "metadata", "error", "attempts",
    "created_at", "updated_at",
}  # fmt: skip


def applied(path) -> list[str]:
    db = sqlite_utils.Database(path)
    try:
        return [
            row["name"]
            for row in db.query(
                "select name from _sqlite_migrations where migration_set = 'memman' order by id"
            )
        ]
    finally:
        db.close()


def registered() -> list[str]:
    """Every migration this version knows, in order: all of them are pending on a blank db."""
    return [m.name for m in migrations.pending(sqlite_utils.Database(memory=True))]


@pytest.fixture
def path(tmp_path):
    return tmp_path / "memory.db"


def test_registered_migrations_start_with_the_released_ones():
    assert registered()[: len(FIRST_MIGRATIONS)] == FIRST_MIGRATIONS
    assert len(set(registered())) == len(registered())


def test_blank_file_gets_the_full_schema(path):
    MemoryManager(str(path)).close()
    db = sqlite_utils.Database(path)
    assert db["long_term"].columns_dict.items() >= LONG_TERM_COLUMNS.items()
    assert db["long_term"].pks == ["pk"]
    assert set(db["events"].columns_dict) >= EVENT_COLUMNS
    assert set(db["pending"].columns_dict) >= PENDING_COLUMNS
    # m021: the index reads long_term through a view that keys each word by its scope.
    assert "long_term_fts_source" in db.view_names()
    assert db["fts_scopes"].columns_dict == {"id": int, "user_id": str, "agent_id": str}
    assert {"long_term_fts", "long_term_fts_data", "long_term_fts_idx"} <= set(db.table_names())
    assert {t.name for t in db["long_term"].triggers} >= {
        "long_term_ai",
        "long_term_ad",
        "long_term_au",
    }
    fts_sql = db["long_term_fts"].schema
    assert "content='long_term_fts_source'" in fts_sql
    assert "porter" in fts_sql
    (index,) = [i for i in db["long_term"].indexes if i.name == "long_term_active_hash"]
    assert index.unique and index.columns == ["user_id", "agent_id", "content_hash"]
    index_sql = db.execute(
        "select sql from sqlite_master where name = 'long_term_active_hash'"
    ).fetchone()[0]
    assert "WHERE status = 'active'" in index_sql
    assert db.execute("pragma journal_mode").fetchone()[0] == "wal"
    db.close()
    assert applied(path) == registered()


def test_reopening_is_idempotent(path):
    with MemoryManager(str(path)) as mm:
        first = mm.update_memory("User prefers flat white", user_id="alice")
    recorded = applied(path)
    for _ in range(2):
        with MemoryManager(str(path)) as mm:
            assert [m.id for m in mm.list(user_id="alice")] == [first.memory_id]
    assert applied(path) == recorded == registered()


def test_partial_unique_index_allows_one_active_copy_only(path):
    with MemoryManager(str(path)) as mm:
        r = mm.update_memory("User prefers flat white", user_id="alice")
        mm.delete(r.memory_id, user_id="alice")
        again = mm.update_memory("User prefers flat white", user_id="alice")
        assert again.op is Op.ADD and again.memory_id != r.memory_id
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        conn.execute(
            "insert into long_term (id, user_id, content, content_hash, created_at, updated_at)"
            " select 'copy', user_id, content, content_hash, created_at, updated_at"
            " from long_term where status = 'active'"
        )
    conn.close()


def test_fts_index_follows_the_table_through_triggers(path):
    with MemoryManager(str(path)) as mm:
        r = mm.update_memory("User likes coffee", user_id="alice")
        mm.update_memory("User likes coffee with oat milk", user_id="alice")
    conn = sqlite3.connect(path)
    # alice is the file's first scope: id 1, so her words are indexed as "q1j<word>" (m021).
    matches = conn.execute(
        "select rowid from long_term_fts where long_term_fts match 'q1joat'"
    ).fetchall()
    pk = conn.execute("select pk from long_term where id = ?", (r.memory_id,)).fetchone()[0]
    assert matches == [(pk,)]
    conn.execute("insert into long_term_fts(long_term_fts) values('integrity-check')")
    conn.close()


def test_older_file_upgrades_in_place(path):
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m003_pending")
    db["long_term"].insert(
        {
            "id": "old-memory",
            "user_id": "alice",
            "content": "User prefers flat white",
            "content_hash": content_hash("User prefers flat white"),
            "created_at": "2025-01-01T00:00:00.000+00:00",
            "updated_at": "2025-01-01T00:00:00.000+00:00",
        }
    )
    assert "pending" not in db.table_names()
    db.close()
    assert applied(path) == FIRST_MIGRATIONS[:2]

    with MemoryManager(str(path)) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == ["User prefers flat white"]
        assert [h.id for h in mm.search("flat white", user_id="alice")] == ["old-memory"]
        assert mm.pending() == []
        assert mm.update_memory("user prefers flat white.", user_id="alice").op is Op.NOOP
        assert mm.update_memory("User lives in Lisbon", user_id="alice").op is Op.ADD
    assert applied(path) == registered()
    assert set(sqlite_utils.Database(path)["pending"].columns_dict) >= PENDING_COLUMNS


def test_a_file_before_topics_gets_them_backfilled(path):
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m018_topics_and_observed_at")
    for pk, text in enumerate(["I live in Berlin", "User likes red bicycles", "Blue sky"], 1):
        db["long_term"].insert(
            {
                "id": f"old-{pk}",
                "user_id": "alice",
                "content": text,
                "content_hash": content_hash(text),
                "created_at": "2025-01-01T00:00:00.000+00:00",
                "updated_at": f"2025-02-0{pk}T00:00:00.000+00:00",
            }
        )
    db.close()

    with MemoryManager(str(path)) as mm:
        memories = mm.list(user_id="alice")
        found = {m.id: (m.subject, m.attribute, m.observed_at[:10]) for m in memories}
        assert found == {
            "old-1": ("user", "residence", "2025-02-01"),
            "old-2": ("user", "likes", "2025-02-02"),
            "old-3": (None, None, "2025-02-03"),
        }
        # The backfilled topic is what a new fact is matched by: a move replaces the old home.
        moved = mm.update_memory("I moved to Munich", user_id="alice")
        assert (moved.op, moved.memory_id) == (Op.UPDATE, "old-1")
    db = sqlite_utils.Database(path)
    index = db.execute("select sql from sqlite_master where name = 'long_term_topic'").fetchone()
    assert "subject, attribute" in index[0]
    assert {"subject", "attribute", "observed_at"} <= set(db["pending"].columns_dict)
    assert "observed_at" in db["message_buffer"].columns_dict


def test_a_file_before_replaced_text_hashes_gets_them_backfilled(path):
    """m023: every event's content_before gets its hash, and the memory that replaced a text is
    found by that hash (Store.active_replacing); events without a text before keep NULL."""
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m023_events_before_hash")
    now = "2025-01-01T00:00:00.000+00:00"
    db["long_term"].insert(
        {
            "id": "old-memory",
            "user_id": "alice",
            "content": "I don't read a lot",
            "content_hash": content_hash("I don't read a lot"),
            "created_at": now,
            "updated_at": "2025-02-01T00:00:00.000+00:00",
        }
    )
    event = {"user_id": "alice", "memory_id": "old-memory", "created_at": now, "reason": "r"}
    db["events"].insert_all(
        [
            {**event, "op": "ADD", "tier": "novel", "content_after": "I read a lot"},
            {
                **event,
                "op": "UPDATE",
                "tier": "llm",
                "content_before": "I read a lot",
                "content_after": "I don't read a lot",
            },
        ]
    )
    db.close()

    with MemoryManager(str(path)) as mm:
        with mm.store.read() as conn:
            found = mm.store.active_replacing(conn, Scope("alice"), content_hash("i read a LOT."))
            assert found is not None and found.id == "old-memory"
            assert (
                mm.store.active_replacing(conn, Scope("bob"), content_hash("I read a lot")) is None
            )
        r = mm.update_memory("I read a lot", user_id="alice")
        assert (r.op, r.memory_id) == (Op.UPDATE, "old-memory")
    db = sqlite_utils.Database(path)
    hashes = [row[0] for row in db.execute("select before_hash from events order by id")]
    assert hashes == [None, content_hash("I read a lot"), content_hash("I don't read a lot")]
    index = db.execute("select sql from sqlite_master where name = 'events_before_hash'").fetchone()
    assert "(user_id, agent_id, before_hash)" in index[0] and "IS NOT NULL" in index[0]


def _automerge(mm: MemoryManager) -> int:
    """The index's 'automerge' setting, as FTS5 reads it from its config table (m024)."""
    with mm.store.read() as conn:
        return conn.exec_driver_sql(
            "select v from long_term_fts_config where k = 'automerge'"
        ).scalar()


@pytest.mark.parametrize("migrated", [False, True], ids=["new", "migrated"])
def test_fts_index_merges_segments_in_pairs(path, migrated):
    """m024: 'automerge' 2 on a new file and on a file at m023 (which has 8), and the index
    still finds what is written after the change."""
    if migrated:
        db = sqlite_utils.Database(path)
        migrations.apply(db, stop_before="m024_fts_automerge_2")
        setting = db.execute("select v from long_term_fts_config where k = 'automerge'")
        assert setting.fetchone() == (8,)
        db.close()
    with MemoryManager(str(path)) as mm:
        assert _automerge(mm) == 2
        for n in range(20):
            mm.update_memory(f"User visited city number {n} in {1990 + n}", user_id="alice")
        best = mm.search("visited 1997", user_id="alice")[0]
        assert best.content == "User visited city number 7 in 1997"
    assert applied(path) == registered()


def test_a_file_before_absorbed_text_hashes_gets_them_backfilled(path, monkeypatch, caplog):
    """m025: a NOOP or UPDATE whose statement is not its memory's text gets the statement's
    hash, in batches with progress records; the memory that absorbed it is found by that
    hash (Store.active_absorbing). Other events keep NULL."""
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m025_events_absorbed_hash")
    now = "2025-01-01T00:00:00.000+00:00"
    container = "I love reading Charles Dickens."
    db["long_term"].insert(
        {
            "id": "kept",
            "user_id": "alice",
            "content": container,
            "content_hash": content_hash(container),
            "created_at": now,
            "updated_at": now,
        }
    )
    event = {"user_id": "alice", "memory_id": "kept", "created_at": now, "reason": "r"}
    said = {**event, "content_before": container, "content_after": container}
    db["events"].insert_all(
        [
            {**event, "op": "ADD", "tier": "novel", "candidate": container,
             "content_after": container},
            {**said, "op": "NOOP", "tier": "lexical", "candidate": "I love reading."},
            {**said, "op": "NOOP", "tier": "exact", "candidate": container},
            {**event, "op": "UPDATE", "tier": "llm", "candidate": "I read Dickens",
             "content_before": "I love reading", "content_after": container},
            {**event, "op": "DELETE", "tier": "llm", "candidate": "I stopped reading",
             "content_before": container},
            {**event, "memory_id": None, "op": "NOOP", "tier": "llm", "candidate": "hi"},
        ]
    )  # fmt: skip
    db.close()
    monkeypatch.setattr("memman.storage.migrations.backfills.M025_BATCH", 2)
    caplog.set_level("INFO", logger="memman.storage.migrations")

    with MemoryManager(str(path)) as mm, mm.store.read() as conn:
        found = mm.store.active_absorbing(conn, Scope("alice"), content_hash("i love READING"))
        assert found is not None and found.id == "kept"
        assert (
            mm.store.active_absorbing(conn, Scope("bob"), content_hash("I love reading.")) is None
        )
    db = sqlite_utils.Database(path)
    hashes = [row[0] for row in db.execute("select absorbed_hash from events order by id")]
    said_hashes = [content_hash("I love reading."), content_hash("I read Dickens")]
    assert hashes == [None, said_hashes[0], None, said_hashes[1], None, None]
    index = db.execute("select sql from sqlite_master where name = 'events_absorbed_hash'")
    sql = index.fetchone()[0]
    assert "(user_id, agent_id, absorbed_hash)" in sql and "IS NOT NULL" in sql
    progress = [r.progress for r in caplog.records if hasattr(r, "progress")]
    assert progress == [(2, 4), (4, 4)]


def test_messages_buffered_before_m026_are_extracted_without_metadata(path):
    """m026: message_buffer gets its metadata column; a message waiting in a file made
    before it is extracted as before (its fact has no metadata)."""
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m026_message_metadata")
    now = "2025-01-01T00:00:00.000+00:00"
    db["message_buffer"].insert(
        {"user_id": "alice", "session_id": "s", "role": "user", "content": "I live in Porto",
         "created_at": now}
    )  # fmt: skip
    db.close()
    with MemoryManager(str(path)) as mm:
        [added] = mm.flush("s", user_id="alice").results
        assert mm.get(added.memory_id, user_id="alice").metadata == {}
        mm.observe([{"role": "user", "content": "I work at Acme"}], user_id="alice",
                   session_id="s", metadata={"via": "form"})  # fmt: skip
        [later] = mm.flush("s", user_id="alice").results
        assert mm.get(later.memory_id, user_id="alice").metadata == {"via": "form"}
    assert "metadata" in sqlite_utils.Database(path)["message_buffer"].columns_dict
