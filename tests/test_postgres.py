"""The PostgreSQL backend's own checks (the behavioural suite runs on it through the `db`
fixtures of tests/postgres.py): its scaffolding, the schema, the query side of full-text
search, and errors; everything else behaves as on SQLite."""

from __future__ import annotations

import re
import sys
import threading

import pytest
import sqlalchemy as sa

from memman import MemoryManager
from memman.errors import ConfigError, StoreBusyError, StoreError
from memman.models import Op
from memman.scope import Scope
from memman.storage import postgres_schema
from memman.storage.postgres_schema import WRITE_LOCK
from tests.postgres import (  # noqa: F401  (fixtures)
    PGVECTOR_URL_VARIABLE,
    db_on_each_backend,
    fresh_database,
    postgres_url,
    unavailable,
)
from tests.test_cli import memman  # noqa: F401  (the CLI runner fixture)

NOWHERE = "postgresql+psycopg://memman:s3cret@127.0.0.1:1/memman_test"


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
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    # Port 1 on the loopback: nothing listens there, so the connection is refused at once.
    reason = unavailable("postgresql+psycopg://memman:x@127.0.0.1:1/memman_test")
    assert reason.startswith("no PostgreSQL server answers")


def test_a_pgvector_url_without_pgvector_is_a_skip_reason(postgres_url):  # noqa: F811
    """This server has no pgvector: as MEMMAN_TEST_PGVECTOR_URL it is refused, saying why."""
    reason = unavailable(postgres_url, PGVECTOR_URL_VARIABLE)
    assert reason is not None and reason.endswith("has no pgvector (CREATE EXTENSION vector)")
    assert "pgvector run" in unavailable(None, PGVECTOR_URL_VARIABLE)


def test_a_missing_server_is_a_one_line_error_without_the_password(memman):  # noqa: F811
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    run = memman("list", "--user", "u", "--db", NOWHERE)
    assert run.code == 1
    assert run.err.startswith("Error: cannot reach PostgreSQL at postgresql+psycopg://memman:***@")
    assert len(run.err.strip().splitlines()) == 1 and "s3cret" not in run.err
    with pytest.raises(StoreError, match="cannot reach PostgreSQL"):
        MemoryManager(NOWHERE)


def test_a_url_without_the_driver_says_which_extra_to_install(memman, monkeypatch):  # noqa: F811
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the postgres extra were missing
    run = memman("list", "--user", "u", "--db", NOWHERE)
    assert run.code == 1
    assert run.err == "Error: PostgreSQL needs psycopg: pip install 'memman[postgres]'\n"
    with pytest.raises(StoreError, match=re.escape("pip install 'memman[postgres]'")):
        MemoryManager(NOWHERE)


@pytest.fixture
def pg(postgres_url):  # noqa: F811
    with fresh_database(postgres_url) as url:
        yield url


