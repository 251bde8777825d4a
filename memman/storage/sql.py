"""Statements as plain DBAPI calls, each naming its scope: the helpers every row module uses.

run_sql skips SQLAlchemy's per-statement overhead for the write path's small statements;
insert_returning_id and insert_many insert a scope's rows (one, or many in one executemany).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa

from memman.scope import Scope
from memman.storage.dialect import driver_params, is_postgres, wrapped

log = logging.getLogger(__name__)

# Rows fetched at a time by the streaming reads (export): a PostgreSQL cursor would otherwise
# fetch the whole result before the first row; sqlite3's streams either way.
STREAM_ROWS = 1000
# SQLite binds at most 32,766 variables per statement (SQLITE_MAX_VARIABLE_NUMBER since 3.32).
PKS_PER_STATEMENT = 30_000


def in_chunks(ids: Sequence[Any]) -> Iterator[tuple[list[Any], str]]:
    """The ids in runs of at most PKS_PER_STATEMENT, each with its placeholders ("?, ?, ?")
    for an `IN (...)` of run_sql."""
    for start in range(0, len(ids), PKS_PER_STATEMENT):
        chunk = list(ids[start : start + PKS_PER_STATEMENT])
        yield chunk, ", ".join("?" * len(chunk))


def scope_where(table: sa.Table, scope: Scope) -> sa.ColumnElement[bool]:
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
        raise wrapped(conn, sql, params, error) from error


def insert_returning_id(
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


def insert_many(conn: sa.Connection, table: str, scope: Scope, rows: list[dict[str, Any]]) -> None:
    """Insert rows of a scope, all with the same columns, with one executemany.

    As in insert_returning_id, column names come from this module's callers only.
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
        raise wrapped(conn, sql, None, error) from error
