"""A text an earlier event absorbed into a memory (a NOOP into a memory that says it and more,
an UPDATE that wrote other words), said again, finds that memory wherever it ranks: retrieval
returns top_k memories, so in a large scope it can be out of reach and the repeat went to the
decider, which ADDed it (issue 11: a replay's second pass added rows, benchmarks/bench_calls.py)."""

from __future__ import annotations

from memman import MemoryManager, Op
from memman.language.text import content_hash
from memman.scope import Scope
from memman.storage import postgres_schema
from tests.decisions import CURRENT, NEW, OLD, add_everything, answer, llm_manager
from tests.postgres import db_on_each_backend, direct, fresh_database, postgres_url  # noqa: F401

CONTAINER = "I love reading Charles Dickens."
# With top_k=2 neither word retrieval (bm25 prefers the short texts sharing "love" and
# "reading") nor the topic query (the user's newest likes) reaches the container; none holds
# "I love reading" word for word.
DISTRACTORS = [
    "My kids love reading.",
    "My wife loves reading.",
    "I like hiking.",
    "I like jazz.",
]


def absorbed_then_buried(mm: MemoryManager) -> str:
    """The container, "I love reading." absorbed into it by the router's NOOP, then the
    distractors; the container's id."""
    first = mm.update_memory(CONTAINER, user_id="ana")
    r = mm.update_memory("I love reading.", user_id="ana")
    assert (r.op, r.memory_id) == (Op.NOOP, first.memory_id)
    for fact in DISTRACTORS:
        assert mm.update_memory(fact, user_id="ana").op is Op.ADD
    return first.memory_id


def test_a_text_absorbed_by_a_noop_said_again_beyond_the_candidates_is_a_noop(db, fake_openai):
    fake_openai.default_reply = add_everything
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools", top_k=2)
    container = absorbed_then_buried(mm)
    rows, calls = len(mm.list(user_id="ana")), len(fake_openai.requests)
    r = mm.update_memory("I love reading.", user_id="ana")
    assert (r.op, r.memory_id) == (Op.NOOP, container)
    assert len(fake_openai.requests) == calls  # settled by the router, no decider call
    assert len(mm.list(user_id="ana")) == rows
    assert mm.get(container, user_id="ana").content == CONTAINER


def test_update_many_settles_the_absorbed_text_as_one_at_a_time_does(db, fake_openai):
    fake_openai.default_reply = add_everything
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools", top_k=2)
    container = absorbed_then_buried(mm)
    rows, calls = len(mm.list(user_id="ana")), len(fake_openai.requests)
    results = mm.update_many(["I love reading.", "I love reading."], user_id="ana")
    assert [(r.op, r.memory_id) for r in results] == [(Op.NOOP, container)] * 2
    assert len(fake_openai.requests) == calls
    assert len(mm.list(user_id="ana")) == rows


def test_the_statement_an_update_rewrote_finds_its_memory_by_its_hash(db, fake_openai):
    """The decider merged the statement into other words: the statement's hash finds the
    merged memory (in its own scope only); the old text, replaced, is no longer absorbed."""
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    first = mm.update_memory(OLD, user_id="ana")
    fake_openai.script(answer("UPDATE", id=1, content=CURRENT))
    r = mm.update_memory(NEW, user_id="ana")
    assert (r.op, r.memory_id) == (Op.UPDATE, first.memory_id)
    with mm.store.read() as conn:
        found = mm.store.active_absorbing(conn, Scope("ana"), content_hash(NEW))
        assert found is not None and found.content == CURRENT
        assert mm.store.active_absorbing(conn, Scope("bob"), content_hash(NEW)) is None
        assert mm.store.active_absorbing(conn, Scope("ana"), content_hash(OLD)) is None


def test_an_imported_trail_still_settles_the_absorbed_text(db, tmp_path, fake_openai):
    """Export with events, import into a new store: the absorbed text's hash is derived again
    from the imported events (the export's lines carry no such column)."""
    fake_openai.default_reply = add_everything
    source = str(tmp_path / "source.db")
    with llm_manager(source, fake_openai.base_url, llm_mode="tools", top_k=2) as mm:
        container = absorbed_then_buried(mm)
        lines = list(mm.export_jsonl(include_inactive=True, events=True))
    assert all("absorbed_hash" not in line for line in lines)
    with llm_manager(db, fake_openai.base_url, llm_mode="tools", top_k=2) as mm:
        mm.import_jsonl(lines)
        rows, calls = len(mm.list(user_id="ana")), len(fake_openai.requests)
        r = mm.update_memory("I love reading.", user_id="ana")
        assert (r.op, r.memory_id) == (Op.NOOP, container)
        assert len(fake_openai.requests) == calls
        assert len(mm.list(user_id="ana")) == rows


def test_a_postgresql_database_before_p006_gets_the_hashes_backfilled(
    postgres_url,  # noqa: F811
    monkeypatch,
    caplog,
):
    """p006 on a database written without the column (made so by undoing p006 on a new one):
    the hashes come back in batches with progress records, and the absorbed text is found."""
    with fresh_database(postgres_url) as url:
        with MemoryManager(url) as mm:
            first = mm.update_memory(CONTAINER, user_id="ana")
            assert mm.update_memory("I love reading.", user_id="ana").op is Op.NOOP
            mm.update_memory("I like hiking.", user_id="ana")
        with direct(url) as conn:
            conn.exec_driver_sql("DROP INDEX events_absorbed_hash")
            conn.exec_driver_sql("ALTER TABLE events DROP COLUMN absorbed_hash")
            conn.exec_driver_sql(
                "DELETE FROM memman_migrations WHERE name = 'p006_events_absorbed_hash'"
            )
        monkeypatch.setattr(postgres_schema, "M025_BATCH", 1)
        with caplog.at_level("INFO", logger="memman.storage.migrations"), MemoryManager(url) as mm:
            progress = [r.progress for r in caplog.records if hasattr(r, "progress")]
            assert progress == [(1, 1)]
            with mm.store.read() as conn:
                found = mm.store.active_absorbing(
                    conn, Scope("ana"), content_hash("I love reading")
                )
                assert found is not None and found.id == first.memory_id


def test_a_number_spelled_otherwise_is_held_by_the_memory_that_says_it_and_more(db):
    """"I have 2 brothers." beside "I have two brothers and one sister." was a second row
    offline (the replay's second pass with MiniLM and no LLM added it): the container test
    read "2" and "two" as different words. The number itself still counts, and a new count of
    the brothers no longer replaces the memory that also counts the sister (it did, by the
    topic tier's recount, and the sister left the prompt)."""
    mm = MemoryManager(db)
    held = mm.update_memory("I have two brothers and one sister.", user_id="ana")
    r = mm.update_memory("I have 2 brothers.", user_id="ana")
    assert (r.op, r.memory_id) == (Op.NOOP, held.memory_id)
    assert mm.update_memory("I have 3 brothers.", user_id="ana").op is not Op.NOOP
    assert len(mm.list(user_id="ana")) == 2
