"""Operations on the store as a whole: is it sound (`check`), and a safe copy (`backup`).

Both work on a live store. The check reads through SQLite itself (integrity_check, FTS5's
own integrity-check), so it sees what a crash or a bad disk did, not what memman thinks it
wrote. The backup uses SQLite's online backup API, which copies one consistent snapshot
while other processes keep writing (WAL lets the copy read while they commit).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from memman.errors import InvalidInputError
from memman.store import Store

# A parked fact that failed this often is not waiting out a blip; someone should look.
STUCK_ATTEMPTS = 3
FTS_CHECK = "INSERT INTO long_term_fts(long_term_fts, rank) VALUES('integrity-check', 1)"
# A vector is orphaned when its memory row is gone (a write that bypassed memman) or its blob
# is not dim float32 values (a torn or foreign write); either would break cosine search.
ORPHAN_VECTORS = """
    SELECT count(*) FROM memory_vectors AS v
    WHERE NOT EXISTS (SELECT 1 FROM long_term WHERE long_term.pk = v.memory_pk)
       OR length(v.vector) != 4 * v.dim
"""


@dataclass(frozen=True)
class CheckReport:
    integrity: list[str]  # PRAGMA integrity_check lines other than "ok"
    fts_error: str | None  # why the FTS index disagrees with long_term, None if it agrees
    pending: int
    stuck_pending: int  # pending facts that failed at least STUCK_ATTEMPTS times
    orphan_vectors: int = 0  # vectors of no memory, or whose blob does not match their dim

    @property
    def ok(self) -> bool:
        return (
            not self.integrity
            and self.fts_error is None
            and self.stuck_pending == 0
            and self.orphan_vectors == 0
        )


def check(store: Store) -> CheckReport:
    """Each check runs on its own, so a damaged file yields a report, not a traceback."""
    try:
        with store.read() as conn:
            integrity = [
                row[0] for row in conn.exec_driver_sql("PRAGMA integrity_check") if row[0] != "ok"
            ]
    except sa.exc.DatabaseError as error:  # damaged beyond what the check can walk
        integrity = [str(error.orig)]
    pending = stuck = 0
    try:
        with store.read() as conn:
            pe = store.pending
            pending, stuck = conn.execute(
                sa.select(
                    sa.func.count(),
                    sa.func.count().filter(pe.c.attempts >= STUCK_ATTEMPTS),
                )
            ).one()
    except sa.exc.DatabaseError as error:
        integrity.append(f"pending facts unreadable: {error.orig}")
    orphans = 0
    try:
        with store.read() as conn:
            orphans = conn.exec_driver_sql(ORPHAN_VECTORS).scalar_one()
    except sa.exc.DatabaseError as error:
        integrity.append(f"vectors unreadable: {error.orig}")
    try:
        # FTS5's integrity-check is written as an INSERT, so it needs a write transaction;
        # it changes nothing.
        store.write(lambda conn: conn.exec_driver_sql(FTS_CHECK))
        fts_error = None
    except sa.exc.DatabaseError as error:
        fts_error = str(error.orig)
    return CheckReport(integrity, fts_error, pending, stuck, orphans)


def backup(store: Store, target: str | Path) -> Path:
    """Copy the store to a new file at target; refuses to overwrite an existing file."""
    target = Path(target)
    if target.exists():
        raise InvalidInputError(f"{target} already exists; choose a new backup path")
    try:
        # The store's own driver: the backup API only copies between connections of one module
        # (pysqlite3 when sqlite-vec is in use).
        copy = store.dbapi.connect(target)
    except store.dbapi.Error as error:
        raise InvalidInputError(f"cannot create backup {target}: {error}") from error
    try:
        with store.read() as conn:
            conn.connection.dbapi_connection.backup(copy)
    finally:
        copy.close()
    return target
