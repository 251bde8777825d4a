"""What memman puts on the wire for a local OpenAI-compatible server, and what it does when
the server refuses a mode or a batch keeps failing (issue 16). Against the local fake server.

- llm_mode auto: tools for OpenAI's own API, json_schema for any other base URL; one
  fallback when the server refuses the mode, recorded in the audit reason; an explicit mode
  is never switched.
- Every call sends max_tokens sized for its answer; the extraction schema has maxItems.
- An UPDATE whose content is the memory's own text is applied as a NOOP, not re-asked.
- A failed extraction batch backs off; after extract_max_tries failures its messages go one
  by one, and one that still fails is reported in stats, never lost.
"""

from __future__ import annotations

import math
import sqlite3

import pytest

from memman import MemoryManager, Op, Tier
from memman.config import Settings
from memman.llm.client import resolve_mode
from tests.decisions import CURRENT, NEW, OLD, answer, llm_manager
from tests.fake_openai import Reply, chat_completion
from tests.test_cli import memman  # noqa: F401 (fixture)
from tests.test_lifecycle_observe import extraction


@pytest.fixture
def primed(tmp_path, fake_openai):
    """A store holding OLD (default llm_mode: auto), whose next related fact goes to the LLM."""

    def make(**settings) -> MemoryManager:
        mm = llm_manager(str(tmp_path / "memory.db"), fake_openai.base_url, **settings)
        mm.update_memory(OLD, user_id="alice")  # novel: no LLM call
        return mm

    return make


@pytest.mark.parametrize(
    ("base_url", "mode", "expected"),
    [
        (None, "auto", "tools"),
        ("https://api.openai.com/v1", "auto", "tools"),
        ("http://127.0.0.1:8080/v1", "auto", "json_schema"),
        ("http://localhost:11434/v1", "auto", "json_schema"),
        ("http://127.0.0.1:8080/v1", "tools", "tools"),  # explicit wins
        (None, "md_json", "md_json"),
    ],
)
def test_auto_mode_is_chosen_by_the_server(base_url, mode, expected):
    settings = Settings(llm_model="m", llm_base_url=base_url, llm_mode=mode)
    assert resolve_mode(settings) == expected


def test_default_mode_against_a_local_server_is_json_schema(primed, fake_openai):
    mm = primed()
    fake_openai.script(answer("UPDATE", id=1, content=CURRENT, reason="switched back"))
    result = mm.update_memory(NEW, user_id="alice")
    assert (result.op, result.tier, result.content) == (Op.UPDATE, Tier.LLM, CURRENT)
    (request,) = fake_openai.requests
    assert "tools" not in request["json"] and "tool_choice" not in request["json"]
    assert request["json"]["response_format"]["type"] == "json_schema"


def test_every_decision_sends_max_tokens_sized_for_its_answer(primed, fake_openai):
    mm = primed(llm_max_tokens=100)
    fake_openai.script(answer("ADD"))
    mm.update_memory(NEW, user_id="alice")
    (request,) = fake_openai.requests
    # The fixed part, plus room to restate the candidate and the memory in an UPDATE.
    assert request["json"]["max_tokens"] == 100 + math.ceil((len(NEW) + len(OLD)) / 3)


# "two": extraction alone, 64 tokens a fact; "one": each fact with its decision, twice that
# (the store is empty: no memory an UPDATE might restate).
@pytest.mark.parametrize("calls, per_fact", [("two", 64), ("one", 128)])
def test_extraction_sends_max_tokens_and_a_bounded_list(
    tmp_path, clock, fake_openai, calls, per_fact
):
    with llm_manager(
        str(tmp_path / "m.db"),
        fake_openai.base_url,
        clock=clock,
        extract_max_facts=5,
        llm_turn_calls=calls,
    ) as mm:
        fake_openai.script(extraction(("User lives in Porto", "location", 6, "durable")))
        mm.observe([{"role": "user", "content": "I live in Porto."}], user_id="u", session_id="s")
        assert mm.flush("s", user_id="u").error is None
    (request,) = fake_openai.requests
    sent = request["json"]
    assert sent["max_tokens"] == 256 + 5 * per_fact
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["facts"]["maxItems"] == 5


