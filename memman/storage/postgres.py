"""PostgreSQL behind the same `Storage` operations as the SQLite store (issue 15).

`PostgresStore` is `memman.storage.store.Store` with the dialect's parts replaced; every other
statement is shared: SQLAlchemy Core and `text()` compile for either dialect, and the write
path's plain SQL is rewritten into psycopg's parameter style (memman/storage/dialect.py).

Transactions. SQLite's BEGIN IMMEDIATE makes write transactions one at a time; here every
write transaction first takes a transaction-level advisory lock for its scope (store.write's
`scope`), so writers of one scope (of any process or app server) queue the same way while
writers of other scopes run beside them, and each of their statements (READ COMMITTED) sees
every write of the scope committed before. That keeps the write path's read-decide-write
sequence race-free without row locks or serialisation retries, and it makes the vector change
log's sequence order, within one scope, its commit order: the in-process vector cache reads
the log per scope (memman/semantic/vectors.py). A write that names no scope (migrations,
erasure, import, deletes by id) locks every scope. Within one process, threads writing one
scope queue on an in-process lock first (so they hold no connection while they wait); threads
of other scopes go on (`_queue`). Reads run at REPEATABLE READ (one snapshot, as
SQLite's deferred transactions) and take no lock. A lock wait longer than busy_timeout_s, a
serialisation failure or a deadlock is retried by the store's busy retry until
busy_patience_s, then StoreBusyError.
"""

from __future__ import annotations

import re
import threading
import weakref
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from memman.errors import (
    ConfigError,
    InvalidInputError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)
from memman.models import Event
from memman.scope import Scope
from memman.storage import pgvector, postgres_schema
from memman.storage.changes import NewVector
from memman.storage.later import Later
from memman.storage.sql import run_sql
from memman.storage.store import GROWING_TABLES, READ_WRITE, Store

# Writers of one process that may hold a connection at once, one per stripe of scopes, and
# those naming no scope: within the engine's pool (5, and 10 more on demand) beside readers.
_STRIPES = 8
# SQLSTATEs worth another attempt: serialization_failure, deadlock_detected, lock_not_available.
_RETRY_STATES = frozenset({"40001", "40P01", "55P03"})
_FULL_STATES = frozenset({"53100"})  # disk_full
_READ_ONLY_STATES = frozenset({"25006"})  # read_only_sql_transaction (a standby, a setting)


# A scoped_match phrase opens with the scope's key ("q12jtea ..."); phrases are quoted.
_KEY = re.compile(r'"(q(\d+)j)')
_PHRASE = re.compile(r'"([^"]*)"')
_SCOPE_OF_KEY = "SELECT user_id, agent_id FROM fts_scopes WHERE id = ?"
# Every table forget_rows deletes from, which scrub vacuums.
_ERASED_TABLES = (
    "vector_log", "memory_vectors", "events", "long_term", "pending", "short_term",
    "message_buffer", "fts_scopes",
)  # fmt: skip
# Store's active_hashes seeks once per hash (SQLite's planner read the scope's whole index for
# an IN list); here each seek is a round trip: one statement, 1.2 against 26.7 ms for 500
# hashes on localhost (RESULTS.md, "PostgreSQL").
_ACTIVE_HASHES = (
    "SELECT content_hash FROM long_term WHERE user_id = ? AND agent_id = ?"
    " AND content_hash = ANY(?) AND status = 'active'"
)


# A write of one scope shares WRITE_LOCK and holds its scope's key alone (the two-key form,
# class SCOPE_LOCK, so the keys cannot meet WRITE_LOCK's); a write of no stated scope
# (migrations, decay, erasure, import) holds WRITE_LOCK alone, so it waits for every scoped
# writer and they for it. The order is always WRITE_LOCK first: no deadlock between the two.
# Two scopes whose keys collide (hashtext is 32 bits) only queue behind each other.
_LOCK_ALL = f"SELECT pg_advisory_xact_lock({postgres_schema.WRITE_LOCK})"
_LOCK_SCOPE = (
    f"SELECT pg_advisory_xact_lock_shared({postgres_schema.WRITE_LOCK}),"
    f" pg_advisory_xact_lock({postgres_schema.SCOPE_LOCK}, hashtext(%s))"
)


def scope_lock_key(scope: Scope) -> str:
    """The text hashed into the scope's lock key (a unit separator between the ids)."""
    return f"{scope.user_id}\x1f{scope.agent_key}"


def _sqlstate(error: Exception) -> str | None:
    return getattr(getattr(error, "orig", error), "sqlstate", None)


