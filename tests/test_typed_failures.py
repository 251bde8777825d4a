"""Typed failures on bad arguments, busy, full, newer, read-only files; reads keep working."""

from __future__ import annotations

import logging
import re
import sqlite3
import threading

import pytest
import sqlalchemy as sa

from memman import MemoryManager, Op
from memman.errors import (
    ConfigError,
    InvalidInputError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)
from memman.storage import busy
from memman.storage.store import KNOWN_MIGRATIONS
from memman.write.decide import OfflineDecider
from tests.mounts import remount_read_only, tmpfs
from tests.test_cli import memman  # noqa: F401  (the CLI runner fixture)
from tests.test_erase import PARK, SeededEmbedder


def test_a_decider_name_is_accepted_and_parks_nothing_by_mistake(tmp_path):
    with MemoryManager(str(tmp_path / "m.db"), decider="offline") as mm:
        assert isinstance(mm.decider, OfflineDecider)
        mm.update_memory("User likes green tea", user_id="u")
        # An ambiguous fact is decided offline, not an AttributeError on a string.
        result = mm.update_memory("User likes green tea with honey", user_id="u")
        assert result.op in {Op.ADD, Op.UPDATE, Op.NOOP}


@pytest.mark.parametrize("decider", ["wizard", 42])
def test_an_unknown_decider_is_refused_at_construction(tmp_path, decider):
    with pytest.raises(ConfigError, match="decider must be"):
        MemoryManager(str(tmp_path / "m.db"), decider=decider)
    assert not (tmp_path / "m.db").exists()


