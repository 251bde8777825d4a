"""Which store a `db` setting opens: a PostgreSQL URL, or else a SQLite file."""

from __future__ import annotations

from typing import Any

from memman.storage.store import Store

_POSTGRES_SCHEMES = ("postgresql:", "postgresql+", "postgres:")


def is_postgres_url(db: str) -> bool:
    return db.startswith(_POSTGRES_SCHEMES)


def open_store(db: str, **options: Any) -> Store:
    """The store for a SQLite path (":memory:", a file: URI) or a postgresql:// URL; the
    options are Store's (PostgresStore ignores the SQLite-only ones). PostgreSQL's module is
    imported only for a URL, so SQLite users need no psycopg."""
    if is_postgres_url(db):
        from memman.storage.postgres import PostgresStore

        return PostgresStore(db, **options)
    return Store(db, **options)
