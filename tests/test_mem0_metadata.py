"""mem0's metadata through the facade.

add(messages, metadata=..., infer=True): every fact extracted from that call's messages
carries the metadata, so mem0 code that filters on it later (search and get_all with
filters=) finds them. The metadata is kept with the buffered messages: a failed extraction
retried later (flush, consolidate) still attaches it, and messages of another add() in the
same run keep their own.

update(memory_id, data, metadata=...): as mem0's, the memory holding the text afterwards has
that metadata, written with the decision in one transaction and recorded in its event.
"""

from __future__ import annotations

import pytest

from memman import DecisionError, MemoryManager
from memman.mem0 import Memory
from memman.models import Op
from tests.fake_openai import Reply
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401
from tests.test_lifecycle_observe import extraction, llm_manager
from tests.test_mem0 import MOVIE_CHAT

MOVIES = {"topic": "movies", "source": "onboarding"}
FOOD = {"topic": "food"}


def durable(*facts: str) -> Reply:
    return extraction(*((f, "preference", 6, "durable") for f in facts))


def texts(answer: dict) -> list[str]:
    return sorted(item["memory"] for item in answer["results"])


def test_offline_extracted_facts_carry_the_metadata_and_filters_find_them(tmp_path):
    with Memory(str(tmp_path / "m.db")) as m:
        m.add(MOVIE_CHAT, user_id="alice", run_id="r", metadata=MOVIES)
        m.add("I am vegetarian", user_id="alice", run_id="r", metadata=FOOD)
        m.add("I live in Porto", user_id="alice", run_id="r")
        movies = m.get_all(filters={"user_id": "alice", "topic": "movies"})
        # The plan for tonight is short-term (lifecycle/pieces.py), with the metadata too.
        assert texts(movies) == sorted([MOVIE_CHAT[0]["content"], MOVIE_CHAT[2]["content"]])
        assert all(MOVIES.items() <= item["metadata"].items() for item in movies["results"])
        food = m.search("vegetarian", filters={"user_id": "alice", "topic": "food"})
        assert texts(food) == ["I am vegetarian"]
        assert m.search("Porto", filters={"user_id": "alice", "topic": "*"}) == {"results": []}
        assert texts(m.search("Porto", user_id="alice")) == ["I live in Porto"]


def test_llm_extracted_facts_carry_the_metadata_of_their_add(tmp_path, clock, fake_openai):
    fake_openai.script(durable("User loves sci-fi movies"), durable("User is vegetarian"))
    with llm_manager(str(tmp_path / "m.db"), fake_openai.base_url, clock) as mm:
        m = Memory(manager=mm)
        [added] = m.add(MOVIE_CHAT, user_id="alice", metadata=MOVIES)["results"]
        m.add("I don't eat meat", user_id="alice", metadata=FOOD)
        assert m.get(added["id"])["metadata"] == MOVIES
        [food] = m.get_all(filters={"user_id": "alice", "topic": "food"})["results"]
        assert (food["memory"], food["metadata"]) == ("User is vegetarian", FOOD)


def test_a_failed_extraction_keeps_its_metadata_for_the_retry(tmp_path, clock, fake_openai):
    """The first add fails and its messages wait in the run; the second add of the same run
    extracts both, each batch with its own add's metadata (two extraction calls)."""
    fake_openai.script(Reply(500, {"error": {"message": "boom"}}))
    with llm_manager(str(tmp_path / "m.db"), fake_openai.base_url, clock) as mm:
        m = Memory(manager=mm)
        with pytest.raises(DecisionError, match="stay buffered"):
            m.add(MOVIE_CHAT, user_id="alice", run_id="chat", metadata=MOVIES)
        clock.advance(minutes=5)  # past the failed batch's backoff
        fake_openai.script(durable("User loves sci-fi movies"), durable("User is vegetarian"))
        m.add("I don't eat meat", user_id="alice", run_id="chat", metadata=FOOD)
        by_topic = {
            topic: texts(m.get_all(filters={"user_id": "alice", "topic": topic}))
            for topic in ("movies", "food")
        }
        assert by_topic == {"movies": ["User loves sci-fi movies"], "food": ["User is vegetarian"]}
    prompts = [str(r["json"]["messages"]) for r in fake_openai.requests]
    assert "sci-fi" in prompts[1] and "meat" not in prompts[1] and "meat" in prompts[2]


def test_consolidate_extracts_an_abandoned_add_with_its_metadata(tmp_path, clock, fake_openai):
    fake_openai.script(Reply(500, {"error": {"message": "boom"}}))
    with llm_manager(str(tmp_path / "m.db"), fake_openai.base_url, clock) as mm:
        m = Memory(manager=mm)
        with pytest.raises(DecisionError):
            m.add(MOVIE_CHAT, user_id="alice", metadata=MOVIES)
        clock.advance(hours=2)
        fake_openai.script(durable("User loves sci-fi movies"))
        assert mm.consolidate().extracted_messages == 4
        [item] = m.get_all(user_id="alice")["results"]
        assert item["metadata"] == MOVIES


def test_observe_refuses_metadata_update_memory_would_refuse(tmp_path):
    with Memory(str(tmp_path / "m.db")) as m:
        with pytest.raises(ValueError, match="metadata is nested deeper"):
            m.add("I like jazz", user_id="ann", metadata={"a": {"b": {"c": {"d": {"e": {
                "f": {"g": {"h": {"i": 1}}}}}}}}})  # fmt: skip
        assert m.manager.list(user_id="ann") == []


def test_update_with_metadata_replaces_it_with_the_text(db, clock):
    """The same text (a NOOP), a changed value (an UPDATE in place) and a new text (an ADD,
    the old id following it): each time the memory holding the text has the new metadata."""
    with MemoryManager(db, clock=clock) as mm:
        m = Memory(manager=mm)
        [home] = m.add("I live in Porto", user_id="ann", infer=False, metadata=FOOD)["results"]
        m.update(home["id"], data="I live in Porto", metadata={"verified": True})
        assert m.get(home["id"])["metadata"] == {"verified": True}
        [noop] = mm.history(home["id"], user_id="ann")[-1:]
        assert noop.op is Op.NOOP and noop.scores["metadata"] == {
            "before": FOOD,
            "after": {"verified": True},
        }
        moved = m.update(home["id"], data="I live in Lisbon", metadata={"verified": False})
        assert moved["event"] == "UPDATE" and moved["id"] == home["id"]
        assert m.get(home["id"])["metadata"] == {"verified": False}
        m.update(home["id"], data="Lisbon is lovely")  # no metadata: kept
        assert m.get(home["id"])["metadata"] == {"verified": False}
        other = m.update(home["id"], data="I collect stamps", metadata={"topic": "hobby"})
        assert other["event"] == "ADD" and other["id"] != home["id"]
        assert m.get(home["id"]) == m.get(other["id"])
        found = m.get_all(filters={"user_id": "ann", "topic": "hobby"})["results"]
        assert [item["memory"] for item in found] == ["I collect stamps"]


def test_update_refuses_metadata_that_is_not_a_dict(tmp_path):
    with Memory(str(tmp_path / "m.db")) as m:
        [added] = m.add("I like jazz", user_id="ann", infer=False)["results"]
        with pytest.raises(ValueError, match="metadata must be a dict"):
            m.update(added["id"], data="I like jazz", metadata=["music"])
        assert m.get(added["id"])["metadata"] is None
