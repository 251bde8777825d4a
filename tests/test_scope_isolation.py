"""Scopes never mix: a random interleaving of several users' and agents' operations on one
store leaves each scope exactly as if it had been alone.

Hypothesis draws the operation sequence. Every result, read, search hit, event and history
entry is checked to belong to the scope that asked; at the end, each scope's memories equal
those of a replay of that scope's operations alone on a fresh store (isolation as
independence: what another scope does cannot change what this one gets).
"""

from __future__ import annotations

from contextlib import nullcontext

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memman import MemoryManager
from memman.errors import InvalidInputError
from memman.models import Status
from tests.postgres import fresh_database, postgres_url  # noqa: F401
from tests.reliability import offline_manager

SCOPES = [("alice", None), ("alice", "coach"), ("bob", None), ("carol", "coach")]
# Overlapping on purpose: the same texts in every scope, and extensions the offline decider
# turns into UPDATEs, so a leak would show up as a NOOP or UPDATE across scopes.
POOL = (
    "User likes coffee",
    "User likes coffee with oat milk",
    "User likes tea",
    "User drinks green tea every morning",
    "User lives in Berlin",
    "User lives in Berlin near the river",
    "User has a cat named Miso",
    "User does not like coffee",
)

operations = st.lists(
    st.tuples(
        st.integers(0, len(SCOPES) - 1),
        st.one_of(
            st.tuples(st.just("write"), st.integers(0, len(POOL) - 1)),
            st.tuples(st.just("batch"), st.lists(st.integers(0, len(POOL) - 1), max_size=4)),
            st.tuples(st.just("delete"), st.integers(0, 20)),
            st.tuples(st.just("restore"), st.integers(0, 20)),
            st.tuples(st.just("search"), st.integers(0, len(POOL) - 1)),
        ),
    ),
    max_size=40,
)


def in_scope(item, user: str, agent: str | None) -> bool:
    return (item.user_id, item.agent_id) == (user, agent)


def run(mm: MemoryManager, user: str, agent: str | None, op: tuple) -> None:
    """One operation for one scope, asserting that everything it touches is in the scope."""
    kind, arg = op
    scope = {"user_id": user, "agent_id": agent}
    if kind == "write":
        results = [mm.update_memory(POOL[arg], **scope)]
    elif kind == "batch":
        results = mm.update_many([POOL[i] for i in arg], **scope) if arg else []
    elif kind == "search":
        assert all(in_scope(hit.memory, user, agent) for hit in mm.search(POOL[arg], **scope))
        return
    else:
        wanted = Status.ACTIVE if kind == "delete" else Status.DELETED
        chosen = [m for m in mm.list(**scope, include_inactive=True) if m.status is wanted]
        if not chosen:
            return
        memory = chosen[arg % len(chosen)]
        try:
            change = mm.delete if kind == "delete" else mm.restore
            results = [change(memory.id, **scope)]
        except InvalidInputError:
            return  # restore refused: the same text is active again in this scope
    for result in results:
        if result.memory_id is not None:
            assert in_scope(mm.get(result.memory_id, **scope), user, agent)
            assert all(in_scope(e, user, agent) for e in mm.history(result.memory_id, **scope))


def memories(mm: MemoryManager, user: str, agent: str | None) -> list[tuple[str, str]]:
    listed = mm.list(user_id=user, agent_id=agent, include_inactive=True)
    return sorted((m.content, m.status.value) for m in listed)


def check_isolation(ops, shared_store) -> None:
    """Run ops on one shared store (from shared_store(), a context manager giving a db), then
    each scope's alone on a fresh in-memory store, and compare."""
    with shared_store() as db, offline_manager(db) as shared:
        for scope_index, op in ops:
            run(shared, *SCOPES[scope_index], op)
        for user, agent in SCOPES:
            assert all(
                in_scope(e, user, agent) for e in shared.events(user_id=user, agent_id=agent)
            )
            assert all(
                in_scope(p, user, agent) for p in shared.pending(user_id=user, agent_id=agent)
            )
        together = {scope: memories(shared, *scope) for scope in SCOPES}

    for index, scope in enumerate(SCOPES):
        with offline_manager(":memory:") as alone:
            for scope_index, op in ops:
                if scope_index == index:
                    run(alone, *scope, op)
            assert memories(alone, *scope) == together[scope]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(ops=operations)
def test_interleaved_scopes_behave_as_if_alone(ops):
    check_isolation(ops, lambda: nullcontext(":memory:"))


@settings(
    max_examples=15,  # a fresh database each: ~0.3 s apiece
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(ops=operations)
def test_interleaved_scopes_behave_as_if_alone_on_postgres(postgres_url, ops):  # noqa: F811
    check_isolation(ops, lambda: fresh_database(postgres_url))
