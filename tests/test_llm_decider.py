"""The LLM decider over the OpenAI wire format, replayed from cassettes (no key, no network).

The cassettes in tests/cassettes/test_llm_decider/ were synthesised by
tests/cassettes/record_cassettes.py (see the README there). Each test takes `llm`, a factory
for a MemoryManager wired to the model, and `vcr`, the cassette: the recording script calls
these same functions with a factory pointing at the local fake server.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from memman import MemoryManager, Op, Status, Tier
from tests.conftest import API_KEY

MODEL = "gpt-4o-mini"

LLMFactory = Callable[..., MemoryManager]


@pytest.fixture
def llm(tmp_path) -> LLMFactory:
    def make(**settings) -> MemoryManager:
        return MemoryManager(
            str(tmp_path / "memory.db"), llm_model=MODEL, llm_api_key=API_KEY, **settings
        )

    return make


def sent_prompts(cassette) -> list[str]:
    """The text of all messages of each request, as the server received it."""
    return [
        "\n".join(str(m.get("content")) for m in json.loads(request.body)["messages"])
        for request in cassette.requests
    ]


# The desk pair of these cassettes is settled without the LLM since the switch rule
# (memman/write/switch.py); the cassettes pin it (their recorded prompts and answers), so the tests
# write it under a caller's attribute, "desk": memman knows no cardinality for it, so it is
# multi-valued and what the switch means is the decider's. The prompt shows no attribute, so
# the requests are the recorded ones.
DESK = {"user_id": "alice", "attribute": "desk"}


@pytest.mark.vcr
def test_contradiction_updates_to_the_current_truth(llm, vcr):
    mm = llm()
    old = mm.update_memory("User uses a standing desk", **DESK)
    result = mm.update_memory("User switched back to a sitting desk", **DESK)
    assert (result.op, result.tier, result.memory_id) == (Op.UPDATE, Tier.LLM, old.memory_id)
    assert "sitting" in result.content.lower()
    assert [m.content for m in mm.list(user_id="alice")] == [result.content]
    added, updated = mm.history(old.memory_id, user_id="alice")
    assert added.op is Op.ADD
    assert (updated.content_before, updated.content_after) == (
        "User uses a standing desk",
        result.content,
    )
    assert (updated.model, updated.prompt_template, updated.attempts) == (
        MODEL,
        "update_memory.j2",
        1,
    )
    assert updated.tokens and updated.prompt_hash and updated.latency_ms is not None
    (prompt,) = sent_prompts(vcr)
    assert '"User uses a standing desk"' in prompt
    assert '"User switched back to a sitting desk"' in prompt


@pytest.mark.vcr
def test_refinement_updates(llm, vcr):
    mm = llm()
    old = mm.update_memory("User likes coffee", user_id="alice")
    result = mm.update_memory("User likes coffee made with oat milk", user_id="alice")
    assert (result.op, result.memory_id, result.previous_content) == (
        Op.UPDATE,
        old.memory_id,
        "User likes coffee",
    )
    assert "oat" in result.content.lower()
    assert len(mm.list(user_id="alice")) == 1


@pytest.mark.vcr
def test_paraphrase_is_noop(llm, vcr):
    mm = llm()
    old = mm.update_memory("User prefers flat white", user_id="alice", source="turn-1")
    result = mm.update_memory(
        "User's usual coffee order is a flat white", user_id="alice", source="turn-9"
    )
    assert (result.op, result.tier, result.memory_id) == (Op.NOOP, Tier.LLM, old.memory_id)
    memory = mm.get(old.memory_id, user_id="alice")
    assert (memory.content, memory.repetition_count, memory.sources) == (
        "User prefers flat white",
        2,
        ["turn-1", "turn-9"],
    )


@pytest.mark.vcr
def test_retraction_is_a_soft_delete(llm, vcr):
    mm = llm()
    old = mm.update_memory("User is learning Rust", user_id="alice")
    result = mm.update_memory("Forget that I'm learning Rust, that was wrong", user_id="alice")
    assert (result.op, result.memory_id) == (Op.DELETE, old.memory_id)
    assert mm.list(user_id="alice") == []
    assert mm.get(old.memory_id, user_id="alice").status is Status.DELETED
    mm.restore(old.memory_id, user_id="alice")
    assert [m.content for m in mm.list(user_id="alice")] == ["User is learning Rust"]


# A real model rarely invents an id on demand, so the next two cassettes are scripted only:
# record_mode="none" keeps them when the others are re-recorded against a real model.


@pytest.mark.vcr(record_mode="none")
def test_hallucinated_id_is_reasked_then_applied(llm, vcr):
    mm = llm(llm_max_retries=2)
    old = mm.update_memory("User uses a standing desk", **DESK)
    result = mm.update_memory("User switched back to a sitting desk", **DESK)
    assert (result.op, result.memory_id) == (Op.UPDATE, old.memory_id)
    assert mm.history(old.memory_id, user_id="alice")[-1].attempts == 2
    first, reask = sent_prompts(vcr)
    assert "id 9 is not one of the memories shown" not in first
    assert "id 9 is not one of the memories shown (valid ids: 1)" in reask


@pytest.mark.vcr(record_mode="none")
def test_hallucinated_id_twice_parks_the_fact(llm, vcr):
    mm = llm(llm_max_retries=1)
    mm.update_memory("User uses a standing desk", **DESK)
    before = mm.list(user_id="alice", include_inactive=True)
    result = mm.update_memory("User switched back to a sitting desk", **DESK)
    assert result.op is Op.PENDING
    assert len(vcr.requests) == 2
    assert mm.list(user_id="alice", include_inactive=True) == before
    (parked,) = mm.pending(user_id="alice")
    assert "not one of the memories shown" in parked.error
    assert mm.events(user_id="alice", limit=1)[0].attempts == 2


TEMPLATE_FACT = "User's greeting template is Hello {{ user }} {% if admin %}(admin){% endif %}"


@pytest.mark.vcr
def test_template_syntax_in_a_fact_reaches_the_model_verbatim(llm, vcr):
    mm = llm()
    mm.update_memory("User's greeting template says Hello", user_id="alice")
    result = mm.update_memory(TEMPLATE_FACT, user_id="alice")
    assert result.op is Op.ADD
    assert TEMPLATE_FACT in [m.content for m in mm.list(user_id="alice")]
    (request,) = vcr.requests
    (message,) = json.loads(request.body)["messages"]
    assert json.dumps(TEMPLATE_FACT, ensure_ascii=False) in message["content"]


@pytest.mark.parametrize("mode", ["json_schema", "json"])
@pytest.mark.vcr
def test_structured_output_modes(llm, vcr, mode):
    mm = llm(llm_mode=mode)
    old = mm.update_memory("User lives in Berlin", user_id="alice")
    result = mm.update_memory("User moved from Berlin to Lisbon", user_id="alice")
    assert (result.op, result.memory_id) == (Op.UPDATE, old.memory_id)
    assert "Lisbon" in result.content
    (request,) = vcr.requests
    body = json.loads(request.body)
    assert "tools" not in body
    expected_format = "json_schema" if mode == "json_schema" else "json_object"
    assert body["response_format"]["type"] == expected_format
