"""Lossless export and import: every column and status survives a round trip."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from memman import MemoryManager, Op, Status
from memman.errors import InvalidInputError
from memman.storage import store_copy
from tests.clock import Clock
from tests.postgres import db_on_each_backend, direct, fresh_database, postgres_url  # noqa: F401
from tests.test_cli import memman  # noqa: F401  (the CLI runner fixture)
from tests.test_erase import PARK, SeededEmbedder


@pytest.fixture
def source(tmp_path) -> str:
    """A store with what a real one holds: categories, metadata, an updated and a deleted
    memory, reinforcement, recall counts and two scopes."""
    path = str(tmp_path / "source.db")
    clock = Clock()
    with MemoryManager(path, clock=clock) as mm:
        mm.update_memory(
            "User is allergic to peanuts",
            user_id="alice",
            category="safety",
            importance=9,
            source="chat:1",
            metadata={"origin": "intake"},
        )
        clock.advance(days=1)
        mm.update_memory("User lives in Lisbon", user_id="alice", source="chat:2")
        clock.advance(days=1)
        mm.update_memory("User lives in Porto", user_id="alice", source="chat:3")  # an UPDATE
        dog = mm.update_memory("User has a dog named Rex", user_id="alice")
        mm.delete(dog.memory_id, user_id="alice")
        mm.update_memory("User is allergic to peanuts", user_id="alice", source="chat:4")
        mm.search("peanuts", user_id="alice")  # access counts and last access
        mm.update_memory("User plays chess", user_id="bob", agent_id="coach", importance=3)
    return path


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path) -> Iterator[str]:
    """An empty store to import into: a SQLite file, then a PostgreSQL database (a move
    between backends is an export and an import)."""
    if request.param == "sqlite":
        yield str(tmp_path / "target.db")
        return
    with fresh_database(request.getfixturevalue("postgres_url")) as url:
        yield url


def table_rows(db: str) -> dict[str, list[tuple]]:
    """Every row of the memory and event tables, in key order: the dump to compare (the
    columns both backends have: PostgreSQL's long_term adds its tsvector)."""
    with direct(db) as conn:
        found = {}
        for table in ("long_term", "events"):
            columns = [c["name"] for c in sa.inspect(conn).get_columns(table) if c["name"] != "fts"]
            query = f"SELECT {', '.join(columns)} FROM {table} ORDER BY 1"
            found[table] = [tuple(row) for row in conn.execute(sa.text(query))]
        return found


def test_import_into_an_empty_store_gives_the_same_rows(source, target):
    with MemoryManager(source) as mm:
        lines = list(mm.export_jsonl(include_inactive=True, events=True))
        statuses = {m.content: m.status for m in mm.export(include_inactive=True)}
    assert statuses["User has a dog named Rex"] is Status.DELETED
    with MemoryManager(target) as mm:
        report = mm.import_jsonl(lines)
        again = list(mm.export_jsonl(include_inactive=True, events=True))
    assert (report.copied, report.duplicates, report.bad) == (4, 0, [])
    assert report.events_copied == len(lines) - 4
    assert again == lines
    assert table_rows(target) == table_rows(source)


def test_every_column_is_in_the_export(source):
    with MemoryManager(source) as mm:
        records = [json.loads(line) for line in mm.export_jsonl(include_inactive=True)]
    peanuts = next(r for r in records if r["content"] == "User is allergic to peanuts")
    assert peanuts["kind"] == "memory"
    assert (peanuts["category"], peanuts["importance"]) == ("safety", 9)
    assert peanuts["sources"] == ["chat:1", "chat:4"] and peanuts["repetition_count"] == 2
    assert peanuts["access_count"] == 1 and peanuts["last_accessed_at"]
    assert peanuts["metadata"] == {"origin": "intake"}
    assert (peanuts["subject"], peanuts["observed_at"]) == ("user", peanuts["created_at"])
    assert {"decayed_at", "confidence", "updated_at", "status", "id", "agent_id"} <= set(peanuts)


def test_import_into_a_store_with_memories_skips_duplicates_and_decides_the_rest(source, target):
    with MemoryManager(source) as mm:
        lines = list(mm.export_jsonl(include_inactive=True, events=True))
    with MemoryManager(target) as mm:
        mm.update_memory("User is allergic to peanuts", user_id="alice")
        # Said before the source's Porto (observed on 2026-01-03), so Porto is the newer value.
        mm.update_memory("User lives in Madrid", user_id="alice", observed_at="2025-06-01")
        report = mm.import_jsonl(lines)
        alice = {m.content: m for m in mm.list(user_id="alice", include_inactive=True)}
    assert report.duplicates == 1  # the peanut allergy, same text
    # The deleted dog, still deleted; bob's chess (a scope the store held nothing of) as it was.
    assert report.copied == 2
    assert report.decided == {"UPDATE": 1}  # Porto replaces Madrid
    # Bob's event and the dog's two (a memory copied under its own id keeps its history);
    # the decided memories' events are skipped: the decisions made here are recorded instead.
    assert report.events_copied == 3 and report.events_skipped > 0
    assert report.events_written == 0
    assert alice["User has a dog named Rex"].status is Status.DELETED
    assert alice["User lives in Porto"].status is Status.ACTIVE
    assert "User lives in Madrid" not in alice  # updated in place to Porto

    with MemoryManager(target) as mm:  # the same file twice: everything is already held
        twice = mm.import_jsonl(lines)
    assert (twice.copied, twice.decided, twice.duplicates) == (0, {}, 4)


def test_a_user_moved_into_a_store_serving_others_keeps_ids_and_history(source, target):
    """A scope the store holds nothing of is copied as into an empty store: the memories'
    ids (which other systems may keep) and their audit trail come along."""
    with MemoryManager(source) as mm:
        lines = list(mm.export_jsonl(user_id="alice", include_inactive=True, events=True))
        before = {m.id: m for m in mm.export(user_id="alice", include_inactive=True)}
        trail = [(e.memory_id, e.op, e.reason) for e in mm.export_events(user_id="alice")]
    with MemoryManager(target) as mm:
        mm.update_memory("User likes jazz", user_id="carol")
        report = mm.import_jsonl(lines)
        after = {m.id: m for m in mm.export(user_id="alice", include_inactive=True)}
        moved = [(e.memory_id, e.op, e.reason) for e in mm.export_events(user_id="alice")]
    assert report.decided == {} and report.events_skipped == 0
    assert after == before and moved == trail


def test_raw_import_copies_as_is_into_a_store_with_memories(source, target):
    with MemoryManager(source) as mm:
        lines = list(mm.export_jsonl(include_inactive=True, events=True))
        source_ids = {m.id for m in mm.export(include_inactive=True)}
    with MemoryManager(target) as mm:
        mm.update_memory("User likes jazz", user_id="carol")
        report = mm.import_jsonl(lines, raw=True)
        ids = {m.id for m in mm.export(include_inactive=True)}
        events = list(mm.export_events())
    assert report.copied == 4 and report.decided == {}
    assert source_ids < ids
    assert len(events) == 1 + report.events_copied  # renumbered after carol's own event
    assert [e.id for e in events] == list(range(1, len(events) + 1))


def test_a_bad_line_is_reported_with_its_number_and_the_rest_imported(source, target):
    with MemoryManager(source) as mm:
        lines = list(mm.export_jsonl())
    broken = [lines[0], "{not json", json.dumps({"kind": "memory", "id": "x"}), *lines[1:]]
    with MemoryManager(target) as mm:
        report = mm.import_jsonl(broken)
        kept = [m.content for m in mm.export()]
    assert report.copied == len(lines) == len(kept)
    assert [b.split(":")[0] for b in report.bad] == ["line 2", "line 3"]
    assert "content: Field required" in report.bad[1]


def test_cli_export_import_round_trip(memman, source, target, tmp_path):  # noqa: F811
    dump = tmp_path / "all.jsonl"
    run = memman("export", "--all", "--with-events", "--db", source, "-o", str(dump))
    assert run.code == 0 and "records written" in run.out
    run = memman("import", str(dump), "--db", target)
    assert run.code == 0 and "4 memories copied" in run.out
    assert table_rows(target) == table_rows(source)
    with MemoryManager(target) as mm:
        assert mm.history(mm.list(user_id="alice")[0].id, user_id="alice")[0].op is Op.ADD

    dump.write_text(dump.read_text(encoding="utf-8") + "[1]\n", encoding="utf-8")
    run = memman("import", str(dump), "--raw", "--db", str(tmp_path / "other.db"))
    assert run.code == 2 and "line" in run.err and "expected a JSON object" in run.err
    missing = memman("import", str(tmp_path / "nope.jsonl"), "--db", target)
    assert missing.code == 1 and missing.err.startswith("Error: cannot read")


def whole_store(path: str) -> None:
    """Fill path with every kind of row a store holds: memories in every status with their
    events (a folded NOOP too), vectors, a parked fact, short-term facts, buffered messages."""
    clock = Clock()
    with MemoryManager(
        path, embedder=SeededEmbedder(), clock=clock, extract_cooldown_s=3600
    ) as mm:
        for _ in range(3):  # one ADD, then a NOOP folded into one event (repeat_count 2)
            mm.update_memory("User is allergic to peanuts", user_id="alice", importance=9)
        clock.advance(days=1)
        mm.update_memory("User lives in Lisbon", user_id="alice")
        mm.update_memory("User lives in Porto", user_id="alice")
        dog = mm.update_memory("User has a dog named Rex", user_id="alice")
        mm.delete(dog.memory_id, user_id="alice")
        mm.update_memory("User plays chess", user_id="bob", agent_id="coach")
        assert mm.update_memory(f"User said {PARK}", user_id="bob").op is Op.PENDING
        mm.remember_short_term("User is at the airport", user_id="alice", session_id="s1")
        mm.observe(
            [{"role": "user", "content": "I just adopted a cat called Tom"}],
            user_id="alice",
            session_id="s2",
        )


def store_dump(db: str) -> list[str]:
    with MemoryManager(db, embedder=SeededEmbedder()) as mm:
        return list(store_copy.store_lines(mm))


def test_migrate_db_sqlite_to_postgresql_and_back_gives_the_same_store(
    memman,  # noqa: F811
    postgres_url,  # noqa: F811
    tmp_path,
):
    first, last = str(tmp_path / "first.db"), str(tmp_path / "last.db")
    whole_store(first)
    with fresh_database(postgres_url) as url:
        there = memman("migrate-db", "--from", first, "--to", url)
        assert there.code == 0, there.err
        assert "every table's rows match" in there.out and "message_buffer: 1 -> 1" in there.out
        back = memman("migrate-db", "--from", url, "--to", last)
        assert back.code == 0, back.err
        with MemoryManager(url) as mm:  # the copy works: a write, a search with its vector
            again = mm.update_memory("User plays chess", user_id="bob", agent_id="coach")
            assert again.op is Op.NOOP
            assert mm.search("peanuts", user_id="alice")[0].memory.importance == 9
    exported = [memman("export", "--all", "--with-events", "--db", db).out for db in (first, last)]
    assert exported[0] == exported[1] and exported[0].count("\n") > 8
    assert store_dump(last) == store_dump(first)
    kinds = {json.loads(line)["kind"] for line in store_dump(first)}
    assert kinds == {"memory", "event", "vector", "pending", "short_term", "message_buffer"}


def test_migrate_db_refuses_a_target_that_holds_anything(memman, db, tmp_path):  # noqa: F811
    first = str(tmp_path / "first.db")
    whole_store(first)
    with MemoryManager(db) as mm:
        mm.remember_short_term("User is at the airport", user_id="carol", session_id="s")
    run = memman("migrate-db", "--from", first, "--to", db)
    assert run.code == 1
    assert run.err.startswith("Error: ") and "is not empty (1 rows in short_term)" in run.err
    assert len(run.err.strip().splitlines()) == 1
    with (
        MemoryManager(first) as source,
        MemoryManager(db) as target,
        pytest.raises(InvalidInputError, match="not empty"),
    ):
        source.migrate_to(target)


def test_migrate_db_bad_arguments_are_one_line_errors(memman, tmp_path):  # noqa: F811
    target = str(tmp_path / "new.db")
    missing = memman("migrate-db", "--from", str(tmp_path / "nope.db"), "--to", target)
    assert missing.code == 1 and missing.err == f"Error: no store at {tmp_path / 'nope.db'}\n"
    nowhere = "postgresql+psycopg://memman:s3cret@127.0.0.1:1/memman_test"
    for source, to in ((nowhere, target), (target, target)):
        run = memman("migrate-db", "--from", source, "--to", to)
        assert run.code == 1 and len(run.err.strip().splitlines()) == 1, run.err
        assert run.err.startswith("Error: ") and "s3cret" not in run.err


def test_a_copied_row_with_a_column_its_table_lacks_is_a_bad_line(tmp_path):
    """A scope's export carries its rows too: a bad one is reported by number, as a memory's
    line is (it used to fail the whole import with InvalidInputError)."""
    row = {"kind": "short_term", "id": 1, "user_id": "u", "agent_id": "", "nope": 1}
    vector = {"kind": "vector", "memory_id": "m", "model": "x", "dim": 2, "vector": "AAAA"}
    with MemoryManager(str(tmp_path / "t.db")) as mm:
        report = mm.import_jsonl([json.dumps(vector), json.dumps(row)])
        expected = "line 1: row: not a vector: memory_id, model and dim float32s expected"
        assert report.bad[0] == expected
        assert report.bad[1].startswith("line 2: ") and "unknown field 'nope'" in report.bad[1]
