"""Abandoned sessions: consolidate(), flush_idle() and `memman flush` extract them."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from memman import MemoryManager
from tests.clock import Clock
from tests.fake_openai import Reply
from tests.postgres import db_on_each_backend, direct, postgres_url  # noqa: F401
from tests.test_cli import memman  # noqa: F401  (the CLI runner fixture)
from tests.test_lifecycle_observe import llm_manager

COOLDOWN = 120  # extract_cooldown_s's default


def say(mm: MemoryManager, user: str, session: str, *texts: str, agent: str | None = None):
    messages = [{"role": "user", "content": t} for t in texts]
    return mm.observe(messages, user_id=user, agent_id=agent, session_id=session)


def waiting(db: str) -> list[tuple[str, str, str]]:
    with direct(db) as conn:
        query = sa.text(
            "SELECT user_id, session_id, content FROM message_buffer"
            " WHERE extracted_at IS NULL ORDER BY id"
        )
        return [tuple(row) for row in conn.execute(query)]


def test_consolidate_extracts_a_session_nobody_came_back_to(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        say(mm, "u", "s1", "I moved to Porto last spring.", "Tell me a joke")
        clock.advance(seconds=COOLDOWN - 1)
        early = mm.consolidate()
        assert (early.extracted_sessions, early.extracted_messages) == (0, 0)
        assert mm.list(user_id="u") == []
        clock.advance(seconds=1)
        report = mm.consolidate()
        assert (report.extracted_sessions, report.extracted_messages) == (1, 2)
        [extraction] = report.extractions
        assert (extraction.session.session_id, extraction.session.user_id) == ("s1", "u")
        assert [s.why for s in extraction.result.skips] == ["request to the assistant"]
        assert [m.content for m in mm.list(user_id="u")] == ["I moved to Porto last spring."]
        assert mm.consolidate().extractions == []  # done once
    assert waiting(db) == []


def test_a_dry_run_lists_idle_sessions_and_extracts_nothing(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        say(mm, "u", "s1", "I have two cats.", "I play the cello.")
        clock.advance(hours=1)
        report = mm.consolidate(dry_run=True)
        assert report.dry_run and (report.extracted_sessions, report.extracted_messages) == (1, 2)
        assert report.extractions[0].result is None
        assert mm.list(user_id="u") == []
        assert report.model_dump()["extracted_messages"] == 2  # in the JSON form too
    assert len(waiting(db)) == 2


def test_consolidate_for_one_user_leaves_other_users_sessions_alone(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        say(mm, "a", "s-a", "I am Ana and I live in Lisbon.")
        say(mm, "b", "s-b", "I am Bo and I live in Oslo.")
        say(mm, "b", "shared", "I keep bees.")  # one session id used by two users
        say(mm, "a", "shared", "I keep goats.")
        say(mm, "a", "s-a", "I teach maths.", agent="tutor")  # another scope of user a
        clock.advance(hours=1)
        report = mm.consolidate(user_id="a")
        assert sorted(e.session.session_id for e in report.extractions) == ["s-a", "shared"]
        assert sorted(m.content for m in mm.list(user_id="a")) == [
            "I am Ana",  # stored apart from the city (lifecycle/pieces.py)
            "I keep goats.",
            "I live in Lisbon.",
        ]
        assert mm.list(user_id="b") == []
        assert [(u, s) for u, s, _ in waiting(db)] == [("b", "s-b"), ("b", "shared"), ("a", "s-a")]
        everyone = mm.consolidate()
        assert everyone.extracted_sessions == 3
        assert [m.content for m in mm.list(user_id="a", agent_id="tutor")] == ["I teach maths."]
    assert waiting(db) == []


def test_flush_idle_waits_for_the_newest_message_not_the_oldest(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        say(mm, "u", "left", "I speak Welsh.")
        say(mm, "u", "talking", "I run marathons.")
        clock.advance(seconds=100)
        say(mm, "u", "talking", "I live in Leeds.")  # its oldest waited 100 s: not due yet
        clock.advance(seconds=30)
        [done] = mm.flush_idle(user_id="u")  # "talking" spoke 30 s ago: still going on
        assert done.session.session_id == "left" and done.result.extracted_messages == 1
        assert done.session.waiting == 1 and done.result.buffered == 0
        assert [s for _, s, _ in waiting(db)] == ["talking", "talking"]
        clock.advance(seconds=COOLDOWN - 31)
        assert mm.flush_idle() == []
        clock.advance(seconds=1)
        [later] = mm.flush_idle()
        assert later.session.session_id == "talking" and later.result.extracted_messages == 2
        assert sorted(m.content for m in mm.list(user_id="u")) == [
            "I live in Leeds.",
            "I run marathons.",
            "I speak Welsh.",
        ]
    assert waiting(db) == []


def test_max_ops_bounds_the_sessions_consolidate_extracts(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        for session in ("s1", "s2"):
            say(mm, "u", session, f"I own a boat called {session}.")
        clock.advance(hours=1)
        first = mm.consolidate(max_ops=1)
        assert first.truncated and first.extracted_sessions == 1
        assert mm.consolidate().extracted_sessions == 1
    assert waiting(db) == []


def test_a_failed_idle_extraction_keeps_the_messages_buffered(db, clock, fake_openai):
    fake_openai.script(Reply(500, {"error": {"message": "boom"}}))
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        say(mm, "u", "s1", "I moved to Porto last spring.")
        clock.advance(hours=1)
        report = mm.consolidate()
        [extraction] = report.extractions
        assert extraction.result.error and extraction.result.buffered == 1
        assert (report.extracted_sessions, report.extracted_messages) == (0, 0)
    assert waiting(db) == [("u", "s1", "I moved to Porto last spring.")]


def long_ago(db: str, clock: Clock, *said: tuple[str, str, str]) -> None:
    """Buffer messages dated 2001: idle by any real clock the CLI runs with."""
    clock.now = dt.datetime(2001, 1, 1, tzinfo=dt.UTC)
    with MemoryManager(db, clock=clock) as mm:
        for user, session, text in said:
            say(mm, user, session, text)


def test_cli_flush_idle_for_one_user_and_one_session(memman, db, clock):  # noqa: F811
    long_ago(db, clock, ("a", "s-a", "I grow tomatoes."), ("a", "s-a", "Tell me a joke"),
             ("b", "s-b", "I build boats."), ("c", "s-c", "I fly kites."))  # fmt: skip
    run = memman("flush", "--idle", "--user", "a", "--db", db)
    assert run.code == 0, run.output
    assert "1 sessions flushed" in run.out and "s-a" in run.out
    assert "skipped (request to the assistant): Tell me a joke" in run.out
    assert [u for u, _, _ in waiting(db)] == ["b", "c"]
    one = memman("flush", "s-b", "--user", "b", "--db", db)
    assert one.code == 0 and "1 sessions flushed" in one.out
    assert memman("flush", "--idle", "--db", db).code == 0
    assert waiting(db) == []
    with MemoryManager(db) as mm:
        assert [m.content for m in mm.list(user_id="c")] == ["I fly kites."]


def test_cli_flush_needs_a_session_or_idle(memman, db):  # noqa: F811
    for args in ((), ("s1", "--idle"), ("s1",), ("--idle", "--agent", "x")):
        run = memman("flush", *args, "--db", db)
        assert run.code == 1 and run.out == ""
        assert run.err.startswith("Error: ") and run.err.count("\n") == 1


def test_cli_consolidate_reports_the_sessions_it_extracts(memman, db, clock):  # noqa: F811
    # It extracted them and printed "0 changes": the memories it had just written were not
    # mentioned, and a dry run did not say which chats a real run would extract.
    long_ago(db, clock, ("a", "s-a", "I grow tomatoes."), ("a", "s-a", "Tell me a joke"))
    dry = memman("consolidate", "--dry-run", "--db", db)
    assert dry.code == 0 and "1 idle sessions would be extracted" in dry.out and "s-a" in dry.out
    run = memman("consolidate", "--db", db)
    assert run.code == 0, run.output
    assert "1 sessions extracted" in run.out and "s-a" in run.out
    assert "skipped (request to the assistant): Tell me a joke" in run.out
    assert waiting(db) == []


def test_cli_consolidate_exits_2_when_an_extraction_failed(
    memman,  # noqa: F811
    db,
    clock,
    fake_openai,
    monkeypatch,
):
    # A failed extraction (its messages stay buffered) was silent, with exit 0.
    long_ago(db, clock, ("a", "s-a", "I grow tomatoes."))
    fake_openai.script(*[Reply(500, {"error": {"message": "boom"}})] * 4)
    monkeypatch.setenv("MEMMAN_LLM_MODEL", "fake-model")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("MEMMAN_LLM_MAX_RETRIES", "0")
    run = memman("consolidate", "--db", db)
    assert run.code == 2 and "s-a" in run.out
    assert "1 extractions failed; their messages stay buffered" in run.err
    assert waiting(db) == [("a", "s-a", "I grow tomatoes.")]
