"""The FTS5 index keys each word by its scope (m021): a query walks one scope's postings only."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sqlite3

import pytest
import sqlite_utils

from memman import MemoryManager, Op
from memman.language.text import content_hash
from memman.storage.fts import scoped_match
from memman.storage.migrations import fts as fts_migrations
from memman.storage.migrations import migrations
from memman.storage.migrations.fts import keyed_rows_sql, keyed_text
from memman.storage.store import Scope
from memman.write.retrieval import fts_query, lexical_candidates

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
    db.close()
    _insert(path, USERS, superseded=True)


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


def _fill_at_m020(path, users=USERS) -> None:
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m021_fts_postings_per_scope")
    db.close()
    _insert(path, users)


def _insert(path, users, superseded: bool = False) -> None:
    """FACTS for each scope, written straight into long_term (a file of an older layout);
    with superseded, every fifth fact is no longer active."""
    stamp = "2025-01-01T00:00:00.000+00:00"
    db = sqlite_utils.Database(path)
    db["long_term"].insert_all(
        {
            "id": f"{user}-{agent}-{i}",
            "user_id": user,
            "agent_id": agent,
            # Each user words the facts a little differently, so the rankings differ by scope.
            "content": f"{fact} {user_n}" if i % 2 else fact,
            "content_hash": content_hash(f"{fact} {user_n}" if i % 2 else fact),
            "status": "superseded" if superseded and (i + user_n) % 5 == 0 else "active",
            "created_at": stamp,
            "updated_at": stamp,
            "observed_at": stamp,
        }
        for user_n, (user, agent) in enumerate(users)
        for i, fact in enumerate(FACTS)
    )
    db.close()


# m020's candidate query: the scope token ANDed in, bm25 over file-wide term counts.
M020_CANDIDATES = """
    SELECT long_term.id FROM long_term_fts JOIN long_term ON long_term.pk = long_term_fts.rowid
    WHERE long_term_fts MATCH 'scope : "' || 'u' || hex(:user) || 'x' || hex(:agent) || '0"'
        || ' AND content : (' || :query || ')'
      AND long_term.user_id = :user AND long_term.agent_id = :agent
      AND long_term.status = 'active'
    ORDER BY bm25(long_term_fts, 1.0, 0.0) LIMIT :k
