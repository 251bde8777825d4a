"""When a fact was said: observe keeps each message's own time, extraction its topic."""

from __future__ import annotations

from memman import MemoryManager, Op, Tier
from tests.decisions import answer
from tests.fake_openai import Reply, chat_completion
from tests.test_lifecycle_observe import llm_manager


def test_an_old_chat_observed_late_never_overwrites_what_the_user_said_since(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        home = mm.update_memory("I live in Munich", user_id="u")  # said now (2026-01-01)
        old_chat = [
            {"role": "user", "content": "I live in Berlin", "timestamp": "2025-03-02T10:00:00Z"},
            {"role": "user", "content": "I have a cat", "timestamp": "2025-03-02T10:01:00Z"},
        ]
        mm.observe(old_chat, user_id="u", session_id="import")
        result = mm.flush("import", user_id="u")
        berlin, cat = result.results
        assert (berlin.op, berlin.memory_id) == (Op.NOOP, home.memory_id)
        assert mm.get(home.memory_id, user_id="u").content == "I live in Munich"
        assert mm.get(cat.memory_id, user_id="u").observed_at == "2025-03-02T10:01:00.000+00:00"
        assert mm.history(home.memory_id, user_id="u")[-1].candidate == "I live in Berlin"


def test_a_bad_message_timestamp_is_a_typed_error(db):
    import pytest

    from memman import InvalidInputError

    with MemoryManager(db) as mm, pytest.raises(InvalidInputError):
        mm.observe(
            [{"role": "user", "content": "hi there", "timestamp": "last tuesday"}],
            user_id="u",
            session_id="s",
        )


def test_the_llms_subject_and_attribute_are_stored(tmp_path, clock, fake_openai):
    fact = {
        "content": "User cycles to the office",
        "category": "work",
        "importance": 4,
        "durability": "durable",
        "subject": "user",
        "attribute": "Commute",
    }
    odd = {**fact, "content": "User's desk faces a window", "attribute": "!!"}
    fake_openai.script(
        Reply(body=chat_completion(tool_args={"facts": [fact, odd]}, tool_name="ExtractedFacts")),
        answer("ADD"),  # the desk, decided with the commute (the profile) shown
    )
    with llm_manager(str(tmp_path / "m.db"), fake_openai.base_url, clock, llm_mode="tools") as mm:
        mm.observe([{"role": "user", "content": "I bike to work"}], user_id="u", session_id="s")
        cycles, desk = mm.flush("s", user_id="u").results
        assert (cycles.op, cycles.tier) == (Op.ADD, Tier.NOVEL)
        stored = mm.get(cycles.memory_id, user_id="u")
        assert (stored.subject, stored.attribute) == ("user", "commute")
        desk = mm.get(desk.memory_id, user_id="u")
        assert desk.content == "User's desk faces a window"  # the odd label dropped, not the fact


def test_a_moment_days_ahead_of_the_clock_is_refused_and_nothing_is_written(db, clock):
    """"Newest observed wins": a fact dated 9999 (milliseconds read as seconds) stayed the
    current value against every later statement. A day of slack is left for clocks and
    naive local times read as UTC."""
    import datetime as dt

    import pytest

    from memman import InvalidInputError

    ahead = clock() + dt.timedelta(days=2)
    with MemoryManager(db, clock=clock) as mm:
        with pytest.raises(InvalidInputError, match=r"observed_at .* is in the future"):
            mm.update_memory("I live in Oslo", user_id="u", observed_at=ahead)
        with pytest.raises(InvalidInputError, match=r"observed_at .* is in the future"):
            mm.update_many(["I live in Oslo"], user_id="u", observed_at="9999-01-01")
        with pytest.raises(InvalidInputError, match=r"timestamp .* is in the future"):
            mm.observe(
                [{"role": "user", "content": "I live in Oslo", "timestamp": ahead.isoformat()}],
                user_id="u",
                session_id="s",
            )
        assert mm.flush("s", user_id="u").results == []  # no message was buffered
        assert mm.list(user_id="u") == []
        soon = clock() + dt.timedelta(hours=20)
        assert mm.update_memory("I live in Oslo", user_id="u", observed_at=soon).op is Op.ADD
