"""observe / flush / short-term: buffering, cooldown, offline and LLM extraction, TTL."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from memman import MemoryManager
from memman.errors import InvalidInputError
from memman.lifecycle.shortterm import KEEP_SESSIONS
from memman.models import Op
from tests.clock import Clock
from tests.decisions import answer
from tests.fake_openai import Reply, chat_completion
from tests.postgres import db_on_each_backend, direct, postgres_url  # noqa: F401

CHAT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I moved to Porto last spring."},
    {"role": "assistant", "content": "User loves Porto wine, I assume."},
]


def buffered_rows(db: str) -> list[tuple]:
    with direct(db) as conn:
        return [
            tuple(row)
            for row in conn.execute(
                sa.text(
                    "SELECT role, content FROM message_buffer WHERE extracted_at IS NULL"
                    " ORDER BY id"
                )
            )
        ]


def test_observe_buffers_until_the_cooldown_then_extracts_user_messages_only(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        first = mm.observe(CHAT, user_id="u", session_id="s1")
        assert first.buffered == 3 and first.results == []
        assert mm.list(user_id="u") == []
        clock.advance(seconds=119)
        assert mm.observe([], user_id="u", session_id="s1").results == []
        clock.advance(seconds=1)
        done = mm.observe([{"role": "user", "content": "My sister is called Ana"}],
                          user_id="u", session_id="s1")  # fmt: skip
        assert done.offline and done.buffered == 0 and done.extracted_messages == 4
        assert sorted(m.content for m in mm.list(user_id="u")) == [
            "I moved to Porto last spring.",
            "My sister is called Ana",
        ]
        assert all(r.op is Op.ADD for r in done.results)
        event = mm.history(done.results[0].memory_id, user_id="u")[0]
        assert event.source.startswith("extraction:")
    assert buffered_rows(db) == []


def test_buffered_messages_survive_a_restart_and_flush_forces(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.observe(CHAT, user_id="u", session_id="s1")
    assert len(buffered_rows(db)) == 3  # "crash" here: a new process finds them
    with MemoryManager(db, clock=clock) as mm:
        result = mm.flush("s1", user_id="u")
        assert [r.content for r in result.results] == ["I moved to Porto last spring."]
        assert mm.flush("s1", user_id="u").extracted_messages == 0


def test_observe_refuses_bad_messages_and_buffers_nothing(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        with pytest.raises(InvalidInputError):
            mm.observe([CHAT[1], {"role": "robot", "content": "x"}], user_id="u", session_id="s")
        with pytest.raises(InvalidInputError):
            mm.observe("hello", user_id="u", session_id="s")
    assert buffered_rows(db) == []


def test_an_agent_transcript_is_taken_as_it_is(db, clock):
    transcript = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [
            {"type": "text", "text": "Here is my cat."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "Her name is Miso."},
        ]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "a grey cat"},
        {"role": "assistant", "content": "What a lovely grey cat!"},
    ]  # fmt: skip
    with MemoryManager(db, clock=clock) as mm:
        assert mm.observe(transcript, user_id="u", session_id="s").buffered == 4
        done = mm.flush("s", user_id="u")
        assert [r.content for r in done.results] == ["Here is my cat.\nHer name is Miso."]
        for bad in ([{"type": "text", "text": 7}], {"text": "x"}, 42):
            with pytest.raises(InvalidInputError, match="content"):
                mm.observe([{"role": "user", "content": bad}], user_id="u", session_id="s")


def extraction(*facts: tuple[str, str, int, str]) -> Reply:
    args = {
        "facts": [
            {"content": c, "category": cat, "importance": imp, "durability": d}
            for c, cat, imp, d in facts
        ]
    }
    return Reply(body=chat_completion(tool_args=args, tool_name="ExtractedFacts"))


def preferences(*facts: str) -> Reply:
    """An extraction of durable preferences of importance 6: the mem0 and chatbot tests' facts."""
    return extraction(*((fact, "preference", 6, "durable") for fact in facts))


def llm_manager(path: str, base_url: str, clock: Clock, **settings: object) -> MemoryManager:
    return MemoryManager(
        path,
        clock=clock,
        llm_model="fake-model",
        llm_base_url=base_url,
        llm_api_key="test",
        llm_max_retries=0,
        llm_timeout_s=2,
        **settings,
    )


