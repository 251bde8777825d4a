"""Which history a memory copied by an import gets (transfer.py).

Importing is resumable: memories and events are written in batches, so an import killed
between them leaves memories whose events were not copied yet (issue 29: 3,000 of 4,500, and a
second import counted them as duplicates and copied nothing). A memory of the file the store
holds under the same id is the same memory, whatever the store held before: its events in the
file are copied unless the store has them already (same op, time, texts and reason), so
importing the same file again reaches the end state of an import that was not stopped, and
`memman check` counts memories without history meanwhile.

A memory whose id the store holds in another scope is copied under a new id (report.renamed,
old id -> new) and its events follow it, never dropped as a duplicate (decided, it gets an id
of its own anyway). A copied memory left without any event (an export taken without its
events) gets an ADD event saying so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from memman.models import Event, Memory, Op, Tier
from memman.scope import Scope
from memman.storage.changes import ChangeSet
from memman.storage.memories import new_memory_id
from memman.storage.store import Store


@dataclass
class SameMemories:
    """The file's memories the store holds under their own id, and of them those it held
    before this import wrote them (an earlier import of the file did)."""

    ids: set[str] = field(default_factory=set)
    held: list[Memory] = field(default_factory=list)
    # (scope, id in the file) -> the new id of a memory whose id the store held in another scope
    renamed: dict[tuple[Scope, str], str] = field(default_factory=dict)

    def add(self, memory: Memory, *, held: bool) -> None:
        self.ids.add(memory.id)
        if held:
            self.held.append(memory)

    def renamed_copy(self, memory: Memory, renamed: dict[str, str]) -> Memory:
        """The memory under a new id (recorded in `renamed`, the report's old -> new), its
        events in the file to follow it."""
        new_id = renamed[memory.id] = new_memory_id()
        self.renamed[(Scope(memory.user_id, memory.agent_id), memory.id)] = new_id
        self.ids.add(memory.id)
        return memory.model_copy(update={"id": new_id})

    def followed(self, event: Event) -> Event:
        """The event, naming the new id of its memory if that was copied under one."""
        new_id = self.renamed.get((Scope(event.user_id, event.agent_id), event.memory_id))
        return event if new_id is None else event.model_copy(update={"memory_id": new_id})


def has_event(conn: sa.Connection, store: Store, event: Event) -> bool:
    """Whether the store has this event of its memory already (an earlier import copied it):
    the same op at the same time, with the same texts and reason."""

    def key(e: Event) -> tuple[Any, ...]:
        return (e.op, e.created_at, e.content_before, e.content_after, e.reason)

    assert event.memory_id is not None
    return any(key(e) == key(event) for e in store.events_for_memory(conn, event.memory_id))


def without_history(conn: sa.Connection, store: Store, memories: list[Memory]) -> int:
    """An ADD event (tier manual, source import) for each copied memory that arrived without
    one (an export taken without its events), so every memory has an audit trail; how many."""
    ev = store.events
    ids = [memory.id for memory in memories]
    held = set(conn.execute(sa.select(ev.c.memory_id).where(ev.c.memory_id.in_(ids))).scalars())
    by_scope: dict[Scope, list[ChangeSet]] = {}
    for memory in memories:
        if memory.id in held:
            continue
        event = {
            "memory_id": memory.id,
            "op": Op.ADD.value,
            "tier": Tier.MANUAL.value,
            "candidate": None,
            "content_before": None,
            "content_after": memory.content,
            "reason": f"copied from an export that carried no history for it ({memory.status})",
            "source": "import",
            "created_at": memory.created_at,
        }
        by_scope.setdefault(Scope(memory.user_id, memory.agent_id), []).append(ChangeSet(event))
    written = 0
    for scope, changes in by_scope.items():
        written += len(store.apply(conn, scope, changes))
    return written
