"""The SQLite store: engine set-up, migrations on open, transactions and the busy retry.

The statements live in the row mixins it is built from: memories.py (long-term rows),
events.py (audit events and Store.apply), pending.py (parked facts, leases), lifecycle.py,
messages.py, upkeep.py and labels.py; sql.py holds the plain DBAPI helpers they share,
busy.py the busy retry.

Every write runs in `BEGIN IMMEDIATE` (the write lock is taken up front, so two writers never
deadlock upgrading a read lock), WAL lets readers proceed while one writer works, and a
locked database is retried at the transaction level with back-off, so "database is locked"
never reaches a caller unless the configured patience runs out (then `StoreBusyError`).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import ModuleType
from typing import Any, TypeVar

import sqlalchemy as sa
import sqlite_utils
from sqlalchemy.pool import StaticPool

from memman.errors import (
    StoreCorruptError,
    StoreError,
    StoreReadOnlyError,
)

# Re-exported: importers from before the value types moved to memman/scope.py keep working.
from memman.scope import MAX_SCOPE_ID_CHARS, Scope, check_encodable, check_id  # noqa: F401
from memman.storage.busy import BusyRetry, typed_sqlite_error
from memman.storage.events import EventRows
from memman.storage.fts import LexicalRows
from memman.storage.labels import LabelRows
from memman.storage.later import Later, LaterWrites
from memman.storage.lifecycle import LifecycleRows
from memman.storage.memories import MemoryRows
from memman.storage.messages import MessageRows
from memman.storage.migrations import migrations
from memman.storage.pending import PendingRows
from memman.storage.sql import run_sql
from memman.storage.upkeep import UpkeepRows
from memman.storage.vector_rows import VectorRows

log = logging.getLogger(__name__)
T = TypeVar("T")

# The tables that grow with use, counted by memman stats.
GROWING_TABLES = (
    "long_term",
    "events",
    "pending",
    "short_term",
    "message_buffer",
    "memory_vectors",
    "vector_log",
)


# Every migration memman knows, oldest first: a file that recorded another name was written
# by a newer memman, whose columns this one would not know.
KNOWN_MIGRATIONS = [m.name for m in migrations.pending(sqlite_utils.Database(memory=True))]


def _sqlite_url(path: str, read_only: bool, immutable: bool = False) -> str:
    """SQLAlchemy's URL for a file path or a `file:` URI (read_only adds mode=ro, immutable
    immutable=1)."""
    if path.startswith("file:"):
        uri = path
    elif read_only:
        uri = f"file:{path}"
    else:
        return f"sqlite:///{path}"
    if immutable and "immutable=1" not in uri:
        uri += ("&" if "?" in uri else "?") + "immutable=1"
    if read_only and "mode=ro" not in uri and "immutable=1" not in uri:
        uri += ("&" if "?" in uri else "?") + "mode=ro"
    return f"sqlite:///{uri}{'&' if '?' in uri else '?'}uri=true"


# How a SQLite store was opened, as `stats` says it.
READ_WRITE = "read-write"
READ_ONLY = "read-only"
IMMUTABLE = "read-only, immutable (on read-only media: no locks, no -shm)"


def _opening(path: str) -> str:
    """How to open a file path or URI: READ_WRITE; READ_ONLY for a mode=ro URI or a file this
    process cannot write; IMMUTABLE for such a file in a folder it cannot write either, with
    no -wal beside it (a store closed cleanly on read-only media). There SQLite cannot make
    the -shm file a WAL reader needs, and mode=ro alone fails with "unable to open database
    file"; immutable=1 reads the file without it. A -wal left beside it holds writes the file
    lacks: immutable would not read them, so mode=ro is tried (and fails as it did)."""
    if "immutable=1" in path:
        return IMMUTABLE
    if "mode=ro" in path:
        return READ_ONLY
    if not os.path.exists(path) or os.access(path, os.W_OK):
        return READ_WRITE
    folder = os.path.dirname(os.path.abspath(path))
    if not os.access(folder, os.W_OK) and not os.path.exists(f"{path}-wal"):
        return IMMUTABLE
    return READ_ONLY


class Store(
    BusyRetry,
    LaterWrites,
    MemoryRows,
    EventRows,
    VectorRows,
    PendingRows,
    LexicalRows,
    LifecycleRows,
    MessageRows,
    UpkeepRows,
    LabelRows,
):
    """One SQLite file (or ":memory:") with memman's schema, migrated on open.

    The lifecycle stages' statements are in memman/storage/ (mixins), so those stages write
    no SQL (memman/storage/protocol.py lists the operations)."""

    # long_term columns the records never read (a backend's own index columns).
    _hidden: frozenset[str] = frozenset()

    def __init__(
        self,
        path: str,
        *,
        busy_timeout_s: float = 5.0,
        busy_patience_s: float = 60.0,
        journal_size_limit_mb: float = 64.0,
        dbapi: ModuleType = sqlite3,
        prepare: Callable[[Any], None] | None = None,
    ):
        """`dbapi` and `prepare` (run on each new connection) let a vector backend load an
        extension, e.g. sqlite-vec through pysqlite3 (memman/semantic/vectors.py)."""
        self.path = path
        self.busy_patience_s = busy_patience_s
        self.dbapi = dbapi
        self.read_only = False
        self.opened = READ_WRITE
        in_memory = path == ":memory:"
        if in_memory:
            # One shared connection, or every checkout would see a different empty database.
            self.engine = sa.create_engine(
                "sqlite://",
                module=dbapi,
                poolclass=StaticPool,
                connect_args={"check_same_thread": False},
            )
        else:
            # A file this process cannot write (or a mode=ro URI) is served read-only.
            self.opened = _opening(path)
            self.read_only = self.opened != READ_WRITE
            self.engine = sa.create_engine(
                _sqlite_url(path, self.read_only, immutable=self.opened == IMMUTABLE),
                module=dbapi,
                connect_args={"check_same_thread": False, "timeout": busy_timeout_s},
            )
        # Writers in one process queue here instead of spinning on SQLITE_BUSY; with a single
        # shared in-memory connection, readers must queue too.
        self._write_lock = threading.RLock()
        self._read_lock = self._write_lock if in_memory else nullcontext()
        self._later = Later()
        timeout_ms = self._busy_timeout_ms = int(busy_timeout_s * 1000)
        journal_limit = int(journal_size_limit_mb * 1024 * 1024)

        @sa.event.listens_for(self.engine, "connect")
        def _on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
            if prepare is not None:
                prepare(dbapi_connection)
            dbapi_connection.isolation_level = None  # transactions are begun explicitly below
            cursor = dbapi_connection.cursor()
            if not in_memory and not self.read_only:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={timeout_ms}")
            # The WAL shrinks back to this after a checkpoint instead of keeping its peak size
            # (235 MB behind one long-running reader) for good.
            cursor.execute(f"PRAGMA journal_size_limit={journal_limit}")
            cursor.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints; safe with WAL
            cursor.close()

        @sa.event.listens_for(self.engine, "begin")
        def _on_begin(connection: sa.Connection) -> None:
            write = connection.get_execution_options().get("memman_write", False)
            # run_sql, not exec_driver_sql: the same statement and the same wrapped errors
            # for ~10 us less of every transaction (40 -> 30 us for an empty write).
            run_sql(connection, "BEGIN IMMEDIATE" if write else "BEGIN")

        self._open_schema()

    def _open_schema(self) -> None:
        """Migrate, then read the tables and prepare the write path's statements; the engine
        is disposed of if the database cannot be opened as a memman store."""
        try:
            self._migrate()
            metadata = sa.MetaData()
            shown = None
            if self._hidden:
                columns = sa.inspect(self.engine).get_columns("long_term")
                shown = [c["name"] for c in columns if c["name"] not in self._hidden]
            self.long_term = sa.Table(
                "long_term", metadata, autoload_with=self.engine, include_columns=shown
            )
            self.events = sa.Table("events", metadata, autoload_with=self.engine)
            self.pending = sa.Table("pending", metadata, autoload_with=self.engine)
            # The write path's reads of whole memories, as plain SQL for run_sql.
            self._memory_columns = tuple(c.name for c in self.long_term.columns)
            select_memory = f"SELECT {', '.join(self._memory_columns)} FROM long_term"
            self._active_by_hash_sql = (
                select_memory + " WHERE user_id = ? AND agent_id = ? AND content_hash = ?"
                " AND status = 'active' LIMIT 1"
            )
            self._by_pk_sql = select_memory + " WHERE pk IN ({})"
            self._by_id_sql = select_memory + " WHERE id = ?"
            self._unlabelled_sql = (
                select_memory + " WHERE user_id = ? AND agent_id = ? AND attribute IS NULL"
                " AND status = 'active' ORDER BY observed_at DESC, pk DESC LIMIT ?"
            )
            self._by_topic_sql = (
                select_memory + " WHERE user_id = ? AND agent_id = ? AND subject = ?"
                " AND attribute = ? AND status = 'active'"
                " ORDER BY observed_at DESC, pk DESC LIMIT ?"
            )
            # The active memory of the scope's latest event with a hash: one index seek.
            replacing = ", ".join(f"long_term.{c}" for c in self._memory_columns)
            by_event = (
                f"SELECT {replacing} FROM events JOIN long_term ON long_term.id = events.memory_id"
                " WHERE events.user_id = ? AND events.agent_id = ? AND {}"
                " AND long_term.user_id = ? AND long_term.agent_id = ?"
                " AND long_term.status = 'active' ORDER BY events.id DESC LIMIT 1"
            )
            self._replacing_sql = by_event.format("events.before_hash = ? AND events.op = 'UPDATE'")
            self._absorbing_sql = by_event.format("events.absorbed_hash = ?")
        except StoreCorruptError as error:  # not SQLite, or a damaged schema
            self.engine.dispose()
            reason = error.reason
            raise StoreError(f"cannot open {self.path} as a memman store: {reason}") from error
        except StoreError:
            self.engine.dispose()
            raise
        except sa.exc.DatabaseError as error:  # not SQLite, unreadable schema, no such folder
            self.engine.dispose()
            reason = getattr(error, "orig", None) or error
            raise StoreError(f"cannot open {self.path} as a memman store: {reason}") from error

    def _migrate(self) -> None:
        """Apply pending migrations, all of them in one write transaction.

        Which are due is read first, in a read transaction: an up-to-date file opens without
        the write lock, so opening never waits for another process's long write. A file
        that recorded a migration this memman does not know is refused (a newer memman wrote
        it). The outer BEGIN IMMEDIATE makes two processes opening a new file queue instead of
        both creating the tables; sqlite-utils nests each migration in a savepoint inside it. A
        crash midway leaves the file at the previous schema, never half-migrated.
        """

        def applied() -> tuple[list[str], list[str]]:
            with self.read() as connection:
                db = sqlite_utils.Database(connection.connection.dbapi_connection)
                return [m.name for m in migrations.applied(db)], db.table_names()

        done, tables = self._with_busy_retry(applied)
        if not done and (foreign := [t for t in tables if t != "_sqlite_migrations"]):
            raise StoreError(  # a mistaken --db: never add memman's tables to another database
                f"{self.path} holds another application's tables ({', '.join(foreign[:5])}),"
                " not a memman store: give memman a new or empty file"
            )
        newer = [name for name in done if name not in KNOWN_MIGRATIONS]
        if newer:
            raise StoreError(
                f"{self.path} was written by a newer memman (schema {newer[-1]}); this memman"
                f" knows schemas up to {KNOWN_MIGRATIONS[-1]}: upgrade memman to open it"
            )
        if len(done) == len(KNOWN_MIGRATIONS):
            return
        if self.read_only:
            raise StoreReadOnlyError(
                f"{self.path} is read-only and at an older schema ({done[-1] if done else 'none'})"
                f" than this memman's ({KNOWN_MIGRATIONS[-1]}): open a writable copy once"
            )

        def attempt() -> None:
            with self._write_lock, self.engine.connect() as connection:
                raw = connection.connection.dbapi_connection
                raw.execute("BEGIN IMMEDIATE")
                try:
                    migrations.apply(sqlite_utils.Database(raw))
                except BaseException:
                    raw.execute("ROLLBACK")
                    raise
                raw.execute("COMMIT")

        self._with_busy_retry(attempt)

    def close(self) -> None:
        self.flush_later()  # one last try, without waiting
        self.engine.dispose()

    def sizes(self) -> dict[str, Any]:
        """Bytes of the file and its -wal, and rows per table (memman stats)."""
        file = self.path.removeprefix("file:").split("?")[0]  # a mode=ro URI's file
        files = {"file_bytes": file, "wal_bytes": f"{file}-wal"}
        found: dict[str, Any] = {
            name: os.path.getsize(path) if os.path.exists(path) else 0
            for name, path in files.items()
        }
        found["opened"] = self.opened
        with self.read() as conn:
            found["rows"] = {
                table: conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar()
                for table in GROWING_TABLES
            }
        return found

    def vector_storage(self) -> dict[str, str]:
        """Vectors are float32 bytes; sqlite-vec, if chosen, is a connection's (vector_search)."""
        return {"stored_as": "float32 BLOB"}

    def server_vector_search(self) -> bool:
        """SQLite searches no vectors itself (sqlite-vec, if chosen, is a connection's)."""
        return False

    def scrub(self) -> bool:
        """Rewrite the file without free pages and empty the WAL (after a hard purge).

        VACUUM copies only live pages, so the bytes of deleted rows leave the main file; a
        TRUNCATE checkpoint copies the WAL into the file and cuts it to zero bytes, so the old
        page images leave the WAL too. Takes the write lock, with write()'s busy retry.
        Returns False when a reader still held an older snapshot, so the WAL was not emptied.
        """

        def attempt() -> bool:
            with self._write_lock, self.engine.connect() as connection:
                # Outside any transaction: VACUUM cannot run in one.
                run_sql(connection, "PRAGMA secure_delete = ON")
                try:
                    run_sql(connection, "VACUUM")
                    busy = run_sql(connection, "PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                finally:
                    run_sql(connection, "PRAGMA secure_delete = OFF")
                return busy == 0

        return self._with_busy_retry(attempt)

    # -- transactions -------------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        """A consistent snapshot for reads (deferred transaction, never takes the write lock);
        a damaged page raises StoreCorruptError, a failing disk StoreError."""
        try:
            with self._read_lock, self.engine.connect() as connection, connection.begin():
                yield connection
        except (sa.exc.DatabaseError, self.dbapi.DatabaseError) as error:
            typed = typed_sqlite_error(error, self.path)
            if typed is not None:
                raise typed from error
            raise

    def write(self, fn: Callable[[sa.Connection], T], *, scope: Scope | None = None) -> T:
        """Run fn in one write transaction; all its changes commit together or not at all.

        fn may run more than once if the database is busy, so it must not have side effects
        outside the connection. `scope`: fn writes that scope's rows only, so a backend that
        can lock per scope (PostgreSQL) lets writes of other scopes run beside it; SQLite has
        one writer at a time either way. Reads' bookkeeping left waiting (try_write) is tried
        after it, while the lock is likely free.
        """

        if self.read_only:
            raise StoreReadOnlyError(f"{self.path} is open read-only: reads work, writes do not")

        def attempt() -> T:
            with self._queue(scope), self.engine.connect() as connection:
                connection = connection.execution_options(memman_write=True, memman_scope=scope)
                with connection.begin():
                    return fn(connection)

        result = self._with_busy_retry(attempt)
        if len(self._later):
            self.flush_later()
        return result

    def _queue(self, scope: Scope | None) -> AbstractContextManager[Any]:
        """The in-process lock a write waits on before taking a connection: one for every
        write, as SQLite has one writer (PostgresStore's is per scope)."""
        return self._write_lock
