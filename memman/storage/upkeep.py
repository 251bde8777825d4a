"""The statements that work on the store as a whole: verified erasure, checks, backups, and
the rows a whole-store copy (memman migrate-db) carries beyond the memories and events.

A mixin of `memman.storage.store.Store` (which supplies `read`, `pending` and `dbapi`): erase.py and
maintenance.py call these methods instead of writing SQL or PRAGMAs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlalchemy as sa

from memman.errors import InvalidInputError, StoreCorruptError, StoreError, StoreFullError
from memman.language.text import content_hash
from memman.scope import Scope
from memman.storage.busy import typed_sqlite_error
from memman.storage.sql import run_sql
from memman.storage.vector_format import decoded

# FTS5 'optimize' merges every segment into one, leaving out deleted documents' terms.
_FTS_OPTIMIZE = "INSERT INTO long_term_fts(long_term_fts) VALUES('optimize')"
# FTS5's integrity-check is written as an INSERT, so it needs a write transaction; it
# changes nothing.
_FTS_CHECK = "INSERT INTO long_term_fts(long_term_fts, rank) VALUES('integrity-check', 1)"
_WITHOUT_HISTORY = (
    "SELECT count(*) FROM long_term WHERE NOT EXISTS"
    " (SELECT 1 FROM events WHERE events.memory_id = long_term.id)"
)
# A vector is orphaned when its memory row is gone (a write that bypassed memman) or it does
# not hold dim float32 values (a torn or foreign write); either would break cosine search.
# What a malformed vector is depends on how the backend stores it (_malformed_vector).
_ORPHAN_VECTORS = """
    SELECT count(*) FROM memory_vectors AS v
    WHERE NOT EXISTS (SELECT 1 FROM long_term WHERE long_term.pk = v.memory_pk)
       OR {malformed}
"""

_EVENT_TEXTS = ("candidate", "content_before", "content_after")
# The texts a memory held: its content, and those of its events.
_HELD_TEXTS = (
    "SELECT content FROM long_term WHERE id = ?",
    *(f"SELECT {c} FROM events WHERE memory_id = ?" for c in _EVENT_TEXTS),
)
_OWNER = "SELECT user_id, agent_id FROM long_term WHERE id = ?"
_UNLINKED_EVENTS = (
    "SELECT id, candidate FROM events"
    " WHERE memory_id IS NULL AND candidate IS NOT NULL AND user_id = ? AND agent_id = ?"
)
_SCOPE_PENDING = "SELECT id, content FROM pending WHERE user_id = ? AND agent_id = ?"

# The tables a whole-store copy carries as rows (by id, as they are): what `memman export`
# leaves out besides the vectors. fts_scopes, vector_log and the FTS index are derived; the
# target's own triggers fill them as the copy writes.
COPIED_TABLES = ("pending", "short_term", "message_buffer")
# Their rows a scope's export writes without include_inactive (transfer.py): every parked
# fact (each still owed a decision), the short-term facts not expired, promoted or deleted, the
# messages not yet extracted.
_LIVE = {
    "pending": "1 = 1",
    "short_term": "status = 'active'",
    "message_buffer": "extracted_at IS NULL",
}
# Every vector with its memory's id (the pk it hangs on differs between two stores).
_VECTORS = """
    SELECT l.id AS memory_id, v.model, v.dim, v.vector
    FROM memory_vectors v JOIN long_term l ON l.pk = v.memory_pk ORDER BY v.memory_pk, v.model
