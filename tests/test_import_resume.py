"""An import killed between its memories and their events (issue 29, item 3).

An import writes in batches: first the file's memories, then its events. A real process
importing an export is killed (SIGKILL) inside an event batch, once some batches of events
are committed and most are not; it says where it is by printing a line and waiting, so the
test kills it at that point, not after some time. Then `check` reports the memories left
without history, and importing the same file again reaches the end state of an import that
was not stopped: every memory with exactly its events, and `check` clean.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from memman import MemoryManager
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401

REPO = Path(__file__).resolve().parent.parent
MEMORIES = 90
BATCH = 20  # copied records per transaction in the killed process (transfer.BATCH)

# The importing process: small batches; at the first event of its third event batch it says
# so and waits to be killed, with the first two batches of events committed.
IMPORTER = textwrap.dedent(
    f"""
    import sys
    from memman import MemoryManager
    from memman.storage import store as store_module, transfer

    transfer.BATCH = {BATCH}
    calls = 0
    copy_event = store_module.Store.copy_event

    def copy_then_stop(self, conn, event, *, keep_id):
        global calls
        calls += 1
        if calls == 2 * {BATCH} + 1:
            print("in the third batch of events", flush=True)
            sys.stdin.read()  # until killed
        return copy_event(self, conn, event, keep_id=keep_id)

    store_module.Store.copy_event = copy_then_stop
    with MemoryManager(sys.argv[1], decider="offline") as mm:
        mm.import_jsonl(sys.argv[2])
    print("finished", flush=True)
    """
)


def history(mm: MemoryManager) -> list[tuple]:
    """Every event of every memory, as an import copies it (ids may be renumbered)."""
    return sorted(
        (e.memory_id, e.op.value, e.created_at, e.content_after or "", e.reason)
        for e in mm.export_events()
    )


def test_an_import_killed_between_memories_and_events_is_finished_by_importing_again(
    db, tmp_path
):
    export = tmp_path / "export.jsonl"
    with MemoryManager(str(tmp_path / "source.db"), decider="offline") as source:
        for a in "bcdfghjklm":
            for b in "aeiouyrst":  # 90 countries no fact replaces another of
                source.update_memory(f"User collects stamps from {a}{b}land", user_id="u")
        expected = history(source)
        memories = sorted(m.id for m in source.export())
        export.write_text("\n".join(source.export_jsonl(events=True)) + "\n")
    assert len(expected) == MEMORIES

    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    importer = subprocess.Popen(
        [sys.executable, "-c", IMPORTER, db, str(export)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=tmp_path,
    )
    try:
        assert importer.stdout.readline() == "in the third batch of events\n"
        importer.send_signal(signal.SIGKILL)
    finally:
        importer.wait(60)
    assert importer.returncode == -signal.SIGKILL

    with MemoryManager(db, decider="offline") as mm:
        assert sorted(m.id for m in mm.export()) == memories
        committed = len(history(mm))  # two batches of events (with the fix: 2 x BATCH)
        assert 0 < committed < MEMORIES
        report = mm.check()
        assert report.without_history == MEMORIES - committed and not report.ok

        again = mm.import_jsonl(str(export))

        assert (again.copied, again.duplicates) == (0, MEMORIES)
        assert (again.events_copied, again.events_held) == (MEMORIES - committed, committed)
        assert again.events_written == 0 and again.bad == []
        assert history(mm) == expected
        report = mm.check()
        assert report.without_history == 0 and report.ok

        # A third import of the same file changes nothing.
        third = mm.import_jsonl(str(export))
        assert (third.events_copied, third.events_held) == (0, MEMORIES)
        assert history(mm) == expected


def test_check_counts_memories_without_history(db, tmp_path):
    with MemoryManager(db, decider="offline") as mm:
        mm.update_memory("User likes green tea", user_id="u")
        assert mm.check().without_history == 0


def _as_user(lines: list[str], user: str) -> list[str]:
    """The same export lines with another user_id: the same memory ids, another owner."""
    out = []
    for line in lines:
        record = json.loads(line)
        record["user_id"] = user
        out.append(json.dumps(record))
    return out


def test_a_memory_whose_id_another_user_holds_is_imported_under_a_new_id(db, tmp_path):
    """Issue 29: an imported memory whose id the store held for another user was counted a
    duplicate and dropped: nothing for the user being imported."""
    with MemoryManager(str(tmp_path / "source.db"), decider="offline") as source:
        first = source.update_memory("User collects stamps from Boland", user_id="alice")
        lines = list(source.export_jsonl(user_id="alice", events=True))
        alice_history = [
            (e.op, e.content_after) for e in source.history(first.memory_id, user_id="alice")
        ]
    with MemoryManager(db, decider="offline") as mm:
        mm.import_jsonl(_as_user(lines, "bob"))  # bob holds the id now
        assert mm.get(first.memory_id, user_id="bob").content == "User collects stamps from Boland"

        report = mm.import_jsonl(lines)

        assert [m.content for m in mm.list(user_id="alice")] == ["User collects stamps from Boland"]
        (renamed,) = report.renamed.values()
        assert report.renamed == {first.memory_id: renamed} and renamed != first.memory_id
        assert (report.copied, report.duplicates, report.bad) == (1, 0, [])
        (alice,) = mm.list(user_id="alice")
        assert (alice.id, alice.content) == (renamed, "User collects stamps from Boland")
        assert [(e.op, e.content_after) for e in mm.history(renamed, user_id="alice")] == (
            alice_history
        )
        # Bob's memory and history are untouched.
        assert len(mm.history(first.memory_id, user_id="bob")) == len(alice_history)
        assert mm.check().ok

    # Into a scope that holds memories (the line is decided, not copied): decided, not dropped.
    with MemoryManager(str(tmp_path / "other.db"), decider="offline") as other:
        other.import_jsonl(_as_user(lines, "bob"))
        other.update_memory("User plays chess", user_id="alice")
        report = other.import_jsonl(lines)
        assert sorted(m.content for m in other.list(user_id="alice")) == [
            "User collects stamps from Boland",
            "User plays chess",
        ]
        assert (report.duplicates, report.decided) == (0, {"ADD": 1})
