"""`check` finds what a crash or a bad write did; `backup` copies a live store safely."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest
from typer.testing import CliRunner

from memman import MemoryManager
from memman.cli import app
from memman.errors import InvalidInputError, StoreCorruptError, StoreError, StoreFullError
from memman.storage.maintenance import STUCK_ATTEMPTS
from tests.mounts import tmpfs
from tests.postgres import fresh_database, postgres_url  # noqa: F401 (fixture)
from tests.reliability import (
    audit,
    integrity_problems,
    offline_manager,
    pick_facts,
    write_worker,
)
from tests.test_cli import memman  # noqa: F401 (fixture)

FACTS = ("User likes green tea", "User lives in Berlin", "User has a cat named Miso")


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "m.db")
    with offline_manager(path) as mm:
        for fact in FACTS:
            mm.update_memory(fact, user_id="alice")
    return path


def raw(path: str, sql: str, *params) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, params)
    conn.close()


def test_a_sound_store_checks_ok(db):
    with offline_manager(db) as mm:
        report = mm.check()
    assert report.ok
    assert (report.integrity, report.fts_error, report.pending, report.stuck_pending) == (
        [],
        None,
        0,
        0,
    )
    assert report.orphan_vectors == 0
    run = CliRunner().invoke(app, ["check", "--db", db])
    assert run.exit_code == 0
    assert "fts index" in run.output and "ok" in run.output


def test_an_fts_index_that_disagrees_with_the_table_is_reported(db):
    # An index entry for a row that does not exist: what a write bypassing the triggers leaves.
    raw(db, "INSERT INTO long_term_fts(rowid, content) VALUES (999, 'ghost memory')")
    with offline_manager(db) as mm:
        report = mm.check()
    assert not report.ok
    assert report.fts_error and "malformed" in report.fts_error
    assert CliRunner().invoke(app, ["check", "--db", db]).exit_code == 1


def test_a_read_only_store_is_checked_in_full(db):
    # FTS5's integrity-check is an INSERT, which a read-only file refuses: the check must still
    # run (on a snapshot), sound and damaged alike, and never turn into a write error.
    read_only = f"file:{db}?mode=ro"
    with offline_manager(read_only) as mm:
        assert mm.check().ok
    assert CliRunner().invoke(app, ["check", "--db", read_only]).exit_code == 0
    raw(db, "INSERT INTO long_term_fts(rowid, content) VALUES (999, 'ghost memory')")
    with offline_manager(read_only) as mm:
        report = mm.check()
    assert report.fts_error and "malformed" in report.fts_error
    run = CliRunner().invoke(app, ["check", "--db", read_only])
    assert run.exit_code == 1 and "fts index" in run.output and "read-only" not in run.output


def test_orphan_and_torn_vectors_are_reported(db):
    # A vector for a memory row that does not exist, and one whose blob is not dim floats.
    raw(db, "INSERT INTO memory_vectors VALUES (999, 'm', 2, zeroblob(8))")
    raw(db, "INSERT INTO memory_vectors VALUES (1, 'm', 4, zeroblob(8))")
    with offline_manager(db) as mm:
        report = mm.check()
    assert report.orphan_vectors == 2 and not report.ok
    run = CliRunner().invoke(app, ["check", "--db", db])
    assert run.exit_code == 1 and "orphan vectors" in run.output


def test_damaged_pages_are_reported_not_raised(tmp_path):
    path = str(tmp_path / "damaged.db")
    with offline_manager(path) as mm:
        for user, fact in pick_facts(1, 300):
            mm.update_memory(fact, user_id=user)
    # Closing checkpointed the WAL into the file; overwrite one page past the schema.
    with open(path, "r+b") as damaged:
        damaged.seek(4096 * 3)
        damaged.write(b"\xff" * 4096)
    with offline_manager(path) as mm:
        report = mm.check()
    assert not report.ok
    assert any("malformed" in line for line in report.integrity)
    assert CliRunner().invoke(app, ["check", "--db", path]).exit_code == 1


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda p: p.write_bytes(b"just some notes\n" * 512), id="not-sqlite"),
        pytest.param(lambda p: p.mkdir(), id="a-directory"),
        pytest.param(lambda p: None, id="missing-folder"),
    ],
)
def test_a_file_that_is_not_a_store_is_a_typed_error_and_left_alone(tmp_path, make):
    path = tmp_path / "x.db"
    make(path)
    if not path.exists():
        path = tmp_path / "no-such-folder" / "x.db"
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(StoreError, match="as a memman store"):
        MemoryManager(str(path))
    assert (path.read_bytes() if path.is_file() else None) == before
    run = CliRunner().invoke(app, ["list", "--user", "u", "--db", str(path)])
    assert run.exit_code == 1 and "Traceback" not in run.output


def test_another_applications_database_is_refused_and_left_alone(tmp_path, memman):  # noqa: F811
    # `--db app.db` by mistake: memman must not add its tables to someone else's database.
    path = tmp_path / "app.db"
    raw(str(path), "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    raw(str(path), "INSERT INTO users (name) VALUES ('ana')")
    with pytest.raises(StoreError, match="another application's tables"):
        MemoryManager(str(path))
    run = memman("add", "User likes tea", "--user", "u", "--db", str(path))
    assert run.code == 1 and "users" in run.err
    conn = sqlite3.connect(path)  # its schema and rows as they were (the journal mode is WAL)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["users"]
    assert conn.execute("SELECT name FROM users").fetchall() == [("ana",)]
    conn.close()


def test_a_damaged_schema_page_is_a_typed_error(tmp_path):
    path = tmp_path / "damaged-schema.db"
    with offline_manager(str(path)) as mm:
        mm.update_memory("User likes green tea", user_id="alice")
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # page 1 past the header: the schema table
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="as a memman store"):
        MemoryManager(str(path))


def _damage_table(path: str, table: str) -> None:
    """Overwrite the root page of a table (the WAL is checkpointed: the manager is closed)."""
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(path, "r+b") as damaged:
        damaged.seek(size * (root[0] - 1))
        damaged.write(b"\xff" * size)


def test_a_damaged_page_met_by_a_read_or_a_write_is_a_typed_error(tmp_path, memman):  # noqa: F811
    # The file opens (its schema is sound); reading or writing the damaged table must say the
    # store is damaged, as a StoreCorruptError, and the CLI must say it in one line.
    path = str(tmp_path / "damaged.db")
    with offline_manager(path) as mm:
        for user, fact in pick_facts(1, 300):
            mm.update_memory(fact, user_id=user)
    _damage_table(path, "long_term")
    with offline_manager(path) as mm:
        with pytest.raises(StoreCorruptError, match="damaged"):
            mm.list(user_id="alice")
        with pytest.raises(StoreCorruptError, match="damaged"):
            mm.update_memory("User collects stamps", user_id="alice")
        assert not mm.check().ok
    for command in (("list", "--user", "alice"), ("add", "User collects stamps", "--user", "a")):
        run = memman(*command, "--db", path)  # through main(): a traceback fails the fixture
        assert run.code == 1 and "damaged" in run.err and len(run.err.splitlines()) == 1


def test_facts_stuck_in_pending_are_reported(db):
    for attempts in (1, STUCK_ATTEMPTS):
        raw(
            db,
            "INSERT INTO pending (user_id, agent_id, content, metadata, error, attempts,"
            " created_at, updated_at) VALUES ('alice', '', ?, '{}', 'Timeout', ?, 'x', 'x')",
            f"User plays chess ({attempts})",
            attempts,
        )
    with offline_manager(db) as mm:
        report = mm.check()
    assert (report.pending, report.stuck_pending, report.ok) == (2, 1, False)
    run = CliRunner().invoke(app, ["check", "--db", db])
    assert run.exit_code == 1


def test_backup_is_a_complete_sound_copy(db, tmp_path):
    target = tmp_path / "copy.db"
    run = CliRunner().invoke(app, ["backup", str(target), "--db", db])
    assert run.exit_code == 0, run.output
    with offline_manager(str(target)) as copy:
        assert [m.content for m in copy.list(user_id="alice")] == list(FACTS)
        assert copy.check().ok


def test_backup_refuses_to_overwrite(db, tmp_path):
    target = tmp_path / "copy.db"
    target.write_text("precious")
    with offline_manager(db) as mm, pytest.raises(InvalidInputError, match="already exists"):
        mm.backup(target)
    assert target.read_text() == "precious"


def test_a_backup_onto_a_full_disk_leaves_no_file_and_names_the_backup(db, tmp_path, memman):  # noqa: F811
    """Issue 29: a backup that failed on a full disk left a 0-byte file (the retry then failed
    with "already exists") and its message named the store. A 64 KB tmpfs is the full disk:
    the store is larger."""
    with tmpfs(tmp_path / "small", size="64k") as small:
        target = small / "copy.db"
        with offline_manager(db) as mm, pytest.raises(StoreFullError) as failed:
            mm.backup(target)
        assert str(target) in str(failed.value) and db not in str(failed.value)
        assert list(small.iterdir()) == []  # neither the copy nor its temporary file
        run = memman("backup", str(target), "--db", db)
        assert run.code == 1 and str(target) in run.out + run.err
        assert list(small.iterdir()) == []
    # Retried where there is room, the same name works.
    with offline_manager(db) as mm:
        copy = mm.backup(tmp_path / "copy.db")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".copy", "copy"))) == [
        "copy.db"
    ]
    with offline_manager(str(copy)) as restored:
        assert [m.content for m in restored.list(user_id="alice")] == list(FACTS)


def test_backup_of_an_in_memory_store(tmp_path):
    with offline_manager(":memory:") as mm:
        mm.update_memory("User likes green tea", user_id="alice")
        mm.backup(tmp_path / "copy.db")
    with offline_manager(str(tmp_path / "copy.db")) as copy:
        assert [m.content for m in copy.list(user_id="alice")] == ["User likes green tea"]


@pytest.mark.slow
def test_backups_taken_while_processes_write_are_consistent(tmp_path):
    path = str(tmp_path / "busy.db")
    offline_manager(path).close()  # create and migrate before the writers start
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        writing = pool.starmap_async(write_worker, [(path, seed, 150) for seed in range(4)])
        copies = []
        with offline_manager(path) as mm:
            while not writing.ready():
                copies.append(mm.backup(tmp_path / f"copy-{len(copies)}.db"))
        acks = [ack for worker in writing.get() for ack in worker]
    assert len(copies) >= 2
    for copy in copies:
        assert integrity_problems(str(copy)) == []
        assert audit(str(copy), []).duplicated == 0
    with offline_manager(path) as mm:
        final = mm.backup(tmp_path / "final.db")
    result = audit(str(final), acks)
    assert result.present == result.acknowledged == 600


def test_check_on_postgresql_does_not_claim_sqlite_checks(postgres_url, memman):  # noqa: F811
    # PostgreSQL has no integrity_check or FTS5 index: the report must not say "sqlite
    # integrity: ok" for a check it never ran.
    with fresh_database(postgres_url) as url:
        run = memman("check", "--db", url)
    assert run.code == 0 and "sqlite" not in run.out
    assert "PostgreSQL checks its own pages" in run.out
