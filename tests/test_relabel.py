"""Memories stored before the reader could read their phrasing get its topic by `relabel`.

An old store is what an upgrade meets: memories whose subject and attribute are NULL because
the reader of their day read nothing in them, and a recorded reader version older than the
code's (or none: a store from before versions were recorded, m029 / p010 undone). Each test
makes one with its own statements on a store written through the public API, on SQLite and
PostgreSQL; then a newer fact meets the old memory by topic, offline, only after relabel.
"""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from memman.language.topic import READER_VERSION
from tests.postgres import db_on_each_backend, direct, postgres_url, undo_migration  # noqa: F401
from tests.test_cli import memman  # noqa: F401 (fixture)


def as_stored_by_an_older_reader(db: str, where: str = "1 = 1", version: str = "0") -> None:
    """The store at db as an older memman left it: the memories matching `where` without a
    topic, and the store labelled by reader `version`."""
    with direct(db) as conn:
        conn.exec_driver_sql(f"UPDATE long_term SET subject = NULL, attribute = NULL WHERE {where}")
        conn.exec_driver_sql(
            f"UPDATE store_state SET value = '{version}' WHERE key = 'reader_version'"
        )


def test_an_old_memory_is_replaced_by_topic_only_after_relabel(db):
    with MemoryManager(db) as mm:
        old = {u: mm.update_memory("User lives in Denver", user_id=u).memory_id for u in "ab"}
        mm.update_memory("User had a great day", user_id="a")  # no topic for any reader
    as_stored_by_an_older_reader(db)
    with MemoryManager(db) as mm:
        report = mm.check()
        assert (report.reader_version, report.relabel_due, report.ok) == ("0", 3, True)
        # Before: the old memory has no topic, so the move is a fact of its own.
        before = mm.update_memory("I moved to Austin", user_id="b")
        assert before.op is Op.ADD
        assert {m.content for m in mm.list(user_id="b")} == {"User lives in Denver", before.content}

        done = mm.relabel()
        assert (done.read, done.labelled, done.recorded) == (3, 2, True)
        assert done.reader_version == READER_VERSION
        assert mm.get(old["a"], user_id="a").attribute == "residence"
        assert (mm.check().reader_version, mm.check().relabel_due) == (READER_VERSION, 0)

        after = mm.update_memory("I moved to Austin", user_id="a")
        assert (after.op, after.tier, after.memory_id) == (Op.UPDATE, Tier.TOPIC, old["a"])
        assert "User lives in Denver" not in {m.content for m in mm.list(user_id="a")}


def test_a_commute_stored_unread_meets_the_new_one(db):
    with MemoryManager(db) as mm:
        bus = mm.update_memory("User takes the bus to work", user_id="u").memory_id
    as_stored_by_an_older_reader(db)
    with MemoryManager(db) as mm:
        mm.relabel()
        r = mm.update_memory("I drive to work now", user_id="u")
        assert (r.op, r.memory_id) == (Op.UPDATE, bus)


def test_relabel_never_changes_a_set_label(db):
    with MemoryManager(db) as mm:
        told = mm.update_memory(
            "User lives in Denver", user_id="u", subject="user", attribute="hometown"
        ).memory_id
        sister = mm.update_memory("Lives in Rome", user_id="u").memory_id
    as_stored_by_an_older_reader(db, where="attribute = 'residence'")
    with direct(db) as conn:  # a subject given without an attribute
        conn.exec_driver_sql(
            "UPDATE long_term SET subject = 'sister' WHERE content = 'Lives in Rome'"
        )
    with MemoryManager(db) as mm:
        assert mm.relabel().labelled == 1
        assert (mm.get(told, user_id="u").subject, mm.get(told, user_id="u").attribute) == (
            "user",
            "hometown",
        )
        rome = mm.get(sister, user_id="u")
        assert (rome.subject, rome.attribute) == ("sister", "residence")


