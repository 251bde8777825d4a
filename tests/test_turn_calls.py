"""One LLM call per chat turn (issue 28): extraction and decisions together, through the
public API against the fake server (tests/fake_openai.py).

With llm_turn_calls "one" (the default) a flush asks prompts/extract_and_decide.j2 once: the
messages, the memories they touch, and per fact its operation. Each fact's answer is checked
on its own (a bad id parks that fact); an answer with nothing usable falls back to the two
calls; the hash tier overrides the model; "two" keeps extraction and decisions apart.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memman import Op, Status, Tier
from memman.errors import InvalidInputError
from memman.mem0 import Memory
from tests.decisions import (
    active,
    add_everything,
    answer,
    asks_a_decision,
    chat_calls,
    llm_manager,
    seed,
)
from tests.fake_openai import Reply, chat_completion

STORED = ["User lives in Berlin", "User likes jazz", "User has a cat named Miso"]


def fact(
    text: str, op: str | None = "ADD", *, durability: str = "durable", **decision: Any
) -> dict:
    """One fact of a DecidedFacts answer: its operation's fields beside it, an UPDATE's new
    text as `memory` (given here as content=); op None: an extraction's fact."""
    said = {"content": text, "category": "profile", "importance": 5, "durability": durability}
    if op is None:
        return said
    if "content" in decision:
        decision["memory"] = decision.pop("content")
    return said | {"op": op, "reason": "x", **decision}


def turn(*facts: dict) -> Reply:
    return Reply(body=chat_completion(tool_args={"facts": list(facts)}, tool_name="DecidedFacts"))


def short_id(request: dict, text: str) -> int:
    """The short id the combined prompt gave the memory with this text."""
    prompt = request["messages"][-1]["content"]
    [number] = re.findall(rf"^\[(\d+)\] \([^)]*\) {re.escape(json.dumps(text))}$", prompt, re.M)
    return int(number)


def moved(request: dict, said: str = "User moved to Lisbon") -> Reply:
    """The answer to a request that shows Berlin: the fact said, an UPDATE of Berlin."""
    berlin = short_id(request, STORED[0])
    return turn(fact(said, "UPDATE", id=berlin, content="User lives in Lisbon"))


def asked(request: dict) -> str:
    """The response model a request asks for (a tool, or a JSON schema from a local server)."""
    if "tools" in request:
        return request["tools"][0]["function"]["name"]
    return request["response_format"]["json_schema"]["name"]


def say(mm, text: str, session: str = "s") -> Any:
    mm.observe([{"role": "user", "content": text}], user_id="ana", session_id=session)
    return mm.flush(session, user_id="ana")


@pytest.fixture
def mm(tmp_path, fake_openai):
    """The combined call's answers applied as they are: llm_turn_recheck (a replacing fact
    decided again alone) has tests of its own below."""
    db = str(tmp_path / "m.db")
    seed(db, STORED)
    manager = llm_manager(db, fake_openai.base_url, llm_turn_recheck=False)
    yield manager
    manager.close()


def test_one_call_per_flush_applies_each_facts_operation(mm, fake_openai):
    def answer(request: dict) -> Reply:
        berlin, jazz, cat = (short_id(request, text) for text in STORED)
        return turn(
            fact("User moved to Lisbon", "UPDATE", id=berlin, content="User lives in Lisbon"),
            fact("User plays tennis on Sundays"),
            fact("User no longer has a cat", "DELETE", id=cat),
            fact("User enjoys jazz", "NOOP", id=jazz),
            fact("User is at the airport now", durability="transient"),
        )

    fake_openai.default_reply = answer
    done = say(mm, "I moved to Lisbon, play tennis on Sundays, Miso is gone. Jazz forever!")

    [call] = chat_calls(fake_openai)
    assert asked(call["json"]) == "DecidedFacts"
    assert '"User lives in Berlin"' in call["json"]["messages"][-1]["content"]
    assert [r.op for r in done.results] == [Op.UPDATE, Op.ADD, Op.DELETE, Op.NOOP]
    assert all(r.tier is Tier.LLM for r in done.results)
    assert (done.extracted_messages, done.buffered, len(done.short_term_ids)) == (1, 0, 1)
    assert active(mm) == ["User likes jazz", "User lives in Lisbon", "User plays tennis on Sundays"]
    event = mm.history(done.results[0].memory_id, user_id="ana")[-1]
    assert (event.prompt_template, event.source) == ("extract_and_decide.j2", "extraction:1")


