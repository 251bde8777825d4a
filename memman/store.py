"""The SQLite store: engine set-up, transactions and the SQL that reads and writes rows.

Every write runs in `BEGIN IMMEDIATE` (the write lock is taken up front, so two writers never
deadlock upgrading a read lock), WAL lets readers proceed while one writer works, and a
locked database is retried at the transaction level with back-off, so "database is locked"
never reaches a caller unless the configured patience runs out (then `StoreBusyError`).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeVar

import sqlalchemy as sa
import sqlite_utils
from sqlalchemy.pool import StaticPool

from memman.config import DEFAULT_CONFIDENCE
from memman.errors import (
    InvalidInputError,
    LeaseLostError,
    NotFoundError,
    StoreBusyError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)
from memman.migrations import migrations
from memman.models import Event, Memory, PendingFact, Status

# Re-exported: importers from before the value types moved to memman/scope.py keep working.
from memman.scope import MAX_SCOPE_ID_CHARS, Scope, check_encodable, check_id  # noqa: F401
from memman.storage.dialect import driver_params, is_postgres
from memman.storage.lifecycle import LifecycleRows
from memman.storage.messages import MessageRows
from memman.storage.upkeep import UpkeepRows
from memman.text import content_hash
from memman.timestamps import stamp

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
# The tables whose rows workers claim before working on them (Store.claim).
LEASED_TABLES = frozenset({"pending", "message_buffer"})
# Rows fetched at a time by the streaming reads (export): a PostgreSQL cursor would otherwise
# fetch the whole result before the first row; sqlite3's streams either way.
STREAM_ROWS = 1000
# SQLite binds at most 32,766 variables per statement (SQLITE_MAX_VARIABLE_NUMBER since 3.32).
PKS_PER_STATEMENT = 30_000


def _scope_where(table: sa.Table, scope: Scope) -> sa.ColumnElement[bool]:
    return sa.and_(table.c.user_id == scope.user_id, table.c.agent_id == scope.agent_key)


def run_sql(conn: sa.Connection, sql: str, params: Any = ()) -> Any:
    """Run one statement on the DBAPI connection under `conn`, inside its transaction.

    For the write path's per-fact statements only. SQLAlchemy spends ~50 us building an
    execution context and a result for each statement, sqlite3 ~2-3 us for these small ones
    (measured side by side); at about ten statements per fact that overhead was the largest
    part of the write path. Errors are wrapped as SQLAlchemy wraps them, so the busy retry and
    StoreError handling see no difference. Returns the DBAPI cursor.
    """
    if is_postgres(conn):
        sql, params = driver_params(sql, params)
    try:
        return conn.connection.driver_connection.execute(sql, params)
    except conn.dialect.loaded_dbapi.Error as error:
        raise sa.exc.DBAPIError.instance(
            sql, params, error, conn.dialect.loaded_dbapi.Error
        ) from error


def new_memory_id() -> str:
    return uuid.uuid4().hex


def _is_busy(error: Exception) -> bool:
    message = str(getattr(error, "orig", error)).lower()
    return "locked" in message or "busy" in message


def _typed(error: Exception, path: str) -> StoreError | None:
    """The typed error for a write SQLite refused for lack of space or of write access."""
    message = str(getattr(error, "orig", error)).lower()
    if "full" in message:  # SQLITE_FULL: disk full, or max_page_count reached
        return StoreFullError(f"the disk or the file's size limit is full, nothing written: {path}")
    if "readonly" in message or "read-only" in message:
        return StoreReadOnlyError(f"{path} is read-only: reads work, writes do not")
    return None


# Every migration memman knows, oldest first: a file that recorded another name was written
# by a newer memman, whose columns this one would not know.
KNOWN_MIGRATIONS = [m.name for m in migrations.pending(sqlite_utils.Database(memory=True))]


def _sqlite_url(path: str, read_only: bool) -> str:
    """SQLAlchemy's URL for a file path or a `file:` URI (read_only adds mode=ro)."""
    if path.startswith("file:"):
        uri = path
    elif read_only:
        uri = f"file:{path}"
    else:
        return f"sqlite:///{path}"
    if read_only and "mode=ro" not in uri and "immutable=1" not in uri:
        uri += ("&" if "?" in uri else "?") + "mode=ro"
    return f"sqlite:///{uri}{'&' if '?' in uri else '?'}uri=true"