def test_a_relabel_of_one_user_leaves_the_others(db):
    with MemoryManager(db) as mm:
        ids = {u: mm.update_memory("User lives in Denver", user_id=u).memory_id for u in "ab"}
    as_stored_by_an_older_reader(db)
    with MemoryManager(db) as mm:
        done = mm.relabel(user_id="a")
        assert (done.read, done.labelled, done.recorded) == (1, 1, False)
        assert mm.get(ids["a"], user_id="a").attribute == "residence"
        assert mm.get(ids["b"], user_id="b").attribute is None
        assert mm.check().relabel_due == 1  # b's: the store's version is not recorded
        assert mm.update_memory("I moved to Austin", user_id="b").op is Op.ADD


def test_a_store_from_before_versions_were_recorded_asks_for_a_relabel(db):
    with MemoryManager(db) as mm:
        assert (mm.check().reader_version, mm.check().relabel_due) == (READER_VERSION, 0)
        mm.update_memory("User lives in Denver", user_id="u")
    undo_migration(
        db,
        "m029_store_state",
        "p010_store_state",
        "UPDATE long_term SET subject = NULL, attribute = NULL",
        "DROP TABLE store_state",
    )
    with MemoryManager(db) as mm:
        assert (mm.check().reader_version, mm.check().relabel_due) == ("0", 1)
        assert mm.relabel().labelled == 1
        assert mm.check().relabel_due == 0


def test_an_import_of_unlabelled_memories_asks_for_a_relabel(db, tmp_path):
    source = str(tmp_path / "old.db")
    with MemoryManager(source) as mm:
        mm.update_memory("User lives in Denver", user_id="u")
    as_stored_by_an_older_reader(source)
    with MemoryManager(source) as mm:
        lines = list(mm.export_jsonl())
    with MemoryManager(db) as mm:
        assert mm.import_jsonl(lines).copied == 1
        assert mm.check().relabel_due == 1
        mm.relabel()
        assert mm.update_memory("I moved to Austin", user_id="u").op is Op.UPDATE


def test_an_import_of_memories_no_reader_reads_asks_for_no_relabel(db, tmp_path):
    """Many facts have no topic ("Big fan of jazz"): copying them in says nothing of
    the reader that labelled them, and relabel would label none of them."""
    source = str(tmp_path / "current.db")
    with MemoryManager(source) as mm:
        mm.update_memory("Big fan of jazz", user_id="u")
        lines = list(mm.export_jsonl())
    with MemoryManager(db) as mm:
        assert mm.import_jsonl(lines).copied == 1
        assert (mm.check().reader_version, mm.check().relabel_due) == (READER_VERSION, 0)


def test_bad_arguments_are_typed_errors(db):
    from memman import InvalidInputError

    with MemoryManager(db) as mm:
        with pytest.raises(InvalidInputError):
            mm.relabel(batch=0)
        with pytest.raises(InvalidInputError):
            mm.relabel(agent_id="x")


def test_the_cli_reports_then_relabels(db, memman):  # noqa: F811 (the fixture)
    def run(*args: str) -> tuple[int, str]:
        done = memman(*args, "--db", db)
        return done.code, done.output

    with MemoryManager(db) as mm:
        for u in "ab":
            mm.update_memory("User lives in Denver", user_id=u)
    as_stored_by_an_older_reader(db)
    code, out = run("check")
    assert code == 0
    assert "2 memories were labelled by an older reader (version 0): run memman relabel" in out
    code, out = run("relabel", "--user", "a")
    assert (code, out.strip()) == (0, "labelled 1 of 1 memories without a topic")
    code, out = run("relabel")
    assert code == 0
    assert (
        out.strip()
        == f"labelled 1 of 1 memories without a topic; store at reader version {READER_VERSION}"
    )
    code, out = run("check")
    assert "older reader" not in out
    code, out = run("relabel", "--agent", "x")
    assert code == 1 and "agent_id needs a user_id" in out