def test_a_bad_id_parks_only_its_fact(mm, fake_openai):
    fake_openai.script(
        turn(
            fact("User moved to Lisbon", "UPDATE", id=99, content="User lives in Lisbon"),
            fact("User plays tennis on Sundays"),
        )
    )
    done = say(mm, "I moved to Lisbon and play tennis on Sundays.")
    assert len(chat_calls(fake_openai)) == 1
    assert [r.op for r in done.results] == [Op.PENDING, Op.ADD]
    [parked] = mm.pending(user_id="ana")
    assert parked.content == "User moved to Lisbon" and "id 99 is not one" in parked.error
    assert active(mm) == sorted([*STORED, "User plays tennis on Sundays"])
    assert (done.error, done.buffered) == (None, 0)


def test_an_exact_repeat_is_a_noop_whatever_the_model_said(mm, fake_openai):
    fake_openai.default_reply = lambda request: turn(
        fact("User likes jazz", "UPDATE", id=short_id(request, STORED[0]), content="User is bad")
    )
    done = say(mm, "I like jazz.")
    [noop] = done.results
    assert (noop.op, noop.tier) == (Op.NOOP, Tier.HASH)
    assert active(mm) == sorted(STORED)


def test_an_update_text_over_the_limit_parks_and_a_fact_over_it_is_refused(tmp_path, fake_openai):
    db = str(tmp_path / "m.db")
    seed(db, STORED)
    mm = llm_manager(db, fake_openai.base_url, max_fact_chars=200)
    fake_openai.default_reply = lambda request: turn(
        fact("User moved", "UPDATE", id=short_id(request, STORED[0]), content="x" * 300),
        fact("User " + "really " * 40 + "likes tea"),
        fact("User plays tennis"),
    )
    done = say(mm, "I moved. I really like tea. I play tennis.")
    assert [r.op for r in done.results] == [Op.PENDING, Op.ADD]
    assert "the limit is 200" in mm.pending(user_id="ana")[0].error
    [refused] = done.rejected
    assert "likes tea" not in " ".join(active(mm)) and "extraction:1" in refused
    assert active(mm) == sorted([*STORED, "User plays tennis"])
    mm.close()


def test_a_message_of_a_megabyte_is_refused_before_any_call(mm, fake_openai):
    with pytest.raises(InvalidInputError, match="max_message_chars"):
        say(mm, "I like tea. " * 90_000)
    assert chat_calls(fake_openai) == []


def test_an_unusable_answer_keeps_the_messages_for_the_next_flush(tmp_path, fake_openai):
    db = str(tmp_path / "m.db")
    seed(db, STORED)
    mm = llm_manager(db, fake_openai.base_url, extract_retry_backoff_s=0, llm_turn_recheck=False)
    garbage = Reply(body=chat_completion(tool_args="{not json", tool_name="DecidedFacts"))
    # The combined call and its one re-ask, then the extraction alone and its two re-asks.
    fake_openai.script(garbage, garbage, garbage, garbage, garbage)
    done = say(mm, "I moved to Lisbon.")
    assert len(chat_calls(fake_openai)) == 5
    assert done.error is not None and (done.extracted_messages, done.buffered) == (0, 1)
    assert active(mm) == sorted(STORED) and mm.pending(user_id="ana") == []

    fake_openai.default_reply = moved
    later = mm.flush("s", user_id="ana")
    assert [r.op for r in later.results] == [Op.UPDATE] and later.buffered == 0
    mm.close()


def test_a_model_that_cannot_answer_the_schema_falls_back_to_two_calls(mm, fake_openai):
    garbage = Reply(body=chat_completion(content="I cannot do that", tool_name="DecidedFacts"))
    extraction = {"facts": [fact("User plays tennis", None)]}
    fake_openai.script(
        garbage,
        garbage,  # the one re-ask
        Reply(body=chat_completion(tool_args=extraction, tool_name="ExtractedFacts")),
    )
    fake_openai.default_reply = add_everything
    done = say(mm, "I play tennis.")
    names = [asked(c["json"]) for c in chat_calls(fake_openai)]
    assert names[:3] == ["DecidedFacts", "DecidedFacts", "ExtractedFacts"]
    assert [r.op for r in done.results] == [Op.ADD] and done.error is None
    assert "User plays tennis" in active(mm)
    # The audit trail says the one call failed and the batch was decided apart.
    [fell] = [e for e in mm.export_events(user_id="ana") if e.memory_id is None]
    assert fell.prompt_template == "extract_and_decide.j2" and fell.op == "PENDING"
    assert "decided apart" in fell.reason and fell.error


