"""Which sqlite3 DB-API module a SQLite store connects with, and what runs on each new
connection: the stdlib's as is, or one that loads sqlite-vec (vector_search "sqlite-vec")."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from memman.errors import ConfigError


@dataclass(frozen=True)
class SqliteDriver:
    """The DB-API module for Store(dbapi=...) and its per-connection hook (prepare=...)."""

    dbapi: ModuleType = sqlite3
    prepare: Callable[[Any], None] | None = None


def driver_with_sqlite_vec() -> SqliteDriver:
    """sqlite-vec on the stdlib sqlite3 if it can load extensions, else on pysqlite3.

    Loaded and tried once here, so a missing or broken install is a ConfigError when the
    manager is made, not an error in the middle of a write.
    """
    try:
        import sqlite_vec

        dbapi: ModuleType = sqlite3
        if not hasattr(sqlite3.Connection, "enable_load_extension"):
            import pysqlite3.dbapi2 as dbapi
    except ImportError as error:
        raise ConfigError(
            f"vector_search 'sqlite-vec' needs the vec extra ({error.name} is missing): "
            "pip install 'memman[vec]'"
        ) from None

    def prepare(connection: Any) -> None:
        connection.enable_load_extension(True)
        try:
            sqlite_vec.load(connection)
        finally:
            connection.enable_load_extension(False)

    probe = dbapi.connect(":memory:")
    try:
        prepare(probe)
    except dbapi.Error as error:
        raise ConfigError(f"cannot load sqlite-vec: {error}") from error
    finally:
        probe.close()
    return SqliteDriver(dbapi, prepare)
