"""Short-term facts through the mem0 facade: what `add` reports, get_all, search, get, delete
and history find, until the fact expires.

Offline, a plan for tonight or where the user is right now is a short-term fact with a TTL
(memman/lifecycle/pieces.py). A mem0 user expects what `add` reported to be findable: the
facade shows the scope's unexpired short-term facts in mem0's item shape, with the id
"short_term:<n>-<token>" (no id another user can guess) and metadata {"short_term": true,
"expires_at": ...}. Real SQLite files, the injected clock.
"""

from __future__ import annotations

import pytest

from memman import InvalidInputError, MemoryManager
from memman.mem0 import Memory
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401
from tests.test_lifecycle_observe import extraction, llm_manager
from tests.test_mem0 import HISTORY_KEYS, ITEM_KEYS, MOVIE_CHAT

PLAN = MOVIE_CHAT[0]["content"]  # "I'm planning to watch a movie tonight. ..."
LIKES = MOVIE_CHAT[2]["content"]  # "... I love sci-fi movies."


@pytest.fixture
def memory(tmp_path, clock):
    with Memory(manager=MemoryManager(str(tmp_path / "m.db"), clock=clock)) as m:
        yield m


def short_term(item: dict) -> bool:
    return bool((item["metadata"] or {}).get("short_term"))


def test_add_reports_the_plan_and_get_all_search_and_get_find_it(memory):
    added = memory.add(MOVIE_CHAT, user_id="alice")["results"]
    assert sorted(r["memory"] for r in added) == sorted([PLAN, LIKES])
    [plan] = [r for r in added if r["memory"] == PLAN]
    assert plan["event"] == "ADD" and plan["id"].startswith("short_term:")
    assert "short-term" in plan["reason"]

    listed = memory.get_all(user_id="alice")["results"]
    assert [i["memory"] for i in listed] == [LIKES, PLAN]  # long-term first, then short-term
    assert all(set(item) == ITEM_KEYS for item in listed)
    [item] = [i for i in listed if short_term(i)]
    assert item["id"] == plan["id"] and item["user_id"] == "alice"
    assert item["metadata"] == {"short_term": True, "expires_at": item["metadata"]["expires_at"]}
    assert item["metadata"]["expires_at"] > item["created_at"]
    # Every id add reported answers get().
    assert {memory.get(r["id"])["memory"] for r in added} == {PLAN, LIKES}
    assert memory.get(plan["id"]) == item

    hits = memory.search("movie tonight", user_id="alice")["results"]
    assert hits[0]["id"] == plan["id"] and 0 < hits[0]["score"] <= 1
    assert set(hits[0]) == ITEM_KEYS
    # Filters: the marker selects short-term facts (add's metadata: test_short_term_metadata.py).
    only = memory.get_all(filters={"user_id": "alice", "short_term": True})["results"]
    assert [i["id"] for i in only] == [plan["id"]]


def test_search_ranks_short_term_facts_with_memories_on_one_scale(memory):
    memory.add("I love sci-fi movies", user_id="alice", infer=False)
    memory.add(MOVIE_CHAT[0], user_id="alice")
    # "movies" and "movie" are one word to both: each holds the whole query, a tie
    hits = memory.search("movies", user_id="alice")["results"]
    assert sorted(h["memory"] for h in hits) == sorted(["I love sci-fi movies", PLAN])
    assert hits[0]["score"] == pytest.approx(hits[1]["score"])
    # the one holding more of the query ranks first, whichever tier it is in
    hits = memory.search("watch a movie tonight", user_id="alice")["results"]
    assert [h["memory"] for h in hits] == [PLAN, "I love sci-fi movies"]
    hits = memory.search("sci-fi movie", user_id="alice")["results"]
    assert [h["memory"] for h in hits] == ["I love sci-fi movies", PLAN]
    assert hits[0]["score"] > hits[1]["score"]
    # threshold and top_k apply to short-term facts too
    assert memory.search("movie tonight", user_id="alice", threshold=1.0) == {"results": []}
    [best] = memory.search("watch tonight", user_id="alice", top_k=1)["results"]
    assert best["memory"] == PLAN


def test_an_added_plan_that_is_repeated_is_the_same_fact_renewed(memory, clock):
    [first] = memory.add(MOVIE_CHAT[0], user_id="alice")["results"]
    clock.advance(hours=1)
    [again] = memory.add(MOVIE_CHAT[0], user_id="alice")["results"]
    assert (again["id"], again["event"]) == (first["id"], "NONE")
    assert len(memory.get_all(user_id="alice")["results"]) == 1


