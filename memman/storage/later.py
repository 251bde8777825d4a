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
from typing import Any

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
