"""A change set (a memory's row change with its audit event) and `Storage.apply`, which
writes change sets, the one call through which memories and events are written.

Each kind of row change is a small value naming what changes; the store's lower-level row
writers (insert_memories, change_content, set_status, ...) and its event writers run only
here, for the apply layer (memman/write/commit.py), so a row change cannot be written without
the event it came with (tests/test_one_door.py keeps every other module off them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from memman.models import Memory, Status
from memman.scope import Scope

if TYPE_CHECKING:
    from memman.storage.store import Store


@dataclass(frozen=True)
class NewMemory:
    """A new active memory: the long_term values of store.memory_row (its id included)."""

    row: dict[str, Any]


@dataclass(frozen=True)
class NewText:
    """The memory's text replaced (topic and statement time kept where None)."""

    memory: Memory
    content: str
    content_hash: str
    now: str
    source: str | None
    subject: str | None = None
    attribute: str | None = None
    observed_at: str | None = None


@dataclass(frozen=True)
class NewStatus:
    memory_id: str
    status: Status
    now: str


@dataclass(frozen=True)
class Reinforced:
    """A repeated fact: repetition count + 1, the source kept."""

    memory: Memory
    now: str
    source: str | None


@dataclass(frozen=True)
class NewSalience:
    """category and/or importance (a repetition or correction carrying them)."""

    memory_id: str
    category: str | None = None
    importance: float | None = None


@dataclass(frozen=True)
class NewConfidence:
    """Decay: the new confidence; archived too if `archive`."""

    memory_id: str
    confidence: float
    now: str
    archive: bool


@dataclass(frozen=True)
class Superseded:
    """A merge retired the memory (restorable), with its metadata naming the keeper."""

    memory_id: str
    metadata: dict
    now: str


RowChange = NewMemory | NewText | NewStatus | Reinforced | NewSalience | NewConfidence | Superseded


@dataclass(frozen=True)
class ChangeSet:
    """One audit event and the row changes it records (none: an event that changes no
    memory, such as a parked fact or a verdict to keep memories separate).

    `event` holds the events columns (memory_id, op, tier, candidate, content_before,
    content_after, reason, scores, created_at, ...), as Store.insert_event takes them."""

    event: dict[str, Any]
    rows: tuple[RowChange, ...] = field(default=())


def _batched(change: ChangeSet) -> bool:
    """An ADD: one new row and a never-folded event, written with its neighbours' in one
    executemany each (a chunk of ADDs costs two statements, not two per fact)."""
    return len(change.rows) == 1 and isinstance(change.rows[0], NewMemory)


class ChangeRows:
    """Storage.apply for Store (and PostgresStore, which inherits it)."""

    def apply(
        self: Store, conn: sa.Connection, scope: Scope, changes: Sequence[ChangeSet]
    ) -> list[int]:
        ids: list[int] = []
        run: list[ChangeSet] = []  # consecutive ADDs with the same event columns
        for change in changes:
            if run and not (_batched(change) and run[0].event.keys() == change.event.keys()):
                ids += _write_adds(self, conn, scope, run)
                run = []
            if _batched(change):
                run.append(change)
                continue
            for row in change.rows:
                _write_row(self, conn, scope, row)
            ids.append(self.insert_event(conn, scope, **change.event))
        return ids + _write_adds(self, conn, scope, run)


def _write_adds(
    store: Store, conn: sa.Connection, scope: Scope, run: list[ChangeSet]
) -> list[int]:
    """The ADDs' rows with one executemany, then their events with another."""
    if not run:
        return []
    rows = [change.rows[0] for change in run]
    store.insert_memories(conn, scope, [row.row for row in rows if isinstance(row, NewMemory)])
    return store.insert_events(conn, scope, [change.event for change in run])


def _write_row(store: Store, conn: sa.Connection, scope: Scope, row: RowChange) -> None:
    match row:
        case NewMemory():
            store.insert_memories(conn, scope, [row.row])
        case NewText():
            store.change_content(
                conn,
                row.memory,
                content=row.content,
                content_hash=row.content_hash,
                now=row.now,
                source=row.source,
                subject=row.subject,
                attribute=row.attribute,
                observed_at=row.observed_at,
            )
        case NewStatus():
            store.set_status(conn, row.memory_id, row.status, row.now)
        case Reinforced():
            store.reinforce(conn, row.memory, now=row.now, source=row.source)
        case NewSalience():
            values = {"category": row.category, "importance": row.importance}
            kept = {name: value for name, value in values.items() if value is not None}
            lt = store.long_term
            conn.execute(lt.update().where(lt.c.id == row.memory_id).values(**kept))
        case NewConfidence():
            store.set_confidence(
                conn, scope, row.memory_id, row.confidence, now=row.now, archive=row.archive
            )
        case Superseded():
            store.supersede(conn, scope, row.memory_id, metadata=row.metadata, now=row.now)
