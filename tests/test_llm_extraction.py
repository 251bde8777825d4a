"""LLM extraction (observe / flush) over the OpenAI wire format, replayed from cassettes.

The cassettes in tests/cassettes/test_llm_extraction/ were synthesised by
tests/cassettes/record_cassettes.py (see the README there): the requests are exactly what
memman sends, the answers are hand-written. They hold llm_turn_calls "two"'s exchange (an
extraction call, then a decision call); the one-call path is tested against the fake server in
test_turn_calls.py. Each test takes `llm`, a factory for a
MemoryManager wired to the model, and `vcr`, the cassette. Faults (an extraction that fails
keeps the messages buffered) are tested against the fake server in test_lifecycle_observe.py.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from memman import MemoryManager, Op, Tier
from tests.clock import Clock
from tests.test_llm_decider import llm  # noqa: F401 (fixture)

CHAT = [
    {"role": "system", "content": "You are a helpful travel assistant."},
    {"role": "user", "content": "I'm at the airport right now, flying home to Porto."},
    {"role": "assistant", "content": "Nice! You must love Porto wine."},
    {"role": "user", "content": "Ha, no. Careful with snacks though, I'm allergic to peanuts."},
]


def unextracted(mm: MemoryManager) -> int:
    with sqlite3.connect(mm.path) as conn:
        return conn.execute(
            "SELECT count(*) FROM message_buffer WHERE extracted_at IS NULL"
        ).fetchone()[0]


def requests(cassette) -> list[dict]:
    return [json.loads(request.body) for request in cassette.requests]


@pytest.mark.vcr
def test_extraction_routes_durable_and_transient_facts(llm, vcr):  # noqa: F811
    clock = Clock()
    mm = llm(clock=clock, llm_turn_calls="two")  # the cassette's exchange: two calls
    mm.observe(CHAT, user_id="ana", session_id="trip")
    result = mm.flush("trip", user_id="ana")

    assert (result.error, result.offline, result.extracted_messages) == (None, False, 4)
    assert unextracted(mm) == 0
    # Durable facts went through update_memory, with the message ids as provenance.
    # The first is novel; the second is decided with the profile shown (the home just stored).
    assert [(r.op, r.tier) for r in result.results] == [(Op.ADD, Tier.NOVEL), (Op.ADD, Tier.LLM)]
    stored = {m.content: m for m in mm.list(user_id="ana")}
    assert set(stored) == {"User is allergic to peanuts", "User lives in Porto"}
    assert (stored["User is allergic to peanuts"].category,
            stored["User is allergic to peanuts"].importance) == ("safety", 9.0)  # fmt: skip
    assert (stored["User lives in Porto"].category,
            stored["User lives in Porto"].importance) == ("location", 6.0)  # fmt: skip
    for memory in stored.values():
        [event] = mm.history(memory.id, user_id="ana")
        assert event.source == "extraction:1,2,3,4"
    # The transient one went to short-term memory, with its TTL by category (location: 6 h).
    [now] = mm.short_term(user_id="ana")
    assert (now.content, now.category, now.importance, now.sessions) == (
        "User is at the airport right now",
        "location",
        3.0,
        ["trip"],
    )
    assert now.id == result.short_term_ids[0] and now.expires_at.startswith("2026-01-01T06:00")
    # The assistant's guess is context for the model, never stored as the user's fact.
    assert not any("wine" in text for text in [*stored, now.content])
    request, decided = requests(vcr)
    [prompt] = [m["content"] for m in request["messages"]]
    assert 'assistant: "Nice! You must love Porto wine."' in prompt
    assert '"User lives in Porto"' in decided["messages"][-1]["content"]
    assert request["tools"][0]["function"]["name"] == "ExtractedFacts"

    # The extracted category protects: a year unused, the allergy neither decays nor archives.
    clock.advance(days=365)
    report = mm.consolidate()
    assert {(c.action, c.content) for c in report.changes} == {
        ("expire", "User is at the airport right now"),
        ("archive", "User lives in Porto"),
    }
    assert (
        mm.get(stored["User is allergic to peanuts"].id, user_id="ana")
        == stored["User is allergic to peanuts"]
    )
    mm.close()


@pytest.mark.vcr
def test_an_extracted_change_is_decided_against_the_stored_fact(llm, vcr):  # noqa: F811
    mm = llm(clock=Clock(), llm_turn_calls="two")  # the cassette's exchange: two calls
    old = mm.update_memory("User lives in Berlin", user_id="ana")  # novel: no LLM call
    mm.observe([{"role": "user", "content": "We finally moved to Lisbon last month!"}],
               user_id="ana", session_id="s2")  # fmt: skip
    result = mm.flush("s2", user_id="ana")

    # Both state where the user lives: the topic rule proposes the old home, shown first to
    # the decision call after the extraction, and the model's UPDATE replaces it.
    [update] = result.results
    assert (update.op, update.tier, update.memory_id) == (Op.UPDATE, Tier.LLM, old.memory_id)
    memory = mm.get(old.memory_id, user_id="ana")
    assert (memory.content, memory.subject, memory.attribute) == (
        "User lives in Lisbon now",
        "user",
        "residence",
    )
    assert (memory.category, memory.importance) == ("location", 7.0)  # filled; max(5, 7)
    _, updated = mm.history(old.memory_id, user_id="ana")
    assert (updated.source, updated.content_before) == ("extraction:1", "User lives in Berlin")
    extract_call, decide_call = requests(vcr)
    assert extract_call["tools"][0]["function"]["name"] == "ExtractedFacts"
    assert '"User lives in Berlin"' in decide_call["messages"][-1]["content"]
    mm.close()
