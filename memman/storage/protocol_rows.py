"""`MemoryStorage`: the long-term memories, their change sets and audit events, and a
whole-store copy's reads and writes; a part of `memman.storage.protocol.Storage` (see there
for what every method taking `conn` has in common)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import sqlalchemy as sa

from memman.models import Event, Memory, Status, Statuses
from memman.scope import Scope
from memman.storage.changes import ChangeSet


class MemoryStorage(Protocol):
    """The memories and their events (memman/storage/memories.py, events.py)."""

    # -- long-term memories -------------------------------------------------------------------

    def active_by_hash(self, conn: sa.Connection, scope: Scope, content_hash: str) -> Memory | None:
        """The scope's active memory with this content hash (unique per scope), or None."""
        ...

    def active_hashes(self, conn: sa.Connection, scope: Scope, hashes: list[str]) -> set[str]:
        """Which of these hashes an active memory of the scope holds."""
        ...

    def active_by_topic(
        self, conn: sa.Connection, scope: Scope, subject: str, attribute: str, limit: int
    ) -> list[Memory]:
        """The scope's active memories about (subject, attribute), newest observed first."""
        ...

    def active_replacing(
        self, conn: sa.Connection, scope: Scope, content_hash: str
    ) -> Memory | None:
        """The scope's active memory out of which an UPDATE event took a text with this
        content hash (its content_before; the latest such event's memory), or None. One index
        seek (events: user_id, agent_id, hash of content_before), whatever the scope's size:
        the write path asks it for every novel fact. Every event with a content_before stores
        that text's hash (insert_event, insert_events, copy_event)."""
        ...

    def active_absorbing(
        self, conn: sa.Connection, scope: Scope, content_hash: str
    ) -> Memory | None:
        """The scope's active memory into which an event settled a text with this content hash
        without making it the memory's text (a NOOP into a memory that says more, an UPDATE
        whose new text is not the statement's: events.absorbed_hash; the latest such event's
        memory), or None. One index seek (events: user_id, agent_id, absorbed_hash), asked
        for every novel fact. Every event stores it (insert_event, insert_events, copy_event)."""
        ...

    def get(self, conn: sa.Connection, memory_id: str, scope: Scope | None = None) -> Memory:
        """The memory; NotFoundError if absent or of another scope (the same error)."""
        ...

    def resolve_id(self, conn: sa.Connection, prefix: str, scope: Scope | None = None) -> str:
        """The one id starting with prefix; NotFoundError, or InvalidInputError if ambiguous
        or shorter than 4 characters."""
        ...

    def memories_by_pk(self, conn: sa.Connection, pks: list[int]) -> dict[int, Memory]:
        """pk -> memory for the pks a scoped retrieval returned (any number of them)."""
        ...

    def list(
        self,
        conn: sa.Connection,
        scope: Scope,
        *,
        statuses: tuple[Status, ...] = ...,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Memory]:
        """The scope's memories in these statuses, oldest first, one page."""
        ...

    def iter_memories(
        self, conn: sa.Connection, scope: Scope | None, *, statuses: Statuses
    ) -> Iterator[Memory]:
        """Memories of the scope (every scope if None), oldest first, streamed; of any
        status, known or not, if statuses is None (`memman check`)."""
        ...

    def core_memories(
        self,
        conn: sa.Connection,
        scope: Scope,
        *,
        categories: list[str],
        safety: frozenset[str],
        attributes: frozenset[str],
        limit: int,
    ) -> list[Memory]:
        """The scope's protected (categories, or safety attributes of anyone), pinned and
        profile memories, in that order, at most limit."""
        ...

    def count_by_status(self, conn: sa.Connection, scope: Scope | None) -> dict[str, int]:
        """status -> memories of the scope (every scope if None)."""
        ...

    # -- memories and their events: written through apply -------------------------------------

    def apply(self, conn: sa.Connection, scope: Scope, changes: Sequence[ChangeSet]) -> list[int]:
        """Write change sets of one scope in order, each its row changes then its audit
        event (consecutive ones that only add rows and whose event is no NOOP: their rows in
        one batch, then their events in another), then the change sets' vectors (save_vectors);
        the event ids, one per change set (a folded NOOP's is the event it was folded into).
        Locks the rows it changes. The one call through which memories and events are
        written outside memman/storage/ (the apply layer, memman/write/commit.py): the writers
        below run inside it (and inside imports and erasure, which are storage's own)."""
        ...

    def insert_memory(
        self,
        conn: sa.Connection,
        scope: Scope,
        *,
        content: str,
        content_hash: str,
        now: str,
        source: str | None,
        metadata: dict[str, Any],
        confidence: float = ...,
        category: str | None = None,
        importance: float = ...,
        subject: str | None = None,
        attribute: str | None = None,
        observed_at: str | None = None,
        memory_id: str | None = None,
    ) -> str:
        """The new active memory's id (memory_id, or a new one). Raises IntegrityError if the
        scope already holds the hash as an active memory (the unique index: a concurrent
        writer won)."""
        ...

    def insert_memories(
        self, conn: sa.Connection, scope: Scope, rows: list[dict[str, Any]]
    ) -> None:
        """Insert memory_row()s of one scope in one statement batch; IntegrityError as for
        insert_memory, and then none of the rows is written (the caller's transaction)."""
        ...

    def change_content(
        self,
        conn: sa.Connection,
        memory: Memory,
        *,
        content: str,
        content_hash: str,
        now: str,
        source: str | None,
        subject: str | None = None,
        attribute: str | None = None,
        observed_at: str | None = None,
    ) -> None:
        """New text for the memory (locks its row); the FTS index follows."""
        ...

    def set_status(self, conn: sa.Connection, memory_id: str, status: Status, now: str) -> None:
        """The memory's new status (locks its row)."""
        ...

    def reinforce(
        self, conn: sa.Connection, memory: Memory, *, now: str, source: str | None
    ) -> None:
        """A repeated fact: repetition_count + 1 and the source kept (locks the row)."""
        ...

    def copy_memory(self, conn: sa.Connection, memory: Memory, content_hash: str) -> None:
        """Insert the memory as given, id and status included (an import)."""
        ...

    def existing_memory_ids(self, conn: sa.Connection, ids: list[str]) -> set[str]:
        """Which of these ids the store holds, in any status."""
        ...

    # -- audit events -------------------------------------------------------------------------

    def insert_event(self, conn: sa.Connection, scope: Scope, **values: Any) -> int:
        """The event's id; a NOOP repeating the memory's previous event is folded into it
        (repeat_count, last_at; locks that event's row)."""
        ...

    def insert_events(
        self, conn: sa.Connection, scope: Scope, rows: list[dict[str, Any]]
    ) -> list[int]:
        """Record new audit events of one scope (ADDs: never folded) in one statement batch;
        their ids, in the order of rows."""
        ...

    def copy_event(self, conn: sa.Connection, event: Event, *, keep_id: bool) -> None:
        """Insert the event as given (its id too if keep_id), never folded into another."""
        ...

    # -- the rest of a whole-store copy (memman migrate-db) -----------------------------------

    def table_rows(
        self, conn: sa.Connection, table: str, scope: Scope | None = None, *, live: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Every row (every column, by id) of pending, short_term or message_buffer, every
        scope's or only the scope's, streamed; `live`: only every parked fact, the active
        short-term facts, the messages not yet extracted (a scope's export without inactive
        rows); InvalidInputError for another table."""
        ...

    def vector_rows(self, conn: sa.Connection) -> Iterator[tuple[str, str, int, bytes]]:
        """(memory id, model, dim, float32 bytes) of every stored vector, streamed."""
        ...

    def copy_rows(self, conn: sa.Connection, table: str, rows: list[dict[str, Any]]) -> None:
        """Insert rows of table_rows' tables as they are, ids included, in the caller's
        transaction (the ids must be free: an empty store)."""
        ...

    def row_held(self, conn: sa.Connection, table: str, row_id: Any) -> bool:
        """Whether one of copy_rows' tables holds a row with this id."""
        ...

    def events_for_memory(self, conn: sa.Connection, memory_id: str) -> list[Event]:
        """The memory's events, oldest first."""
        ...

    def recent_events(self, conn: sa.Connection, scope: Scope | None, limit: int) -> list[Event]:
        """The newest events of the scope (every scope if None), newest first."""
        ...

    def iter_events(self, conn: sa.Connection, scope: Scope | None) -> Iterator[Event]:
        """Events of the scope (every scope if None), oldest first, streamed."""
        ...

    def event_counts(self, conn: sa.Connection, scope: Scope | None) -> dict[str, dict[str, int]]:
        """op -> tier -> events, folded repeats counted."""
        ...