def test_delete_and_history_of_a_short_term_id(memory):
    [plan] = memory.add(MOVIE_CHAT[0], user_id="alice")["results"]
    assert memory.delete(plan["id"]) == {"message": "Memory deleted successfully!"}
    assert memory.get(plan["id"]) is None
    assert memory.get_all(user_id="alice") == {"results": []}
    assert memory.search("movie tonight", user_id="alice") == {"results": []}
    history = memory.history(plan["id"])
    assert all(set(entry) >= HISTORY_KEYS for entry in history)
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, PLAN),
        ("DELETE", PLAN, None),
    ]
    with pytest.raises(InvalidInputError, match="not found"):
        memory.delete(plan["id"])
    # the deletion is in memman's audit trail
    assert any(e.content_before == PLAN for e in memory.manager.events(user_id="alice"))


@pytest.mark.parametrize(
    "bad", ["short_term:999", "short_term:abc", "short_term:", "short_term:-1"]
)
def test_an_unknown_short_term_id_is_not_found_never_a_crash(memory, bad):
    assert memory.get(bad) is None
    assert memory.history(bad) == []
    with pytest.raises(InvalidInputError, match="not found"):
        memory.delete(bad)
    with pytest.raises(InvalidInputError, match="not found"):
        memory.update(bad, "I'm going to the theatre tonight")


def test_an_expired_fact_is_gone_from_every_read(memory, clock):
    [plan] = memory.add("I'm heading to the airport now", user_id="alice")["results"]
    assert memory.get(plan["id"]) is not None
    clock.advance(hours=7)  # location facts live 6 hours
    assert memory.get(plan["id"]) is None
    assert memory.get_all(user_id="alice") == {"results": []}
    assert memory.search("airport", user_id="alice") == {"results": []}
    with pytest.raises(InvalidInputError, match="not found"):
        memory.delete(plan["id"])
    assert [(h["event"], h["reason"]) for h in memory.history(plan["id"])] == [
        ("ADD", "short-term fact"),
        ("DELETE", "short-term fact expired"),
    ]


def test_short_term_facts_stay_in_their_scope(memory):
    [plan] = memory.add(MOVIE_CHAT[0], user_id="alice")["results"]
    assert memory.get_all(user_id="bob") == {"results": []}
    assert memory.search("movie tonight", user_id="bob") == {"results": []}
    assert memory.search("movie tonight", user_id="alice", agent_id="planner") == {"results": []}
    memory.delete_all(user_id="bob")
    assert memory.get(plan["id"])["user_id"] == "alice"
    memory.delete_all(user_id="alice")
    assert memory.get(plan["id"]) is None


def test_reset_deletes_short_term_facts_too(memory):
    memory.add(MOVIE_CHAT, user_id="alice")
    memory.add("I'm heading to the gym now", user_id="bob", agent_id="coach")
    memory.reset()
    assert memory.get_all(user_id="alice") == {"results": []}
    assert memory.get_all(user_id="bob", agent_id="coach") == {"results": []}


def test_update_of_a_short_term_fact_replaces_it_and_the_old_id_follows(memory, clock):
    [plan] = memory.add(MOVIE_CHAT[0], user_id="alice")["results"]
    before = memory.get(plan["id"])
    clock.advance(hours=1)
    updated = memory.update(plan["id"], "I'm going to the theatre tonight")
    assert updated["message"] == "Memory updated successfully!"
    assert updated["id"].startswith("short_term:") and updated["id"] != plan["id"]
    now = memory.get(updated["id"])
    assert now["memory"] == "I'm going to the theatre tonight"
    assert now["metadata"]["expires_at"] > before["metadata"]["expires_at"]  # a fresh TTL
    assert [i["memory"] for i in memory.get_all(user_id="alice")["results"]] == [now["memory"]]
    # the id the caller holds keeps standing for the text, through a second update too
    assert memory.get(plan["id"]) == now
    again = memory.update(plan["id"], "I'm going to the opera tonight")
    assert memory.get(plan["id"])["memory"] == memory.get(updated["id"])["memory"]
    assert memory.get(plan["id"])["id"] == again["id"]
    # its own life, then that of each fact that held its text (as for memories); the middle
    # one was left out, and once the last was deleted only the first fact's life was left,
    # its end called "short-term fact deleted"
    line = [
        ("ADD", PLAN),
        ("DELETE", PLAN),
        ("ADD", "I'm going to the theatre tonight"),
        ("DELETE", "I'm going to the theatre tonight"),
        ("ADD", "I'm going to the opera tonight"),
    ]
    history = memory.history(plan["id"])
    assert [(h["event"], h["new_memory"] or h["old_memory"]) for h in history] == line
    assert history[1]["reason"] == f"replaced by update(): now {updated['id']}"
    assert history[3]["reason"] == f"replaced by update(): now {again['id']}"
    memory.delete(plan["id"])  # deletes the fact holding the text
    assert memory.get(again["id"]) is None and memory.get(plan["id"]) is None
    history = memory.history(plan["id"])
    assert [(h["event"], h["new_memory"] or h["old_memory"]) for h in history] == [
        *line,
        ("DELETE", "I'm going to the opera tonight"),
    ]
    assert history[1]["reason"] == f"replaced by update(): now {updated['id']}"