# -- lexical candidates: the generated `fts` tsvector, its GIN index, ts_rank_cd ------------
# The terms are retrieval.fts_terms's (stopwords dropped, each term its tokens, letters and
# digits only), so both backends search the same words. Each becomes a quoted lexeme, a
# term of several tokens ("o neill") a phrase (`<->`), and the terms are ORed: user text never
# reaches tsquery syntax, and to_tsquery stems each lexeme as the document side was stemmed.
#
# ts_rank_cd (cover density) rewards terms found close together, which suits short facts;
# normalisation 1 divides by 1 + log(words), so of two memories holding the terms the shorter
# ranks first, as BM25's length normalisation ranks them in SQLite (recall folds a hit into
# a better-ranked one with more words, so the order matters). Negated: lower is better, as
# with FTS5's bm25() (recall.py normalises by the best).
RANK = "ts_rank_cd(fts, q, 1)"
_RANKED_SQL = f"""
    SELECT pk, -{RANK} AS rank
    FROM long_term, to_tsquery('memman_english', :query) AS q
    WHERE user_id = :user_id AND agent_id = :agent_id AND status = 'active' AND fts @@ q
    ORDER BY rank, pk
    LIMIT :limit
    """
# Every row of a scope holding a term, unranked (merge's posting lists).
_POSTINGS_SQL = """
    SELECT pk FROM long_term
    WHERE user_id = :user_id AND agent_id = :agent_id
      AND fts @@ to_tsquery('memman_english', :query)
    """


def tsquery(terms: list[str]) -> str:
    """The tsquery text ORing terms (each of letters, digits and single spaces only)."""
    return " | ".join(
        "(" + " <-> ".join(f"'{token}'" for token in term.split()) + ")" for term in terms
    )


def ranked_by_tsquery(
    conn: sa.Connection, scope: Scope, terms: list[str], k: int
) -> list[tuple[int, float]]:
    """(pk, -ts_rank_cd) of the scope's top-k active memories holding any term, best first.

    The scope, the status and the match are one statement: the planner combines the GIN
    index with the scope index, so another scope's rows are never ranked."""
    if not terms or k < 1:
        return []
    params = {
        "query": tsquery(terms),
        "user_id": scope.user_id,
        "agent_id": scope.agent_key,
        "limit": k,
    }
    return [(pk, rank) for pk, rank in conn.execute(sa.text(_RANKED_SQL), params)]


def postings(conn: sa.Connection, scope: Scope, terms: list[str]) -> list[int]:
    """pks of the scope's memories holding any of the terms (any status)."""
    if not terms:
        return []
    params = {"user_id": scope.user_id, "agent_id": scope.agent_key, "query": tsquery(terms)}
    return [pk for (pk,) in conn.execute(sa.text(_POSTINGS_SQL), params)]


