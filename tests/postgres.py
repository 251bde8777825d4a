"""The PostgreSQL server a test run may have: its URL, or a skip that says why there is none.

`.ci/postgres run pytest ...` starts a throwaway cluster and sets MEMMAN_TEST_PG_URL; a test
module uses the fixture with `from tests.postgres import postgres_url`. Locally, without a
server, those tests skip with the reason instead of failing.
"""

from __future__ import annotations

import os

import pytest
import sqlalchemy as sa

URL_VARIABLE = "MEMMAN_TEST_PG_URL"
# Set by .ci/run: there the server must be reachable.
REQUIRED_VARIABLE = "MEMMAN_TEST_PG_REQUIRED"
# Long enough for a server on a loaded CI machine, short enough that a wrong URL skips quickly.
CONNECT_TIMEOUT_S = 5


def unavailable(url: str | None) -> str | None:
    """Why the server at url cannot be used for tests, or None when it answers."""
    if not url:
        return f"{URL_VARIABLE} is not set (start a throwaway server: .ci/postgres run pytest ...)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'memman[postgres]')"
    engine = sa.create_engine(url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S})
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.SQLAlchemyError as error:
        reason = " ".join(str(getattr(error, "orig", error)).split())[:200]
        return f"no PostgreSQL server answers at {URL_VARIABLE}: {reason}"
    finally:
        engine.dispose()
    return None


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The URL of a PostgreSQL database the tests may use, or the test skips.

    Session-scoped, so it reads the environment before the autouse fixture in conftest.py
    clears every MEMMAN_ variable for each test."""
    url = os.environ.get(URL_VARIABLE)
    reason = unavailable(url)
    if reason is not None and os.environ.get(REQUIRED_VARIABLE):
        pytest.fail(reason)  # CI started a server: a skip there would hide a broken backend
    if reason is not None:
        pytest.skip(reason)
    assert url is not None
    return url