def test_llm_extraction_routes_durable_and_transient_facts(db, clock, fake_openai):
    fake_openai.script(
        extraction(
            ("User lives in Porto", "location", 7, "durable"),
            ("User is at the airport right now", "location", 3, "transient"),
        )
    )
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        mm.observe(CHAT, user_id="u", session_id="s1")
        result = mm.flush("s1", user_id="u")
        assert not result.offline and result.error is None
        assert [m.content for m in mm.list(user_id="u")] == ["User lives in Porto"]
        stored = mm.list(user_id="u")[0]
        assert (stored.category, stored.importance, stored.metadata) == ("location", 7.0, {})
        [short] = mm.short_term(user_id="u")
        assert short.content == "User is at the airport right now"
        assert short.id == result.short_term_ids[0]
    sent = fake_openai.requests[0]["json"]["messages"][0]["content"]
    assert '"User loves Porto wine, I assume."' in sent  # context, quoted


def test_llm_extraction_failure_keeps_messages_buffered(db, clock, fake_openai):
    fake_openai.script(Reply(500, {"error": {"message": "boom"}}))
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        mm.observe(CHAT, user_id="u", session_id="s1")
        failed = mm.flush("s1", user_id="u")
        assert failed.error and failed.buffered == 3
        assert mm.list(user_id="u") == []
        # The failed batch is not sent again before its backoff (60 s at first) has passed.
        waiting = mm.flush("s1", user_id="u")
        assert "backing off" in waiting.error and len(fake_openai.requests) == 1
        clock.advance(seconds=60)
        fake_openai.script(extraction(("User lives in Porto", "location", 7, "durable")))
        assert mm.flush("s1", user_id="u").results[0].op is Op.ADD
    assert buffered_rows(db) == []


