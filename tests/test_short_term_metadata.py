"""Short-term facts keep the metadata they came with (m028 / p009).

remember_short_term(metadata=...) and observe(messages, metadata=...) file a plan or a
location "for now" with the caller's metadata, validated as update_memory's; said again it
keeps its first metadata unless the repeat brings some; promoted, the long-term memory gets
it. Through the mem0 facade, a short-term item shows it under the short_term / expires_at
markers, so a metadata filter matches it as it matches the long-term facts of the same add.
Stores made before the column hold '{}' for their facts. Each test runs on a SQLite file,
then on PostgreSQL (tests/postgres.py), with the injected clock.
"""

from __future__ import annotations

import pytest

from memman import InvalidInputError, MemoryManager
from memman.mem0 import Memory
from tests.postgres import db_on_each_backend, postgres_url, undo_migration  # noqa: F401
from tests.test_lifecycle_observe import extraction, llm_manager
from tests.test_mem0 import MOVIE_CHAT

PLAN = MOVIE_CHAT[0]["content"]  # "I'm planning to watch a movie tonight. ..."
LIKES = MOVIE_CHAT[2]["content"]  # "... I love sci-fi movies."
MOVIES = {"topic": "movies", "source": "onboarding"}


def test_remember_short_term_keeps_its_metadata_and_a_repeat_with_none_keeps_it(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        fact = mm.remember_short_term(
            "User is at the airport", user_id="u", session_id="s1", metadata={"via": "app"}
        )
        assert fact.metadata == {"via": "app"}
        again = mm.remember_short_term("User is at the airport", user_id="u", session_id="s2")
        assert (again.id, again.metadata) == (fact.id, {"via": "app"})
        assert mm.get_short_term(fact.id, user_id="u").metadata == {"via": "app"}
        # a repeat that brings metadata says what it is now
        new = mm.remember_short_term(
            "User is at the airport", user_id="u", session_id="s3", metadata={"via": "sms"}
        )
        assert (new.id, new.metadata) == (fact.id, {"via": "sms"})
        assert [f.metadata for f in mm.short_term(user_id="u")] == [{"via": "sms"}]
        plain = mm.remember_short_term("User is in Lisbon for now", user_id="u", session_id="s")
        assert plain.metadata == {}


@pytest.mark.parametrize(
    ("bad", "why"),
    [("app", "must be a dict"), ({"x": float("nan")}, "JSON"), ({"k": "x" * 20_000}, "larger")],
)
def test_bad_metadata_is_refused_as_update_memorys_and_nothing_is_stored(db, bad, why):
    with MemoryManager(db) as mm:
        with pytest.raises(InvalidInputError, match=why):
            mm.remember_short_term("User is at the gym", user_id="u", session_id="s", metadata=bad)
        assert mm.short_term(user_id="u") == []


def test_observe_files_a_plan_with_the_metadata_its_long_term_facts_get(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.observe(MOVIE_CHAT, user_id="u", session_id="s", metadata=MOVIES)
        result = mm.flush("s", user_id="u")
        [plan] = [mm.get_short_term(i, user_id="u") for i in result.short_term_ids]
        assert (plan.content, plan.metadata) == (PLAN, MOVIES)
        [likes] = result.results
        assert mm.get(likes.memory_id, user_id="u").metadata == MOVIES


def test_an_llms_transient_fact_carries_the_metadata_of_its_messages(db, clock, fake_openai):
    fake_openai.script(extraction(("User is at the airport", "location", 4, "transient")))
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        mm.observe(
            [{"role": "user", "content": "I'm at the airport"}],
            user_id="u",
            session_id="s",
            metadata={"via": "voice"},
        )
        [fact_id] = mm.flush("s", user_id="u").short_term_ids
        assert mm.get_short_term(fact_id, user_id="u").metadata == {"via": "voice"}


def test_a_promoted_fact_reaches_long_term_memory_with_its_metadata(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        for session in ("s1", "s2"):  # promote_min_sessions: 2
            mm.remember_short_term(
                "User is training for a marathon",
                user_id="u",
                session_id=session,
                category="plan",
                metadata={"tag": "sport"},
            )
        report = mm.consolidate(user_id="u")
        assert [c.action for c in report.changes] == ["promote"]
        [memory] = mm.list(user_id="u")
        assert (memory.content, memory.metadata) == (
            "User is training for a marathon",
            {"tag": "sport"},
        )
        assert mm.short_term(user_id="u") == []


@pytest.fixture
def memory(db, clock):
    with Memory(manager=MemoryManager(db, clock=clock)) as m:
        yield m


def test_mem0_shows_adds_metadata_on_short_term_items_and_filters_match_it(memory):
    added = memory.add(MOVIE_CHAT, user_id="alice", metadata=MOVIES)["results"]
    [plan_id] = [r["id"] for r in added if r["memory"] == PLAN]
    item = memory.get(plan_id)
    expires = item["metadata"]["expires_at"]
    assert item["metadata"] == {**MOVIES, "short_term": True, "expires_at": expires}
    movies = memory.get_all(filters={"user_id": "alice", "topic": "movies"})["results"]
    assert [i["memory"] for i in movies] == [LIKES, PLAN]  # long-term first, then short-term
    hits = memory.search("movie tonight", filters={"user_id": "alice", "topic": "movies"})
    assert plan_id in [hit["id"] for hit in hits["results"]]
    assert memory.search("movie tonight", filters={"user_id": "alice", "topic": "food"}) == {
        "results": []
    }
    only = memory.get_all(filters={"user_id": "alice", "short_term": True})["results"]
    assert [i["id"] for i in only] == [plan_id]


def test_mem0_update_of_a_short_term_fact_keeps_or_replaces_its_metadata(memory):
    [plan] = memory.add(MOVIE_CHAT[0], user_id="alice", metadata=MOVIES)["results"]
    kept = memory.update(plan["id"], "I'm going to the theatre tonight")
    assert memory.get(kept["id"])["metadata"]["topic"] == "movies"
    replaced = memory.update(plan["id"], "I'm going to the opera tonight", metadata={"k": 1})
    meta = memory.get(replaced["id"])["metadata"]
    assert meta == {"k": 1, "short_term": True, "expires_at": meta["expires_at"]}


def test_a_store_made_before_the_column_migrates_its_facts_with_no_metadata(db, clock):
    """A store from before m028 / p009 (made so by undoing it on a new one): opened, its
    short-term facts have {} and new ones keep theirs."""
    with MemoryManager(db, clock=clock) as mm:
        old = mm.remember_short_term("User is at the airport", user_id="u", session_id="s")
    undo_migration(
        db,
        "m028_short_term_metadata",
        "p009_short_term_metadata",
        "ALTER TABLE short_term DROP COLUMN metadata",
    )
    with MemoryManager(db, clock=clock) as mm:
        assert mm.get_short_term(old.id, user_id="u").metadata == {}
        new = mm.remember_short_term(
            "User is in Porto for now", user_id="u", session_id="s", metadata={"via": "app"}
        )
        assert new.metadata == {"via": "app"}