def test_an_answer_without_decisions_is_an_extraction(mm, fake_openai):
    extraction = {"facts": [fact("User plays tennis", None)]}
    fake_openai.script(Reply(body=chat_completion(tool_args=extraction, tool_name="DecidedFacts")))
    fake_openai.default_reply = add_everything
    done = say(mm, "I play tennis.")
    assert [r.op for r in done.results] == [Op.ADD]
    _, *decisions = chat_calls(fake_openai)
    assert "extract_and_decide" not in json.dumps(decisions)
    assert len(decisions) <= 1  # decided as update_many decides (routing may need no call)


def test_a_decision_on_a_memory_changed_meanwhile_is_decided_again(mm, fake_openai):
    # Both facts update Berlin: the first applies, the second finds it changed (stale) and is
    # decided again on its own, against the memory as it is now.
    def answer(request: dict) -> Reply:
        berlin = short_id(request, STORED[0])
        return turn(
            fact("User moved to Lisbon", "UPDATE", id=berlin, content="User lives in Lisbon"),
            fact("User lives near the sea", "UPDATE", id=berlin, content="User lives by the sea"),
        )

    fake_openai.script()
    fake_openai.default_reply = lambda request: (
        answer(request) if asked(request) == "DecidedFacts" else add_everything(request)
    )
    done = say(mm, "I moved to Lisbon, near the sea.")
    assert [r.op for r in done.results] == [Op.UPDATE, Op.ADD]
    calls = chat_calls(fake_openai)
    assert (
        len(calls) == 2 and '"User lives in Lisbon"' in calls[1]["json"]["messages"][-1]["content"]
    )
    assert active(mm) == sorted(
        [
            "User likes jazz",
            "User has a cat named Miso",
            "User lives in Lisbon",
            "User lives near the sea",
        ]
    )


def test_the_setting_two_keeps_extraction_and_decisions_apart(tmp_path, fake_openai):
    db = str(tmp_path / "m.db")
    seed(db, STORED)
    mm = llm_manager(db, fake_openai.base_url, llm_turn_calls="two")
    extraction = {"facts": [fact("User moved to Lisbon", None)]}
    fake_openai.script(
        Reply(body=chat_completion(tool_args=extraction, tool_name="ExtractedFacts"))
    )
    fake_openai.default_reply = add_everything
    done = say(mm, "I moved to Lisbon.")
    first, *rest = chat_calls(fake_openai)
    assert asked(first["json"]) == "ExtractedFacts"
    assert "Memories:" not in first["json"]["messages"][-1]["content"]
    assert len(rest) == 1 and "Candidate" in rest[0]["json"]["messages"][-1]["content"]
    assert [r.op for r in done.results] == [Op.ADD]
    mm.close()


def test_the_mem0_facade_makes_one_call_per_add(tmp_path, fake_openai):
    db = str(tmp_path / "m.db")
    seed(db, STORED)
    memory = Memory(manager=llm_manager(db, fake_openai.base_url, llm_turn_recheck=False))
    fake_openai.default_reply = lambda request: moved(request, "User lives in Lisbon")
    memory.add([{"role": "user", "content": "I live in Lisbon now."}], user_id="ana")
    fake_openai.default_reply = turn(fact("User lives in Lisbon"))  # a repeat: NOOP by hash
    again = memory.add([{"role": "user", "content": "Yes, Lisbon."}], user_id="ana")
    assert [r["event"] for r in again["results"]] == ["NONE"]
    assert len(chat_calls(fake_openai)) == 2
    lisbon = [m for m in memory.manager.list(user_id="ana") if "Lisbon" in m.content]
    assert [m.status for m in lisbon] == [Status.ACTIVE]
    memory.close()


def test_a_server_failure_is_not_retried_as_two_calls(mm, fake_openai):
    fake_openai.script(Reply(500, {"error": {"message": "boom"}}))
    done = say(mm, "I play tennis.")
    assert len(chat_calls(fake_openai)) == 1  # extraction alone would fail alike
    assert "InternalServerError" in done.error and done.buffered == 1
    assert active(mm) == sorted(STORED) and mm.pending(user_id="ana") == []


def test_template_syntax_in_a_message_reaches_the_model_verbatim(mm, fake_openai):
    fake_openai.script(turn(fact("User writes {{ 7 * 7 }} in Jinja {% raw %}")))
    done = say(mm, "I write {{ 7 * 7 }} in Jinja {% raw %}")
    [call] = chat_calls(fake_openai)
    assert (
        json.dumps("I write {{ 7 * 7 }} in Jinja {% raw %}")
        in call["json"]["messages"][-1]["content"]
    )
    assert [r.content for r in done.results] == ["User writes {{ 7 * 7 }} in Jinja {% raw %}"]