class Store(LifecycleRows, MessageRows, UpkeepRows):
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
        extension, e.g. sqlite-vec through pysqlite3 (memman/vectors.py)."""
        self.path = path
        self.busy_patience_s = busy_patience_s
        self.dbapi = dbapi
        self.read_only = False
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
            self.read_only = (
                "mode=ro" in path
                or "immutable=1" in path
                or (os.path.exists(path) and not os.access(path, os.W_OK))
            )
            self.engine = sa.create_engine(
                _sqlite_url(path, self.read_only),
                module=dbapi,
                connect_args={"check_same_thread": False, "timeout": busy_timeout_s},
            )
        # Writers in one process queue here instead of spinning on SQLITE_BUSY; with a single
        # shared in-memory connection, readers must queue too.
        self._write_lock = threading.RLock()
        self._read_lock = self._write_lock if in_memory else nullcontext()
        timeout_ms = int(busy_timeout_s * 1000)
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
            connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

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
            self._by_topic_sql = (
                select_memory + " WHERE user_id = ? AND agent_id = ? AND subject = ?"
                " AND attribute = ? AND status = 'active'"
                " ORDER BY observed_at DESC, pk DESC LIMIT ?"
            )
            replacing = ", ".join(f"long_term.{c}" for c in self._memory_columns)
            self._replacing_sql = (
                f"SELECT {replacing} FROM events JOIN long_term ON long_term.id = events.memory_id"
                " WHERE events.user_id = ? AND events.agent_id = ? AND events.before_hash = ?"
                " AND events.op = 'UPDATE' AND long_term.user_id = ? AND long_term.agent_id = ?"
                " AND long_term.status = 'active' ORDER BY events.id DESC LIMIT 1"
            )
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

        def applied() -> list[str]:
            with self.read() as connection:
                db = sqlite_utils.Database(connection.connection.dbapi_connection)
                return [m.name for m in migrations.applied(db)]

        done = self._with_busy_retry(applied)
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
        self.engine.dispose()

    def sizes(self) -> dict[str, Any]:
        """Bytes of the file and its -wal, and rows per table (memman stats)."""
        file = self.path.removeprefix("file:").split("?")[0]  # a mode=ro URI's file
        files = {"file_bytes": file, "wal_bytes": f"{file}-wal"}
        found: dict[str, Any] = {
            name: os.path.getsize(path) if os.path.exists(path) else 0
            for name, path in files.items()
        }
        with self.read() as conn:
            found["rows"] = {
                table: conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar()
                for table in GROWING_TABLES
            }
        return found

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
        """A consistent snapshot for reads (deferred transaction, never takes the write lock)."""
        with self._read_lock, self.engine.connect() as connection, connection.begin():
            yield connection

    def write(self, fn: Callable[[sa.Connection], T], *, scope: Scope | None = None) -> T:
        """Run fn in one write transaction; all its changes commit together or not at all.

        fn may run more than once if the database is busy, so it must not have side effects
        outside the connection. `scope`: fn writes that scope's rows only, so a backend that
        can lock per scope (PostgreSQL) lets writes of other scopes run beside it; SQLite has
        one writer at a time either way.
        """

        if self.read_only:
            raise StoreReadOnlyError(f"{self.path} is open read-only: reads work, writes do not")

        def attempt() -> T:
            with self._queue(scope), self.engine.connect() as connection:
                connection = connection.execution_options(memman_write=True, memman_scope=scope)
                with connection.begin():
                    return fn(connection)

        return self._with_busy_retry(attempt)

    def _queue(self, scope: Scope | None) -> AbstractContextManager[Any]:
        """The in-process lock a write waits on before taking a connection: one for every
        write, as SQLite has one writer (PostgresStore's is per scope)."""
        return self._write_lock

    def try_write(
        self, fn: Callable[[sa.Connection], T], what: str, *, scope: Scope | None = None
    ) -> T | None:
        """write(fn) for bookkeeping a read does (access counts): on a full disk or a
        read-only store it is skipped with a log line, so the read still answers."""
        try:
            return self.write(fn, scope=scope)
        except (StoreFullError, StoreReadOnlyError) as error:
            log.warning("%s skipped: %s", what, error)
            return None

    def _with_busy_retry(self, attempt: Callable[[], T]) -> T:
        deadline = time.monotonic() + self.busy_patience_s
        delay = 0.01
        while True:
            try:
                return attempt()
            # The driver's own error too: migrations run on the raw connection.
            except (sa.exc.OperationalError, self.dbapi.OperationalError) as error:
                typed = self._typed_error(error)
                if typed is not None:
                    raise typed from error
                if not self._busy(error) or time.monotonic() > deadline:
                    if self._busy(error):
                        raise StoreBusyError(
                            f"database stayed locked for {self.busy_patience_s:.0f}s: {self.path}"
                        ) from error
                    raise
                log.debug("database busy, retrying in %.3fs", delay)
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.5)

    def _busy(self, error: Exception) -> bool:
        """Whether a failed attempt may succeed when tried again (another writer held the lock)."""
        return _is_busy(error)

    def _typed_error(self, error: Exception) -> StoreError | None:
        """memman's error for a write refused for lack of space or of write access."""
        return _typed(error, self.path)

    # -- long-term memories ---------------------------------------------------------------

    def memory_from_row(self, row: sa.Row[Any]) -> Memory:
        return self._memory(row._mapping)

    def _memory_from_values(self, values: tuple) -> Memory:
        """A memory from a run_sql row of the columns in self._memory_columns."""
        return self._memory(dict(zip(self._memory_columns, values, strict=True)))

    @staticmethod
    def _memory(m: Any) -> Memory:
        return Memory(
            id=m["id"],
            user_id=m["user_id"],
            agent_id=m["agent_id"] or None,
            content=m["content"],
            category=m["category"],
            importance=m["importance"],
            confidence=m["confidence"],
            repetition_count=m["repetition_count"],
            access_count=m["access_count"],
            last_accessed_at=m["last_accessed_at"],
            created_at=m["created_at"],
            updated_at=m["updated_at"],
            status=Status(m["status"]),
            sources=json.loads(m["sources"]),
            metadata=json.loads(m["metadata"]),
            subject=m["subject"],
            attribute=m["attribute"],
            observed_at=m["observed_at"],
            decayed_at=m["decayed_at"],
        )

    def active_by_hash(self, conn: sa.Connection, scope: Scope, content_hash: str) -> Memory | None:
        row = run_sql(
            conn, self._active_by_hash_sql, (scope.user_id, scope.agent_key, content_hash)
        ).fetchone()
        return self._memory_from_values(row) if row else None

    def active_hashes(self, conn: sa.Connection, scope: Scope, hashes: list[str]) -> set[str]:
        """Which of these content hashes an active memory of the scope holds (one query)."""
        lt = self.long_term
        found: set[str] = set()
        for start in range(0, len(hashes), 500):  # stay far below SQLite's variable limit
            found.update(
                conn.execute(
                    sa.select(lt.c.content_hash).where(
                        _scope_where(lt, scope),
                        lt.c.content_hash.in_(hashes[start : start + 500]),
                        lt.c.status == Status.ACTIVE.value,
                    )
                ).scalars()
            )
        return found

    def active_by_topic(
        self, conn: sa.Connection, scope: Scope, subject: str, attribute: str, limit: int
    ) -> list[Memory]:
        """The scope's active memories about this subject and attribute, newest observed
        first, the later written first among equal times (the long_term_topic index: one
        seek that stops after limit rows, whatever the store's size)."""
        rows = run_sql(
            conn, self._by_topic_sql, (scope.user_id, scope.agent_key, subject, attribute, limit)
        )
        return [self._memory_from_values(row) for row in rows]

    def active_replacing(
        self, conn: sa.Connection, scope: Scope, content_hash: str
    ) -> Memory | None:
        """The scope's active memory that an UPDATE took a text with this hash out of (the
        latest such UPDATE's), or None: one seek of the events_before_hash index."""
        key = (scope.user_id, scope.agent_key)
        row = run_sql(conn, self._replacing_sql, (*key, content_hash, *key)).fetchone()
        return self._memory_from_values(row) if row else None

    def get(self, conn: sa.Connection, memory_id: str, scope: Scope | None = None) -> Memory:
        """The memory with this id; NotFoundError if there is none or (scope given) it belongs
        to another scope: the same error, so an id never tells whether another user has it."""
        row = run_sql(conn, self._by_id_sql, (memory_id,)).fetchone()
        memory = self._memory_from_values(row) if row else None
        if memory is None or (
            scope is not None and Scope(memory.user_id, memory.agent_id) != scope
        ):
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return memory

    def resolve_id(self, conn: sa.Connection, prefix: str, scope: Scope | None = None) -> str:
        """The one id starting with prefix (of the scope's memories, if given)."""
        lt = self.long_term
        if not isinstance(prefix, str) or len(prefix) < 4 or not prefix.isalnum():
            raise InvalidInputError("give a memory id or at least its first 4 characters")
        query = sa.select(lt.c.id).where(lt.c.id.startswith(prefix))
        if scope is not None:
            query = query.where(_scope_where(lt, scope))
        rows = conn.execute(query.limit(2)).all()
        if not rows:
            raise NotFoundError(f"no memory with id {prefix!r}")
        if len(rows) > 1:
            raise InvalidInputError(f"id prefix {prefix!r} is ambiguous; give more characters")
        return rows[0][0]

    def memories_by_pk(self, conn: sa.Connection, pks: list[int]) -> dict[int, Memory]:
        """Memories by primary key, in statements of at most PKS_PER_STATEMENT variables.

        Usually the retrievers' top k; a search with a huge limit can ask for more keys than
        SQLite binds in one statement (32,766 by default), hence the chunks.
        """
        pk = self._memory_columns.index("pk")
        found = {}
        for start in range(0, len(pks), PKS_PER_STATEMENT):
            chunk = pks[start : start + PKS_PER_STATEMENT]
            sql = self._by_pk_sql.format(", ".join("?" * len(chunk)))
            found.update(
                (row[pk], self._memory_from_values(row)) for row in run_sql(conn, sql, chunk)
            )
        return found

    def list(
        self,
        conn: sa.Connection,
        scope: Scope,
        *,
        statuses: tuple[Status, ...] = (Status.ACTIVE,),
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Memory]:
        query = self._memories_query(scope, statuses).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        return [self.memory_from_row(row) for row in conn.execute(query)]

    def iter_memories(
        self, conn: sa.Connection, scope: Scope | None, *, statuses: tuple[Status, ...]
    ) -> Iterator[Memory]:
        """Memories of one scope (every scope if None), oldest first, streamed from the cursor."""
        query = self._memories_query(scope, statuses)
        for row in conn.execute(query, execution_options={"yield_per": STREAM_ROWS}):
            yield self.memory_from_row(row)

    def core_memories(
        self,
        conn: sa.Connection,
        scope: Scope,
        *,
        categories: list[str],
        attributes: frozenset[str],
        limit: int,
    ) -> list[Memory]:
        """The scope's active memories every context block starts with, at most `limit`.

        Those of `categories` first (safety, constraints), then pinned ones (metadata
        {"pinned": true}), then the user's own facts of `attributes` (subject "user": the
        profile); newest observed first within each. One statement on the scope index
        (user_id, agent_id, status), which reads the scope's active rows, not the table: a
        few ms for 10k of them, about 40 ms for 100k.
        """
        lt = self.long_term
        protected = lt.c.category.in_(categories)
        pinned = self._pinned()
        profile = sa.and_(lt.c.subject == "user", lt.c.attribute.in_(attributes))
        tiers = [(protected, 0), (pinned, 1), (profile, 2)]
        newest = sa.func.coalesce(lt.c.observed_at, lt.c.updated_at)
        query = (
            sa.select(lt)
            .where(
                _scope_where(lt, scope),
                lt.c.status == Status.ACTIVE.value,
                sa.or_(*(condition for condition, _ in tiers)),
            )
            .order_by(sa.case(*tiers), newest.desc(), lt.c.pk.desc())
            .limit(limit)
        )
        return [self.memory_from_row(row) for row in conn.execute(query)]

    def _pinned(self) -> sa.ColumnElement[bool]:
        """Memories whose metadata says {"pinned": true}."""
        return sa.func.json_extract(self.long_term.c.metadata, "$.pinned") == sa.true()

    def _memories_query(self, scope: Scope | None, statuses: tuple[Status, ...]) -> sa.Select:
        lt = self.long_term
        query = sa.select(lt).where(lt.c.status.in_([s.value for s in statuses]))
        if scope is not None:
            query = query.where(_scope_where(lt, scope))
        return query.order_by(lt.c.pk)

    def iter_events(self, conn: sa.Connection, scope: Scope | None) -> Iterator[Event]:
        """Audit events of one scope (every scope if None), oldest first."""
        ev = self.events
        query = sa.select(ev).order_by(ev.c.id)
        if scope is not None:
            query = query.where(_scope_where(ev, scope))
        for row in conn.execute(query, execution_options={"yield_per": STREAM_ROWS}):
            yield _event_from_row(row)

    def count_by_status(self, conn: sa.Connection, scope: Scope | None) -> dict[str, int]:
        lt = self.long_term
        query = sa.select(lt.c.status, sa.func.count()).group_by(lt.c.status)
        if scope is not None:
            query = query.where(_scope_where(lt, scope))
        return {status: n for status, n in conn.execute(query)}

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
        confidence: float = DEFAULT_CONFIDENCE,
        category: str | None = None,
        importance: float = 5.0,
        subject: str | None = None,
        attribute: str | None = None,
        observed_at: str | None = None,
        memory_id: str | None = None,
    ) -> str:
        """Insert one new active memory (insert_memories with one row) and return its id."""
        row = memory_row(
            memory_id=memory_id or new_memory_id(),
            content=content,
            content_hash=content_hash,
            now=now,
            source=source,
            metadata=metadata,
            confidence=confidence,
            category=category,
            importance=importance,
            subject=subject,
            attribute=attribute,
            observed_at=observed_at,
        )
        self.insert_memories(conn, scope, [row])
        return row["id"]

    def insert_memories(
        self, conn: sa.Connection, scope: Scope, rows: list[dict[str, Any]]
    ) -> None:
        """Insert memory_row()s of one scope with one executemany (the FTS and vector-log
        triggers fire per row as for a single insert)."""
        _insert_many(conn, "long_term", scope, rows)

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
        """New text for a memory, with what it is about and when it was stated (each kept as
        it was when None)."""
        lt = self.long_term
        conn.execute(
            lt.update()
            .where(lt.c.id == memory.id)
            .values(
                content=content,
                content_hash=content_hash,
                updated_at=now,
                sources=json.dumps(_with_source(memory.sources, source)),
                subject=subject or memory.subject,
                attribute=attribute or memory.attribute,
                observed_at=observed_at or memory.observed_at,
            )
        )

    def set_status(self, conn: sa.Connection, memory_id: str, status: Status, now: str) -> None:
        lt = self.long_term
        conn.execute(
            lt.update().where(lt.c.id == memory_id).values(status=status.value, updated_at=now)
        )

    def reinforce(
        self, conn: sa.Connection, memory: Memory, *, now: str, source: str | None
    ) -> None:
        """A repeated fact makes the existing memory stronger instead of creating a copy."""
        run_sql(
            conn,
            "UPDATE long_term SET repetition_count = repetition_count + 1,"
            " last_accessed_at = ?, sources = ? WHERE id = ?",
            (now, json.dumps(_with_source(memory.sources, source)), memory.id),
        )

    def copy_memory(self, conn: sa.Connection, memory: Memory, content_hash: str) -> None:
        """Insert a memory exactly as given: id, status, counters and stamps (an import)."""
        values = memory.model_dump(exclude={"user_id", "agent_id"})
        values.update(
            status=memory.status.value,
            content_hash=content_hash,
            sources=json.dumps(memory.sources),
            metadata=json.dumps(memory.metadata),
        )
        _insert_returning_id(conn, "long_term", Scope(memory.user_id, memory.agent_id), values)

    def existing_memory_ids(self, conn: sa.Connection, ids: list[str]) -> set[str]:
        """Which of these memory ids the store already holds, in any status."""
        lt = self.long_term
        return set(conn.execute(sa.select(lt.c.id).where(lt.c.id.in_(ids))).scalars())

    def copy_event(self, conn: sa.Connection, event: Event, *, keep_id: bool) -> None:
        """Insert an audit event as given (its id too if keep_id: an import into a new store).
        Never folded into the memory's previous event, as insert_event folds a repeated NOOP:
        the copy keeps the source's rows and repeat counts."""
        dropped = {"user_id", "agent_id"} if keep_id else {"user_id", "agent_id", "id"}
        values = event.model_dump(exclude=dropped)
        values.update(
            op=event.op.value,
            tier=event.tier.value,
            scores=json.dumps(values.get("scores") or {}),
            before_hash=_before_hash(values),
        )
        _insert_returning_id(conn, "events", Scope(event.user_id, event.agent_id), values)

    # -- audit events -----------------------------------------------------------------------

    def insert_event(self, conn: sa.Connection, scope: Scope, **values: Any) -> int:
        """Record an audit event and return its id.

        A NOOP that repeats the memory's previous event (same candidate, tier and reason) is
        folded into that row (repeat_count, last_at) instead: a fact said 50,000 times is one
        row, its first time in created_at and its last in last_at; the memory's `sources`
        keeps where the repeats came from.
        """
        values["scores"] = json.dumps(values.get("scores") or {})
        values["before_hash"] = _before_hash(values)
        if values.get("op") == "NOOP" and values.get("memory_id"):
            previous = run_sql(
                conn,
                "SELECT id, op, candidate, tier, reason FROM events WHERE memory_id = ?"
                " ORDER BY id DESC LIMIT 1",
                (values["memory_id"],),
            ).fetchone()
            same = ("NOOP", values.get("candidate"), values.get("tier"), values.get("reason"))
            if previous is not None and tuple(previous[1:]) == same:
                run_sql(
                    conn,
                    "UPDATE events SET repeat_count = repeat_count + 1, last_at = ? WHERE id = ?",
                    (values.get("created_at"), previous[0]),
                )
                return int(previous[0])
        return _insert_returning_id(conn, "events", scope, values)

    def insert_events(
        self, conn: sa.Connection, scope: Scope, rows: list[dict[str, Any]]
    ) -> list[int]:
        """Record new audit events of one scope (never folded: for ADDs) with one executemany;
        their ids in order. Inside the write transaction nobody else inserts events of the scope
        (its lock; on PostgreSQL other scopes may), and ids only grow, so they are the scope's
        ids after the largest one before."""
        if not rows:
            return []
        (before,) = run_sql(conn, "SELECT coalesce(max(id), 0) FROM events").fetchone()
        _insert_many(
            conn,
            "events",
            scope,
            [
                {
                    **row,
                    "scores": json.dumps(row.get("scores") or {}),
                    "before_hash": _before_hash(row),
                }
                for row in rows
            ],
        )
        ids = run_sql(
            conn,
            "SELECT id FROM events WHERE user_id = ? AND agent_id = ? AND id > ? ORDER BY id",
            (scope.user_id, scope.agent_key, before),
        )
        return [int(event_id) for (event_id,) in ids]

    def events_for_memory(self, conn: sa.Connection, memory_id: str) -> list[Event]:
        ev = self.events
        rows = conn.execute(sa.select(ev).where(ev.c.memory_id == memory_id).order_by(ev.c.id))
        return [_event_from_row(row) for row in rows]

    def recent_events(self, conn: sa.Connection, scope: Scope | None, limit: int) -> list[Event]:
        ev = self.events
        query = sa.select(ev).order_by(ev.c.id.desc()).limit(limit)
        if scope is not None:
            query = query.where(_scope_where(ev, scope))
        return [_event_from_row(row) for row in conn.execute(query)]

    def event_counts(self, conn: sa.Connection, scope: Scope | None) -> dict[str, dict[str, int]]:
        ev = self.events
        # A folded NOOP row counts every repeat it stands for.
        # Cast: PostgreSQL sums integers as numeric (Decimal).
        repeats = sa.cast(sa.func.sum(ev.c.repeat_count), sa.Integer)
        query = sa.select(ev.c.op, ev.c.tier, repeats).group_by(ev.c.op, ev.c.tier)
        if scope is not None:
            query = query.where(_scope_where(ev, scope))
        counts: dict[str, dict[str, int]] = {}
        for op, tier, n in conn.execute(query):
            counts.setdefault(op, {})[tier] = n
        return counts

    # -- pending (parked) candidates ------------------------------------------------------------

    def insert_pending(self, conn: sa.Connection, scope: Scope, **values: Any) -> int:
        values["metadata"] = json.dumps(values.get("metadata") or {})
        return _insert_returning_id(conn, "pending", scope, values)

    def list_pending(self, conn: sa.Connection, scope: Scope | None) -> list[PendingFact]:
        pe = self.pending
        query = sa.select(pe).order_by(pe.c.id)
        if scope is not None:
            query = query.where(_scope_where(pe, scope))
        return [
            PendingFact(
                **{
                    **row._mapping,
                    "agent_id": row.agent_id or None,
                    "metadata": json.loads(row.metadata),
                }
            )
            for row in conn.execute(query)
        ]

    def delete_pending(self, conn: sa.Connection, pending_id: int) -> None:
        """Remove a settled parked fact; LeaseLostError (the transaction rolls back) if another
        worker settled it first, so a fact is never applied twice."""
        deleted = conn.execute(self.pending.delete().where(self.pending.c.id == pending_id))
        if deleted.rowcount == 0:
            raise LeaseLostError(f"pending #{pending_id} was settled by another worker")

    # -- leases: which worker works on a parked fact or a buffered message ---------------------

    def claim(self, table: str, ids: list[int], owner: str, now: str, expires: str) -> set[int]:
        """Lease these rows of `table` to `owner` until `expires`, in one short write
        transaction; returns the ids it got. A row leased to another owner until after `now`
        is not taken; a lapsed lease (its worker crashed) is. Buffered messages already
        extracted are not taken either."""
        if table not in LEASED_TABLES:
            raise InvalidInputError(f"no leases on {table!r}")
        if not ids:
            return set()
        extra = " AND extracted_at IS NULL" if table == "message_buffer" else ""

        def take(conn: sa.Connection) -> set[int]:
            got: set[int] = set()
            for start in range(0, len(ids), PKS_PER_STATEMENT):
                chunk = ids[start : start + PKS_PER_STATEMENT]
                marks = ", ".join("?" * len(chunk))
                run_sql(
                    conn,
                    f"UPDATE {table} SET lease_owner = ?, lease_expires = ? WHERE id IN ({marks})"
                    f" AND (lease_owner IS NULL OR lease_owner = ? OR lease_expires <= ?){extra}",
                    [owner, expires, *chunk, owner, now],
                )
                rows = run_sql(
                    conn,
                    f"SELECT id FROM {table} WHERE id IN ({marks}) AND lease_owner = ?",
                    [*chunk, owner],
                )
                got.update(row[0] for row in rows)
            return got

        return self.write(take)

    def release(self, table: str, ids: list[int], owner: str) -> None:
        """Give back the rows of `table` leased to `owner` (a failed try: the next may start)."""
        if table not in LEASED_TABLES:
            raise InvalidInputError(f"no leases on {table!r}")
        if not ids:
            return

        def give(conn: sa.Connection) -> None:
            for start in range(0, len(ids), PKS_PER_STATEMENT):
                chunk = ids[start : start + PKS_PER_STATEMENT]
                marks = ", ".join("?" * len(chunk))
                run_sql(
                    conn,
                    f"UPDATE {table} SET lease_owner = NULL, lease_expires = NULL"
                    f" WHERE id IN ({marks}) AND lease_owner = ?",
                    [*chunk, owner],
                )

        self.write(give)

    def note_pending_failure(
        self, conn: sa.Connection, pending_id: int, error: str, now: str
    ) -> None:
        pe = self.pending
        conn.execute(
            pe.update()
            .where(pe.c.id == pending_id)
            .values(error=error, attempts=pe.c.attempts + 1, updated_at=now)
        )