def test_too_many_facts_are_reasked(tmp_path, clock, fake_openai):
    """In a mode with no grammar (tools), maxItems is enforced by validation: a re-ask."""
    fact = ("User lives in Porto", "location", 6, "durable")
    fake_openai.script(extraction(*[fact] * 3), extraction(fact))
    with llm_manager(
        str(tmp_path / "m.db"), fake_openai.base_url, clock=clock, llm_mode="tools",
        extract_max_facts=2, llm_max_retries=1,
    ) as mm:  # fmt: skip
        mm.observe([{"role": "user", "content": "I live in Porto."}], user_id="u", session_id="s")
        done = mm.flush("s", user_id="u")
    assert done.error is None and [r.content for r in done.results] == ["User lives in Porto"]
    assert "at most 2 items" in str(fake_openai.requests[1]["json"]["messages"])


def test_update_repeating_the_memory_is_a_noop_not_a_reask(primed, fake_openai):
    mm = primed(llm_max_retries=2)
    fake_openai.script(answer("UPDATE", id=1, content="user supports arsenal.", reason="same"))
    result = mm.update_memory(NEW, user_id="alice")
    assert len(fake_openai.requests) == 1  # not re-asked
    assert (result.op, result.tier) == (Op.NOOP, Tier.LLM)
    assert "applied as NOOP" in result.reason
    assert [m.content for m in mm.list(user_id="alice")] == [OLD]
    assert mm.pending() == []


def test_a_refused_json_schema_falls_back_once_and_is_recorded(primed, fake_openai):
    mm = primed(llm_max_retries=0)
    refusal = {"error": {"message": "response_format type json_schema is not supported"}}
    fake_openai.script(Reply(400, refusal), answer("UPDATE", id=1, content=CURRENT))
    result = mm.update_memory(NEW, user_id="alice")
    assert (result.op, result.content) == (Op.UPDATE, CURRENT)
    first, second = (r["json"] for r in fake_openai.requests)
    assert first["response_format"]["type"] == "json_schema"
    assert "response_format" not in second and "tools" not in second  # md_json: plain text
    event = mm.events(user_id="alice", limit=1)[0]
    assert "fell back from json_schema to md_json" in event.reason
    assert event.attempts == 2
    # Once: the next decision starts in the fallback mode and says nothing more.
    fake_openai.script(answer("ADD"))
    mm.update_memory("User supports Arsenal again", user_id="alice")
    assert "response_format" not in fake_openai.requests[2]["json"]
    assert "fell back" not in mm.events(user_id="alice", limit=1)[0].reason


def test_tools_refused_by_a_prose_answer_falls_back_to_json_schema(
    primed, fake_openai, monkeypatch
):
    """auto starts with tools only for OpenAI's own host; the fake server stands in for it."""
    monkeypatch.setattr("memman.llm.client.resolve_mode", lambda settings: "tools")
    mm = primed(llm_max_retries=0)
    fake_openai.script(
        Reply(body=chat_completion(content="Sure! The user now sits. UPDATE memory 1.")),
        answer("UPDATE", id=1, content=CURRENT),
    )
    result = mm.update_memory(NEW, user_id="alice")
    assert (result.op, result.content) == (Op.UPDATE, CURRENT)
    first, second = (r["json"] for r in fake_openai.requests)
    assert "tools" in first and "tools" not in second
    assert second["response_format"]["type"] == "json_schema"
    assert "fell back from tools to json_schema" in result.reason


def test_an_explicit_mode_is_never_switched(primed, fake_openai):
    mm = primed(llm_max_retries=0, llm_mode="json_schema")
    fake_openai.script(Reply(400, {"error": {"message": "json_schema is not supported"}}))
    result = mm.update_memory(NEW, user_id="alice")
    assert result.op is Op.PENDING and len(fake_openai.requests) == 1
    assert mm.pending()[0].content == NEW


