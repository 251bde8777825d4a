"""An import killed between its memories and their events (issue 29, item 3).

An import writes in batches: first the file's memories, then its events. A real process
importing an export is killed (SIGKILL) inside an event batch, once some batches of events
are committed and most are not; it says where it is by printing a line and waiting, so the
test kills it at that point, not after some time. Then `check` reports the memories left
without history, and importing the same file again reaches the end state of an import that
was not stopped: every memory with exactly its events, and `check` clean.
"""

from __future__ import annotations

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