@dataclass(frozen=True)
class Leases:
    """One worker's claims: Store.claim/release with its owner name and lease length, timed
    by the manager's clock (so a test moves past a crashed worker's lease without waiting)."""

    store: Store
    clock: Callable[[], dt.datetime]
    seconds: float
    owner: str = field(default_factory=lambda: f"{os.getpid()}:{uuid.uuid4().hex}")

    def claim(self, table: str, ids: list[int]) -> set[int]:
        now = self.clock()
        until = now + dt.timedelta(seconds=self.seconds)
        return self.store.claim(table, ids, self.owner, stamp(now), stamp(until))

    def release(self, table: str, ids: list[int]) -> None:
        self.store.release(table, ids, self.owner)


def _insert_returning_id(
    conn: sa.Connection, table: str, scope: Scope, values: dict[str, Any]
) -> int:
    """Insert one row of a scope through run_sql and return its integer primary key.

    The column names come from this module's callers, never from user input; the values are
    parameters.
    """
    row = {"user_id": scope.user_id, "agent_id": scope.agent_key, **values}
    columns = ", ".join(row)
    marks = ", ".join("?" * len(row))
    sql = f"INSERT INTO {table} ({columns}) VALUES ({marks})"
    if is_postgres(conn):  # psycopg has no lastrowid
        key = "pk" if table == "long_term" else "id"
        return int(run_sql(conn, f"{sql} RETURNING {key}", list(row.values())).fetchone()[0])
    return int(run_sql(conn, sql, list(row.values())).lastrowid)