@pytest.mark.parametrize("bad", ["short_term:007", "short_term:" + "9" * 5000])
def test_odd_spellings_of_a_short_term_id_name_nothing(memory, bad):
    memory.add("I'm heading to the gym now", user_id="alice")
    assert memory.get(bad) is None and memory.history(bad) == []


def test_the_short_term_reads_and_delete_on_each_backend(db, clock):
    """The id look-up (short_term_by_id) and the delete's status and event, on SQLite and
    PostgreSQL."""
    with Memory(manager=MemoryManager(db, clock=clock)) as memory:
        [plan] = memory.add(MOVIE_CHAT[0], user_id="alice")["results"]
        assert memory.get(plan["id"])["memory"] == PLAN
        assert [h["id"] for h in memory.search("movie", user_id="alice")["results"]] == [plan["id"]]
        memory.delete(plan["id"])
        assert memory.get(plan["id"]) is None
        assert [h["event"] for h in memory.history(plan["id"])] == ["ADD", "DELETE"]
        assert memory.manager.short_term(user_id="alice") == []


def test_an_llm_s_transient_fact_is_reported_and_found(tmp_path, clock, fake_openai):
    fake_openai.script(
        extraction(
            ("User loves sci-fi movies", "preference", 6, "durable"),
            ("User is watching a movie tonight", "plan", 3, "transient"),
        )
    )
    with Memory(manager=llm_manager(str(tmp_path / "m.db"), fake_openai.base_url, clock)) as m:
        added = m.add(MOVIE_CHAT, user_id="alice")["results"]
        assert [(r["event"], r["memory"]) for r in added] == [
            ("ADD", "User loves sci-fi movies"),
            ("ADD", "User is watching a movie tonight"),
        ]
        listed = {i["id"]: i["memory"] for i in m.get_all(user_id="alice")["results"]}
        assert listed == {r["id"]: r["memory"] for r in added}
        clock.advance(hours=73)  # plans live 72 hours
        assert [i["memory"] for i in m.get_all(user_id="alice")["results"]] == [
            "User loves sci-fi movies"
        ]


def test_short_term_ids_cannot_be_counted_through_and_stay_in_their_scope(db, clock):
    """Issue 29: ids were "short_term:1", "short_term:2", ...: anyone could read or delete
    another user's facts by counting. Now the id holds a token only the store can make, and a
    caller that names its user reaches none of another user's facts."""
    with Memory(manager=MemoryManager(db, clock=clock)) as memory:
        [alice] = memory.add("I'm heading to the gym now", user_id="alice")["results"]
        [bob] = memory.add("I'm heading to the airport now", user_id="bob")["results"]
        for item in (alice, bob):
            number = item["id"].removeprefix("short_term:").split("-")[0]
            counted = f"short_term:{number}"
            assert item["id"] != counted
            assert memory.get(counted) is None and memory.history(counted) == []
            with pytest.raises(InvalidInputError, match="not found"):
                memory.delete(counted)
            with pytest.raises(InvalidInputError, match="not found"):
                memory.update(counted, "I'm at home now")
        assert alice["id"] != bob["id"]
        forged = bob["id"][:-1] + ("0" if bob["id"][-1] != "0" else "1")
        assert memory.get(forged) is None

        # Named by its owner, the id answers; named by another user, it is not found.
        assert memory.get(bob["id"], user_id="bob")["memory"] == bob["memory"]
        assert memory.get(bob["id"], user_id="alice") is None
        assert memory.history(bob["id"], user_id="alice") == []
        with pytest.raises(InvalidInputError, match="not found"):
            memory.delete(bob["id"], user_id="alice")
        with pytest.raises(InvalidInputError, match="not found"):
            memory.update(bob["id"], "I'm at home now", user_id="alice")
        assert [f.content for f in memory.manager.short_term(user_id="bob")] == [bob["memory"]]
        # The same id in another process (a new facade on the same store).
        with Memory(manager=MemoryManager(db, clock=clock)) as again:
            assert again.get(bob["id"], user_id="bob")["memory"] == bob["memory"]
        memory.delete(bob["id"], user_id="bob")
        assert memory.manager.short_term(user_id="bob") == []


def test_a_long_term_id_named_with_another_user_is_not_found(db, clock):
    with Memory(manager=MemoryManager(db, clock=clock)) as memory:
        [bob] = memory.add("I love sci-fi movies", user_id="bob", infer=False)["results"]
        assert memory.get(bob["id"], user_id="bob")["memory"] == "I love sci-fi movies"
        assert memory.get(bob["id"], user_id="alice") is None
        assert memory.history(bob["id"], user_id="alice") == []
        with pytest.raises(InvalidInputError, match="not found"):
            memory.delete(bob["id"], user_id="alice")
        with pytest.raises(InvalidInputError, match="not found"):
            memory.update(bob["id"], "I love westerns", user_id="alice")
        assert [m.content for m in memory.manager.list(user_id="bob")] == ["I love sci-fi movies"]
