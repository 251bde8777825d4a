"""The busy retry of every transaction (a mixin of Store and PostgresStore), SQLite's
typed failures, and the typed failure of a row holding what no memman write stores.

A transaction that finds the write lock held by another writer is tried again with jittered
back-off (tenacity) for busy_patience_s, then StoreBusyError; any other failure is raised at
once, typed when memman has a type for it (a full disk, a read-only file, a damaged page).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

import sqlalchemy as sa
import tenacity

from memman.errors import (
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


# SQLite's primary result codes (sqlite3.h) memman types; an error's code is the extended
# one (SQLITE_BUSY_SNAPSHOT is 517), whose low byte is the primary code. Typed by code, not
# by message: "malformed JSON" (SQLITE_ERROR) is no damaged page, and a message can hold
# words such as "full" or "locked" (a column, a JSON path) without meaning either.
_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _NOTADB = 5, 6, 8, 10, 11, 13, 26


def _sqlite_code(error: Exception) -> int | None:
    """The primary result code of a sqlite3 (or pysqlite3) error, also one SQLAlchemy
    wrapped; None for any other error."""
    code = getattr(getattr(error, "orig", error), "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def is_busy(error: Exception) -> bool:
    """Whether SQLite refused because another connection held the lock (SQLITE_BUSY, or
    SQLITE_LOCKED: a table another statement of the connection holds)."""
    return _sqlite_code(error) in (_BUSY, _LOCKED)


def typed_sqlite_error(error: Exception, path: str) -> StoreError | None:
    """The typed error for a write SQLite refused for lack of space or of write access, or a
    read or write that met a damaged page or failed at the disk (the store's open, reads and
    writes all ask here); None for any other failure."""
    reason = str(getattr(error, "orig", error))
    code = _sqlite_code(error)
    if code in (_CORRUPT, _NOTADB):
        return StoreCorruptError(
            f"{path} is damaged ({reason}); `memman check` shows where; restore a backup",
            reason,
        )
    if code == _FULL:  # disk full, or max_page_count reached
        return StoreFullError(f"the disk or the file's size limit is full, nothing written: {path}")
    if code == _READONLY:
        return StoreReadOnlyError(f"{path} is read-only: reads work, writes do not")
    if code == _IOERR:
        return StoreError(
            f"cannot read or write {path} ({reason}): a failing disk, or no regular file"
        )
    return None


def stored(table: str, row_id: Any, column: str, decode: Callable[[str], T], text: str) -> T:
    """decode(text), a column's value as read, or StoreCorruptError naming the row and column
    when it holds what no memman write stores (metadata that is not JSON, an unknown status):
    another program edited the file, and json's or the enum's own error failed every read of
    the user's memories, a traceback in the CLI, without saying which row to mend."""
    try:
        return decode(text)
    except ValueError as error:
        shown = text if len(text) <= 60 else text[:57] + "..."
        reason = f"{table} row {row_id!r}: its {column} {shown!r} is no value memman writes"
        raise StoreCorruptError(
            f"{reason} ({error}); another program edited the store: mend or delete that row",
            reason,
        ) from error


class BusyRetry:
    """_with_busy_retry for a store; a backend says what busy means (_busy) and which
    failures have a type (_typed_error)."""

    path: str
    busy_patience_s: float
    dbapi: ModuleType

    def _with_busy_retry(self, attempt: Callable[[], T]) -> T:
        """attempt(), tried again while another writer holds the lock, with jittered back-off
        (10 ms doubling to 0.5 s) for busy_patience_s, then StoreBusyError; any other
        failure at once, typed when memman has a type for it."""
        failures = (sa.exc.OperationalError, self.dbapi.OperationalError)
        try:
            return self._retry_when_busy(attempt, failures)
        # The driver's own error too: migrations run on the raw connection. DatabaseError, not
        # only OperationalError, to type it: a damaged page is SQLite's DatabaseError (only a
        # busy OperationalError is retried).
        except (sa.exc.DatabaseError, self.dbapi.DatabaseError) as error:
            typed = self._typed_error(error)
            if typed is not None:
                raise typed from error
            if isinstance(error, failures) and self._busy(error):
                raise StoreBusyError(
                    f"database stayed locked for {self.busy_patience_s:.0f}s: {self.path}"
                ) from error
            raise

    def _retry_when_busy(self, attempt: Callable[[], T], failures: tuple[type, ...]) -> T:
        """attempt() once; tenacity's retrying only after it found the lock held, for what is
        left of busy_patience_s. Nearly every transaction needs one attempt, and entering
        tenacity (its call state and actions) cost ~11 us of each, a third of an empty write
        (RESULTS.md, "A single write"). The driver has already waited busy_timeout_s before saying
        the lock is held, so the second attempt comes without tenacity's first back-off (at
        most 20 ms)."""
        started = time.monotonic()
        try:
            return attempt()
        except failures as error:
            left = self.busy_patience_s - (time.monotonic() - started)
            if not self._busy(error) or left <= 0:
                raise
        return self._retrying.copy(stop=tenacity.stop_after_delay(left))(attempt)

    @functools.cached_property
    def _retrying(self) -> tenacity.Retrying:
        """The busy retry, built once per store. Safe to share: tenacity keeps a call's state
        in its own RetryCallState and its bookkeeping per thread, and resets it at every
        attempt."""
        failures = (sa.exc.OperationalError, self.dbapi.OperationalError)
        return tenacity.Retrying(
            retry=tenacity.retry_if_exception(lambda e: isinstance(e, failures) and self._busy(e)),
            stop=tenacity.stop_after_delay(self.busy_patience_s),
            wait=tenacity.wait_random_exponential(multiplier=0.01, max=0.5),
            before_sleep=tenacity.before_sleep_log(log, logging.DEBUG),
            reraise=True,
        )

    def _busy(self, error: Exception) -> bool:
        """Whether a failed attempt may succeed when tried again (another writer held the lock)."""
        return is_busy(error)

    def _typed_error(self, error: Exception) -> StoreError | None:
        """memman's error for a write refused for lack of space or of write access, or a
        damaged page."""
        return typed_sqlite_error(error, self.path)
