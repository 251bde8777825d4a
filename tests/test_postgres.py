"""The PostgreSQL test scaffolding: the fixture's URL reaches a server, or the test skips
saying why (memman itself has no PostgreSQL backend yet: issue 15)."""

from __future__ import annotations

import sqlalchemy as sa

from tests.postgres import postgres_url, unavailable  # noqa: F401  (postgres_url: a fixture)


def test_the_throwaway_server_takes_writes(postgres_url):  # noqa: F811
    engine = sa.create_engine(postgres_url)
    try:
        with engine.begin() as connection:
            assert int(connection.execute(sa.text("SHOW server_version_num")).scalar()) >= 150000
            connection.execute(sa.text("CREATE TEMP TABLE t (user_id text, content text)"))
            connection.execute(sa.text("INSERT INTO t VALUES ('alice', 'likes tea')"))
            assert connection.execute(sa.text("SELECT content FROM t")).scalar() == "likes tea"
    finally:
        engine.dispose()


def test_no_url_is_a_skip_reason():
    assert "MEMMAN_TEST_PG_URL is not set" in unavailable(None)


def test_an_unreachable_server_is_a_skip_reason():
    # Port 1 on the loopback: nothing listens there, so the connection is refused at once.
    reason = unavailable("postgresql+psycopg://memman:x@127.0.0.1:1/memman_test")
    assert reason.startswith("no PostgreSQL server answers")
