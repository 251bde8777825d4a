"""Every change to a memory goes through one door and leaves its audit event (issue 15).

The door: `Storage.apply` writes a change set (row changes with the audit event that records
them) in one call, and memman/write/commit.py is the only module outside memman/storage/ that
calls it or the store's lower-level row and event writers (read from the source with ast, like
tests/test_layout.py). Then the behaviour: each public operation that changes memories leaves
one event per memory it changed, on both backends. What is not a change: recall's usage
counters (access_count, last_accessed_at; docs/concepts.md, "How decisions are routed").
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

import memman
from memman import MemoryManager, Op, Status
from tests.postgres import db_on_each_backend, direct, postgres_url  # noqa: F401
from tests.test_semantic_retrieval import fake_embedder  # noqa: F401 (fixture)

PACKAGE = Path(memman.__file__).parent
# The store's methods that write memories or events: only storage and the door call them.
WRITERS = {
    "apply",
    "insert_memory",
    "insert_memories",
    "change_content",
    "set_status",
    "reinforce",
    "copy_memory",
    "copy_event",
    "insert_event",
    "insert_events",
    "supersede",
    "set_confidence",
    "note_accessed",
}
DOOR = "write/commit.py"
OUTSIDE = sorted(
    path.relative_to(PACKAGE).as_posix()
    for path in PACKAGE.rglob("*.py")
    if path.relative_to(PACKAGE).parts[0] != "storage"
    and path.relative_to(PACKAGE).as_posix() != DOOR
)
# Recall's reinforcement: how often a memory was recalled, not what it says or whether it holds.
USAGE_COUNTERS = {"access_count", "last_accessed_at"}


def _store_writes(source: str) -> list[str]:
    """Calls of a store's writers: `<...>store.<writer>(...)` (store, mm.store, self._store)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if node.func.attr in WRITERS and name.endswith("store"):
            found.append(f"line {node.lineno}: {name}.{node.func.attr}()")
    return found


@pytest.mark.parametrize("module", OUTSIDE)
def test_only_the_door_calls_the_store_s_writers(module):
    assert _store_writes((PACKAGE / module).read_text(encoding="utf-8")) == []


def test_the_door_is_where_the_writers_are_called():
    assert _store_writes((PACKAGE / DOOR).read_text(encoding="utf-8")) != []


def test_the_check_sees_a_direct_write():
    source = (
        "def f(conn, mm, store, manual):\n"
        "    mm.store.insert_event(conn, scope, op='ADD')\n"
        "    store.set_status(conn, 'x', 'deleted', now)\n"
        "    manual.set_status(store, 'x')\n"  # a module's function of that name: not the store
    )
    assert _store_writes(source) == [
        "line 2: store.insert_event()",
        "line 3: store.set_status()",
    ]


# -- behaviour: one event per changed memory ---------------------------------------------------


def _state(db: str) -> tuple[dict[str, dict], dict[int, tuple]]:
    with direct(db) as conn:
        memories = {
            row["id"]: {k: v for k, v in row.items() if k not in USAGE_COUNTERS}
            for row in conn.execute(sa.text("SELECT * FROM long_term")).mappings()
        }
        events = {
            row.id: (row.memory_id, row.repeat_count, row.last_at)
            for row in conn.execute(
                sa.text("SELECT id, memory_id, repeat_count, last_at FROM events")
            )
        }
    return memories, events


def events_per_changed_memory(db: str, operation: Callable[[], object]) -> dict[str, int]:
    """Run operation; each memory whose row it changed -> the events it wrote (or folded a
    repeat into) naming that memory."""
    memories, events = _state(db)
    operation()
    memories_after, events_after = _state(db)
    changed = {id_ for id_, row in memories_after.items() if memories.get(id_) != row}
    touched = Counter(
        memory_id
        for id_, (memory_id, *_) in events_after.items()
        if events.get(id_) != events_after[id_]
    )
    return {memory_id: touched[memory_id] for memory_id in changed}


def one_each(counts: dict[str, int], changed: int) -> None:
    assert len(counts) == changed, counts
    assert set(counts.values()) == {1}, counts


