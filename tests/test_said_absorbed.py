"""A text an earlier event absorbed into a memory (a NOOP into a memory that says it and more,
an UPDATE that wrote other words), said again, finds that memory wherever it ranks: retrieval
returns top_k memories, so in a large scope it can be out of reach and the repeat went to the
decider, which ADDed it (issue 11: a replay's second pass added rows, benchmarks/bench_calls.py)."""

from __future__ import annotations

from memman import MemoryManager, Op
from memman.language.text import content_hash
from memman.scope import Scope
from tests.decisions import CURRENT, NEW, OLD, add_everything, answer, llm_manager
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401

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
