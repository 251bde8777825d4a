"""A writer killed with SIGKILL at random moments leaves a sound store that kept every ack.

Writers are forked from the test process (memman already imported, so a trial costs
milliseconds, not an interpreter start-up) and killed after a random delay: during single
writes, during update_many batches, and while a fresh file is being created and migrated.
After each kill: PRAGMA integrity_check is ok, the FTS5 index agrees with the table, every
write acknowledged before the kill is active with its text, and the file opens again.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from pathlib import Path

import pytest
import sqlite_utils

from memman.migrations import migrations
from tests.reliability import audit, crash_writer, integrity_problems, offline_manager, read_acks

FORK = multiprocessing.get_context("fork")


def kill_after(path: Path, mode: str, seed: int, delay_s: float, ack_path: Path) -> None:
    writer = FORK.Process(target=crash_writer, args=(str(path), mode, seed, str(ack_path)))
    writer.start()
    time.sleep(delay_s)
    writer.kill()  # SIGKILL: no finally blocks, no atexit, no rollback by Python
    writer.join()


def assert_sound(path: Path, ack_path: Path) -> int:
    assert integrity_problems(str(path)) == []
    acks = read_acks(str(ack_path)) if ack_path.exists() else []
    result = audit(str(path), acks)
    assert (result.present, result.duplicated) == (result.acknowledged, 0)
    with offline_manager(str(path)) as mm:  # reopens (and finishes migrating) cleanly
        assert mm.stats()["pending"] == 0
    return len(acks)


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "trials"), [("single", 25), ("batch", 20)])
def test_killed_writer_keeps_every_acknowledged_write(tmp_path, mode, trials):
    path = tmp_path / "crash.db"
    rng = random.Random(f"crash-{mode}")
    acknowledged = 0
    for trial in range(trials):
        ack_path = tmp_path / f"acks-{trial}.jsonl"
        # The same file across trials: each writer starts on what the last kill left behind.
        kill_after(path, mode, trial, rng.uniform(0.0, 0.4), ack_path)
        acknowledged += assert_sound(path, ack_path)
    assert acknowledged > 0  # the kills did land after some writes


@pytest.mark.slow
def test_killed_while_creating_a_fresh_file_leaves_it_usable(tmp_path):
    rng = random.Random("crash-open")
    for trial in range(15):
        path = tmp_path / f"fresh-{trial}.db"
        ack_path = tmp_path / f"acks-{trial}.jsonl"
        kill_after(path, "open", trial, rng.uniform(0.0, 0.03), ack_path)
        db = sqlite_utils.Database(path)
        assert integrity_problems(str(path)) == []
        # All or nothing: the migrations run in one transaction.
        assert db.table_names() == [] or list(migrations.pending(db)) == []
        db.close()
        with offline_manager(str(path)) as mm:
            assert mm.update_memory("User likes red bicycles", user_id="alice").memory_id
        assert list(migrations.pending(sqlite_utils.Database(path))) == []