def test_update_memory_add_reinforce_update(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        one_each(
            events_per_changed_memory(
                db, lambda: mm.update_memory("I live in Berlin", user_id="u")
            ),
            1,
        )
        for _ in range(2):  # a new NOOP event, then a repeat folded into it
            clock.advance(minutes=1)
            counts = events_per_changed_memory(
                db, lambda: mm.update_memory("I live in Berlin", user_id="u")
            )
            one_each(counts, 1)
        clock.advance(minutes=1)
        results = []
        counts = events_per_changed_memory(
            db,
            lambda: results.append(mm.update_memory("I moved to Munich last month", user_id="u")),
        )
        assert results[0].op is Op.UPDATE
        one_each(counts, 1)


def test_update_many(db, clock):
    facts = ["User plays chess on Sundays", "User keeps two cats", "User is learning Finnish"]
    with MemoryManager(db, clock=clock) as mm:
        one_each(events_per_changed_memory(db, lambda: mm.update_many(facts, user_id="u")), 3)


def test_delete_and_restore(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        memory_id = mm.update_memory("User keeps two cats", user_id="u").memory_id
        clock.advance(minutes=1)
        one_each(events_per_changed_memory(db, lambda: mm.delete(memory_id, user_id="u")), 1)
        clock.advance(minutes=1)
        one_each(events_per_changed_memory(db, lambda: mm.restore(memory_id, user_id="u")), 1)


# The same wording (case, punctuation, articles and fillers aside): merged without an LLM.
TWINS = ["User grows tomatoes basil and peppers on the balcony",
         "Also, user really grows tomatoes, basil and peppers on a balcony."]  # fmt: skip


def test_import_and_consolidate_merge_and_decay(db, clock, tmp_path):
    with MemoryManager(str(tmp_path / "source.db"), clock=clock) as source:
        source.update_memory(TWINS[1], user_id="u")
        lines = list(source.export_jsonl())
    with MemoryManager(db, clock=clock) as mm:
        mm.update_memory(TWINS[0], user_id="u")
        mm.update_memory("User likes hiking", user_id="u")
        # A copy as it is (update_memory would call it a repetition): the twin stays separate.
        one_each(events_per_changed_memory(db, lambda: mm.import_jsonl(lines, raw=True)), 1)
        clock.advance(days=10)
        reports = []
        counts = events_per_changed_memory(db, lambda: reports.append(mm.consolidate()))
    assert {c.action for c in reports[0].changes} == {"merge", "decay"}
    assert len(counts) == 3 and min(counts.values()) >= 1, counts  # superseded, decayed


def test_import_of_an_export_without_events_gives_each_memory_one(db, clock, tmp_path):
    """Failed before: copied memories arrived with no event at all."""
    with MemoryManager(str(tmp_path / "source.db"), clock=clock) as source:
        source.update_many(["User keeps two cats", "User plays chess"], user_id="u")
        lines = list(source.export_jsonl())  # no --with-events
    with MemoryManager(db, clock=clock) as mm:
        reports = []
        one_each(events_per_changed_memory(db, lambda: reports.append(mm.import_jsonl(lines))), 2)
        assert reports[0].events_written == 2
        [memory] = [m for m in mm.export() if m.content == "User keeps two cats"]
        [event] = mm.history(memory.id, user_id="u")
    assert (event.op, event.source, event.content_after) == (Op.ADD, "import", memory.content)


def test_recall_and_reindex_change_no_memory(db, clock, fake_embedder):  # noqa: F811
    with MemoryManager(db, clock=clock) as mm:
        mm.update_memory("User likes hiking in the Alps", user_id="u")
        _, events = _state(db)
        assert events_per_changed_memory(db, lambda: mm.search("hiking", user_id="u")) == {}
    with MemoryManager(db, clock=clock, embedder="fake") as mm:
        assert events_per_changed_memory(db, mm.reindex) == {}
    assert _state(db)[1] == events  # the vectors only: no event either


def test_langgraph_put_replace_and_delete(db, clock):
    pytest.importorskip("langgraph.store.memory", reason="the langgraph extra is not installed")
    from memman.langgraph import MemmanStore

    namespace = ("users", "alice", "memories")
    with MemoryManager(db, clock=clock) as mm:
        store = MemmanStore(mm)
        put = events_per_changed_memory(
            db, lambda: store.put(namespace, "k1", {"text": "Likes jazz"})
        )
        one_each(put, 1)
        clock.advance(minutes=1)
        replaced = events_per_changed_memory(
            db, lambda: store.put(namespace, "k1", {"text": "Likes jazz and blues"})
        )
        one_each(replaced, 2)  # the old memory deleted, the new one added
        clock.advance(minutes=1)
        one_each(events_per_changed_memory(db, lambda: store.delete(namespace, "k1")), 1)
        assert [m.status for m in mm.export(include_inactive=True)] == [Status.DELETED] * 2