HOSTILE = [
    "O'Neill & Sons | !tea <-> :* (coffee)",
    "AND OR NOT NEAR( \\ '' \"",
    "£900 5°C 'single' quotes: a:b  c*d",
    "!!! ??? ...",
    "",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_user_text_never_becomes_tsquery_syntax(pg, text):
    with MemoryManager(pg) as mm:
        mm.update_memory("Mr O'Neill sells tea for £900", user_id="u")
        hits = mm.search(text, user_id="u") if text.strip() else []
        assert all(h.memory.user_id == "u" for h in hits)
        if "O'Neill" in text or "£900" in text:
            assert hits and hits[0].memory.content == "Mr O'Neill sells tea for £900"


def test_the_schema_has_the_scoped_unique_hash_and_the_full_text_index(pg):
    MemoryManager(pg).close()
    engine = sa.create_engine(pg)
    try:
        with engine.connect() as connection:
            query = "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'long_term'"
            indexes = dict(connection.execute(sa.text(query)).all())
            migrations = connection.execute(sa.text("SELECT name FROM memman_migrations")).scalars()
            assert list(migrations) == postgres_schema.KNOWN
    finally:
        engine.dispose()
    assert "(user_id, agent_id, content_hash) WHERE (status = 'active'::text)" in (
        indexes["long_term_active_hash"]
    )
    assert "USING gin (fts)" in indexes["long_term_fts"]


def test_two_app_servers_share_one_database(pg):
    with MemoryManager(pg) as first, MemoryManager(pg) as second:
        first.update_memory("I like tea", user_id="u")
        assert second.update_memory("I like tea", user_id="u").op.value == "NOOP"


def test_the_cli_works_on_a_url_and_never_prints_its_password(memman, pg):  # noqa: F811
    password = sa.engine.make_url(pg).password
    assert memman("add", "User lives in Porto", "--user", "u", "--db", pg).code == 0
    runs = [memman(*command, "--db", pg) for command in (["stats"], ["check"])]
    assert [run.code for run in runs] == [0, 0]
    assert all(password not in run.out + run.err for run in runs)
    assert "rows in long_term" in runs[0].out and "orphan vectors" in runs[1].out
    backup = memman("backup", "copy.db", "--db", pg)
    assert backup.code == 1 and "pg_dump" in backup.err


def test_sqlite_vec_is_refused_on_postgresql(pg):
    pytest.importorskip("sqlite_vec")
    with pytest.raises(ConfigError, match="sqlite-vec"):
        MemoryManager(pg, vector_search="sqlite-vec")


def test_a_writer_waits_for_the_lock_then_fails_typed_while_reads_go_on(pg):
    """Another app server holds the write lock (an open write transaction): reads answer
    (search too counts accesses, a write, as on SQLite), a write waits busy_patience_s and
    raises StoreBusyError, and works once the lock is released."""
    with MemoryManager(pg, busy_timeout_s=0.1, busy_patience_s=0.3) as mm:
        kept = mm.update_memory("User likes green tea", user_id="u")
        holder = sa.create_engine(pg)
        try:
            with holder.connect() as other:
                other.exec_driver_sql(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
                assert [m.id for m in mm.list(user_id="u")] == [kept.memory_id]
                assert mm.get(kept.memory_id, user_id="u").content == "User likes green tea"
                with pytest.raises(StoreBusyError):
                    mm.update_memory("User lives in Porto", user_id="u")
                other.rollback()
        finally:
            holder.dispose()
        assert mm.update_memory("User lives in Porto", user_id="u").op.value == "ADD"


def test_writes_of_other_scopes_go_on_while_one_scope_is_being_written(pg):
    """An app server is inside a write of alice's scope (the transaction held open until
    the test releases it): bob's write completes, alice's waits (then, with no patience left,
    StoreBusyError), and so does a write of every scope; all work once it commits."""
    held, release = threading.Event(), threading.Event()

    def hold(conn: sa.Connection) -> None:
        held.set()
        release.wait()

    def write_alice() -> None:
        try:
            holder.store.write(hold, scope=Scope("alice"))
        finally:
            held.set()  # also when the write failed: the test goes on (and fails) instead

    impatient = {"busy_timeout_s": 0.01, "busy_patience_s": 0.01}
    with MemoryManager(pg) as holder, MemoryManager(pg, **impatient) as other:
        writer = threading.Thread(target=write_alice)
        writer.start()
        try:
            held.wait()
            assert other.update_memory("User likes jazz", user_id="bob").op is Op.ADD
            with pytest.raises(StoreBusyError):
                other.update_memory("User lives in Porto", user_id="alice")
            with pytest.raises(StoreBusyError):
                other.store.write(lambda conn: None)  # names no scope: waits for every scope
        finally:
            release.set()
            writer.join()
        assert other.update_memory("User lives in Porto", user_id="alice").op is Op.ADD


def test_threads_of_one_app_server_write_other_scopes_while_one_is_being_written(pg):
    """One MemoryManager shared by threads (an app server's workers, or the async API's): a
    thread inside a write of alice's scope does not hold up another thread's write of bob's."""
    held, release, done = threading.Event(), threading.Event(), threading.Event()

    def hold(conn: sa.Connection) -> None:
        held.set()
        release.wait()

    def write_alice() -> None:
        try:
            mm.store.write(hold, scope=Scope("alice"))
        finally:
            held.set()

    def write_bob() -> None:
        mm.update_memory("User likes jazz", user_id="bob")
        done.set()

    with MemoryManager(pg) as mm:
        threads = [threading.Thread(target=write_alice), threading.Thread(target=write_bob)]
        threads[0].start()
        try:
            held.wait()
            threads[1].start()
            # An event, not a duration: without per-scope queues it is never set.
            assert done.wait(timeout=600), "bob's write waited for alice's"
        finally:
            release.set()
            for thread in threads:
                thread.join()
        assert [m.content for m in mm.list(user_id="bob")] == ["User likes jazz"]


def test_a_database_of_a_newer_memman_is_refused(pg):
    MemoryManager(pg).close()
    engine = sa.create_engine(pg)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("INSERT INTO memman_migrations (name) VALUES ('p999_x')")
    finally:
        engine.dispose()
    with pytest.raises(StoreError, match="newer memman"):
        MemoryManager(pg)


ACCENTED = [("User loves the café", "cafe"), ("User met Zoe in Sao Paulo", "Zoë São")]


@pytest.mark.parametrize(("stored", "query"), ACCENTED)
def test_accents_do_not_hide_a_memory_on_either_backend(db, stored, query):
    """FTS5 removes diacritics (remove_diacritics 2); PostgreSQL's index does too (unaccent)."""
    with MemoryManager(db) as mm:
        kept = mm.update_memory(stored, user_id="u")
        assert [h.id for h in mm.search(query, user_id="u")] == [kept.memory_id]


# SQLite's column types as PostgreSQL's migrations spell them; the vectors are p002's REAL[].
PG_TYPE = {"INTEGER": "BIGINT", "REAL": "DOUBLE PRECISION", "TEXT": "TEXT", "BLOB": "BYTEA"}
PG_ONLY = {"long_term": {"fts"}}  # the generated tsvector (FTS5's table in SQLite)
# p004: PostgreSQL's writers of different scopes commit in any order, so the vector cache reads
# the change log per scope; SQLite's single writer keeps one global order.
PG_ONLY_INDEXES = {"vector_log_scope"}


def _partial(index: dict) -> bool:
    options = index.get("dialect_options", {})
    return options.get("sqlite_where") is not None or options.get("postgresql_where") is not None


def _shape(db: str) -> dict:
    """Per table: (column, type, nullable, default), (index, columns, partial) and its keys (the
    unique constraints' columns, the primary key, the references), with defaults' casts
    dropped ("'active'::text" is "'active'")."""
    engine = sa.create_engine(db if "://" in db else f"sqlite:///{db}")
    try:
        inspector = sa.inspect(engine)
        shape = {}
        for table in inspector.get_table_names():
            if table.startswith(("long_term_fts", "_sqlite", "memman_migrations")):
                continue  # FTS5's own tables; the migration records
            primary = set(inspector.get_pk_constraint(table)["constrained_columns"])
            columns = [
                (
                    c["name"],
                    c["type"].compile(dialect=engine.dialect),
                    c["nullable"] or c["name"] in primary,  # SQLite reports its PKs nullable
                    re.sub(r"::[a-z ]+$", "", c["default"] or "") or None,
                )
                for c in inspector.get_columns(table)
                if c["name"] not in PG_ONLY.get(table, ())
            ]
            indexes = {
                (i["name"], tuple(i["column_names"]), _partial(i))
                for i in inspector.get_indexes(table)
                if "duplicates_constraint" not in i and i["name"] not in PG_ONLY_INDEXES
                and not set(i["column_names"]) & PG_ONLY.get(table, set())
            }
            keys = {tuple(u["column_names"]) for u in inspector.get_unique_constraints(table)}
            keys |= {
                ("primary key", *sorted(primary)),
                *(
                    (
                        "references",
                        *k["constrained_columns"],
                        k["referred_table"],
                        *k["referred_columns"],
                    )
                    for k in inspector.get_foreign_keys(table)
                ),
            }
            shape[table] = (columns, indexes, keys)
        return shape
    finally:
        engine.dispose()


def test_p001_creates_sqlite_tables_in_postgresql_words():
    """p001's tables and indexes are read from SQLite's migrations (as of m023), not written
    again: each table of postgres_schema.P001_TABLES once, before its indexes, with no SQLite
    type or comment left and every rowid alias an identity column. Needs no server."""
    statements = postgres_schema.sqlite_tables_of_p001()
    created = [re.match(r"CREATE (TABLE|(UNIQUE )?INDEX) (\w+)", s) for s in statements]
    tables = [m[3] for m in created if m[1] == "TABLE"]
    assert tables == list(postgres_schema.P001_TABLES)
    made: list[str] = []
    for match, statement in zip(created, statements, strict=True):
        if match[1] == "TABLE":
            made.append(match[3])
        else:  # an index of the table made last
            assert re.search(r" ON (\w+) ", statement)[1] == made[-1], statement
    ddl = "\n".join(s for m, s in zip(created, statements, strict=True) if m[1] == "TABLE")
    assert not re.search(r"\b(INTEGER|REAL|BLOB)\b|--", ddl)
    identities = ddl.count("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    assert identities == len(tables) - 1  # all but memory_vectors (memory, model)
    assert "events_before_hash" in "\n".join(statements)  # m023's index: the chain ran to it


def test_both_backends_have_the_same_tables_columns_and_indexes(tmp_path, pg):
    """p001 takes SQLite's tables as of m023, and every later change is written once per
    backend (SQLite's migrations, postgres_schema.py): this catches a column, index, key or
    reference added to one and not the other, or a type that does not match."""
    MemoryManager(str(tmp_path / "m.db")).close()
    MemoryManager(pg).close()
    sqlite, postgres = _shape(str(tmp_path / "m.db")), _shape(pg)
    expected = {
        table: (
            [
                (name, "REAL[]" if name == "vector" else PG_TYPE[kind], nullable, default)
                for name, kind, nullable, default in columns
            ],
            indexes,
            unique,
        )
        for table, (columns, indexes, unique) in sqlite.items()
    }
    assert postgres == expected
