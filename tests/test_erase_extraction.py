"""Erasure against an LLM extraction in flight: a forget() that lands while the LLM answers a
flush leaves none of the erased user's facts behind, on either backend, and the facts of users
who were not erased are all written.

The forget runs from another MemoryManager on the same store (as another process would) inside
the fake server's answer to the extraction request: deterministic, no timing.
"""

from __future__ import annotations

from typing import Any

import pytest

from memman import MemoryManager
from memman.errors import LeaseLostError
from memman.models import Op
from tests.clock import Clock
from tests.decisions import NEW, OLD, add_everything, answer, asks_a_decision
from tests.fake_openai import Reply
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401
from tests.test_erase import raw_bytes
from tests.test_lifecycle_merge import DISTINCT, keep_reply
from tests.test_lifecycle_observe import extraction, llm_manager

# Words nothing else in the store contains.
ALICE = ["qzxhotel", "qzxindia", "qzxjuliet"]
BOB = ["vwkilo", "vwlima", "vwmike"]
CAROL = ["vwnovember", "vwoscar", "vwpapa"]


def facts_of(words: list[str]) -> Reply:
    """Two durable facts and a transient one, in the order an LLM may list them."""
    return extraction(
        (f"User lives in {words[0]}", "location", 7, "durable"),
        (f"User is at {words[1]} station right now", "location", 3, "transient"),
        (f"User works at {words[2]}", "work", 6, "durable"),
    )


class ForgetWhileAnswering:
    """The fake server's answer to a chat request: alice's extraction request first erases
    alice through another manager, then gets `alice_reply`; the others get what they said."""

    def __init__(self, db: str, clock: Clock, alice_reply: Reply, marker: str = ALICE[0]):
        self.db, self.clock, self.alice_reply, self.marker = db, clock, alice_reply, marker
        self.erased = 0

    def __call__(self, sent: Any) -> Reply:
        prompt = str(sent)
        if self.marker not in prompt and asks_a_decision(sent):
            return add_everything(sent)  # a fact decided with the profile shown: kept
        if self.marker not in prompt:
            return facts_of(BOB if BOB[0] in prompt else CAROL)
        with MemoryManager(self.db, clock=self.clock) as other:
            self.erased += other.forget("alice").messages
        return self.alice_reply


def observe(mm: MemoryManager, user: str, words: list[str], session: str) -> None:
    said = [
        f"I live in {words[0]}",
        f"I'm at {words[1]} station now",
        f"I work at {words[2]}",
    ]
    mm.observe([{"role": "user", "content": s} for s in said], user_id=user, session_id=session)


def assert_nothing_of_alice(mm: MemoryManager, db: str) -> None:
    assert mm.list(user_id="alice", include_inactive=True) == []
    assert mm.short_term(user_id="alice") == []
    assert mm.events(user_id="alice") == []
    found = raw_bytes(db)
    assert not [word for word in ALICE if word.encode() in found]


# batch_chunk_size 1: each durable fact is written in its own transaction, as the facts of a
# long extraction are (and as an ambiguous fact, applied after its decision, always is).
@pytest.mark.parametrize("chunk", [1, 50])
def test_a_forget_while_the_llm_extracts_writes_none_of_the_facts(db, clock, fake_openai, chunk):
    hook = ForgetWhileAnswering(db, clock, facts_of(ALICE))
    fake_openai.default_reply = hook
    with llm_manager(db, fake_openai.base_url, clock, batch_chunk_size=chunk) as mm:
        observe(mm, "alice", ALICE, "s")
        with pytest.raises(LeaseLostError, match="erased"):
            mm.flush("s", user_id="alice")
        assert hook.erased == 3
        assert_nothing_of_alice(mm, db)


def test_a_forget_while_the_llm_fails_records_no_failure_of_the_erased_user(db, clock, fake_openai):
    """The failed extraction's audit event (user id, message ids, the error) is not written."""
    fake_openai.default_reply = ForgetWhileAnswering(
        db, clock, Reply(500, {"error": {"message": "boom"}})
    )
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        observe(mm, "alice", ALICE, "s")
        with pytest.raises(LeaseLostError, match="erased"):
            mm.flush("s", user_id="alice")
        assert_nothing_of_alice(mm, db)


