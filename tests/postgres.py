"""The PostgreSQL server a test run may have: its URL, or a skip that says why there is none.

`.ci/postgres run pytest ...` starts a throwaway cluster and sets MEMMAN_TEST_PG_URL; a test
module uses the fixture with `from tests.postgres import postgres_url`. Locally, without a
server, those tests skip with the reason instead of failing.

A behavioural module runs on both backends by importing `db_on_each_backend` (its `db` is a
SQLite file, then a fresh PostgreSQL database); `fresh_database` makes one (dropped after),
`direct` opens either kind of store outside memman for a test's own statements.

`pgvector_url` is the same for a server with pgvector installed in every new database
(`.ci/postgres pgvector run pytest ...` sets MEMMAN_TEST_PGVECTOR_URL; .ci/run also sets
MEMMAN_TEST_PGVECTOR_REQUIRED, so there a missing server fails instead of skipping).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa

from memman.storage.backends import is_postgres_url

URL_VARIABLE = "MEMMAN_TEST_PG_URL"
# Set by .ci/run: there the server must be reachable.
REQUIRED_VARIABLE = "MEMMAN_TEST_PG_REQUIRED"
# A server with pgvector installed in every new database (.ci/postgres pgvector run ...), and
# .ci/run's flag that it must be there.
PGVECTOR_URL_VARIABLE = "MEMMAN_TEST_PGVECTOR_URL"
PGVECTOR_REQUIRED_VARIABLE = "MEMMAN_TEST_PGVECTOR_REQUIRED"
# Long enough for a server on a loaded CI machine, short enough that a wrong URL skips quickly.
CONNECT_TIMEOUT_S = 5
_AT_COLLECTION = {
    name: os.environ.get(name)
    for name in (
        URL_VARIABLE,
        REQUIRED_VARIABLE,
        PGVECTOR_URL_VARIABLE,
        PGVECTOR_REQUIRED_VARIABLE,
    )
}
_HAS_PGVECTOR = "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')"


def unavailable(url: str | None, variable: str = URL_VARIABLE) -> str | None:
    """Why the server at url (from `variable`) cannot be used for tests, or None when it
    answers; for PGVECTOR_URL_VARIABLE, also when its database lacks pgvector."""
    if not url:
        how = "pgvector run" if variable == PGVECTOR_URL_VARIABLE else "run"
        return f"{variable} is not set (start a throwaway server: .ci/postgres {how} pytest ...)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'memman[postgres]')"
    engine = sa.create_engine(url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S})
    try:
        with engine.connect() as connection:
            has_pgvector = connection.execute(sa.text(_HAS_PGVECTOR)).scalar()
    except sa.exc.SQLAlchemyError as error:
        reason = " ".join(str(getattr(error, "orig", error)).split())[:200]
        return f"no PostgreSQL server answers at {variable}: {reason}"
    finally:
        engine.dispose()
    if variable == PGVECTOR_URL_VARIABLE and not has_pgvector:
        return f"the database at {variable} has no pgvector (CREATE EXTENSION vector)"
    return None


def _server_url(variable: str, required: str) -> str:
    """The URL in `variable` as it was when the tests were collected (the autouse fixture in
    conftest.py clears every MEMMAN_ variable for each test); a skip with the reason when
    unusable, a failure where `required` is set (CI started a server: a skip there would
    hide a broken backend)."""
    url = _AT_COLLECTION.get(variable)
    reason = unavailable(url, variable)
    if reason is not None and _AT_COLLECTION.get(required):
        pytest.fail(reason)
    if reason is not None:
        pytest.skip(reason)
    assert url is not None
    return url


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The URL of a PostgreSQL database the tests may use, or the test skips."""
    return _server_url(URL_VARIABLE, REQUIRED_VARIABLE)


@pytest.fixture(scope="session")
def pgvector_url() -> str:
    """The URL of a database with pgvector installed (its server installs it in every new
    database, so fresh_database's have it too), or the test skips."""
    return _server_url(PGVECTOR_URL_VARIABLE, PGVECTOR_REQUIRED_VARIABLE)


@contextmanager
def fresh_database(url: str) -> Iterator[str]:
    """The URL of a new, empty database on url's server, dropped afterwards (its
    connections closed by force, so a test that leaked one still cleans up)."""
    name = f"memman_{uuid.uuid4().hex[:16]}"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f"CREATE DATABASE {name}")
        try:
            yield sa.engine.make_url(url).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"], name="db")
def db_on_each_backend(request, tmp_path) -> Iterator[str]:
    """`db` for a module whose tests run on both backends: a fresh SQLite file, then a fresh
    PostgreSQL database (skipped, with the reason, when no server is reachable). A module
    opts in with `from tests.postgres import db_on_each_backend  # noqa: F401`."""
    if request.param == "sqlite":
        yield str(tmp_path / "m.db")
        return
    with fresh_database(request.getfixturevalue("postgres_url")) as url:
        yield url


@contextmanager
def direct(db: str) -> Iterator[sa.Connection]:
    """A connection to the store at db (a SQLite path or a PostgreSQL URL) outside memman,
    for a test that sets up or inspects rows directly; commits at the end."""
    engine = sa.create_engine(db if is_postgres_url(db) else f"sqlite:///{db}")
    try:
        with engine.begin() as connection:
            yield connection
    finally:
        engine.dispose()


def undo_migration(db: str, sqlite_name: str, postgres_name: str, *statements: str) -> None:
    """Make the store at db look as it did before one migration: run `statements` (the
    migration's change undone), then forget the migration's record, so the next open applies
    it again to what the statements left."""
    records, name = (
        ("memman_migrations", postgres_name)
        if is_postgres_url(db)
        else ("_sqlite_migrations", sqlite_name)
    )
    with direct(db) as conn:
        for statement in statements:
            conn.exec_driver_sql(statement)
        conn.exec_driver_sql(f"DELETE FROM {records} WHERE name = '{name}'")
