"""SQLite's failures as memman's typed errors, read from SQLite's message in one place (the
store's open, reads, writes and busy retry all ask here)."""

from __future__ import annotations

from memman.errors import StoreCorruptError, StoreError, StoreFullError, StoreReadOnlyError


def is_busy(error: Exception) -> bool:
    """Whether another writer held the lock (the attempt may succeed when tried again)."""
    message = str(getattr(error, "orig", error)).lower()
    return "locked" in message or "busy" in message


def typed(error: Exception, path: str) -> StoreError | None:
    """The typed error for a write SQLite refused for lack of space or of write access, or a
    read or write that met a damaged page."""
    reason = str(getattr(error, "orig", error))
    message = reason.lower()
    if "malformed" in message or "not a database" in message:  # SQLITE_CORRUPT, SQLITE_NOTADB
        return StoreCorruptError(
            f"{path} is damaged ({reason}); `memman check` shows where; restore a backup",
            reason,
        )
    if "full" in message:  # SQLITE_FULL: disk full, or max_page_count reached
        return StoreFullError(f"the disk or the file's size limit is full, nothing written: {path}")
    if "readonly" in message or "read-only" in message:
        return StoreReadOnlyError(f"{path} is read-only: reads work, writes do not")
    return None