"""
_STREAM_ROWS = 1000  # rows fetched at a time, as store.STREAM_ROWS (a PostgreSQL cursor)


class UpkeepRows:
    """Erasure (secure_delete, FTS optimize), integrity checks and the online backup."""

    pending: sa.Table
    dbapi: ModuleType
    read: Callable[[], AbstractContextManager[sa.Connection]]
    # A vector (v) that is not dim float32s: SQLite stores their bytes.
    _malformed_vector = "length(v.vector) != 4 * v.dim"

    # -- erasure ----------------------------------------------------------------------------

    def forget_rows(
        self, conn: sa.Connection, user_id: str, agent_key: str | None
    ) -> dict[str, int]:
        """Delete every row of the user (of every agent, or only of agent_key's scope) from
        every table, securely (see _securely); returns the rows deleted per table."""
        where, params = "user_id = ?", [user_id]
        if agent_key is not None:
            where, params = where + " AND agent_id = ?", [*params, agent_key]

        def deletes() -> Iterator[tuple[str, str, str, list[str]]]:
            yield "vector_log", "vector_log", where, params
            yield (
                "vectors",
                "memory_vectors",
                f"memory_pk IN (SELECT pk FROM long_term WHERE {where})",
                params,
            )
            for name, table in (
                ("events", "events"),
                ("memories", "long_term"),
                ("pending", "pending"),
                ("short_term", "short_term"),
                ("messages", "message_buffer"),
            ):
                yield name, table, where, params

        return self._securely(conn, deletes())

    def purge_rows(self, conn: sa.Connection, memory_id: str) -> dict[str, int]:
        """Delete one memory with its events, vectors and vector log rows, securely, and the
        scope's rows that hold one of its texts without naming it (_unlinked); the caller has
        checked that the memory is in its scope."""
        pk = "(SELECT pk FROM long_term WHERE id = ?)"
        events, parked = self._unlinked(conn, memory_id)
        deletes = [
            ("vector_log", "vector_log", f"memory_pk = {pk}", [memory_id]),
            ("vectors", "memory_vectors", f"memory_pk = {pk}", [memory_id]),
            ("events", "events", "memory_id = ?", [memory_id]),
            ("events", "events", _ids_in(events), events),
            ("pending", "pending", _ids_in(parked), parked),
            ("memories", "long_term", "id = ?", [memory_id]),
        ]
        return self._securely(conn, iter(deletes))

    @staticmethod
    def _unlinked(conn: sa.Connection, memory_id: str) -> tuple[list[int], list[int]]:
        """Ids of the scope's events that name no memory (the fact parked, before it was
        decided into this one) and of its parked facts, whose text is one the memory held:
        kept, the purged words would stay in the file, and a parked one would come back."""
        held = {
            content_hash(text)
            for statement in _HELD_TEXTS
            for (text,) in run_sql(conn, statement, (memory_id,))
            if text is not None
        }
        owner = tuple(run_sql(conn, _OWNER, (memory_id,)).fetchone())
        events, parked = (
            [row_id for row_id, text in run_sql(conn, sql, owner) if content_hash(text) in held]
            for sql in (_UNLINKED_EVENTS, _SCOPE_PENDING)
        )
        return events, parked

    @staticmethod
    def _securely(
        conn: sa.Connection, deletes: Iterator[tuple[str, str, str, list[str]]]
    ) -> dict[str, int]:
        """Run the (name, table, condition, parameters) deletes with secure_delete on, so
        SQLite zeroes what it frees, then merge the FTS5 index into one segment, which drops
        the deleted documents' terms. Table names and conditions are memman's own."""
        conn.exec_driver_sql("PRAGMA secure_delete = ON")
        counts: dict[str, int] = {}
        for name, table, condition, params in deletes:
            deleted = conn.exec_driver_sql(f"DELETE FROM {table} WHERE {condition}", tuple(params))
            counts[name] = counts.get(name, 0) + deleted.rowcount
        conn.exec_driver_sql(_FTS_OPTIMIZE)
        conn.exec_driver_sql("PRAGMA secure_delete = OFF")  # the pooled connection's usual
        return counts

    # -- checks -----------------------------------------------------------------------------

    def integrity_problems(self, conn: sa.Connection) -> list[str]:
        """PRAGMA integrity_check's lines other than "ok"."""
        return [row[0] for row in conn.exec_driver_sql("PRAGMA integrity_check") if row[0] != "ok"]

    def checks_not_run(self) -> dict[str, str]:
        """None: SQLite's integrity_check and FTS5's integrity-check both run."""
        return {}

    def pending_counts(self, conn: sa.Connection, stuck_attempts: int) -> tuple[int, int]:
        """(parked facts, those that failed at least stuck_attempts times), every scope."""
        pe = self.pending
        total, stuck = conn.execute(
            sa.select(sa.func.count(), sa.func.count().filter(pe.c.attempts >= stuck_attempts))
        ).one()
        return total, stuck

    def memories_without_history(self, conn: sa.Connection) -> int:
        """Memories no audit event names (an import killed between its memories and their
        events left such; every write of memman records one with the change)."""
        return conn.exec_driver_sql(_WITHOUT_HISTORY).scalar_one()

    def orphan_vectors(self, conn: sa.Connection) -> int:
        """Vectors of no memory, or that do not hold dim float32 values."""
        sql = _ORPHAN_VECTORS.format(malformed=self._malformed_vector)
        return conn.exec_driver_sql(sql).scalar_one()

    def check_fts(self, conn: sa.Connection) -> None:
        """FTS5's integrity-check, in a write transaction; raises sa.exc.DatabaseError saying
        how the index disagrees with long_term."""
        conn.exec_driver_sql(_FTS_CHECK)

    def check_fts_of_snapshot(self) -> str | None:
        """FTS5's integrity-check on an in-memory copy of the store, for a store opened
        read-only (the check is written as an INSERT, which a read-only file refuses). The
        copy holds the whole file in memory while the check runs. Returns why the index
        disagrees with long_term, or None when it agrees."""
        copy = self.dbapi.connect(":memory:")
        try:
            with self.read() as conn:
                conn.connection.dbapi_connection.backup(copy)
            copy.execute(_FTS_CHECK)
        except StoreCorruptError as error:  # the copy itself met a damaged page
            return error.reason
        except self.dbapi.DatabaseError as error:
            return str(error)
        finally:
            copy.close()
        return None

    # -- whole-store copy ----------------------------------------------------------------------

    def table_rows(
        self, conn: sa.Connection, table: str, scope: Scope | None = None, *, live: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Every row of one of COPIED_TABLES (only the scope's, if given; only its live ones,
        _LIVE, if `live`), every column, by id, streamed."""
        if table not in COPIED_TABLES:
            raise InvalidInputError(f"{table!r} is not a copied table: {', '.join(COPIED_TABLES)}")
        where, params = _LIVE[table] if live else "1 = 1", {}
        if scope is not None:
            where += " AND user_id = :user_id AND agent_id = :agent_id"
            params = {"user_id": scope.user_id, "agent_id": scope.agent_key}
        rows = conn.execute(
            sa.text(f"SELECT * FROM {table} WHERE {where} ORDER BY id"),
            params,
            execution_options={"yield_per": _STREAM_ROWS},
        )
        for row in rows:
            yield dict(row._mapping)

    def vector_rows(self, conn: sa.Connection) -> Iterator[tuple[str, str, int, bytes]]:
        """(memory id, model, dim, float32 bytes) of every stored vector, streamed."""
        rows = conn.execute(sa.text(_VECTORS), execution_options={"yield_per": _STREAM_ROWS})
        for memory_id, model, dim, vector in rows:  # a BLOB, or PostgreSQL's REAL[]
            yield memory_id, model, dim, decoded(vector).tobytes()

    def copy_rows(self, conn: sa.Connection, table: str, rows: list[dict[str, Any]]) -> None:
        """Insert rows of one of COPIED_TABLES as they are (ids too), inside the caller's
        transaction; the caller makes sure their ids are free (an empty store)."""
        if table not in COPIED_TABLES:
            raise InvalidInputError(f"{table!r} is not a copied table: {', '.join(COPIED_TABLES)}")
        columns = sorted({name for row in rows for name in row})
        known = {column["name"] for column in sa.inspect(conn).get_columns(table)}
        if unknown := sorted(set(columns) - known):
            raise InvalidInputError(f"{table} has no column {', '.join(map(repr, unknown))}")
        insert = sa.table(table, *(sa.column(name) for name in columns)).insert()
        conn.execute(insert, [{name: row.get(name) for name in columns} for row in rows])

    def row_held(self, conn: sa.Connection, table: str, row_id: Any) -> bool:
        """Whether one of COPIED_TABLES holds a row with this id (copy_rows would fail on it:
        a whole-store copy read with `raw` into a store that has such rows)."""
        if table not in COPIED_TABLES:
            raise InvalidInputError(f"{table!r} is not a copied table: {', '.join(COPIED_TABLES)}")
        found = sa.select(sa.column("id")).select_from(sa.table(table))
        return conn.execute(found.where(sa.column("id") == row_id)).first() is not None

    # -- backup -----------------------------------------------------------------------------

    def backup_to(self, target: Path) -> None:
        """Copy one consistent snapshot into a new file at target with SQLite's online backup
        (other processes keep writing); InvalidInputError if the file cannot be created,
        StoreFullError or StoreError naming target if writing it fails (a full disk).

        The copy is written to `.<name>.partial` beside target and renamed when complete, so
        a failed backup leaves no file: a 0-byte target made the retry fail with "already
        exists" (issue 29)."""
        partial = target.with_name(f".{target.name}.partial")
        partial.unlink(missing_ok=True)  # left by a backup killed before it removed it
        try:
            self._backup_into(partial, target)
            if target.exists():  # made meanwhile: never overwritten
                raise InvalidInputError(f"{target} already exists; choose a new backup path")
            os.replace(partial, target)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise

    def _backup_into(self, path: Path, target: Path) -> None:
        """SQLite's online backup into a new file at path; errors name target."""
        try:
            # The store's own driver: the backup API only copies between connections of one
            # module (pysqlite3 when sqlite-vec is in use).
            copy = self.dbapi.connect(path)
        except self.dbapi.Error as error:
            raise InvalidInputError(f"cannot create backup {target}: {error}") from error
        try:
            with self.read() as conn:
                try:
                    conn.connection.dbapi_connection.backup(copy)
                except self.dbapi.Error as error:  # the copy's failure, unless a damaged page
                    typed = typed_sqlite_error(error, self.path)
                    if isinstance(typed, StoreCorruptError):
                        raise typed from error
                    if isinstance(typed, StoreFullError):
                        raise StoreFullError(
                            f"the disk is full, no backup written: {target}"
                        ) from error
                    raise StoreError(f"cannot write backup {target}: {error}") from error
        finally:
            copy.close()


def _ids_in(ids: list[int]) -> str:
    """A condition on the id column, one placeholder per id (none: matches nothing)."""
    return f"id IN ({', '.join('?' * len(ids))})" if ids else "0 = 1"