def test_an_idle_flush_keeps_every_fact_of_the_users_not_erased(db, clock, fake_openai):
    """Alice is erased while her session is extracted; bob's and carol's, extracted in the
    same run (before and after hers), are written in full: durable and transient facts."""
    fake_openai.default_reply = ForgetWhileAnswering(db, clock, facts_of(ALICE))
    with llm_manager(db, fake_openai.base_url, clock, batch_chunk_size=1) as mm:
        observe(mm, "bob", BOB, "b")
        observe(mm, "alice", ALICE, "a")
        observe(mm, "carol", CAROL, "c")
        clock.advance(hours=2)
        done = mm.flush_idle()
        assert [d.session.session_id for d in done] == ["b", "c"]
        for user, words in (("bob", BOB), ("carol", CAROL)):
            assert sorted(m.content for m in mm.list(user_id=user)) == [
                f"User lives in {words[0]}",
                f"User works at {words[2]}",
            ]
            assert [f.content for f in mm.short_term(user_id=user)] == [
                f"User is at {words[1]} station right now"
            ]
        assert_nothing_of_alice(mm, db)


def test_observed_metadata_reaches_each_extracted_fact(db, clock, fake_openai):
    """observe(metadata=) on either backend: the LLM's durable facts carry their messages'."""
    fake_openai.script(facts_of(BOB))
    fake_openai.default_reply = add_everything  # the second fact meets the first's profile
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        said = [{"role": "user", "content": f"I live in {BOB[0]}"}]
        mm.observe(said, user_id="bob", session_id="b", metadata={"via": "onboarding"})
        assert len(mm.flush("b", user_id="bob").results) == 2
        assert [m.metadata for m in mm.list(user_id="bob")] == [{"via": "onboarding"}] * 2


@pytest.mark.parametrize(
    "decided",
    [answer("ADD", reason="both clubs"), answer("UPDATE", id=1, content=f"{NEW} (not {OLD})")],
    ids=["add", "update"],
)
def test_a_forget_while_the_llm_decides_a_promotion_writes_nothing(db, clock, fake_openai, decided):
    """consolidate() promotes a recurring short-term fact; its decision goes to the LLM, and
    alice is erased while it answers: neither the fact nor its mark is written, and
    consolidate goes on."""
    fake_openai.default_reply = ForgetWhileAnswering(db, clock, decided, marker="Chelsea")
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        mm.update_memory(OLD, user_id="alice")
        for session in ("s1", "s2"):
            mm.remember_short_term(NEW, user_id="alice", session_id=session)
        mm.update_memory("I play the vwkoboe", user_id="bob")
        report = mm.consolidate()
        assert [c.action for c in report.changes if c.action == "promote"] == []
        assert mm.list(user_id="alice", include_inactive=True) == []
        assert mm.short_term(user_id="alice") == mm.events(user_id="alice") == []
        assert [m.content for m in mm.list(user_id="bob")] == ["I play the vwkoboe"]
    assert b"chelsea" not in raw_bytes(db)


def test_a_forget_while_the_llm_judges_a_cluster_records_no_verdict(db, clock, fake_openai):
    """consolidate() asks the LLM about alice's two related memories and she is erased while
    it answers: its verdict (an event quoting her memory) is not written."""
    with MemoryManager(db, clock=clock) as offline:
        for fact in DISTINCT:
            assert offline.update_memory(fact, user_id="alice").op is Op.ADD
    fake_openai.default_reply = ForgetWhileAnswering(db, clock, keep_reply(), marker="Salt")
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        [cluster] = mm.consolidate().ambiguous_clusters
        assert cluster.outcome == "changed"
        assert_nothing_of_alice(mm, db)
    assert b"salt lake" not in raw_bytes(db)
