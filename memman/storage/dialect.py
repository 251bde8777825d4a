"""One spelling of the write path's plain SQL for both drivers.

The per-fact statements go to the DBAPI connection directly (store.run_sql: SQLAlchemy's
per-statement overhead was most of the write path's time). They are written once, in
sqlite3's parameter styles (`?`, `?1`, `:name`); for psycopg (PostgreSQL) `to_pyformat`
rewrites them into its `%s` / `%(name)s` style, once per statement text (cached), so the
two backends share the statements instead of keeping two copies that could drift.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

# `?N`, then `?`, then `:name` (not `::type`, a PostgreSQL cast).
_MARK = re.compile(r"\?(\d+)|\?|(?<![:\w]):([A-Za-z_]\w*)")


def is_postgres(conn: sa.Connection) -> bool:
    return conn.dialect.name == "postgresql"


@functools.lru_cache(maxsize=512)
def to_pyformat(sql: str) -> tuple[str, bool]:
    """sql with psycopg's placeholders, and whether it numbers its parameters (`?1`): then
    the parameters are passed by name (p1, p2, ...) so one may be used twice.

    memman's statements hold no string literal with `?` or `:` in it; a literal `%` is
    doubled, as psycopg reads it as a placeholder otherwise.
    """
    numbered = False

    def mark(match: re.Match[str]) -> str:
        nonlocal numbered
        if match[1] is not None:
            numbered = True
            return f"%(p{match[1]})s"
        return "%s" if match[2] is None else f"%({match[2]})s"

    return _MARK.sub(mark, sql.replace("%", "%%")), numbered


def driver_params(sql: str, params: Any) -> tuple[str, Any]:
    """The (statement, parameters) psycopg takes for a statement written for sqlite3."""
    translated, numbered = to_pyformat(sql)
    if numbered and isinstance(params, Sequence) and not isinstance(params, Mapping):
        params = {f"p{i}": value for i, value in enumerate(params, start=1)}
    return translated, params


@contextmanager
def driver_errors(conn: sa.Connection, sql: str, params: Any) -> Iterator[None]:
    """The DBAPI's errors raised in the block wrapped as SQLAlchemy wraps them, for a
    statement run on the driver's connection (run_sql, a streaming vector read)."""
    try:
        yield
    except conn.dialect.loaded_dbapi.Error as error:
        raise wrapped(conn, sql, params, error) from error


def wrapped(conn: sa.Connection, sql: str, params: Any, error: Exception) -> sa.exc.DBAPIError:
    """The DBAPI's error of a statement run on the driver's connection, as SQLAlchemy wraps
    it (driver_errors; run_sql catches it itself: a generator context manager costs ~1 us of
    each of the ~13 statements of a write)."""
    return sa.exc.DBAPIError.instance(sql, params, error, conn.dialect.loaded_dbapi.Error)
