"""Failure is never loss: every LLM fault parks the fact, and retry_pending() settles it later.

The faults come from the local fake OpenAI server (127.0.0.1 only).
"""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier, UpdateResult
from tests.decisions import CURRENT, NEW, OLD, answer, decision, llm_manager
from tests.fake_openai import Reply, chat_completion


def tool_reply(arguments) -> Reply:
    return Reply(body=chat_completion(tool_args=arguments))


FAULTS = [
    pytest.param([Reply(delay_s=1.5, body=chat_completion())], "APITimeoutError", id="timeout"),
    pytest.param([Reply(500, {"error": {"message": "boom"}})], "InternalServerError", id="500"),
    pytest.param(
        [Reply(429, {"error": {"message": "slow down", "type": "rate_limit"}})],
        "RateLimitError",
        id="429",
    ),
    pytest.param([Reply(200, "{not json at all")], "JSONDecodeError", id="garbage-body"),
    pytest.param([tool_reply("{'op': ADD")], "Invalid JSON", id="garbage-tool-arguments"),
    pytest.param([tool_reply({"answer": "UPDATE it"})], "Field required", id="wrong-schema"),
    pytest.param([tool_reply(decision("MERGE", id=1))], "MERGE", id="unknown-op"),
    pytest.param([tool_reply(decision("UPDATE", id=1, content="  "))], "empty", id="empty-update"),
    pytest.param([tool_reply(decision("DELETE", id=9))], "not one of the memories", id="bad-id"),
    pytest.param(
        [Reply(body=chat_completion(content="I think ADD"))], "No tool calls", id="no-tool-call"
    ),
]


# The client's patience: short where the fake server is told to answer too late (it always
# answers later still), long elsewhere, so a loaded machine never turns a reply into a timeout.
SHORT_TIMEOUT_S, LONG_TIMEOUT_S = 0.5, 60.0


@pytest.fixture
def primed(tmp_path, fake_openai, request):
    """A store holding OLD, whose next related fact goes to the fake server."""
    callspec = getattr(request.node, "callspec", None)
    replies = callspec.params.get("replies", []) if callspec is not None else []
    late = any(reply.delay_s > SHORT_TIMEOUT_S for reply in replies)
    mm = llm_manager(  # tools, as set: the faults below are tool-call faults, never switched
        str(tmp_path / "memory.db"),
        fake_openai.base_url,
        llm_max_retries=0,
        llm_timeout_s=SHORT_TIMEOUT_S if late else LONG_TIMEOUT_S,
        llm_mode="tools",
    )
    mm.update_memory(OLD, user_id="alice")  # novel: no LLM call
    assert fake_openai.requests == []
    yield mm
    mm.close()


@pytest.mark.parametrize(("replies", "error_text"), FAULTS)
def test_fault_parks_the_fact_and_retry_applies_it(primed, fake_openai, replies, error_text):
    mm = primed
    before = mm.list(user_id="alice", include_inactive=True)
    fake_openai.script(*replies)

    result = mm.update_memory(NEW, user_id="alice", source="msg-2")

    assert isinstance(result, UpdateResult)
    assert len(fake_openai.requests) == 1  # llm_max_retries=0: no re-ask
    assert (result.op, result.tier, result.memory_id) == (Op.PENDING, Tier.PENDING, None)
    assert mm.list(user_id="alice", include_inactive=True) == before
    (parked,) = mm.pending(user_id="alice")
    assert (parked.id, parked.content, parked.source) == (result.pending_id, NEW, "msg-2")
    assert error_text in parked.error
    event = mm.events(user_id="alice", limit=1)[0]
    assert (event.id, event.op, event.tier, event.memory_id) == (
        result.event_id,
        Op.PENDING,
        Tier.PENDING,
        None,
    )
    assert event.error == parked.error
    assert event.candidate == NEW

    fake_openai.script(answer("UPDATE", id=1, content=CURRENT, reason="switched back"))
    (retried,) = mm.retry_pending()
    assert (retried.op, retried.tier) == (Op.UPDATE, Tier.LLM)
    assert mm.pending() == []
    assert [m.content for m in mm.list(user_id="alice")] == [CURRENT]
    assert [e.op for e in mm.history(retried.memory_id, user_id="alice")] == [Op.ADD, Op.UPDATE]


def test_failed_retry_keeps_the_fact_pending_and_counts_attempts(primed, fake_openai):
    mm = primed
    fake_openai.script(Reply(500, {"error": {"message": "down"}}))
    first = mm.update_memory(NEW, user_id="alice")
    fake_openai.script(Reply(503, {"error": {"message": "still down"}}))
    (again,) = mm.retry_pending(user_id="alice")
    assert (again.op, again.pending_id) == (Op.PENDING, first.pending_id)
    (parked,) = mm.pending()
    assert parked.attempts == 2
    assert "still down" in parked.error
    assert [e.op for e in mm.events(user_id="alice")] == [Op.PENDING, Op.PENDING, Op.ADD]


def test_invalid_output_after_all_reasks_never_raises(tmp_path, fake_openai):
    """instructor gives up with InstructorRetryException; update_memory returns PENDING."""
    mm = llm_manager(str(tmp_path / "memory.db"), fake_openai.base_url, llm_max_retries=2)
    mm.update_memory(OLD, user_id="alice")
    fake_openai.script(*[tool_reply({"answer": "no"}) for _ in range(3)])
    result = mm.update_memory(NEW, user_id="alice")
    assert result.op is Op.PENDING
    assert len(fake_openai.requests) == 3  # the first try and two re-asks
    event = mm.events(user_id="alice", limit=1)[0]
    assert event.attempts == 3
    assert event.tokens == 3 * 120
    assert [m.content for m in mm.list(user_id="alice")] == [OLD]


def test_reask_carries_the_validation_message_to_the_model(tmp_path, fake_openai):
    mm = llm_manager(str(tmp_path / "memory.db"), fake_openai.base_url, llm_max_retries=1)
    mm.update_memory(OLD, user_id="alice")
    fake_openai.script(
        tool_reply(decision("UPDATE", id=1, content="")),
        answer("UPDATE", id=1, content=CURRENT),
    )
    result = mm.update_memory(NEW, user_id="alice")
    assert result.op is Op.UPDATE
    reask = str(fake_openai.requests[1]["json"]["messages"])
    assert "UPDATE content is empty" in reask


def test_unreachable_server_parks_the_fact(tmp_path):
    mm = MemoryManager(
        str(tmp_path / "memory.db"),
        llm_model="gpt-4o-mini",
        llm_base_url="http://127.0.0.1:9/v1",  # discard port: connection refused
        llm_max_retries=0,
    )
    mm.update_memory(OLD, user_id="alice")
    result = mm.update_memory(NEW, user_id="alice")
    assert result.op is Op.PENDING
    assert "Connection" in mm.pending()[0].error
