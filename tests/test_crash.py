"""A writer killed with SIGKILL at random moments leaves a sound store that kept every ack.

Writers are forked from the test process (memman already imported, so a trial costs
milliseconds, not an interpreter start-up) and killed after a random delay: during single
writes, during update_many batches, while a fresh file or database is being created and
migrated, during consolidate() and during LLM extraction, on SQLite and on PostgreSQL (where a
SIGKILLed client's open transaction is rolled back by the server). After each kill:
PRAGMA integrity_check is ok (SQLite), the FTS5 index agrees with the table, every write
acknowledged before the kill is active with its text (no memory vanished, no message
acknowledged as buffered was lost), and the file opens again.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing
import random
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import sqlite_utils

from memman import MemoryManager
from memman.models import Status
from memman.storage import postgres_schema
from memman.storage.backends import is_postgres_url
from memman.storage.migrations import migrations
from tests.clock import START
from tests.postgres import direct, fresh_database, postgres_url  # noqa: F401
from tests.reliability import (
    audit,
    consolidate_writer,
    crash_writer,
    extract_writer,
    extracted_messages,
    extraction_reply,
    integrity_problems,
    lost_by_consolidation,
    lost_messages,
    offline_manager,
    read_acks,
    seed_near_duplicates,
)

FORK = multiprocessing.get_context("fork")


def kill_after(path: Path | str, mode: str, seed: int, delay_s: float, ack_path: Path) -> None:
    kill_process_after(
        FORK.Process(target=crash_writer, args=(str(path), mode, seed, str(ack_path))), delay_s
    )


def kill_while_writing(
    path: Path | str, mode: str, seed: int, delay_s: float, ack_path: Path
) -> None:
    """Kill a writer delay_s after it opened the store: a loaded machine's slow start (fork,
    connecting, the schema check) cannot eat the whole delay, so kills land among writes."""
    opened = FORK.Event()
    writer = FORK.Process(target=crash_writer, args=(str(path), mode, seed, str(ack_path), opened))
    writer.start()
    assert opened.wait(timeout=600), "the writer never opened the store"
    time.sleep(delay_s)
    writer.kill()  # SIGKILL: no finally blocks, no atexit, no rollback by Python
    writer.join()


def kill_after_an_ack(path: Path | str, mode: str, seed: int, ack_path: Path) -> None:
    """Kill once a write was acknowledged: however slow the machine, this kill lands on a
    writer with an acknowledged write to keep."""
    acked = FORK.Event()
    writer = FORK.Process(
        target=crash_writer, args=(str(path), mode, seed, str(ack_path), None, acked)
    )
    writer.start()
    assert acked.wait(timeout=600), "the writer never acknowledged a write"
    writer.kill()
    writer.join()


def kill_process_after(writer: multiprocessing.Process, delay_s: float) -> None:
    writer.start()
    time.sleep(delay_s)
    writer.kill()  # SIGKILL: no finally blocks, no atexit, no rollback by Python
    writer.join()


def assert_sound(path: Path | str, ack_path: Path) -> int:
    if not is_postgres_url(str(path)):  # PostgreSQL checks its own pages
        assert integrity_problems(str(path)) == []
    acks = read_acks(str(ack_path)) if ack_path.exists() else []
    result = audit(str(path), acks)
    assert (result.present, result.duplicated) == (result.acknowledged, 0)
    with offline_manager(str(path)) as mm:  # reopens (and finishes migrating) cleanly
        assert mm.stats()["pending"] == 0
    return len(acks)


@pytest.fixture(params=["sqlite", "postgres"])
def crash_db(request, tmp_path) -> Iterator[Path | str]:
    """The store the killed writers share: a SQLite file, then a PostgreSQL database (there
    a SIGKILLed client's open transaction is rolled back by the server)."""
    if request.param == "sqlite":
        yield tmp_path / "crash.db"
        return
    with fresh_database(request.getfixturevalue("postgres_url")) as url:
        yield url


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "trials"), [("single", 25), ("batch", 20)])
def test_killed_writer_keeps_every_acknowledged_write(tmp_path, mode, trials, crash_db):
    path = crash_db
    rng = random.Random(f"crash-{mode}")
    acknowledged = 0
    for trial in range(trials):
        ack_path = tmp_path / f"acks-{trial}.jsonl"
        # The same file across trials: each writer starts on what the last kill left behind.
        # Every fifth kill waits for an acknowledged write (an event, not a delay), so however
        # loaded the machine, some kills land after writes the store must keep.
        if trial % 5 == 4:
            kill_after_an_ack(path, mode, trial, ack_path)
        else:
            kill_while_writing(path, mode, trial, rng.uniform(0.0, 0.4), ack_path)
        acknowledged += assert_sound(path, ack_path)
    assert acknowledged > 0


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


