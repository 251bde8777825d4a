"""Operations on the store as a whole: is it sound (`check`), and a safe copy (`backup`).

Both work on a live store. The check reads through SQLite itself (integrity_check, FTS5's
own integrity-check), so it sees what a crash or a bad disk did, not what memman thinks it
wrote. The backup uses SQLite's online backup API, which copies one consistent snapshot
while other processes keep writing (WAL lets the copy read while they commit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from memman.errors import InvalidInputError, StoreCorruptError
from memman.language.topic import READER_VERSION
from memman.storage.store import Store

# A parked fact that failed this often is not waiting out a blip; someone should look.
STUCK_ATTEMPTS = 3


@dataclass(frozen=True)
class CheckReport:
    integrity: list[str]  # PRAGMA integrity_check lines other than "ok"
    fts_error: str | None  # why the FTS index disagrees with long_term, None if it agrees
    pending: int
    stuck_pending: int  # pending facts that failed at least STUCK_ATTEMPTS times
    orphan_vectors: int = 0  # vectors of no memory, or whose blob does not match their dim
    not_run: dict[str, str] = field(default_factory=dict)  # check -> why the backend needs none
    unreadable: list[str] = field(default_factory=list)  # per table, a row memman cannot read
    # The reader version that last labelled the store's topics, and when it is not this
    # memman's (language/topic.READER_VERSION) the active memories without a topic, which the
    # current reader may read (MemoryManager.relabel). Advice, not a fault: `ok` ignores it.
    reader_version: str = READER_VERSION
    relabel_due: int = 0
    # Memories no audit event names: an import stopped between its memories and their events
    # (importing the same file again copies what is missing).
    without_history: int = 0

    @property
    def ok(self) -> bool:
        return (
            not self.integrity
            and self.fts_error is None
            and self.stuck_pending == 0
            and self.orphan_vectors == 0
            and not self.unreadable
            and self.without_history == 0
        )


def check(store: Store) -> CheckReport:
    """Each check runs on its own, so a damaged file yields a report, not a traceback."""
    damaged = (sa.exc.DatabaseError, StoreCorruptError)
    try:
        with store.read() as conn:
            integrity = store.integrity_problems(conn)
    except damaged as error:  # damaged beyond what the check can walk
        integrity = [_why(error)]
    pending = stuck = 0
    try:
        with store.read() as conn:
            pending, stuck = store.pending_counts(conn, STUCK_ATTEMPTS)
    except damaged as error:
        integrity.append(f"pending facts unreadable: {_why(error)}")
    orphans = without_history = 0
    try:
        with store.read() as conn:
            orphans = store.orphan_vectors(conn)
            without_history = store.memories_without_history(conn)
    except damaged as error:
        integrity.append(f"vectors or events unreadable: {_why(error)}")
    if store.read_only:
        fts_error = store.check_fts_of_snapshot()
    else:
        try:
            store.write(store.check_fts)
            fts_error = None
        except damaged as error:
            fts_error = _why(error)
    unreadable = _unreadable_rows(store, damaged)
    version, due = READER_VERSION, 0
    try:
        with store.read() as conn:
            version = store.reader_version(conn)
            if version != READER_VERSION:
                due = store.count_unlabelled(conn, None)
    except damaged as error:
        integrity.append(f"topics unreadable: {_why(error)}")
    return CheckReport(
        integrity,
        fts_error,
        pending,
        stuck,
        orphans,
        store.checks_not_run(),
        unreadable,
        version,
        due,
        without_history,
    )


def _unreadable_rows(store: Store, damaged: tuple[type[Exception], ...]) -> list[str]:
    """The first row of each table that memman's own reads would fail on (metadata that is
    not JSON, an unknown status: another program edited the file), read as those reads do.
    `check` said ok while every list, search and export of that user failed on it."""
    tables: dict[str, Callable[[sa.Connection], Iterable[object]]] = {
        "memories": lambda conn: store.iter_memories(conn, None, statuses=None),
        "events": lambda conn: store.iter_events(conn, None),
        "parked facts": lambda conn: store.list_pending(conn, None),
    }
    found = []
    for name, rows in tables.items():
        try:
            with store.read() as conn:
                for _ in rows(conn):
                    pass
        except damaged as error:
            found.append(f"{name}: {_why(error)}")
    return found


def _why(error: sa.exc.DatabaseError | StoreCorruptError) -> str:
    """SQLite's own words for what it found, as the report shows them."""
    return error.reason if isinstance(error, StoreCorruptError) else str(error.orig)


def backup(store: Store, target: str | Path) -> Path:
    """Copy the store to a new file at target; refuses to overwrite an existing file."""
    target = Path(target)
    if target.exists():
        raise InvalidInputError(f"{target} already exists; choose a new backup path")
    store.backup_to(target)
    return target
