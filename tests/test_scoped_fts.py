"""The FTS5 index keys each word by its scope (m021): a query walks one scope's postings only."""

from __future__ import annotations

import sqlite3

import pytest
import sqlite_utils

from memman import MemoryManager, Op
from memman.migrations import migrations
from memman.retrieval import fts_query, lexical_candidates, scoped_match
from memman.store import Scope
from memman.text import content_hash

# Users who share most of their words, so a file-wide ranking is led by other users' rows.
FACTS = [
    "User likes hiking in the mountains",
    "User likes hiking with the dog",
    "User has a dog named Rex",
    "User drinks coffee with oat milk",
    "User works as a nurse in Lisbon",
    "User plays guitar in a band",
]
USERS = [("alice", ""), ("bob", ""), ("carol", "travel-bot"), ("carol", ""), ("o'neill", "")]
QUERIES = ["likes hiking", "dog Rex", "coffee oat milk", "nurse in Lisbon", "guitar band dog"]

# The candidate query of m019's layout (content only in the index, scope filtered by the join).
OLD_CANDIDATES = """
    SELECT long_term.id FROM long_term_fts JOIN long_term ON long_term.pk = long_term_fts.rowid
    WHERE long_term_fts MATCH ? AND long_term.user_id = ? AND long_term.agent_id = ?
      AND long_term.status = 'active'
    ORDER BY bm25(long_term_fts) LIMIT ?
"""


@pytest.fixture
def path(tmp_path):
    return tmp_path / "memory.db"


def _fill_at_m019(path) -> None:
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m020_scoped_fts")
    stamp = "2025-01-01T00:00:00.000+00:00"
    db["long_term"].insert_all(
        {
            "id": f"{user}-{agent}-{i}",
            "user_id": user,
            "agent_id": agent,
            # Each user words the facts a little differently, so the rankings differ by scope.
            "content": f"{fact} {user_n}" if i % 2 else fact,
            "content_hash": content_hash(f"{fact} {user_n}" if i % 2 else fact),
            "status": "superseded" if (i + user_n) % 5 == 0 else "active",
            "created_at": stamp,
            "updated_at": stamp,
            "observed_at": stamp,
        }
        for user_n, (user, agent) in enumerate(USERS)
        for i, fact in enumerate(FACTS)
    )
    db.close()


def test_a_file_at_m019_migrates_and_finds_the_same_candidates(path):
    _fill_at_m019(path)
    k = 4
    before = {}
    conn = sqlite3.connect(path)
    for user, agent in USERS:
        for query in QUERIES:
            rows = conn.execute(OLD_CANDIDATES, (fts_query(query), user, agent, k)).fetchall()
            before[user, agent, query] = [memory_id for (memory_id,) in rows]
    conn.close()
    assert any(before.values())

    with MemoryManager(str(path)) as mm:
        with mm.store.read() as read:
            after = {
                (user, agent, query): [
                    r.memory.id
                    for r in lexical_candidates(
                        mm.store, read, Scope(user, agent or None), query, k
                    )
                ]
                for user, agent in USERS
                for query in QUERIES
            }
        assert after == before
        # And the write path finds them: a reworded copy of an active memory is a NOOP on it.
        result = mm.update_memory("user likes hiking with the dog!", user_id="alice")
        assert result.op is Op.NOOP and result.memory_id == "alice--1"
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO long_term_fts(long_term_fts, rank) VALUES('integrity-check', 1)")
    conn.close()


def test_a_scoped_query_never_returns_another_scopes_rows(path):
    with MemoryManager(str(path)) as mm:
        for user, agent in USERS:
            for fact in FACTS:
                mm.update_memory(fact, user_id=user, agent_id=agent or None)
        # A user id that spells a scope key, or FTS syntax, is only a user id.
        mm.update_memory("User likes hiking", user_id='q1j" OR scope')
        for user, agent in USERS:
            for query in QUERIES:
                hits = mm.search(query, user_id=user, agent_id=agent or None, limit=20)
                assert hits
                owners = {(hit.memory.user_id, hit.memory.agent_id or "") for hit in hits}
                assert owners == {(user, agent)}


def test_check_reports_a_row_indexed_under_another_scope(path):
    with MemoryManager(str(path)) as mm:
        mm.update_memory("User likes hiking", user_id="alice")
        assert mm.check().ok
    # What a write bypassing the triggers could leave: alice's row filed under bob's key.
    conn = sqlite3.connect(path)
    pk, keyed = conn.execute("SELECT pk, content FROM long_term_fts_source").fetchone()
    conn.execute(
        "INSERT INTO long_term_fts(long_term_fts, rowid, content) VALUES ('delete', ?, ?)",
        (pk, keyed),
    )
    conn.execute(
        "INSERT INTO long_term_fts(rowid, content) VALUES (?, ?)",
        (pk, scoped_match("q2j", '"User" "likes" "hiking"').replace('"', "")),
    )
    conn.execute("INSERT INTO fts_scopes (user_id, agent_id) VALUES ('bob', '')")
    conn.commit()
    conn.close()
    with MemoryManager(str(path)) as mm:
        report = mm.check()
        assert not report.ok and report.fts_error
        assert mm.search("hiking", user_id="bob") == []
