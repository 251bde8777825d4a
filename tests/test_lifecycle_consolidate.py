"""consolidate(): expiry, promotion, merge, decay, protection, dry run and max_ops."""

from __future__ import annotations

import sqlite3

import pytest
import sqlalchemy as sa

from memman import MemoryManager
from memman.language.text import content_hash
from memman.models import Op, Status, Tier
from memman.storage.backends import is_postgres_url
from memman.storage.store import Scope
from tests.clock import Clock
from tests.postgres import db_on_each_backend, direct, postgres_url  # noqa: F401
from tests.test_cli import memman  # noqa: F401  (the CLI runner fixture)

# A~B and B~C (Jaccard 8/9) but A!~C (7/9 < 0.8): a chain, not one fact.
CHAIN = [
    "User knows alpha bravo charlie delta echo foxtrot golf",
    "User knows alpha bravo charlie delta echo foxtrot golf hotel",
    "User knows bravo charlie delta echo foxtrot golf hotel",
]
# The same wording (case, punctuation, articles and fillers aside): merged without an LLM.
TWINS = ["User grows tomatoes basil and peppers on the balcony",
         "Also, user really grows tomatoes, basil and peppers on a balcony."]  # fmt: skip
# Related (Jaccard 0.83) but not the same wording: one fact, yet only an LLM may say so.
RELATED = ["User grows tomatoes basil and peppers on the balcony",
           "User grows tomatoes, basil and peppers on a balcony garden"]  # fmt: skip


def loose_import(db: str, clock: Clock, facts: list[str], confidence: float = 0.9) -> list[str]:
    """Store facts as an old import would: no dedup, confidence below the protected level."""
    with MemoryManager(db, clock=clock) as mm:
        stamp = clock().isoformat(timespec="milliseconds")
        ids = mm.store.write(
            lambda conn: [
                mm.store.insert_memory(conn, Scope("u"), content=f, content_hash=content_hash(f),
                                       now=stamp, source=None, metadata={}, confidence=confidence)
                for f in facts
            ]
        )  # fmt: skip
    return ids


def set_columns(db: str, ids: list[str], **values: object) -> None:
    with direct(db) as conn:
        for memory_id in ids:
            for column, value in values.items():
                conn.execute(
                    sa.text(f"UPDATE long_term SET {column} = :v WHERE id = :id"),
                    {"v": value, "id": memory_id},
                )


def dump(db: str) -> list[str]:
    """The whole SQLite file as SQL; on PostgreSQL every row of every table, in key order."""
    if not is_postgres_url(db):
        with sqlite3.connect(db) as conn:
            return list(conn.iterdump())
    tables = ["long_term", "events", "pending", "short_term", "message_buffer"]
    tables += ["memory_vectors", "vector_log", "fts_scopes"]
    with direct(db) as conn:
        return [
            repr(tuple(row))
            for table in tables
            for row in conn.execute(sa.text(f"SELECT * FROM {table} ORDER BY 1"))
        ]


def test_near_identical_memories_merge_and_stay_recoverable(db, clock):
    first, second = loose_import(db, clock, TWINS)
    set_columns(db, [second], access_count=3)
    with MemoryManager(db, clock=clock) as mm:
        report = mm.consolidate()
        [merge] = [c for c in report.changes if c.action == "merge"]
        assert merge.target == second and merge.related == [first]  # more accessed wins
        loser = mm.get(first, user_id="u")
        assert loser.status is Status.SUPERSEDED
        assert loser.metadata["superseded_by"] == second
        event = mm.history(first, user_id="u")[-1]
        assert (event.source, event.tier) == ("consolidation", Tier.LIFECYCLE)
        assert [h.id for h in mm.search("tomatoes basil balcony", user_id="u")] == [second]
        mm.restore(first, user_id="u")
        assert mm.get(first, user_id="u").status is Status.ACTIVE


SAME_WORDING = [
    ("Also, I really like the band Rancid.", "I like a band rancid"),
    ("I have 5 children- 2 girls and 3 boys.", "I have 5 children, 2 girls and 3 boys"),
    ("I dont have a TV.", "I don't have the TV"),
    ("I really don't like fast food.", "I don't like fast food."),
]
# Related by their content words, but different facts: never merged without an LLM.
DIFFERENT = [
    ("I was a nurse.", "I am a nurse."),  # tense
    ("I like the color red more than green.", "I like the color green more than red."),
    ("I am not tall.", "I am not very tall."),  # an intensifier next to a negation
    ("I live in Salt Lake City.", "My girlfriend lives in Salt Lake City."),
    ("I have a dog.", "I have dogs."),
    ("I like to go fishing on the lake.", "I like to go fishing on the lake and the ocean."),
]


