"""Every call that takes an id takes the scope too, "all users" is asked for explicitly,
sessions belong to a scope, and ids or messages that are not valid Unicode are refused."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memman import MemoryManager
from memman.errors import InvalidInputError, NotFoundError
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401

BY_ID = ["get", "history", "delete", "restore"]


@pytest.fixture
def mm(db, clock):
    with MemoryManager(db, clock=clock, extract_cooldown_s=60) as manager:
        yield manager


@pytest.mark.parametrize("call", BY_ID)
@pytest.mark.parametrize(
    "scope", [{"user_id": "bob"}, {"user_id": "alice", "agent_id": "coach"}], ids=["user", "agent"]
)
def test_an_id_outside_the_scope_is_not_found_like_a_missing_one(mm, call, scope):
    memory_id = mm.update_memory("I live in Paris", user_id="alice").memory_id
    if call == "restore":
        mm.delete(memory_id, user_id="alice")
    with pytest.raises(NotFoundError) as missing:
        getattr(mm, call)("0" * 32, **scope)
    with pytest.raises(NotFoundError) as foreign:
        getattr(mm, call)(memory_id, **scope)
    assert str(foreign.value) == str(missing.value).replace("0" * 32, memory_id)
    assert [e.op for e in mm.history(memory_id, user_id="alice")][-1] == (
        "DELETE" if call == "restore" else "ADD"
    )  # nothing changed
    getattr(mm, call)(memory_id, user_id="alice")  # its own scope reaches it


def test_a_prefix_resolves_only_within_the_scope(mm):
    memory_id = mm.update_memory("I live in Paris", user_id="alice").memory_id
    assert mm.resolve_id(memory_id[:6], user_id="alice") == memory_id
    with pytest.raises(NotFoundError):
        mm.resolve_id(memory_id[:6], user_id="bob")
    with pytest.raises(NotFoundError):
        mm.resolve_id(memory_id[:6], user_id="alice", agent_id="coach")


def test_a_call_by_id_without_a_scope_is_deprecated(mm):
    memory_id = mm.update_memory("I live in Paris", user_id="alice").memory_id
    with pytest.warns(DeprecationWarning, match="user_id"):
        assert mm.get(memory_id).content == "I live in Paris"
    with pytest.raises(InvalidInputError, match="needs a user_id"):
        mm.get(memory_id, agent_id="coach")


LISTINGS: dict[str, Callable[[MemoryManager], object]] = {
    "events": lambda mm: mm.events(agent_id="coach"),
    "export": lambda mm: list(mm.export(agent_id="coach")),
    "export_events": lambda mm: list(mm.export_events(agent_id="coach")),
    "short_term": lambda mm: mm.short_term(agent_id="coach"),
    "pending": lambda mm: mm.pending(agent_id="coach"),
    "stats": lambda mm: mm.stats(agent_id="coach"),
    "retry_pending": lambda mm: mm.retry_pending(agent_id="coach"),
    "flush_idle": lambda mm: mm.flush_idle(agent_id="coach"),
    "consolidate": lambda mm: mm.consolidate(agent_id="coach"),
}


@pytest.mark.parametrize("listing", LISTINGS.values(), ids=LISTINGS.keys())
def test_an_agent_without_a_user_is_refused_not_every_users_data(mm, listing):
    mm.update_memory("I live in Paris", user_id="alice")
    mm.update_memory("I live in Rome", user_id="bob", agent_id="coach")
    with pytest.raises(InvalidInputError, match="agent_id needs a user_id"):
        listing(mm)
    assert len(mm.events()) == 2  # neither id: every user's, explicitly


def test_a_session_id_shared_by_two_users_never_leaks(mm, clock):
    mm.observe([{"role": "user", "content": "I live in Lisbon"}], user_id="bob", session_id="s")
    clock.advance(seconds=120)  # bob's message is due, alice's is not
    seen = mm.observe(
        [{"role": "user", "content": "I live in Oslo"}], user_id="alice", session_id="s"
    )
    assert (seen.buffered, seen.extracted_messages, seen.results) == (1, 0, [])
    flushed = mm.flush("s", user_id="alice")
    assert [r.content for r in flushed.results] == ["I live in Oslo"]
    assert mm.list(user_id="bob") == []  # bob's message is still his, still buffered
    assert [r.content for r in mm.flush("s", user_id="bob").results] == ["I live in Lisbon"]


BAD = "x\ud800"
ENTRY_POINTS: dict[str, Callable[[MemoryManager, str], object]] = {
    "update_memory user": lambda mm, memory_id: mm.update_memory("I like tea", user_id=BAD),
    "update_memory agent": lambda mm, memory_id: mm.update_memory(
        "I like tea", user_id="u", agent_id=BAD
    ),
    "update_many": lambda mm, memory_id: mm.update_many(["I like tea"], user_id=BAD),
    "search": lambda mm, memory_id: mm.search("tea", user_id=BAD),
    # A query typed in a Latin-1 terminal: no "0 hits" that hides why.
    "search query": lambda mm, memory_id: mm.search(f"coffee {BAD}", user_id="u"),
    "context query": lambda mm, memory_id: mm.context(f"coffee {BAD}", user_id="u"),
    "search_short_term query": lambda mm, memory_id: mm.search_short_term(
        f"coffee {BAD}", user_id="u"
    ),
    "list": lambda mm, memory_id: mm.list(user_id=BAD),
    "context": lambda mm, memory_id: mm.context("tea", user_id=BAD),
    "events": lambda mm, memory_id: mm.events(user_id=BAD),
    "stats": lambda mm, memory_id: mm.stats(user_id=BAD),
    "observe session": lambda mm, memory_id: mm.observe(
        [{"role": "user", "content": "hi"}], user_id="u", session_id=BAD
    ),
    "observe message": lambda mm, memory_id: mm.observe(
        [{"role": "user", "content": f"I like {BAD}"}], user_id="u", session_id="s"
    ),
    "flush": lambda mm, memory_id: mm.flush(BAD, user_id="u"),
    "remember_short_term": lambda mm, memory_id: mm.remember_short_term(
        "I am at the airport", user_id="u", session_id=BAD
    ),
    "get": lambda mm, memory_id: mm.get(memory_id + BAD, user_id="u"),
    "history": lambda mm, memory_id: mm.history(memory_id + BAD, user_id="u"),
    "delete": lambda mm, memory_id: mm.delete(memory_id + BAD, user_id="u"),
    "restore": lambda mm, memory_id: mm.restore(memory_id + BAD, user_id="u"),
    "purge": lambda mm, memory_id: mm.purge(memory_id + BAD, user_id="u"),
    "resolve_id": lambda mm, memory_id: mm.resolve_id(memory_id[:6], user_id=BAD),
    "forget": lambda mm, memory_id: mm.forget(BAD),
}


@pytest.mark.parametrize("call", ENTRY_POINTS.values(), ids=ENTRY_POINTS.keys())
def test_a_lone_surrogate_is_invalid_input_at_every_entry_point(mm, call):
    memory_id = mm.update_memory("I like coffee", user_id="u").memory_id
    with pytest.raises(InvalidInputError, match="Unicode"):
        call(mm, memory_id)
    assert [m.content for m in mm.list(user_id="u")] == ["I like coffee"]