def test_short_term_renews_across_sessions(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        a = mm.remember_short_term("User is in Berlin", user_id="u", session_id="s1",
                                   category="location")  # fmt: skip
        clock.advance(hours=1)
        b = mm.remember_short_term("user is in berlin.", user_id="u", session_id="s2",
                                   category="location")  # fmt: skip
        assert a.id == b.id and b.sessions == ["s1", "s2"]
        assert b.expires_at > a.expires_at


def test_a_fact_said_in_many_sessions_keeps_its_latest_sessions_only(db, clock):
    """Issue 29: one fact said in 20,000 sessions kept them all (a 189 KB list rewritten at
    every mention). The latest KEEP_SESSIONS stay: enough to promote it, and the last one."""
    with MemoryManager(db, clock=clock) as mm:
        for n in range(KEEP_SESSIONS + 8):
            fact = mm.remember_short_term("User is in Berlin", user_id="u", session_id=f"s{n}")
        latest = [f"s{n}" for n in range(8, KEEP_SESSIONS + 8)]
        assert fact.sessions == latest
        # Said again in a session it keeps: that one becomes the latest, nothing is dropped.
        again = mm.remember_short_term("User is in Berlin", user_id="u", session_id="s8")
        assert again.sessions == [*latest[1:], "s8"]
        (stored,) = mm.short_term(user_id="u")
        assert stored.sessions == again.sessions
    with MemoryManager(db, clock=clock, promote_min_sessions=40) as mm:
        for n in range(45):  # never fewer than promotion asks for
            fact = mm.remember_short_term("User is in Paris", user_id="u", session_id=f"p{n}")
        assert len(fact.sessions) == 40 and fact.sessions[-1] == "p44"


def test_a_bad_extracted_category_is_reasked_not_written(db, clock, fake_openai):
    fake_openai.script(
        extraction(("User lives in Porto", "   ", 7, "durable")),
        extraction(("User lives in Porto", "Location", 7, "durable")),
    )
    with MemoryManager(db, clock=clock, llm_model="fake-model",
                       llm_base_url=fake_openai.base_url, llm_api_key="test",
                       llm_max_retries=1) as mm:  # fmt: skip
        mm.observe(CHAT, user_id="u", session_id="s1")
        result = mm.flush("s1", user_id="u")
        assert result.error is None and result.buffered == 0
        [memory] = mm.list(user_id="u")
    assert (memory.category, memory.importance) == ("location", 7.0)
    reask = fake_openai.requests[1]["json"]["messages"][-1]["content"]
    assert "one short lowercase word" in reask


def test_an_unusable_message_is_reported_and_never_blocks_the_session(db, clock):
    pasted = "Here is my whole CV: " + "lorem ipsum " * 500  # over max_fact_chars
    with MemoryManager(db, clock=clock) as mm:
        mm.observe([{"role": "user", "content": pasted}], user_id="u", session_id="s1")
        mm.observe([{"role": "user", "content": "I have a cat"}], user_id="u", session_id="s1")
        first = mm.flush("s1", user_id="u")
        assert [r.content for r in first.results] == ["I have a cat"]
        [why] = first.rejected
        assert why == "extraction:1: fact is 6020 characters; the limit is 4000"
        assert first.buffered == 0  # the session moves on; the next flush is not stuck
        mm.observe([{"role": "user", "content": "I live in Porto"}], user_id="u", session_id="s1")
        second = mm.flush("s1", user_id="u")
        assert [r.content for r in second.results] == ["I live in Porto"] and not second.rejected
    with direct(db) as conn:  # the refused text is still in the buffer, not lost
        kept = conn.execute(sa.text("SELECT content FROM message_buffer WHERE id = 1")).one()
    assert tuple(kept) == (pasted,)


def test_an_unusable_extracted_transient_fact_is_validated_and_reported(
    db, clock, fake_openai
):
    fake_openai.script(
        extraction(
            ("User is boarding a flight \x00 now", "location", 3, "transient"),
            ("User lives in Porto", "location", 7, "durable"),
        )
    )
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        mm.observe(CHAT, user_id="u", session_id="s1")
        result = mm.flush("s1", user_id="u")
        assert [r.content for r in result.results] == ["User lives in Porto"]
        assert len(result.rejected) == 1 and mm.short_term(user_id="u") == []
        assert result.buffered == 0


def test_offline_extraction_leaves_chatter_out_of_memory(db, clock):
    chat = [
        {"role": "user", "content": "hi!"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "I'm training for a marathon in May."},
        {"role": "user", "content": "ok thanks, sounds good"},
        {"role": "user", "content": "Good morning, I got a puppy yesterday"},
        {"role": "user", "content": "I am sure of myself."},  # few content words, still a fact
        {"role": "user", "content": "👍"},
    ]
    with MemoryManager(db, clock=clock) as mm:
        waiting = mm.observe(chat, user_id="u", session_id="s1")
        assert waiting.offline and waiting.buffered == 7  # says the mode before extracting
        done = mm.flush("s1", user_id="u")
        assert done.offline and done.extracted_messages == 7
        assert [r.content for r in done.results] == [
            "I'm training for a marathon in May.",
            "Good morning, I got a puppy yesterday",
            "I am sure of myself.",
        ]
        assert done.skipped == ["hi!", "ok thanks, sounds good", "👍"]
        assert len(mm.list(user_id="u")) == 3
    with direct(db) as conn:  # the skipped words are kept with the conversation
        assert conn.execute(sa.text("SELECT count(*) FROM message_buffer")).scalar() == 7


def test_a_backlog_is_extracted_in_batches_and_a_failed_batch_stays_buffered(
    db, clock, fake_openai
):
    said = [
        "I moved to Porto last spring, near the river.",  # 40-47 characters: 2 per batch
        "My sister Ana lives in Braga with her kids.",
        "I teach chemistry at a secondary school.",
        "I'm learning to surf on weekends in Matosinhos.",
    ]
    fake_openai.script(
        extraction(("User lives in Porto", "location", 6, "durable")),
        Reply(500, {"error": {"message": "boom"}}),
    )
    with llm_manager(db, fake_openai.base_url, clock, extract_batch_chars=100) as mm:
        mm.observe([{"role": "user", "content": m} for m in said], user_id="u", session_id="s")
        first = mm.flush("s", user_id="u")
        assert (first.extracted_messages, first.buffered) == (2, 2) and "500" in first.error
        assert [r.content for r in first.results] == ["User lives in Porto"]
        prompts = [r["json"]["messages"][0]["content"] for r in fake_openai.requests]
        assert said[1] in prompts[0] and said[2] not in prompts[0]  # two messages per call
        assert said[2] in prompts[1] and said[1] not in prompts[1]
        assert [content for _, content in buffered_rows(db)] == said[2:]
        clock.advance(seconds=60)  # the failed batch's backoff
        fake_openai.script(
            extraction(("User teaches chemistry", "work", 5, "durable")),
            answer("ADD"),  # decided with the home in Porto (the profile) shown
        )
        second = mm.flush("s", user_id="u")
        assert (second.extracted_messages, second.buffered, second.error) == (2, 0, None)
        assert sorted(m.content for m in mm.list(user_id="u")) == [
            "User lives in Porto",
            "User teaches chemistry",
        ]
