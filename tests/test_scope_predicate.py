"""Every statement the write path and recall send to the database names the scope it works in
(SQLite's and, on a PostgreSQL server, PostgreSQL's).

The schema is meant to be distributable by scope (Citus's distribution column, or a database
per tenant group: issue 15), which holds only if each hot-path statement on a scoped table
filters by the scope: `user_id = ? AND agent_id = ?`, the scope token in an FTS5 query, or
the scope's values in an INSERT. SQLite's trace callback sees every statement as it runs,
with its parameters in place, whichever access style sent it (SQLAlchemy Core, text(),
run_sql on the raw connection). Statements that reach rows by primary key right after a
scoped read found them are listed in EXCEPTIONS, each with why.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa

from memman import MemoryManager
from memman.language.text import content_hash
from memman.scope import Scope
from memman.storage.fts import index_key
from memman.storage.store import GROWING_TABLES
from tests.decisions import answer, llm_manager
from tests.fake_openai import Reply
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401
from tests.test_batch_decisions import NEWS, STORED, batch_answer, item
from tests.test_semantic_retrieval import FakeEmbedder

KEYED_MATCH = re.compile(r"MATCH '(.*?)'(?: |$)")
# Every table that grows with use holds some scope's rows, and so does the full-text index.
SCOPED_TABLES = frozenset({*GROWING_TABLES, "long_term_fts"})
SQLALCHEMY_CASTS = re.compile(r"::(?:VARCHAR|INTEGER|BIGINT|FLOAT|BOOLEAN|JSONB)\b")
TABLE = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE)\s+([A-Za-z_]+)")
CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA", "SAVEPOINT", "RELEASE")

# (pattern, why it may leave the scope out). Each reaches rows by key that a scoped statement
# of the same transaction just returned, so it cannot touch another scope's rows; on a
# database distributed by scope they are the statements to give the scope column too.
EXCEPTIONS = [
    # The hash hit, re-read by its id (store.by_id) for the decision.
    (r"^SELECT [\w, ]+ FROM long_term WHERE id = '\w+'$", "by id after the scoped hash read"),
    # The candidates' rows, by the pks the scoped FTS / vector query returned.
    (r"^SELECT [\w, ]+ FROM long_term WHERE pk IN \([\d, ]+\)$", "by pk after scoped retrieval"),
    # A repeated fact reinforces the memory its scoped hash read found.
    (
        r"^UPDATE long_term SET repetition_count = repetition_count \+ 1, .* WHERE id = '\w+'$",
        "by id after the scoped hash read",
    ),
    # Recall counts the hits it just returned from a scoped search.
    (
        r"^UPDATE long_term SET access_count=\(long_term.access_count \+ 1\), .*"
        r" WHERE long_term.id IN \([\w', ]+\)$",
        "by id: the scoped search's hits",
    ),
    # The vector of the memory this transaction just wrote (memory_vectors has no scope
    # column yet; its pk comes from long_term by the new memory's id). PostgreSQL: an upsert.
    (
        r"^INSERT OR REPLACE INTO memory_vectors \(memory_pk, model, dim, vector\)"
        r" SELECT pk, .* FROM long_term WHERE id = '\w+'$",
        "by id of the memory just written",
    ),
    (
        r"^INSERT INTO memory_vectors \(memory_pk, model, dim, vector\)"
        r" SELECT pk, .* FROM long_term WHERE id = '\w+' ON CONFLICT \(memory_pk, model\)",
        "by id of the memory just written",
    ),
    # Folding a repeated NOOP into the memory's previous event: the memory's own events.
    (
        r"^SELECT id, op, candidate, tier, reason FROM events WHERE memory_id = '\w+'"
        r" ORDER BY id DESC LIMIT 1$",
        "by memory id after the scoped hash read",
    ),
    (r"^UPDATE events SET repeat_count = .* WHERE id = \d+$", "by id of that event"),
    # The decider's UPDATE or DELETE of a memory that the scoped candidate read offered it.
    (
        r"^UPDATE long_term SET content = .* WHERE id = '\w+'$",
        "by id: a candidate of the scoped read",
    ),
    (
        r"^UPDATE long_term SET status = '\w+', updated_at = '[^']+' WHERE id = '\w+'$",
        "by id: a candidate of the scoped read",
    ),
    # Leases on the buffered messages / parked facts a scoped read returned, and what the
    # worker holding them does to them.
    (
        r"^UPDATE (message_buffer|pending) SET lease_owner = .* WHERE id IN \([\d, ]+\)",
        "by id: the scoped read's messages or parked facts",
    ),
    (
        r"^SELECT id FROM (message_buffer|pending) WHERE id IN \([\d, ]+\)"
        r" AND lease_owner = '[\w:]+'$",
        "by id: the rows just claimed",
    ),
    (r"^UPDATE pending SET error=.* WHERE pending.id = \d+$", "by id: the claimed parked fact"),
    (r"^DELETE FROM pending WHERE pending.id = \d+$", "by id: the claimed parked fact, settled"),
    # Event ids are allocated file-wide: the largest one before a batch of ADD events is
    # where their ids start (their own scoped read follows).
    (r"^SELECT coalesce\(max\(id\), 0\) FROM events$", "the id counter's position"),
    # The change log's head (one row, by its index): where the in-process vector index is,
    # not any scope's rows; the scoped read of what changed follows.
    (
        r"^SELECT seq, token, \(SELECT token FROM vector_log WHERE seq = \d+\) FROM vector_log"
        r" ORDER BY seq DESC LIMIT 1$",
        "the change log's position",
    ),
]
ALLOWED = [re.compile(pattern) for pattern, _ in EXCEPTIONS]

ALICE = Scope("alice")


@pytest.fixture
def traced(monkeypatch) -> Iterator[list[str]]:
    """Every statement run on a connection opened while the test runs, as SQLite ran it; on
    PostgreSQL, every statement psycopg sent, its parameters rendered in place (psycopg has
    no trace callback: its cursors' execute and executemany are wrapped)."""
    statements: list[str] = []

    def on_connect(dbapi_connection, _record) -> None:
        if isinstance(dbapi_connection, sqlite3.Connection):
            dbapi_connection.set_trace_callback(statements.append)

    sa.event.listen(sa.engine.Engine, "connect", on_connect)
    _trace_psycopg(monkeypatch, statements)
    yield statements
    sa.event.remove(sa.engine.Engine, "connect", on_connect)


def _trace_psycopg(monkeypatch, statements: list[str]) -> None:
    try:
        import psycopg
    except ImportError:
        return
    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany

    def rendered(cursor, query, params) -> str:
        # Without the casts SQLAlchemy's psycopg dialect adds to bound values ('x'::VARCHAR),
        # so one pattern in EXCEPTIONS reads a statement of either backend.
        sql = psycopg.ClientCursor(cursor.connection).mogrify(query, params)
        return SQLALCHEMY_CASTS.sub("", sql)

    def traced_execute(self, query, params=None, **options):
        statements.append(rendered(self, query, params))
        return execute(self, query, params, **options)

    def traced_executemany(self, query, params_seq, **options):
        params_seq = list(params_seq)
        statements.extend(rendered(self, query, params) for params in params_seq)
        return executemany(self, query, params_seq, **options)

    monkeypatch.setattr(psycopg.Cursor, "execute", traced_execute)
    monkeypatch.setattr(psycopg.Cursor, "executemany", traced_executemany)


def unscoped(statements: list[str], scope: Scope, key: str | None) -> tuple[list[str], int]:
    """The statements on scoped tables without the scope's predicate, and how many were
    checked. Lines starting "--" are what a traced statement ran inside (trigger bodies,
    FTS5's own tables): the statement that started them is checked. An FTS MATCH whose every
    word carries the scope's index key (m021) reads only that scope's posting lists."""
    where = (f"user_id = '{scope.user_id}'", f"agent_id = '{scope.agent_key}'")
    values = f"VALUES ('{scope.user_id}', '{scope.agent_key}'"
    missing, checked = [], 0
    for sql in statements:
        flat = " ".join(sql.split())
        if flat.startswith("--") or flat.split(" ")[0].upper() in CONTROL:
            continue
        if not set(TABLE.findall(flat)) & SCOPED_TABLES:
            continue
        checked += 1
        scoped = (
            all(part in flat for part in where)
            or (key is not None and _keyed_match(flat, key))
            or (re.match(r"^INSERT INTO \w+ \(user_id, agent_id,", flat) and values in flat)
        )
        if not scoped and not any(pattern.search(flat) for pattern in ALLOWED):
            missing.append(flat[:300])
    return missing, checked


def _keyed_match(flat: str, key: str) -> bool:
    match = KEYED_MATCH.search(flat)
    words = re.findall(r"\w+", match[1]) if match else []
    return bool(words) and all(word.startswith(key) for word in words)


def alice_key(mm: MemoryManager) -> str | None:
    with mm.store.read() as conn:
        return index_key(conn, ALICE)


def _neighbours(mm: MemoryManager) -> None:
    """Other scopes' rows beside alice's: another user, and alice under an agent."""
    mm.update_memory("User lives in Paris", user_id="bob")
    mm.update_memory("User likes green tea", user_id="alice", agent_id="helper")
    mm.observe([{"role": "user", "content": "I keep bees"}], user_id="bob", session_id="s1")
    mm.flush("s1", user_id="bob")


def _loose_twins(mm: MemoryManager) -> None:
    """Two near-identical memories, as an old import stored them: consolidate merges them."""
    twins = [
        "User grows tomatoes basil and peppers on the balcony",
        "Also, user really grows tomatoes, basil and peppers on a balcony.",
    ]
    stamp = mm.clock().isoformat(timespec="milliseconds")
    mm.store.write(
        lambda conn: [
            mm.store.insert_memory(
                conn, ALICE, content=fact, content_hash=content_hash(fact), now=stamp,
                source=None, metadata={}, confidence=0.9,
            )
            for fact in twins
        ]
    )  # fmt: skip


PHASES: list[tuple[str, Callable[[MemoryManager], object]]] = [
    ("update_memory", lambda mm: mm.update_memory("User likes green tea", user_id="alice")),
    ("update_memory again", lambda mm: mm.update_memory("User likes green tea", user_id="alice")),
    (
        "update_many",
        lambda mm: mm.update_many(
            ["User has a dog named Rex", "User works as a nurse", "User likes green tea"],
            user_id="alice",
        ),
    ),
    (
        "observe",
        lambda mm: mm.observe(
            [{"role": "user", "content": "I moved to Berlin last year"}],
            user_id="alice",
            session_id="s1",
        ),
    ),
    ("flush", lambda mm: mm.flush("s1", user_id="alice")),
    ("search", lambda mm: mm.search("tea", user_id="alice")),
    ("context", lambda mm: mm.context("where does the user live", user_id="alice")),
    ("consolidate", lambda mm: mm.consolidate(user_id="alice")),
]


@pytest.mark.parametrize("embedder", [None, "fake"], ids=["lexical", "with-vectors"])
def test_write_path_and_recall_statements_filter_by_scope(db, clock, traced, embedder):
    with MemoryManager(
        db, clock=clock, embedder=FakeEmbedder("fake-1") if embedder else None
    ) as mm:
        _neighbours(mm)
        _loose_twins(mm)
        clock.advance(days=40)  # past message retention and into decay
        for name, run in PHASES:
            traced.clear()
            run(mm)
            missing, checked = unscoped(traced, ALICE, alice_key(mm))
            assert checked, f"{name}: no statement on a scoped table was traced"
            assert not missing, f"{name} sent statements without the scope: {missing}"


def test_llm_decisions_and_parked_facts_filter_by_scope(db, fake_openai, traced):
    """The batched LLM decision applies UPDATE, DELETE and ADD; a fact the LLM could not
    decide is parked, then decided by retry_pending."""
    with llm_manager(db, fake_openai.base_url, llm_mode="tools") as mm:
        _neighbours(mm)
        for fact in STORED:
            mm.update_memory(fact, user_id="alice")
        fake_openai.script(
            batch_answer(
                item(3, "UPDATE", id=3, content="User reads sci-fi novels on a Kindle"),
                item(1, "DELETE", id=1),
                item(2, "ADD"),
            ),
            Reply(status=500, body="down"),
            answer("ADD", reason="kept"),
        )
        phases: list[tuple[str, Callable[[], object]]] = [
            ("update_many", lambda: mm.update_many(NEWS, user_id="alice")),
            ("parked", lambda: mm.update_memory("User moved the trip to Faro", user_id="alice")),
            ("retry_pending", lambda: mm.retry_pending(user_id="alice")),
        ]
        ops = []
        for name, run in phases:
            traced.clear()
            ops.append(run())
            missing, checked = unscoped(traced, ALICE, alice_key(mm))
            assert checked, f"{name}: no statement on a scoped table was traced"
            assert not missing, f"{name} sent statements without the scope: {missing}"
    assert [r.op for r in ops[0]] == ["DELETE", "ADD", "UPDATE"]  # each kind was applied
    assert (ops[1].op, [r.op for r in ops[2]]) == ("PENDING", ["ADD"])


def test_the_check_catches_a_statement_without_the_scope():
    prune = "DELETE FROM message_buffer WHERE extracted_at < '2026-01-01'"
    bobs_words = """SELECT rowid FROM long_term_fts WHERE long_term_fts MATCH '"q2jtea"'"""
    mixed = """SELECT rowid FROM long_term_fts WHERE long_term_fts MATCH '"q1jtea" OR "tea"'"""
    missing, checked = unscoped(
        [
            prune,
            "SELECT * FROM short_term WHERE user_id = 'alice' AND agent_id = ''",
            """SELECT rowid FROM long_term_fts WHERE long_term_fts MATCH '"q1jgreen q1jtea"'""",
            bobs_words,
            mixed,
            "-- SELECT pgno FROM 'main'.'long_term_fts_idx' WHERE segid=?",
        ],
        ALICE,
        "q1j",
    )
    assert (missing, checked) == ([prune, bobs_words, mixed], 5)