@pytest.fixture(params=["sqlite", "postgres"])
def new_store(request, tmp_path) -> Iterator[Callable[[str], str]]:
    """new_store(name): a fresh store per trial, a SQLite file, then a PostgreSQL database
    (dropped when the test ends)."""
    if request.param == "sqlite":
        yield lambda name: str(tmp_path / f"{name}.db")
        return
    url = request.getfixturevalue("postgres_url")
    with ExitStack() as databases:
        yield lambda name: databases.enter_context(fresh_database(url))


@pytest.mark.slow
def test_killed_while_migrating_a_fresh_database_leaves_it_usable(tmp_path, postgres_url):  # noqa: F811
    rng = random.Random("crash-open-postgres")
    with ExitStack() as databases:
        for trial in range(8):
            url = databases.enter_context(fresh_database(postgres_url))
            kill_after(url, "open", trial, rng.uniform(0.0, 0.3), tmp_path / f"acks-{trial}")
            with direct(url) as conn:  # all or nothing: the migrations are one transaction
                assert postgres_schema.applied(conn) in ([], postgres_schema.KNOWN)
            with offline_manager(url) as mm:
                assert mm.update_memory("User likes red bicycles", user_id="alice").memory_id


@pytest.mark.slow
def test_killed_consolidation_loses_no_memory_and_can_finish(tmp_path, new_store):
    pairs = 100
    month_later = (START + dt.timedelta(days=30)).isoformat()
    rng = random.Random("crash-consolidate")
    interrupted = 0
    for trial in range(12):
        path = new_store(f"consolidate-{trial}")
        ack_path = tmp_path / f"consolidate-{trial}.jsonl"
        ids = seed_near_duplicates(path, lambda: START, pairs)
        if trial % 3 == 0:  # killed mid-consolidation for certain (after one scope's merges)
            midway = FORK.Event()
            writer = FORK.Process(
                target=consolidate_writer, args=(str(path), month_later, str(ack_path), midway)
            )
            writer.start()
            assert midway.wait(timeout=600), "the writer never reached its first progress report"
            writer.kill()
            writer.join()
        else:  # killed wherever a random moment lands: before, during or after
            writer = FORK.Process(
                target=consolidate_writer, args=(str(path), month_later, str(ack_path))
            )
            kill_process_after(writer, rng.uniform(0.0, 0.4))
        interrupted += '"merged"' not in ack_path.read_text() if ack_path.exists() else 1
        assert integrity_problems(str(path)) == []
        assert lost_by_consolidation(str(path), ids) == []
        assert audit(str(path), []).duplicated == 0
        # The next run finishes what the killed one started: every pair ends merged.
        consolidate_writer(str(path), month_later, str(ack_path))
        assert lost_by_consolidation(str(path), ids) == []
        with MemoryManager(str(path)) as mm:
            kept = mm.list(user_id="alice", include_inactive=True) + mm.list(
                user_id="bob", include_inactive=True
            )
        assert sorted(m.id for m in kept) == sorted(ids)
        assert sum(m.status is Status.SUPERSEDED for m in kept) == pairs
    assert interrupted > 0  # some kills did land mid-consolidation


@pytest.mark.slow
def test_killed_during_llm_extraction_loses_no_buffered_message(tmp_path, fake_openai, crash_db):
    path = crash_db
    rng = random.Random("crash-extract")
    # Slow answers (50 ms each): a kill right after a request arrives lands mid-extraction.
    fake_openai.script(*(extraction_reply(n, 0.05) for n in range(400)))
    with MemoryManager(str(path), llm_model="fake-model", llm_base_url=fake_openai.base_url):
        pass  # imports the LLM client in this process, so forked writers start at once
    for trial in range(12):
        ack_path = tmp_path / f"extract-{trial}.jsonl"
        writer = FORK.Process(
            target=extract_writer, args=(str(path), fake_openai.base_url, trial, str(ack_path))
        )
        if trial % 2:  # at a random moment
            kill_process_after(writer, rng.uniform(0.05, 0.6))
        else:  # while the LLM is answering the writer's 1st, 2nd or 3rd extraction
            writer.start()
            assert fake_openai.wait_for_requests(len(fake_openai.requests) + rng.randint(1, 3))
            writer.kill()
            writer.join()
        assert integrity_problems(str(path)) == []
        # A kill that lands before the writer opened its ack file (a slow fork under load)
        # acknowledged nothing, so nothing can be lost: no ack file is no failure.
        assert not ack_path.exists() or lost_messages(str(path), str(ack_path)) == []
    assert extracted_messages(str(path)) > 0  # some extractions finished between the kills