@pytest.mark.parametrize(("pair", "merges"), [*((p, 1) for p in SAME_WORDING),
                                              *((p, 0) for p in DIFFERENT)])  # fmt: skip
def test_only_the_same_wording_merges_without_an_llm(db, clock, pair, merges):
    ids = loose_import(db, clock, list(pair))
    with MemoryManager(db, clock=clock) as mm:
        assert mm.consolidate().count("merge") == merges
        statuses = sorted(mm.get(i, user_id="u").status for i in ids)
    assert statuses == sorted([Status.ACTIVE, Status.SUPERSEDED if merges else Status.ACTIVE])


def test_a_chain_is_not_one_fact(db, clock):
    ids = loose_import(db, clock, CHAIN)
    with MemoryManager(db, clock=clock) as mm:
        report = mm.consolidate()
        assert report.count("merge") == 0
        assert sorted(ids) in report.rejected_clusters
        assert all(mm.get(i, user_id="u").status is Status.ACTIVE for i in ids)


def test_protected_memories_are_never_merged_or_decayed(db, clock):
    constraint = loose_import(db, clock, TWINS)
    set_columns(db, constraint, category="constraint")
    peanuts = ["User is allergic to peanuts", "Also, user is allergic to peanuts"]
    sure = loose_import(db, clock, peanuts, confidence=0.97)
    clock.advance(days=400)
    before = dump(db)
    with MemoryManager(db, clock=clock) as mm:
        report = mm.consolidate()
    assert report.changes == []
    assert dump(db) == before
    assert len(sure) == 2


def test_decay_math_and_once_a_day_guard(db, clock):
    [memory_id] = loose_import(db, clock, ["User likes hiking"])
    clock.advance(days=10)
    with MemoryManager(db, clock=clock) as mm:
        [change] = mm.consolidate().changes
        assert change.action == "decay"
        assert mm.get(memory_id, user_id="u").confidence == pytest.approx(0.9 * 0.99**10)
        clock.advance(hours=1)
        assert mm.consolidate().changes == []  # same day: no second decay
        clock.advance(days=1)
        mm.consolidate()
        assert mm.get(memory_id, user_id="u").confidence == pytest.approx(
            0.9 * 0.99 ** (11 + 1 / 24)
        )
        decays = [e for e in mm.history(memory_id, user_id="u") if e.source == "consolidation"]
        assert len(decays) == 2


def test_recall_resets_the_decay_clock(db, clock):
    [memory_id] = loose_import(db, clock, ["User likes hiking"])
    clock.advance(days=10)
    with MemoryManager(db, clock=clock) as mm:
        mm.search("hiking", user_id="u")
        clock.advance(days=2)
        mm.consolidate()
        assert mm.get(memory_id, user_id="u").confidence == pytest.approx(0.9 * 0.99**2)


def test_long_unused_memories_are_archived_and_leave_recall(db, clock):
    [memory_id] = loose_import(db, clock, ["User likes hiking"])
    clock.advance(days=400)
    with MemoryManager(db, clock=clock) as mm:
        [change] = mm.consolidate().changes
        assert change.action == "archive"
        memory = mm.get(memory_id, user_id="u")
        assert memory.status is Status.ARCHIVED
        assert memory.confidence == pytest.approx(max(0.05, 0.9 * 0.99**400))
        assert mm.search("hiking", user_id="u") == []
        mm.restore(memory_id, user_id="u")


def test_dry_run_changes_nothing_and_reports_the_same(db, clock, tmp_path):
    loose_import(db, clock, [*TWINS, *CHAIN, "User likes hiking"])
    with MemoryManager(db, clock=clock) as mm:
        mm.remember_short_term("User is at the airport", user_id="u", session_id="s1")
    clock.advance(days=5)
    before = dump(db)
    with MemoryManager(db, clock=clock) as mm:
        dry = mm.consolidate(dry_run=True)
        assert dump(db) == before
        real = mm.consolidate()
    assert dry.dry_run and not real.dry_run
    assert [(c.action, c.target, c.related) for c in dry.changes] == [
        (c.action, c.target, c.related) for c in real.changes
    ]
    assert {c.action for c in real.changes} == {"expire", "merge", "decay"}


def test_max_ops_is_honoured(db, clock):
    loose_import(db, clock, [f"User visited city number {i}" for i in range(6)])
    clock.advance(days=3)
    with MemoryManager(db, clock=clock) as mm:
        report = mm.consolidate(max_ops=2)
        assert len(report.changes) == 2 and report.truncated
        assert len(mm.consolidate(max_ops=200).changes) == 4