def test_an_up_to_date_store_opens_while_another_process_holds_the_write_lock(tmp_path):
    path = str(tmp_path / "m.db")
    with MemoryManager(path) as mm:
        mm.update_memory("User likes green tea", user_id="u")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write
    try:
        with MemoryManager(path, busy_timeout_s=0.05, busy_patience_s=0.2) as mm:
            assert [m.content for m in mm.list(user_id="u")] == ["User likes green tea"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_due_migration_behind_a_held_write_lock_raises_store_busy(tmp_path):
    path = str(tmp_path / "m.db")
    with MemoryManager(path):
        pass
    with sqlite3.connect(path) as conn:  # as if m019 were not applied yet
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = ?", (KNOWN_MIGRATIONS[-1],))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusyError):
            MemoryManager(path, busy_timeout_s=0.05, busy_patience_s=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_write_behind_a_held_write_lock_raises_store_busy_and_stores_nothing(tmp_path):
    path = str(tmp_path / "m.db")
    with MemoryManager(path, busy_timeout_s=0.05, busy_patience_s=0.2) as mm:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write
        try:
            with pytest.raises(StoreBusyError):
                mm.update_memory("User likes green tea", user_id="u")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert mm.list(user_id="u") == []


class _Retried(logging.Handler):
    """Set when the busy retry logs that it waits to try again."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "Retrying" in record.getMessage():
            self.seen.set()


def test_a_write_behind_a_held_write_lock_goes_through_once_it_is_released(tmp_path):
    """The first attempt fails busy, the retry waits; releasing the lock lets it commit."""
    path = str(tmp_path / "m.db")
    retried = _Retried()
    busy_log = logging.getLogger("memman.storage.busy")
    busy_log.addHandler(retried)
    level = busy_log.level
    busy_log.setLevel(logging.DEBUG)
    try:
        with MemoryManager(path, busy_timeout_s=0.01, busy_patience_s=60) as mm:
            holder = sqlite3.connect(path, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            results = []
            writer = threading.Thread(
                target=lambda: results.append(mm.update_memory("User likes tea", user_id="u"))
            )
            writer.start()
            assert retried.seen.wait(30), "the write never retried"
            holder.execute("ROLLBACK")
            holder.close()
            writer.join(30)
            assert [r.op for r in results] == [Op.ADD]
            assert [m.content for m in mm.list(user_id="u")] == ["User likes tea"]
    finally:
        busy_log.removeHandler(retried)
        busy_log.setLevel(level)


def test_a_file_of_a_newer_schema_is_refused_naming_both_versions(tmp_path):
    path = str(tmp_path / "m.db")
    with MemoryManager(path):
        pass
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at)"
            " VALUES ('memman', 'm099_from_the_future', '2030-01-01')"
        )
    with pytest.raises(StoreError, match=rf"m099_from_the_future.*{KNOWN_MIGRATIONS[-1]}"):
        MemoryManager(path)


def test_a_full_disk_is_a_typed_error_and_search_still_answers(tmp_path):
    path = str(tmp_path / "m.db")
    with MemoryManager(path) as mm:
        mm.update_memory("User likes green tea", user_id="u")
        with mm.store.engine.connect() as conn:  # every pooled connection gets the limit
            pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        mm.store.engine.pool.dispose()

        @sa.event.listens_for(mm.store.engine, "connect")
        def _limit(dbapi_connection, _record):
            dbapi_connection.execute(f"PRAGMA max_page_count={pages}")

        with pytest.raises(StoreFullError, match="full"):
            for n in range(200):
                mm.update_memory(f"User fact number {n} " + "padding words " * 40, user_id="u")
        hits = mm.search("green tea", user_id="u")
        assert [hit.memory.content for hit in hits] == ["User likes green tea"]


def test_a_read_only_store_serves_reads_and_refuses_writes(tmp_path):
    path = tmp_path / "m.db"
    with MemoryManager(str(path)) as mm:
        mm.update_memory("User likes green tea", user_id="u")
    # A mode=ro URI works for root too (root ignores chmod).
    with MemoryManager(f"file:{path}?mode=ro") as mm:
        assert [hit.memory.content for hit in mm.search("green tea", user_id="u")] == [
            "User likes green tea"
        ]
        assert [m.access_count for m in mm.list(user_id="u")] == [0]  # reinforcement skipped
        assert len(list(mm.export(user_id="u"))) == 1
        assert mm.stats()["storage"]["file_bytes"] == path.stat().st_size
        with pytest.raises(StoreReadOnlyError):
            mm.update_memory("User likes coffee", user_id="u")
    with MemoryManager(str(path)) as mm:
        assert [m.content for m in mm.list(user_id="u")] == ["User likes green tea"]


def test_a_store_on_read_only_media_opens_read_only_and_says_so(tmp_path, memman):  # noqa: F811
    """Issue 29: a cleanly closed store (no -wal, no -shm) on a read-only medium failed with
    "unable to open database file": SQLite could not make the -shm file a WAL reader needs.
    A read-only tmpfs stops root too, as a CD or a read-only volume would."""
    with tmpfs(tmp_path / "media") as media:
        path = media / "m.db"
        with MemoryManager(str(path)) as mm:
            mm.update_memory("User likes green tea", user_id="u")
        assert sorted(p.name for p in media.iterdir()) == ["m.db"]  # closed cleanly
        remount_read_only(media)

        with MemoryManager(str(path)) as mm:
            assert mm.store.read_only
            assert mm.stats()["storage"]["opened"].startswith("read-only, immutable")
            hits = mm.search("green tea", user_id="u")
            assert [hit.memory.content for hit in hits] == ["User likes green tea"]
            assert "User likes green tea" in mm.context("green tea", user_id="u").text
            assert len(list(mm.export_jsonl(user_id="u"))) == 1
            with pytest.raises(StoreReadOnlyError):
                mm.update_memory("User likes coffee", user_id="u")
        shown = memman("stats", "--db", str(path))
        assert shown.code == 0 and "read-only, immutable" in shown.out
        refused = memman("add", "User likes coffee", "-u", "u", "--db", str(path))
        assert refused.code == 1 and "read-only" in refused.out + refused.err


def test_a_writable_store_says_it_opened_read_write(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert mm.stats()["storage"]["opened"] == "read-write"


def test_metadata_sqlite_cannot_parse_is_no_damaged_file(tmp_path):
    """A NaN another tool (or an older import) wrote into metadata makes SQLite's JSON
    functions fail with "malformed JSON": SQLITE_ERROR, not a damaged page. The context block
    still answers, and nothing tells the user to restore a backup."""
    path = str(tmp_path / "m.db")
    with MemoryManager(path) as mm:
        mm.update_memory("User likes green tea", user_id="u")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE long_term SET metadata = '{\"pinned\": NaN}'")
    with MemoryManager(path) as mm:
        assert "User likes green tea" in mm.context("green tea", user_id="u").text
        assert mm.check().ok


def _sqlite_error(path: str, *statements: str, uri: bool = False) -> sqlite3.Error:
    """The error SQLite itself raises for the last of the statements."""
    conn = sqlite3.connect(path, uri=uri, timeout=0, isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
    except sqlite3.Error as error:
        return error
    finally:
        conn.close()
    raise AssertionError("no error")


def test_sqlite_errors_are_typed_by_their_code_not_their_words(tmp_path):
    """A message can hold "full", "locked" or "malformed" without meaning it: SQLite's own
    result code says what failed."""
    path = str(tmp_path / "t.db")
    table = "CREATE TABLE IF NOT EXISTS t (a)"
    for words in ("full", "locked", "busy", "readonly"):  # no such column: <words>
        error = _sqlite_error(path, table, f"SELECT {words} FROM t")
        assert busy.typed_sqlite_error(error, path) is None and not busy.is_busy(error)
    malformed_json = _sqlite_error(path, "SELECT json('{')")
    assert busy.typed_sqlite_error(malformed_json, path) is None

    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    assert busy.is_busy(_sqlite_error(path, "BEGIN IMMEDIATE"))
    holder.execute("ROLLBACK")
    holder.close()
    read_only = _sqlite_error(f"file:{path}?mode=ro", "INSERT INTO t VALUES (1)", uri=True)
    assert isinstance(busy.typed_sqlite_error(read_only, path), StoreReadOnlyError)
    full = _sqlite_error(path, "PRAGMA max_page_count = 2", "INSERT INTO t SELECT zeroblob(100000)")
    assert isinstance(busy.typed_sqlite_error(full, path), StoreFullError)
    (tmp_path / "text.db").write_bytes(b"not a database, just text " * 100)
    not_sqlite = _sqlite_error(str(tmp_path / "text.db"), "SELECT * FROM sqlite_master")
    assert isinstance(busy.typed_sqlite_error(not_sqlite, path), StoreCorruptError)


def test_a_disk_error_is_a_store_error_naming_the_file():
    """SQLITE_IOERR_READ (266): SQLite's extended code, whose low byte is SQLITE_IOERR. No
    test can make a disk fail, so the error is made as the driver makes it."""
    error = sqlite3.OperationalError("disk I/O error")
    error.sqlite_errorcode, error.sqlite_errorname = 266, "SQLITE_IOERR_READ"
    typed = busy.typed_sqlite_error(sa.exc.OperationalError("SELECT 1", (), error), "m.db")
    assert type(typed) is StoreError and "m.db" in str(typed)
    assert not busy.is_busy(error)


@pytest.mark.parametrize(
    ("table", "column", "value"),
    [
        ("long_term", "metadata", "not json"),
        ("long_term", "sources", "["),
        ("long_term", "status", "zombie"),
        ("events", "scores", "{"),
        ("pending", "metadata", "not json"),
        ("short_term", "sessions", "s1"),
    ],
)
def test_a_row_edited_outside_memman_is_a_typed_error_naming_it(tmp_path, table, column, value):
    """Another tool wrote a value no memman write stores: every read of the user's memories
    (get, list, search, context, export, history) raised json's or the enum's own error, a
    traceback in the CLI. Now a StoreCorruptError names the row, and other users' reads go on."""
    path = str(tmp_path / "m.db")
    with MemoryManager(path, embedder=SeededEmbedder()) as mm:
        tea = mm.update_memory("User likes green tea", user_id="u").memory_id
        mm.update_memory("User plays chess", user_id="other")
        mm.remember_short_term("User is at the airport", user_id="u", session_id="s1")
        assert mm.update_memory(f"User said {PARK}", user_id="u").op is Op.PENDING
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE user_id = 'u'", (value,))
    reads = {
        "long_term": lambda mm: [mm.get(tea, user_id="u")],
        "events": lambda mm: mm.export_events(user_id="u"),
        "pending": lambda mm: mm.pending(user_id="u"),
        "short_term": lambda mm: mm.short_term(user_id="u"),
    }
    with MemoryManager(path, embedder=SeededEmbedder()) as mm:
        with pytest.raises(StoreCorruptError, match=rf"^{table} row .* {column}"):
            list(reads[table](mm))
        assert [m.content for m in mm.list(user_id="other")] == ["User plays chess"]
        # check finds it too (it said ok while those reads failed), naming the row
        report = mm.check()
        assert not report.ok
        [found] = report.unreadable
        assert re.search(rf": {table} row .* {column}", found), found


@pytest.mark.parametrize(
    "call",
    [
        lambda mm, memory_id: mm.delete(memory_id, user_id="u", reason=5),
        lambda mm, memory_id: mm.delete(memory_id, user_id="u", reason="x" * 5000),
        lambda mm, memory_id: mm.delete(memory_id, user_id="u", reason=None),
        lambda mm, memory_id: mm.backup(None),
        lambda mm, memory_id: mm.backup(5),
        lambda mm, memory_id: mm.migrate_to("other.db"),
    ],
    ids=[
        "reason int",
        "reason 5000 chars",
        "reason None",
        "backup None",
        "backup int",
        "migrate_to str",
    ],
)
def test_an_argument_of_the_wrong_type_is_invalid_input(tmp_path, call):
    # Each raised TypeError, AttributeError or pydantic's ValidationError (a reason is
    # written into the audit trail as given).
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        memory_id = mm.update_memory("User likes tea", user_id="u").memory_id
        with pytest.raises(InvalidInputError):
            call(mm, memory_id)
        assert [m.content for m in mm.list(user_id="u")] == ["User likes tea"]
        assert [e.op for e in mm.history(memory_id, user_id="u")] == [Op.ADD]