HENS = "User keeps about 20 laying hens"
FEWER = "User has about ten laying hens"


def fewer_hens(request: dict) -> Reply:
    """The fact's own decision, shown the hens: an UPDATE of their count."""
    return answer("UPDATE", id=short_id(request, HENS), content="User keeps about ten laying hens")


@pytest.mark.parametrize("recheck", [True, False])
def test_a_fact_touching_a_memory_the_one_call_never_showed_is_decided_again_alone(
    tmp_path, fake_openai, recheck
):
    """The combined call is shown what the messages touch; the fact as the model words it
    may touch a memory the message did not ("Down to about ten layers" / the laying hens).
    Its own decision call, shown its own memories, decides it (llm_turn_recheck, the
    default); False: the combined answer as it is, and the old count stays active."""
    db = str(tmp_path / "m.db")
    seed(db, [*STORED, HENS])
    mm = llm_manager(db, fake_openai.base_url, llm_turn_recheck=recheck, decision_memories=2)

    def reply(request: dict) -> Reply:
        if asks_a_decision(request):
            return fewer_hens(request)
        assert json.dumps(HENS) not in request["messages"][-1]["content"]  # never shown
        return turn(fact(FEWER))  # nothing listed states it: an ADD

    fake_openai.default_reply = reply
    done = say(mm, "A fox got into the coop on Sunday. Down to about ten layers now.")
    asks = [asked(call["json"]) for call in chat_calls(fake_openai)]
    if recheck:
        assert asks == ["DecidedFacts", "MemoryDecision"]
        assert [r.op for r in done.results] == [Op.UPDATE]
        assert "User keeps about ten laying hens" in active(mm) and HENS not in active(mm)
    else:
        assert asks == ["DecidedFacts"]
        assert [r.op for r in done.results] == [Op.ADD]
        assert {HENS, FEWER} <= set(active(mm))
        # Its audit names the memories the model saw: the hens were never among them.
        [hens] = [m.id for m in mm.list(user_id="ana") if m.content == HENS]
        event = mm.history(done.results[0].memory_id, user_id="ana")[-1]
        assert event.scores and str(hens) not in event.scores
    mm.close()


def test_a_turn_that_replaces_nothing_stays_one_call(mm_rechecking, fake_openai):
    fake_openai.default_reply = lambda request: turn(
        fact("User plays tennis on Sundays"),
        fact("User enjoys jazz", "NOOP", id=short_id(request, STORED[1])),
    )
    done = say(mm_rechecking, "I play tennis on Sundays. Jazz forever!")
    assert [r.op for r in done.results] == [Op.ADD, Op.NOOP]
    assert [asked(call["json"]) for call in chat_calls(fake_openai)] == ["DecidedFacts"]


def test_the_one_call_is_shown_the_memories_of_what_a_sentence_is_about(tmp_path, fake_openai):
    """Routing for the combined call is the union a fact's own route shows: the memories of
    the subject and attribute the reader reads in each sentence come first, even when they
    share no word with the message (the cat, for "we got a puppy")."""
    db = str(tmp_path / "m.db")
    seed(db, STORED)
    mm = llm_manager(db, fake_openai.base_url, decision_memories=1)
    fake_openai.default_reply = turn(fact("User has a puppy named Rolo"))
    say(mm, "Big news: we got a puppy!! Rolo is a menace.")
    [combined] = chat_calls(fake_openai)
    assert short_id(combined["json"], STORED[2]) == 1  # listed, and the only one
    mm.close()


def test_a_rechecked_fact_whose_decision_fails_is_parked_not_lost(tmp_path, fake_openai):
    db = str(tmp_path / "m.db")
    seed(db, [*STORED, HENS])
    mm = llm_manager(db, fake_openai.base_url, decision_memories=2)
    fake_openai.script(turn(fact(FEWER)))
    fake_openai.default_reply = Reply(500, {"error": {"message": "boom"}})
    done = say(mm, "A fox got into the coop on Sunday. Down to about ten layers now.")
    assert [r.op for r in done.results] == [Op.PENDING]
    assert [p.content for p in mm.pending(user_id="ana")] == [FEWER]
    assert active(mm) == sorted([*STORED, HENS]) and done.buffered == 0
    mm.close()


@pytest.fixture
def mm_rechecking(tmp_path, fake_openai):
    db = str(tmp_path / "m.db")
    seed(db, STORED)
    manager = llm_manager(db, fake_openai.base_url)
    yield manager
    manager.close()