def _insert_many(conn: sa.Connection, table: str, scope: Scope, rows: list[dict[str, Any]]) -> None:
    """Insert rows of a scope, all with the same columns, with one executemany.

    As in _insert_returning_id, column names come from this module's callers only.
    """
    if not rows:
        return
    scoped = [{"user_id": scope.user_id, "agent_id": scope.agent_key, **row} for row in rows]
    columns = ", ".join(scoped[0])
    marks = ", ".join("?" * len(scoped[0]))
    sql = f"INSERT INTO {table} ({columns}) VALUES ({marks})"
    if is_postgres(conn):
        sql, _ = driver_params(sql, ())
    try:
        # A cursor's executemany: psycopg's connection has none.
        conn.connection.driver_connection.cursor().executemany(
            sql, [list(r.values()) for r in scoped]
        )
    except conn.dialect.loaded_dbapi.Error as error:  # wrapped as run_sql wraps it
        raise sa.exc.DBAPIError.instance(
            sql, None, error, conn.dialect.loaded_dbapi.Error
        ) from error


def memory_row(
    *,
    memory_id: str,
    content: str,
    content_hash: str,
    now: str,
    source: str | None,
    metadata: dict[str, Any],
    confidence: float = DEFAULT_CONFIDENCE,
    category: str | None = None,
    importance: float = 5.0,
    subject: str | None = None,
    attribute: str | None = None,
    observed_at: str | None = None,
) -> dict[str, Any]:
    """The long_term values of a new active memory, for Store.insert_memories."""
    return {
        "id": memory_id,
        "category": category,
        "content": content,
        "content_hash": content_hash,
        "importance": importance,
        "confidence": confidence,
        "created_at": now,
        "updated_at": now,
        "sources": json.dumps([source] if source else []),
        "metadata": json.dumps(metadata),
        "subject": subject,
        "attribute": attribute,
        "observed_at": observed_at or now,
    }


# Provenance kept per memory: a fact repeated in every session must not grow its row forever.
MAX_SOURCES = 50


def _with_source(sources: list[str], source: str | None) -> list[str]:
    """Append a source, keeping the first (where the fact came from) and the latest ones."""
    if not source:
        return list(sources)
    kept = [*sources, source]
    return kept if len(kept) <= MAX_SOURCES else [kept[0], *kept[-(MAX_SOURCES - 1) :]]


def _before_hash(event: dict[str, Any]) -> str | None:
    """The content hash of the text an event took out of its memory (events.before_hash), so
    a replaced text said again finds the memory that replaced it (active_replacing)."""
    before = event.get("content_before")
    return content_hash(before) if before is not None else None


def _event_from_row(row: sa.Row[Any]) -> Event:
    m = dict(row._mapping)
    m["agent_id"] = m["agent_id"] or None
    m["scores"] = json.loads(m["scores"])
    return Event(**m)