"""


def _candidates(mm: MemoryManager, user: str, agent: str, query: str, k: int = 4) -> list[str]:
    with mm.store.read() as read:
        found = lexical_candidates(mm.store, read, Scope(user, agent or None), query, k)
    return [r.memory.id for r in found]


def test_a_file_at_m020_migrates_and_keeps_its_search_results(path):
    _fill_at_m020(path)
    conn = sqlite3.connect(path)
    before = {
        (user, agent, query): [
            memory_id
            for (memory_id,) in conn.execute(
                M020_CANDIDATES,
                {"user": user, "agent": agent, "query": fts_query(query), "k": 4},
            )
        ]
        for user, agent in USERS
        for query in QUERIES
    }
    conn.close()
    assert all(before.values())
    with MemoryManager(str(path)) as mm:
        after = {
            (user, agent, query): _candidates(mm, user, agent, query)
            for user, agent in USERS
            for query in QUERIES
        }
        assert after == before
        hits = mm.search("coffee oat milk", user_id="carol", agent_id="travel-bot")
        assert [hit.id for hit in hits][:1] == ["carol-travel-bot-3"]
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO long_term_fts(long_term_fts, rank) VALUES('integrity-check', 1)")
    conn.close()


def test_scopes_holding_the_same_facts_get_the_same_results(path):
    twins = [(f"twin-{n}", "") for n in range(4)]
    with MemoryManager(str(path)) as mm:
        for user, _ in twins:
            for fact in FACTS:
                mm.update_memory(fact, user_id=user)
        for query in QUERIES:
            results = []
            for user, _ in twins:
                with mm.store.read() as read:
                    found = lexical_candidates(mm.store, read, Scope(user), query, 4)
                results.append([(r.memory.content, r.bm25, r.jaccard) for r in found])
            assert results[0] and all(result == results[0] for result in results)


def test_other_users_rows_do_not_reorder_a_users_candidates(tmp_path):
    """Alice's one "hiking" memory outranks her three "chess" ones for "hiking chess" because
    hiking is the rarer word of her memories, whatever other users write: with file-wide term
    counts (m020) a crowd of hikers made "hiking" common and put chess first."""
    alice = ["User likes hiking", "User likes chess", "User likes chess clubs", "User plays chess"]
    crowd = [f"User {n} went hiking" for n in range(60)]

    def ranked(path, others: list[str]) -> list[str]:
        with MemoryManager(str(path)) as mm:
            for fact in alice:
                mm.update_memory(fact, user_id="alice")
            for n, fact in enumerate(others):
                mm.update_memory(fact, user_id=f"hiker-{n}")
            with mm.store.read() as read:
                found = lexical_candidates(mm.store, read, Scope("alice"), "hiking chess", 4)
            return [r.memory.content for r in found]

    alone = ranked(tmp_path / "alone.db", [])
    assert alone[0] == "User likes hiking"
    assert ranked(tmp_path / "crowded.db", crowd) == alone


def test_the_migration_logs_its_progress_per_batch(path, monkeypatch, caplog):
    _fill_at_m020(path)  # 30 rows
    monkeypatch.setattr(fts_migrations, "M021_BATCH", 12)
    with caplog.at_level(logging.INFO, logger="memman.storage.migrations"):
        MemoryManager(str(path)).close()
    steps = [r.progress for r in caplog.records if hasattr(r, "progress")]
    assert steps == [(0, 30), (12, 30), (24, 30), (30, 30)]


def _open_and_die_midway(path: str) -> None:
    """Opens the store (which migrates it) and is SIGKILLed after the first indexed batch."""

    class Kill(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            done, total = getattr(record, "progress", (0, 0))
            if 0 < done < total:
                os.kill(os.getpid(), signal.SIGKILL)

    fts_migrations.M021_BATCH = 10
    logger = logging.getLogger("memman.storage.migrations")
    logger.setLevel(logging.INFO)
    logger.addHandler(Kill())
    MemoryManager(path)


def test_a_migration_killed_midway_leaves_a_file_that_opens(path):
    _fill_at_m020(path)
    child = multiprocessing.get_context("fork").Process(
        target=_open_and_die_midway, args=(str(path),)
    )
    child.start()
    child.join()
    assert child.exitcode == -signal.SIGKILL
    db = sqlite_utils.Database(path)
    assert [m.name for m in migrations.applied(db)][-1] == "m020_scoped_fts"
    db.close()
    with MemoryManager(str(path)) as mm:
        assert _candidates(mm, "alice", "", "dog Rex") == ["alice--2", "alice--1"]
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO long_term_fts(long_term_fts, rank) VALUES('integrity-check', 1)")
    conn.close()


@pytest.mark.parametrize(
    "text",
    [
        "User likes hiking",
        "O'Neill’s café, (née Müller) -- 5€ each...",
        "  leading and trailing  ",
        "tabs\tand\nnewlines\r\n“quoted” «guillemets» a—b a–b ¿qué? ¡sí! x·y • z_w",
        "",
    ],
)
def test_the_migration_keys_words_as_the_triggers_do(text):
    """m021 fills the index in Python (keyed_text); the triggers key in SQL (keyed_rows_sql)."""
    conn = sqlite3.connect(":memory:")
    sql = keyed_rows_sql("SELECT 1 AS pk, ? AS t, 'q42j' AS k")
    ((from_sql,),) = conn.execute(f"SELECT content FROM ({sql})", (text,)).fetchall()
    assert keyed_text(text, "q42j") == from_sql


def test_retired_memories_ranked_first_do_not_hide_the_active_ones(path):
    """FTS5 keeps retired rows (status is not indexed): when the over-fetched best rows are all
    retired, the active ones further down are still found."""
    with MemoryManager(str(path)) as mm:
        retired = [mm.update_memory(f"Hiking {n}", user_id="alice") for n in range(12)]
        for result in retired:
            mm.delete(result.memory_id, user_id="alice")
        mm.update_memory(
            "User went hiking in the Alps with an old friend from school", user_id="alice"
        )
        mm.update_memory("User once went hiking in Norway during a rainy summer", user_id="alice")
        found = _candidates(mm, "alice", "", "hiking", k=2)
        assert len(found) == 2
        assert all(mm.get(memory_id, user_id="alice").status == "active" for memory_id in found)


def test_forgetting_a_user_drops_their_scope_key(path):
    with MemoryManager(str(path)) as mm:
        mm.update_memory("User likes hiking", user_id="alice")
        mm.update_memory("User likes chess", user_id="alice", agent_id="coach")
        mm.update_memory("User likes hiking", user_id="bob")
        mm.forget("alice")
        with mm.store.read() as read:
            left = read.exec_driver_sql("SELECT user_id, agent_id FROM fts_scopes").all()
        assert [tuple(row) for row in left] == [("bob", "")]
        mm.update_memory("User likes sailing", user_id="alice")
        assert [hit.content for hit in mm.search("sailing", user_id="alice")] == [
            "User likes sailing"
        ]
        assert [hit.content for hit in mm.search("hiking", user_id="bob")] == ["User likes hiking"]
        assert mm.check().ok


@pytest.mark.parametrize(
    ("fact", "number"), [("User pays £900 rent a month", "900"), ("User's gym is €45 a week", "45")]
)
def test_a_word_glued_to_a_symbol_is_found(path, fact, number):
    """The tokenizer splits at £ and €: unless m021 spaces them first, the number after one
    is indexed without the scope's key, where no scoped query reaches it."""
    with MemoryManager(str(path)) as mm:
        mm.update_memory(fact, user_id="alice")
        assert [hit.memory.content for hit in mm.search(number, user_id="alice")] == [fact]