class PostgresStore(Store):
    """One PostgreSQL database (15+) with memman's schema, migrated on open."""

    _hidden = frozenset({"fts"})  # the generated tsvector: the index's, never a record's
    # A REAL[] (p002) counts its values (cardinality: 0 for an empty array).
    _malformed_vector = "cardinality(v.vector) != v.dim"

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_s: float = 5.0,
        busy_patience_s: float = 60.0,
        **_sqlite_only: Any,
    ):
        """`url` is SQLAlchemy's (postgresql+psycopg://user:password@host/db). Of the SQLite
        options, the journal size does not apply and a connection `prepare` (sqlite-vec's
        extension) cannot: ConfigError."""
        if _sqlite_only.get("prepare") is not None:
            raise ConfigError(
                "vector_search 'sqlite-vec' is SQLite's extension; on PostgreSQL use 'numpy'"
            )
        try:
            import psycopg
        except ImportError as error:
            raise StoreError("PostgreSQL needs psycopg: pip install 'memman[postgres]'") from error
        parsed = sa.engine.make_url(url)
        if parsed.drivername in ("postgresql", "postgres"):
            parsed = parsed.set(drivername="postgresql+psycopg")
        self.path = parsed.render_as_string(hide_password=True)  # for messages
        self.busy_patience_s = busy_patience_s
        self.dbapi = psycopg
        self.read_only = False
        self.opened = READ_WRITE
        self.engine = sa.create_engine(
            parsed,
            connect_args={
                "connect_timeout": max(1, int(busy_timeout_s)),
                "options": f"-c lock_timeout={int(busy_timeout_s * 1000)}",
            },
            pool_pre_ping=True,
        )
        # This process's writers queue here first, holding no connection: those of one scope
        # (a stripe) one after another, those naming no scope on _write_lock.
        self._write_lock = threading.RLock()
        self._stripes = [threading.RLock() for _ in range(_STRIPES)]
        self._read_lock = nullcontext()
        self._later = Later()  # reads' counts waiting for a free lock (Store.try_write)
        # The dimensions whose index an open write transaction made (save_vectors).
        self._made: weakref.WeakKeyDictionary[Any, set[int]] = weakref.WeakKeyDictionary()

        @sa.event.listens_for(self.engine, "begin")
        def _on_begin(connection: sa.Connection) -> None:
            options = connection.get_execution_options()
            if not options.get("memman_write", False):
                return
            scope: Scope | None = options.get("memman_scope")
            if scope is None:
                connection.exec_driver_sql(_LOCK_ALL)
            else:
                connection.exec_driver_sql(_LOCK_SCOPE, (scope_lock_key(scope),))

        self._open_schema()

    def _queue(self, scope: Scope | None) -> AbstractContextManager[Any]:
        """Threads writing one scope queue on its stripe before taking a connection (the
        advisory lock would keep all but one waiting on the server, each holding one); other
        scopes' threads go on, as other processes do."""
        if scope is None:
            return self._write_lock
        return self._stripes[zlib.crc32(scope_lock_key(scope).encode()) % _STRIPES]

    def _write_now(self, fn: Callable[[sa.Connection], None]) -> None:
        """fn (reads' counts: single-statement increments, atomic by themselves) in one
        transaction that takes no advisory lock and waits for no row lock another writer
        holds: a held lock fails it (lock_not_available) after a millisecond."""
        with self.engine.connect() as connection, connection.begin():
            connection.exec_driver_sql("SET LOCAL lock_timeout = 1")
            fn(connection)

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        """A REPEATABLE READ snapshot: psycopg puts the level in its BEGIN, no extra round
        trip (writes stay at READ COMMITTED, see the module docstring)."""
        with self.engine.connect() as connection:
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
            with connection.begin():
                yield connection

    def _migrate(self) -> None:
        """Apply due migrations (postgres_schema); an up-to-date database is recognised in a
        read, so opening never queues behind a long write."""
        try:
            with self.read() as conn:
                done = postgres_schema.applied(conn)
            if postgres_schema.due(done, self.path):
                self.write(postgres_schema.apply_pending)
            with self.read() as conn:
                self._pgvector = conn.exec_driver_sql(pgvector.OFFERED_SQL).one()[0]
                self._indexed = pgvector.indexed_dims(conn) if self._pgvector else set()
        except sa.exc.OperationalError as error:  # no server, refused, wrong password
            reason = " ".join(str(getattr(error, "orig", error)).split())
            raise StoreError(f"cannot reach PostgreSQL at {self.path}: {reason}") from error

    def _busy(self, error: Exception) -> bool:
        return _sqlstate(error) in _RETRY_STATES

    def _typed_error(self, error: Exception) -> StoreError | None:
        state = _sqlstate(error)
        if state in _FULL_STATES:
            return StoreFullError(f"the server is out of space, nothing written: {self.path}")
        if state in _READ_ONLY_STATES:
            return StoreReadOnlyError(f"{self.path} is read-only: reads work, writes do not")
        return None

    def sizes(self) -> dict[str, Any]:
        """Bytes of the database, and rows per table (memman stats); no WAL of its own."""
        with self.read() as conn:
            found: dict[str, Any] = {
                "file_bytes": conn.exec_driver_sql(
                    "SELECT pg_database_size(current_database())"
                ).scalar(),
                "wal_bytes": 0,
                "opened": self.opened,
            }
            found["rows"] = {
                table: conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar()
                for table in GROWING_TABLES
            }
        return found

    def vector_storage(self) -> dict[str, str]:
        """Vectors are REAL[] (p002); whether pgvector is installed in the database, or only
        offered by the server (pgvector 0.6 needs a superuser to CREATE EXTENSION vector)."""
        with self.read() as conn:
            installed, available = conn.exec_driver_sql(pgvector.OFFERED_SQL).one()
        found = "installed" if installed else "available, not installed" if available else None
        return {"stored_as": "REAL[]", "pgvector": found or "not available"}

    def server_vector_search(self) -> bool:
        """Whether pgvector is installed in the database (checked when the store opened)."""
        return bool(self._pgvector)

    def save_vectors(self, conn: sa.Connection, vectors: Sequence[NewVector]) -> None:
        """As Store's; with pgvector, the first vector of a dimension this process writes
        makes the dimension's HNSW index unless another transaction made it already
        (memman/storage/pgvector.py). A dimension counts as indexed once a later
        transaction sees the index committed, so a rolled-back one is made again: the
        transaction that made it (`_made`) does not count what it sees of its own."""
        if self._pgvector:
            made = self._made.setdefault(conn.get_transaction(), set())
            for dim in {len(new.vector) for new in vectors} - self._indexed - made:
                name = pgvector.index_name(dim)
                if conn.exec_driver_sql(f"SELECT to_regclass('{name}')").scalar() is not None:
                    self._indexed.add(dim)
                else:
                    pgvector.ensure_index(conn, dim)
                    made.add(dim)
        super().save_vectors(conn, vectors)

    def active_hashes(self, conn: sa.Connection, scope: Scope, hashes: list[str]) -> set[str]:
        """As Store's, in one statement (_ACTIVE_HASHES)."""
        params = (scope.user_id, scope.agent_key, sorted(set(hashes)))
        return {row[0] for row in run_sql(conn, _ACTIVE_HASHES, params).fetchall()}

    def scrub(self) -> bool:
        """VACUUM the tables an erasure deletes from, so the dead rows' space is reclaimed
        for reuse without blocking other sessions. Their bytes stay in the files' free space
        until overwritten, and in the server's WAL archive and backups: VACUUM FULL (an
        exclusive lock on each table while it is rewritten) and expiring those are the
        operator's (docs/postgresql.md). True: nothing of the store's own is left to empty."""

        def attempt() -> bool:
            with self.engine.connect() as connection:
                connection = connection.execution_options(isolation_level="AUTOCOMMIT")
                for table in _ERASED_TABLES:
                    connection.exec_driver_sql(f"VACUUM {table}")
            return True

        return self._with_busy_retry(attempt)

    # -- statements in the dialect's own words ------------------------------------------------

    def _pinned(self) -> sa.ColumnElement[bool]:
        pinned = sa.literal({"pinned": True}, type_=JSONB)  # JSONB serialises the dict
        return sa.cast(self.long_term.c.metadata, JSONB).op("@>")(pinned)

    def copy_event(self, conn: sa.Connection, event: Event, *, keep_id: bool) -> None:
        """As Store's; an event copied with its id moves the id sequence past it."""
        super().copy_event(conn, event, keep_id=keep_id)
        if keep_id:
            run_sql(
                conn,
                "SELECT setval(pg_get_serial_sequence('events', 'id'),"
                " (SELECT max(id) FROM events))",
            )

    def copy_rows(self, conn: sa.Connection, table: str, rows: list[dict[str, Any]]) -> None:
        """As Store's; rows copied with their ids move the table's id sequence past them."""
        super().copy_rows(conn, table, rows)
        last = f"(SELECT max(id) FROM {table})"
        run_sql(conn, f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {last})")

    def lexical_ranked(
        self, conn: sa.Connection, scope: Scope, terms: list[str], k: int
    ) -> list[tuple[int, float]]:
        """As Store's, by -ts_rank_cd over the tsvector column (ranked_by_tsquery)."""
        return ranked_by_tsquery(conn, scope, terms, k)

    def fts_rowids(self, conn: sa.Connection, match: str) -> list[int]:
        """As Store's, for fts.scoped_match's text: its phrases' tokens carry the
        scope's key ('q' id 'j', an fts_scopes id), which names the scope here too."""
        key = _KEY.match(match)
        scope = None if key is None else run_sql(conn, _SCOPE_OF_KEY, (int(key[2]),)).fetchone()
        if key is None or scope is None:
            return []
        terms = [
            " ".join(token.removeprefix(key[1]) for token in phrase.split())
            for phrase in _PHRASE.findall(match)
        ]
        return postings(conn, Scope(scope[0], scope[1] or None), [t for t in terms if t])

    # -- erasure and checks -------------------------------------------------------------------

    def forget_rows(
        self, conn: sa.Connection, user_id: str, agent_key: str | None
    ) -> dict[str, int]:
        """As Store's, and the user's scope numbers go too (fts_scopes holds user ids)."""
        counts = super().forget_rows(conn, user_id, agent_key)
        where, params = "user_id = ?", [user_id]
        if agent_key is not None:
            where, params = where + " AND agent_id = ?", [*params, agent_key]
        run_sql(conn, f"DELETE FROM fts_scopes WHERE {where}", params)
        return counts

    @staticmethod
    def _securely(conn: sa.Connection, deletes: Any) -> dict[str, int]:
        """The deletes; the full-text index is a column of long_term, so it goes with the
        rows (scrub then VACUUMs the tables)."""
        counts: dict[str, int] = {}
        for name, table, condition, params in deletes:
            deleted = run_sql(conn, f"DELETE FROM {table} WHERE {condition}", params).rowcount
            counts[name] = counts.get(name, 0) + deleted
        return counts

    def integrity_problems(self, conn: sa.Connection) -> list[str]:
        """None found: PostgreSQL checks pages as it reads them (amcheck is the deep check)."""
        return []

    def checks_not_run(self) -> dict[str, str]:
        return {
            "integrity": "PostgreSQL checks its own pages as it reads them (amcheck)",
            "fts": "a generated column: cannot drift",
        }

    def check_fts(self, conn: sa.Connection) -> None:
        """Nothing to check: the tsvector is a generated column, it cannot drift."""

    def check_fts_of_snapshot(self) -> str | None:
        return None

    def backup_to(self, target: Path) -> None:
        raise InvalidInputError(
            "memman backup copies SQLite files; back up PostgreSQL with pg_dump, or copy the"
            " memories with memman export"
        )
