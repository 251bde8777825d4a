"""Export: memories and the audit trail out as JSON lines, and back in through the write path."""

from __future__ import annotations

import json
import sqlite3

import pytest

from memman import Event, Memory, MemoryManager, Op, Status
from tests.test_cli import memman  # noqa: F401  (the CLI runner fixture)

ALICE = ["User prefers flat white", "User lives in Lisbon", "User has a dog named Rex"]
BOB = ["User is allergic to peanuts"]


@pytest.fixture
def store(tmp_path) -> str:
    """A file with two users; alice's dog was deleted by hand."""
    path = str(tmp_path / "source.db")
    with MemoryManager(path) as mm:
        alice = mm.update_many(ALICE, user_id="alice")
        mm.update_many(BOB, user_id="bob", metadata={"origin": "intake form"})
        mm.delete(alice[2].memory_id, user_id="alice")
    return path


def test_export_is_scoped_and_active_only_by_default(store):
    with MemoryManager(store) as mm:
        alice = list(mm.export(user_id="alice"))
        everything = list(mm.export())
        with_inactive = list(mm.export(user_id="alice", include_inactive=True))
    assert [m.content for m in alice] == ALICE[:2]
    assert {m.user_id for m in alice} == {"alice"}  # never another user's memories
    assert [m.content for m in everything] == [*ALICE[:2], *BOB]
    assert [(m.content, m.status) for m in with_inactive][-1] == (ALICE[2], Status.DELETED)


def test_export_events_is_the_audit_trail_in_order(store):
    with MemoryManager(store) as mm:
        events = list(mm.export_events(user_id="alice"))
    assert [e.op for e in events] == [Op.ADD, Op.ADD, Op.ADD, Op.DELETE]
    assert [e.id for e in events] == sorted(e.id for e in events)


def test_cli_export_round_trips_through_ingest(memman, store, tmp_path):  # noqa: F811
    dump = tmp_path / "memories.jsonl"
    run = memman("export", "--db", store, "-o", str(dump))
    assert run.code == 0 and "3 memories written" in run.out
    lines = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    assert [Memory(**line).content for line in lines] == [*ALICE[:2], *BOB]
    assert lines[-1]["metadata"] == {"origin": "intake form"}

    target = str(tmp_path / "target.db")
    assert memman("ingest", str(dump), "--db", target).code == 0
    with MemoryManager(target) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == ALICE[:2]
        assert [m.content for m in mm.list(user_id="bob")] == BOB
        assert mm.list(user_id="bob")[0].metadata == {"origin": "intake form"}
    again = memman("ingest", str(dump), "--db", target)  # same facts again: nothing new
    assert again.code == 0 and "NOOP 3" in again.out


def test_cli_export_events_and_stdout(memman, store):  # noqa: F811
    run = memman("export", "--events", "--user", "bob", "--db", store)
    assert run.code == 0
    [line] = [json.loads(line) for line in run.out.splitlines()]
    assert line["kind"] == "event"  # as `--with-events` writes its events
    event = Event(**line)
    assert event.op is Op.ADD and event.candidate == BOB[0]


@pytest.mark.parametrize("tagged", [True, False], ids=["export --events", "an older one"])
def test_import_refuses_an_audit_trail_alone_with_one_line(
    memman,  # noqa: F811
    store,
    tmp_path,
    tagged,
):
    # An events file read as memories gave a "memory.id" error per line; copied, its events
    # would be a history of memories the store does not hold. Refused before any write.
    trail = tmp_path / "events.jsonl"
    assert memman("export", "--events", "--db", store, "-o", str(trail)).code == 0
    lines = [json.loads(line) for line in trail.read_text(encoding="utf-8").splitlines()]
    if not tagged:  # an `export --events` file written before its lines had their kind
        untagged = ({k: v for k, v in line.items() if k != "kind"} for line in lines)
        trail.write_text("".join(json.dumps(line) + "\n" for line in untagged), encoding="utf-8")
    empty, held = str(tmp_path / "empty.db"), str(tmp_path / "held.db")
    with MemoryManager(held) as mm:
        mm.update_memory("User likes tea", user_id="carol")
    for target in (empty, held):
        run = memman("import", str(trail), "--db", target)
        assert run.code == 1 and len(run.err.splitlines()) == 1
        assert run.err.startswith("Error: line 1: an audit event before any memory")
        with MemoryManager(target) as mm:
            assert len(list(mm.export_events())) == (target == held)
    raw = memman("import", str(trail), "--raw", "--db", empty)  # asked for: copied as is
    assert raw.code == 0 and f"{len(lines)} events copied" in raw.out


def test_cli_export_refuses_to_overwrite(memman, store, tmp_path):  # noqa: F811
    existing = tmp_path / "keep.jsonl"
    existing.write_text("precious\n", encoding="utf-8")
    run = memman("export", "--db", store, "-o", str(existing))
    assert run.code == 1 and run.err.startswith("Error: cannot write")
    assert existing.read_text(encoding="utf-8") == "precious\n"
    lonely = memman("export", "--agent", "a1", "--db", store)
    assert lonely.code == 1 and lonely.err == "Error: --agent needs --user\n"


def test_a_failed_export_leaves_no_partial_file(memman, store, tmp_path):  # noqa: F811
    # The hidden .FILE.partial stayed behind, holding whatever was written before the error
    # (a user's memories, in a file nobody looks for): renamed only when complete, it was
    # never removed when the export failed.
    not_a_store = tmp_path / "notes.txt"
    not_a_store.write_text("not a database\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    run = memman("export", "--db", str(not_a_store), "-o", str(output))
    assert run.code == 1 and run.err.startswith("Error: ")
    with sqlite3.connect(store) as conn:  # a row another program edited: found half way
        conn.execute("UPDATE long_term SET metadata = 'not json' WHERE content = ?", BOB)
    run = memman("export", "--db", store, "-o", str(output))
    assert run.code == 1 and "not json" in run.err
    assert sorted(p.name for p in tmp_path.iterdir() if "out" in p.name) == []
