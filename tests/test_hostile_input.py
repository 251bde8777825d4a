"""Hostile input: a clear InvalidInputError or a correct result, never a crash or a bad row.

After every rejected input the store is untouched (same row counts) and sound (SQLite and
FTS5 integrity checks pass).
"""

from __future__ import annotations

import contextlib
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memman import MemoryManager, Op
from memman.config import Settings
from memman.errors import InvalidInputError
from tests.reliability import integrity_problems, offline_manager

TABLES = ("long_term", "events", "pending")


def nested(depth: int) -> dict:
    """A dict nested depth levels deep ({"x": {}} is two levels)."""
    root: dict = {}
    node = root
    for _ in range(depth - 1):
        node["x"] = {}
        node = node["x"]
    return root


def self_referencing() -> dict:
    loop: dict = {}
    loop["self"] = loop
    return loop


def row_counts(path: str) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        conn.close()


@pytest.fixture
def store(tmp_path):
    path = str(tmp_path / "hostile.db")
    with offline_manager(path) as mm:
        mm.update_memory("User likes green tea", user_id="alice")
        yield path, mm
    assert integrity_problems(path) == []


@pytest.mark.parametrize(
    ("fact", "kwargs", "message"),
    [
        pytest.param("", {}, "empty", id="empty"),
        pytest.param(" \t\n ", {}, "empty", id="whitespace"),
        # Invisible characters alone show as nothing: refused as empty (issue 29).
        pytest.param("\u200b", {}, "empty", id="zero-width-space"),
        pytest.param("\ufeff", {}, "empty", id="byte-order-mark"),
        pytest.param("\u2063", {}, "empty", id="invisible-separator"),
        pytest.param("\u00ad", {}, "empty", id="soft-hyphen"),
        pytest.param(" \u200b\u200c\u200d\u2060 ", {}, "empty", id="zero-width-run"),
        pytest.param("...!?", {}, "no content", id="punctuation-only"),
        pytest.param("User likes\x00tea", {}, "NUL", id="nul"),
        pytest.param("User likes \ud800 tea", {}, "surrogate", id="lone-surrogate"),
        pytest.param("x" * 1_000_000, {}, "limit", id="1mb-fact"),
        pytest.param(b"User likes tea", {}, "string", id="bytes"),
        pytest.param(None, {}, "string", id="none"),
        pytest.param("User likes tea", {"metadata": nested(10_000)}, "deeper", id="depth-10000"),
        pytest.param(
            "User likes tea", {"metadata": self_referencing()}, "deeper", id="metadata-loop"
        ),
        pytest.param("User likes tea", {"metadata": {"x": "y" * 100_000}}, "larger", id="big-meta"),
        pytest.param("User likes tea", {"metadata": {"n": float("nan")}}, "JSON", id="nan-meta"),
        pytest.param("User likes tea", {"metadata": {"s": {1, 2}}}, "JSON", id="set-meta"),
        pytest.param("User likes tea", {"metadata": ["not", "a", "dict"]}, "dict", id="list-meta"),
        pytest.param("User likes tea", {"source": "s\x00"}, "NUL", id="nul-source"),
        pytest.param("User likes tea", {"user_id": ""}, "user_id", id="empty-user"),
        pytest.param("User likes tea", {"user_id": "a\x00b"}, "user_id", id="nul-user"),
        pytest.param("User likes tea", {"user_id": "u" * 10_000}, "user_id", id="long-user"),
        pytest.param("User likes tea", {"agent_id": " "}, "agent_id", id="blank-agent"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(store, fact, kwargs, message):
    path, mm = store
    before = row_counts(path)
    kwargs = {"user_id": "alice", **kwargs}

    with pytest.raises(InvalidInputError, match=message):
        mm.update_memory(fact, **kwargs)

    assert row_counts(path) == before
    assert integrity_problems(path) == []


def test_a_bad_fact_in_a_batch_writes_nothing_and_names_its_position(store):
    path, mm = store
    before = row_counts(path)

    with pytest.raises(InvalidInputError, match="fact #2"):
        mm.update_many(["User owns a bike", "User owns a kite", "bad\x00"], user_id="alice")

    assert row_counts(path) == before


STORED_VERBATIM = [
    'User said "NEAR(tea coffee)" AND -decaf OR cha* : title:x',
    "User's motto is 'don''t panic' \"\"",
    "Robert'); DROP TABLE long_term;-- is the user's nickname",
    "User wrote 1=1 OR '1'='1' in a form; SELECT * FROM events",
    "Пользователь likes 寿司, café au lait and مرحبا 🍣",
    "User's template is {{ user.name }} {% if x %}",
    "User\u200bnames\u202eevil in right-to-left",
]


@pytest.mark.parametrize("fact", STORED_VERBATIM)
def test_syntax_looking_facts_are_stored_verbatim_and_findable(store, fact):
    path, mm = store

    result = mm.update_memory(fact, user_id="alice")

    assert result.op is Op.ADD
    assert mm.get(result.memory_id, user_id="alice").content == fact
    assert mm.search(fact, user_id="alice")[0].memory.id == result.memory_id
    assert set(row_counts(path)) == set(TABLES)  # no table was dropped


@pytest.mark.parametrize(
    "query",
    ['"', "'", "NEAR(", "a AND", "-", "*", ":", "()", "^x", "\x00", "\ud800", "x" * 100_000],
)
def test_hostile_queries_never_raise_sqlite_errors(store, query):
    _, mm = store
    try:
        hits = mm.search(query, user_id="alice")
    except InvalidInputError:
        return
    assert all(hit.memory.user_id == "alice" for hit in hits)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(fact=st.text(max_size=300), query=st.text(max_size=60))
def test_any_text_is_stored_exactly_or_refused(store, fact, query):
    path, mm = store
    before = row_counts(path)
    try:
        result = mm.update_memory(fact, user_id="alice", metadata={"raw": fact})
    except InvalidInputError:
        assert row_counts(path) == before
    else:
        stored = mm.get(result.memory_id, user_id="alice")
        assert stored.user_id == "alice"
        if result.op is Op.ADD:
            assert (stored.content, stored.metadata) == (fact.strip(), {"raw": fact})
    with contextlib.suppress(InvalidInputError):
        mm.search(query, user_id="alice")


def test_limits_are_configurable(tmp_path):
    path = str(tmp_path / "m.db")
    limits = Settings(db=path, max_fact_chars=10, max_metadata_depth=2, decider="offline")
    with MemoryManager(path, settings=limits) as mm:
        with pytest.raises(InvalidInputError, match="limit is 10"):
            mm.update_memory("User likes green tea", user_id="alice")
        with pytest.raises(InvalidInputError, match="deeper than 2"):
            mm.update_memory("User: tea", user_id="alice", metadata=nested(3))
        assert mm.update_memory("User: tea", user_id="alice", metadata=nested(2)).op is Op.ADD


@pytest.mark.parametrize("fact", ["\u200b", "\ufeff", "\u2063", "\u00ad"])
def test_an_invisible_fact_is_refused_by_every_door_that_takes_a_fact(store, fact):
    path, mm = store
    before = row_counts(path)
    with pytest.raises(InvalidInputError, match="empty"):
        mm.remember_short_term(fact, user_id="alice", session_id="s")
    with pytest.raises(InvalidInputError, match="empty"):
        mm.update_many(["User owns a bike", fact], user_id="alice")
    assert row_counts(path) == before
