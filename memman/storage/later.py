"""Bookkeeping a read does (access counts, short-term recalls), written later, never waited for.

A search or a context block counts what it returned; counting is a write, and a write waits
for the write lock. A read must not: while another process holds a long write transaction
(an import, a consolidation), `search` would have waited up to busy_patience_s and then
raised StoreBusyError (issue 29). So a read hands its bookkeeping to this buffer and the
store tries to write the buffer once, without waiting (Store.try_write): when the lock is
free it is written at once, as before; when it is held the buffer keeps it for the next
attempt (the next read's, a write's, close's). The buffer is bounded: under long contention
the oldest counts are dropped, with a log line. Counts steer ranking and decay a little;
losing some under contention is the price of a read that never waits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from memman.errors import StoreError
from memman.scope import Scope

log = logging.getLogger(__name__)

# Writes a buffer keeps while the lock stays held: one per search or context block, each a
# handful of ids, so ~a few MB at most. A process whose reads outrun another's long write by
# more than this loses the oldest counts (a log line says how many).
MAX_WAITING = 10_000


@dataclass(frozen=True)
class Bookkeeping:
    """One read's write: fn(conn) in a transaction; `what` names it in log lines."""

    fn: Callable[[Any], object]
    what: str


class Later:
    """The bookkeeping waiting for the write lock, oldest first (thread-safe)."""

    def __init__(self, limit: int = MAX_WAITING) -> None:
        self._waiting: list[Bookkeeping] = []
        self._limit = limit
        self._lock = threading.Lock()
        # One flush at a time in a process: a second thread finding one at work goes on.
        self.flushing = threading.Lock()

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, item: Bookkeeping) -> None:
        self.put_back([item], newest=True)

    def take(self) -> list[Bookkeeping]:
        """Everything waiting, emptying the buffer (put_back what could not be written)."""
        with self._lock:
            taken, self._waiting = self._waiting, []
        return taken

    def put_back(self, items: list[Bookkeeping], *, newest: bool = False) -> None:
        """Items that could not be written yet: before what came since (they are older),
        or after it (`newest`); the oldest beyond the limit are dropped."""
        with self._lock:
            self._waiting = self._waiting + items if newest else items + self._waiting
            dropped = len(self._waiting) - self._limit
            if dropped > 0:
                del self._waiting[:dropped]
        if dropped > 0:
            log.warning("the write lock stayed held: %d read counts dropped", dropped)


class LaterWrites:
    """try_write and the flush of the buffer, a mixin of Store: a backend says how to write
    without waiting (_write_now; PostgresStore overrides it) and what busy means (_busy)."""

    path: str
    read_only: bool
    dbapi: ModuleType
    engine: sa.Engine
    _later: Later
    _write_lock: threading.RLock
    _busy_timeout_ms: int

    if TYPE_CHECKING:  # BusyRetry's, beside it in Store

        def _busy(self, error: Exception) -> bool: ...

        def _typed_error(self, error: Exception) -> StoreError | None: ...

    def try_write(
        self, fn: Callable[[sa.Connection], object], what: str, *, scope: Scope | None = None
    ) -> None:
        """Bookkeeping a read does (access counts, short-term recalls): written now if the
        write lock is free, else kept for a later attempt (Later, above), so the read never
        waits for another writer. Skipped with a log line on a read-only store.
        fn may run in a transaction with other reads' bookkeeping; it writes only counts.
        `scope` is kept for callers (the counts say their scope themselves)."""
        if self.read_only:
            log.debug("%s skipped: %s is open read-only", what, self.path)
            return
        self._later.add(Bookkeeping(fn, what))
        self.flush_later()

    def flush_later(self) -> None:
        """Write the reads' bookkeeping waiting in this process, in one transaction, if the
        write lock can be had without waiting; else leave it waiting (a busy lock) or drop it
        with a log line (a full disk, a read-only or damaged file)."""
        if self.read_only or not self._later.flushing.acquire(blocking=False):
            return
        try:
            if not self._write_lock.acquire(blocking=False):  # this process is writing
                return
            try:
                items = self._later.take()
                if items:
                    self._flush(items)
            finally:
                self._write_lock.release()
        finally:
            self._later.flushing.release()

    def _flush(self, items: list[Bookkeeping]) -> None:
        def run(connection: sa.Connection) -> None:
            for item in items:
                item.fn(connection)

        try:
            self._write_now(run)
        except (sa.exc.DatabaseError, self.dbapi.DatabaseError) as error:
            if self._busy(error):
                log.debug("write lock held: %d read counts wait for the next try", len(items))
                self._later.put_back(items)
                return
            typed = self._typed_error(error)
            if typed is None:
                raise
            log.warning("%s skipped: %s", items[0].what, typed)

    def _write_now(self, fn: Callable[[sa.Connection], None]) -> None:
        """fn in one write transaction if the write lock is free now: SQLite's busy timeout is
        0 for it, so a held lock fails the BEGIN IMMEDIATE at once (SQLITE_BUSY)."""
        with self.engine.connect() as connection:
            raw = connection.connection.dbapi_connection
            raw.execute("PRAGMA busy_timeout=0")
            try:
                with connection.execution_options(memman_write=True).begin():
                    fn(connection)
            finally:
                raw.execute(f"PRAGMA busy_timeout={self._busy_timeout_ms}")