def test_short_term_expires_into_the_audit_trail(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.remember_short_term("User is at the gym", user_id="u", session_id="s1",
                               category="location")  # fmt: skip
        clock.advance(hours=5)
        assert mm.consolidate().changes == []
        clock.advance(hours=2)
        [change] = mm.consolidate().changes
        assert change.action == "expire"
        assert mm.short_term(user_id="u") == []
        [event] = mm.events(user_id="u")
        assert event.source == "consolidation" and event.candidate == "User is at the gym"


def test_recurring_short_term_fact_is_promoted_through_update_memory(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.remember_short_term("User is training for a marathon", user_id="u", session_id="s1")
        assert mm.consolidate().changes == []
        mm.remember_short_term("User is training for a marathon", user_id="u", session_id="s2")
        [change] = mm.consolidate().changes
        assert change.action == "promote"
        [memory] = mm.list(user_id="u")
        assert memory.content == "User is training for a marathon"
        [event] = mm.history(memory.id, user_id="u")
        assert (event.op, event.tier, event.source) == (Op.ADD, Tier.NOVEL, "promotion")
        assert mm.short_term(user_id="u") == []


def test_promotion_and_its_mark_commit_together(db, clock, monkeypatch):
    with MemoryManager(db, clock=clock) as mm:
        for session in ("s1", "s2"):
            mm.remember_short_term("User is training for a marathon", user_id="u",
                                   session_id=session)  # fmt: skip

        def crash(*args: object) -> None:
            raise RuntimeError("killed between the memory write and the mark")

        monkeypatch.setattr("memman.lifecycle.shortterm.set_status", crash)
        with pytest.raises(RuntimeError):
            mm.consolidate()
        assert mm.list(user_id="u") == []  # the memory write rolled back with the mark
        assert len(mm.short_term(user_id="u")) == 1
        monkeypatch.undo()
        [change] = mm.consolidate().changes
        [memory] = mm.list(user_id="u")
        assert change.action == "promote" and mm.short_term(user_id="u") == []
        assert [e.op for e in mm.history(memory.id, user_id="u")] == [Op.ADD]  # promoted once


def test_cli_consolidate_and_context(db, clock, memman):  # noqa: F811 (fixture)
    loose_import(db, clock, TWINS)
    dry = memman("consolidate", "--db", db, "--dry-run")
    assert dry.code == 0 and "dry run" in dry.out and "merge" in dry.out
    assert memman("consolidate", "--db", db, "--max-ops", "1").code == 0
    assert "1 changes" in memman("consolidate", "--db", db, "--dry-run").out  # only decay left
    block = memman("context", "tomatoes", "--db", db, "-u", "u")
    assert block.code == 0 and "tomatoes" in block.out
    bad = memman("consolidate", "--db", db, "--max-ops", "-1")
    assert bad.code == 1 and "max_ops" in bad.err


def test_memories_written_with_default_confidence_can_merge(db, clock):
    # update_memory's default confidence is below the protected level, so consolidation can
    # clean up what an earlier, looser import let in next to it.
    with MemoryManager(db, clock=clock) as mm:
        first = mm.update_memory(TWINS[0], user_id="u").memory_id
    [second] = loose_import(db, clock, TWINS[1:], confidence=mm.settings.default_confidence)
    with MemoryManager(db, clock=clock) as mm:
        assert mm.get(first, user_id="u").confidence == mm.settings.default_confidence < 0.95
        report = mm.consolidate()
        assert [c.action for c in report.changes].count("merge") == 1
        assert {mm.get(first, user_id="u").status, mm.get(second, user_id="u").status} == {
            Status.ACTIVE,
            Status.SUPERSEDED,
        }


def test_a_protected_category_is_matched_as_categories_are_stored(db, clock):
    # Categories are stored lowercased ("Medical" -> "medical"), the setting was compared as
    # written: protected_categories = ["Medical"] protected nothing, and the user's medical
    # facts were decayed and archived like any other, and left out of the context core.
    with MemoryManager(db, clock=clock, protected_categories=[" Medical", "SAFETY"]) as mm:
        pills = mm.update_memory("User takes insulin twice a day", user_id="u", category="Medical")
        mm.update_memory("User likes hiking", user_id="u")
        clock.advance(days=400)
        decayed = {c.target for c in mm.consolidate().changes}
        assert pills.memory_id not in decayed and decayed
        assert mm.get(pills.memory_id, user_id="u").confidence == 0.8
        assert "insulin" in mm.context("what is the weather", user_id="u", max_tokens=200).text
