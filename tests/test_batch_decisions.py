"""Ambiguous facts of one update_many chunk (or one extraction) are decided in one LLM call."""

from __future__ import annotations

import json

from memman import MemoryManager, Op, Tier
from tests.decisions import add_everything, answer, llm_manager
from tests.fake_openai import FakeOpenAI, Reply, chat_completion
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401

STORED = ["User supports Arsenal", "User plans a trip to Lisbon", "User reads sci-fi novels"]
NEWS = [
    "User supports Chelsea now",
    "User moved the trip to Porto",
    "User now reads sci-fi novels on a Kindle",
]


def batch_answer(*decisions: dict) -> Reply:
    """One BatchDecisions tool call, as a model would send it."""
    body = chat_completion(tool_args={"decisions": list(decisions)}, tool_name="BatchDecisions")
    return Reply(body=body)


def item(number: int, op: str, **fields) -> dict:
    return {"number": number, "decision": {"op": op, "reason": "because", **fields}}


def prompt_of(request: dict) -> str:
    return "\n".join(m["content"] for m in request["json"]["messages"])


def seeded(db: str, base_url: str) -> tuple[MemoryManager, list[str]]:
    mm = llm_manager(db, base_url, llm_mode="tools")
    ids = [mm.update_memory(fact, user_id="u").memory_id for fact in STORED]  # all novel
    return mm, ids


def test_independent_ambiguous_facts_share_one_call(db, fake_openai):
    mm, ids = seeded(db, fake_openai.base_url)
    fake_openai.script(
        batch_answer(
            item(3, "UPDATE", id=3, content="User reads sci-fi novels on a Kindle"),
            item(1, "UPDATE", id=1, content="User supports Chelsea"),
            item(2, "ADD"),
        )
    )
    results = mm.update_many(NEWS, user_id="u")
    assert len(fake_openai.requests) == 1
    prompt = prompt_of(fake_openai.requests[0])
    assert all(json.dumps(fact) in prompt for fact in NEWS + STORED)
    assert [(r.op, r.tier) for r in results] == [
        (Op.UPDATE, Tier.LLM),
        (Op.ADD, Tier.LLM),
        (Op.UPDATE, Tier.LLM),
    ]
    assert (results[0].memory_id, results[2].memory_id) == (ids[0], ids[2])
    assert mm.get(ids[0], user_id="u").content == "User supports Chelsea"
    # The call's tokens are shared among its facts in the audit trail (120 / 3).
    assert {e.tokens for e in mm.events(user_id="u", limit=3)} == {40}


def test_an_invalid_or_missing_item_parks_only_its_fact(db, fake_openai):
    mm, _ = seeded(db, fake_openai.base_url)
    fake_openai.script(
        batch_answer(
            item(1, "UPDATE", id=9, content="User supports Chelsea"),  # no memory 9 is shown
            item(3, "NOOP", id=3),
        )  # nothing for fact 2
    )
    results = mm.update_many(NEWS, user_id="u")
    assert [r.op for r in results] == [Op.PENDING, Op.PENDING, Op.NOOP]
    assert len(fake_openai.requests) == 1
    parked = {p.content: p.error for p in mm.pending(user_id="u")}
    assert "not one of the memories shown" in parked[NEWS[0]]
    assert "no decision" in parked[NEWS[1]]
    assert [m.content for m in mm.list(user_id="u")] == STORED


def test_a_later_fact_touching_a_pending_decision_waits_for_it(db, fake_openai):
    mm, ids = seeded(db, fake_openai.base_url)
    fake_openai.script(
        answer("UPDATE", id=1, content="User supports Chelsea"),
        answer("UPDATE", id=1, content="User supports Arsenal"),
    )
    # The second fact is the memory's old text: settled in the same walk it would be a hash
    # NOOP on text the first decision is about to change. It waits for that decision and is
    # then compared with the new text: the old text said again after the new one replaced
    # it, the newest statement (supersede._said_again proposes it; with an LLM the model
    # decides, shown the memory's new text first).
    results = mm.update_many(["User supports Chelsea now", "User supports Arsenal"], user_id="u")
    assert [(r.op, r.memory_id) for r in results] == [(Op.UPDATE, ids[0]), (Op.UPDATE, ids[0])]
    assert results[1].tier is Tier.LLM
    assert len(fake_openai.requests) == 2
    second = prompt_of(fake_openai.requests[1])
    assert '"User supports Chelsea"' in second.partition("Candidate")[0]
    assert mm.get(ids[0], user_id="u").content == "User supports Arsenal"


def test_an_extraction_decides_its_ambiguous_facts_in_one_call(tmp_path, clock, fake_openai):
    db = str(tmp_path / "m.db")
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    ids = [mm.update_memory(fact, user_id="u").memory_id for fact in STORED]
    facts = [
        {"content": text, "category": "other", "importance": 5, "durability": "durable"}
        for text in NEWS
    ]
    fake_openai.script(
        Reply(body=chat_completion(tool_args={"facts": facts}, tool_name="ExtractedFacts")),
        batch_answer(item(1, "ADD"), item(2, "ADD"), item(3, "NOOP", id=3)),
    )
    mm.observe([{"role": "user", "content": "lots of news"}], user_id="u", session_id="s")
    result = mm.flush("s", user_id="u")
    assert [r.op for r in result.results] == [Op.ADD, Op.ADD, Op.NOOP]
    assert result.results[2].memory_id == ids[2]
    assert len(fake_openai.requests) == 2  # one extraction call, one decision call


CHAT = [
    "I have a dog named Rex",
    "I like jazz",
    "I live in Berlin",
    "I have a dog named Rex and a cat",
    "I work as a nurse",
    "I like jazz and blues",
    "I moved to Munich last month",
    "I play the guitar",
    "I have a dog named Rex",
    "My sister lives in Rome",
    "I play the guitar every evening",
    "I work at St Mary's hospital",
    "I like hiking",
    "I like jazz",
    "I don't live in Munich anymore",
]


def test_update_many_ends_with_the_store_one_at_a_time_writing_makes(tmp_path):
    """The same memories either way, with fewer LLM calls batched (the LLM answers ADD)."""
    stores, calls = [], []
    for batched in (False, True):
        server = FakeOpenAI(default_reply=add_everything).start()
        try:
            path = str(tmp_path / f"{batched}.db")
            with llm_manager(path, server.base_url, llm_mode="tools") as mm:
                if batched:
                    mm.update_many(CHAT, user_id="u")
                else:
                    for fact in CHAT:
                        mm.update_memory(fact, user_id="u")
                stores.append(sorted(m.content for m in mm.list(user_id="u")))
                calls.append(len(server.requests))
        finally:
            server.stop()
    assert stores[0] == stores[1]
    assert 0 < calls[1] < calls[0]