def test_config_shows_the_mode_in_use_and_the_recorded_fallback(
    primed,
    fake_openai,
    memman,  # noqa: F811 (the fixture)
    monkeypatch,
):
    mm = primed(llm_max_retries=0)
    fake_openai.script(Reply(400, {"error": {"message": "unsupported response_format"}}))
    fake_openai.script(answer("ADD"))
    mm.update_memory(NEW, user_id="alice")
    mm.close()
    monkeypatch.setenv("MEMMAN_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    run = memman("config", "--db", mm.path)
    assert run.code == 0
    lines = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in
             run.out.splitlines() if line.count("│") == 3}  # fmt: skip
    assert lines["llm_mode"] == "auto"
    assert lines["llm mode in use"] == "json_schema"
    assert lines["last llm_mode fallback"].startswith(
        "llm_mode auto fell back from json_schema to md_json"
    )


BUSY = [
    "I moved to Porto last spring.",
    "My sister Ana lives in Braga.",
    "I teach chemistry at a school.",
]


def buffered(path: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT content FROM message_buffer WHERE extracted_at IS NULL ORDER BY id"
        )
        return [content for (content,) in rows]


def test_a_failing_extraction_backs_off_then_goes_one_by_one_and_is_reported(
    tmp_path, clock, fake_openai
):
    path = str(tmp_path / "m.db")
    boom = Reply(500, {"error": {"message": "boom"}})
    with llm_manager(
        path, fake_openai.base_url, clock=clock, llm_max_retries=0, extract_max_tries=2,
        extract_retry_backoff_s=60,
    ) as mm:  # fmt: skip
        mm.observe([{"role": "user", "content": m} for m in BUSY], user_id="u", session_id="s")
        fake_openai.script(boom)
        assert "boom" in mm.flush("s", user_id="u").error
        # Not sent again within the backoff, whatever the number of flushes.
        for _ in range(3):
            assert "backing off" in mm.flush("s", user_id="u").error
        assert len(fake_openai.requests) == 1
        clock.advance(seconds=60)
        fake_openai.script(boom)
        assert (
            "boom" in mm.flush("s", user_id="u").error
        )  # second failure: extract_max_tries reached
        assert mm.stats()["extraction_stuck"] == 3
        # From now on each message goes alone; the doubled backoff (120 s) applies first.
        clock.advance(seconds=119)
        assert "backing off" in mm.flush("s", user_id="u").error and len(fake_openai.requests) == 2
        clock.advance(seconds=1)
        fake_openai.script(
            extraction(("User lives in Porto", "location", 6, "durable")),
            boom,
        )
        third = mm.flush("s", user_id="u")
        assert [r.content for r in third.results] == ["User lives in Porto"]
        assert "boom" in third.error
        single = [r["json"]["messages"][0]["content"] for r in fake_openai.requests[2:]]
        assert BUSY[0] in single[0] and BUSY[1] not in single[0]
        assert BUSY[1] in single[1] and BUSY[2] not in single[1]
        assert buffered(path) == BUSY[1:]  # never lost
        # The message that failed a third time waits; the one after it is not held back.
        # Decided with the profile shown (the home in Porto): the model answers ADD.
        fake_openai.script(
            extraction(("User teaches chemistry", "work", 5, "durable")), answer("ADD")
        )
        fourth = mm.flush("s", user_id="u")
        assert [r.content for r in fourth.results] == ["User teaches chemistry"]
        assert "backing off" in fourth.error  # the stuck message, reported
        assert buffered(path) == [BUSY[1]]
        assert mm.stats()["extraction_stuck"] == 1
        failed = [e for e in mm.events(user_id="u") if e.op is Op.PENDING]
        assert len(failed) == 3 and all(e.prompt_template == "extract_facts.j2" for e in failed)
        assert failed[0].source == f"extraction:{2}"
        # After its backoff (240 s) it is tried again, and the session is done.
        clock.advance(seconds=240)
        fake_openai.script(extraction(("User's sister lives in Braga", "family", 5, "durable")))
        assert mm.flush("s", user_id="u").error is None
        assert buffered(path) == [] and mm.stats()["extraction_stuck"] == 0
