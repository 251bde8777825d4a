"""`Storage`: the operations memman's stages ask of a store, each with its contract.

Read from what the stages call today (store.py and the statements the lifecycle modules used
to write). `memman.storage.store.Store` implements it for SQLite; tests/test_storage_protocol.py
checks that every operation listed here exists there with the same parameters.
`memman.storage.postgres.PostgresStore` implements the same list for PostgreSQL (a subclass:
it replaces the dialect's parts). There a write transaction takes an advisory lock first,
so "locks" below is what that lock already covers.

Common to every method that takes `conn`: it runs inside the caller's transaction (from
`read()` or `write()`), never commits, and raises what the driver raised, wrapped by
SQLAlchemy (`write()` turns "busy", "full" and "read-only" into memman's typed errors). On
SQLite a `write()` transaction holds the file's write lock from its first statement
(`BEGIN IMMEDIATE`), so "locks" below only says what a row-locking backend must lock.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa

from memman.scope import Scope
from memman.storage.protocol_rows import MemoryStorage
from memman.storage.protocol_upkeep import UpkeepStorage

T = TypeVar("T")


class Storage(MemoryStorage, UpkeepStorage, Protocol):
    """A memman store. Every scoped statement names the scope (see memman/storage/__init__)."""

    # -- transactions and the store as a whole -----------------------------------------------

    def read(self) -> AbstractContextManager[sa.Connection]:
        """A consistent snapshot for reads; takes no write lock, waits for none."""
        ...

    def write(self, fn: Callable[[sa.Connection], T], *, scope: Scope | None = None) -> T:
        """fn's return value; all of fn's changes commit together or not at all. fn may run
        again while the database is busy. Locks: with `scope`, fn writes only that scope's
        rows and waits only for writers of the same scope (and for unscoped ones); without,
        it waits for every writer. Raises StoreBusyError after busy_patience_s,
        StoreFullError, StoreReadOnlyError."""
        ...

    def try_write(
        self, fn: Callable[[sa.Connection], object], what: str, *, scope: Scope | None = None
    ) -> None:
        """fn (bookkeeping a read does) written now if the write lock is free, else kept for
        a later try; never waits, never raises for a busy, full or read-only store."""
        ...

    def sizes(self) -> dict[str, Any]:
        """Bytes on disk and rows per growing table (memman stats); a snapshot, no lock."""
        ...

    def vector_storage(self) -> dict[str, str]:
        """How vectors are stored ("stored_as"), and on a server which vector extension it
        offers ("pgvector"), for memman stats; reads the catalog, no lock."""
        ...

    def server_vector_search(self) -> bool:
        """Whether the database can find a scope's nearest vectors itself (pgvector installed
        on PostgreSQL; memman/storage/pgvector.py); the answer of when the store opened."""
        ...

    def scrub(self) -> bool:
        """Rewrite the file without free pages and empty the log; takes the write lock.
        False when a reader's older snapshot kept the log."""
        ...

    def close(self) -> None:
        """Release every connection."""
        ...
