"""context() shows the current truth: a core block whatever the query, facts grouped by topic
and dated when the user said them, and a budget too small for any memory saying so.
Topics are set with plain SQL where a test needs a particular one (set_columns).
"""

from __future__ import annotations

from memman import MemoryManager
from memman.lifecycle.block import approx_tokens
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401
from tests.test_lifecycle_consolidate import loose_import, set_columns
from tests.test_lifecycle_recall_related import earlier_under

CORE_HEADER = "Always keep in mind"
HITS_HEADER = "What you remember"


def core_part(text: str) -> str:
    """The core block's lines (header included), as they appear in the text."""
    start = text.index(CORE_HEADER)
    end = text.find(HITS_HEADER, start)
    return text[start : end if end >= 0 else len(text)]


def test_facts_of_one_topic_are_grouped_newest_observed_first_the_older_said_earlier(db, clock):
    # Rome was said later but written first (an import of old chats): its recency rank is
    # lower, yet as the newer statement about the topic it must come first, with its date.
    rome, bike, paris = loose_import(db, clock, ["My sister lives in Rome",
                                                 "My sister rides a bike in Paris",
                                                 "My sister lives in Paris"])  # fmt: skip
    set_columns(db, [rome], subject="sister", attribute="residence",
                observed_at="2025-05-03T18:30:00.000+00:00")  # fmt: skip
    set_columns(db, [paris], subject="sister", attribute="residence",
                observed_at="2024-11-20T09:00:00.000+00:00")  # fmt: skip
    set_columns(db, [bike, paris], updated_at="2026-01-01T00:00:01.000+00:00")
    with MemoryManager(db, clock=clock) as mm:
        block = mm.context("sister lives Paris", user_id="u")
    assert {h.id for h in block.hits} == {rome, bike, paris}
    assert earlier_under(block.text, "- My sister lives in Rome (3 May 2025)") == [
        "  - earlier (20 November 2024): My sister lives in Paris",
    ]
    bike_line = "- My sister rides a bike in Paris (1 January 2026)"
    assert earlier_under(block.text, bike_line) == []  # not of her residence


def test_a_fact_without_an_observed_time_is_dated_by_its_last_write(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        clock.advance(days=122)
        mm.update_memory("User plays the cello", user_id="u")
        block = mm.context("cello", user_id="u")
    assert "- User plays the cello (3 May 2026)" in block.text.splitlines()


def test_hi_gets_the_core_block(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.update_memory("User is allergic to peanuts", user_id="u", category="safety")
        mm.update_memory("User never eats pork", user_id="u", category="constraint")
        mm.update_memory("User's daughter is called Ana", user_id="u", metadata={"pinned": True})
        name = mm.update_memory("User's name is Jon", user_id="u")
        sister = mm.update_memory("User's sister's name is Eva", user_id="u")
        mm.update_memory("User likes chess", user_id="u")
    set_columns(db, [name.memory_id], subject="user", attribute="name")
    set_columns(db, [sister.memory_id], subject="sister", attribute="name")
    with MemoryManager(db, clock=clock) as mm:
        for query in ["hi", "what do you know about me?"]:
            block = mm.context(query, user_id="u")
            core = core_part(block.text)
            for fact in ["allergic to peanuts", "never eats pork", "called Ana", "name is Jon"]:
                assert fact in core
            assert "Eva" not in core and "chess" not in core  # not the user's profile
            assert "nothing relevant" not in block.text
            assert len(block.core) == 4


def test_an_allergy_said_without_a_category_is_in_the_core(db, clock):
    """No caller or extractor said "safety", yet an allergy is one: the topic reader names it
    (attribute allergy), for the user and for the people around them. Offline it was left to
    the query's hits, so "hi" got the user's job and not their peanut allergy."""
    with MemoryManager(db, clock=clock) as mm:
        mm.update_memory("I'm allergic to peanuts", user_id="u")
        mm.update_memory("My son is allergic to bee stings", user_id="u")
        mm.update_memory("I work as a nurse", user_id="u")
        mm.update_memory("I like chess", user_id="u")
        for query in ["hi", "what should we cook tonight?"]:
            core = core_part(mm.context(query, user_id="u").text)
            for fact in ["allergic to peanuts", "allergic to bee stings", "work as a nurse"]:
                assert fact in core
            assert "chess" not in core


def test_a_safety_fact_is_shown_when_the_hits_would_fill_the_budget(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.update_memory("User is allergic to penicillin", user_id="u", category="safety")
        mm.update_many([f"User visited museum number {i} in Lisbon" for i in range(30)],
                       user_id="u")  # fmt: skip
        block = mm.context("museum Lisbon", user_id="u", max_tokens=150)
    assert block.approx_tokens <= 150
    assert "User is allergic to penicillin" in core_part(block.text)
    assert block.hits and HITS_HEADER in block.text


def test_the_core_takes_at_most_its_share_and_the_hits_the_rest(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        for i in range(20):
            mm.update_memory(f"User must avoid medicine number {i}", user_id="u",
                             category="safety")  # fmt: skip
        for i in range(20):
            mm.update_memory(f"User visited museum number {i} in Lisbon", user_id="u")
        block = mm.context("museum Lisbon", user_id="u", max_tokens=300)
        assert approx_tokens(core_part(block.text)) <= 300 * 0.3
        assert 0 < len(block.core) < 20
        assert len(block.hits) > len(block.core)  # the hits get the other 70 %
        assert block.approx_tokens <= 300
        assert block.left_out == 40 - len(block.core) - len(block.hits)
        assert f"{block.left_out} memories did not fit the token budget." in block.text
    with MemoryManager(db, clock=clock, context_core_share=0) as mm:
        block = mm.context("museum Lisbon", user_id="u", max_tokens=300)
        assert block.core == [] and CORE_HEADER not in block.text


def test_a_safety_fact_the_share_cannot_hold_still_comes_before_the_hits(db, clock):
    """At max_tokens=100 the 30-token share held no allergy with its heading, and the block
    showed "User likes Thai food" for a cooking question without the peanut allergy."""
    with MemoryManager(db, clock=clock) as mm:
        allergy = mm.update_memory("User is severely allergic to peanuts", user_id="u",
                                   category="safety")  # fmt: skip
        mm.update_memory("User lives in Berlin", user_id="u")
        thai = mm.update_memory("User likes Thai food", user_id="u")
        block = mm.context("what should I cook tonight? Thai food?", user_id="u", max_tokens=100)
        assert [m.id for m in block.core] == [allergy.memory_id]
        assert [h.id for h in block.hits] == [thai.memory_id]
        assert block.approx_tokens <= 100 and block.left_out == 1
        alone = mm.context("Thai food?", user_id="u", max_tokens=45)
        assert [m.id for m in alone.core] == [allergy.memory_id] and alone.hits == []
        assert alone.approx_tokens <= 45  # the line saying what did not fit counted too
        assert mm.context("Thai food?", user_id="u", max_tokens=40).core == []
    with MemoryManager(db, clock=clock, context_core_share=0) as mm:
        assert mm.context("Thai food?", user_id="u", max_tokens=100).core == []


def test_a_core_memory_is_not_repeated_among_the_hits(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        allergy = mm.update_memory("User is allergic to shellfish", user_id="u",
                                   category="safety")  # fmt: skip
        mm.update_memory("User loves shellfish soup", user_id="u")
        block = mm.context("shellfish", user_id="u")
    assert [m.id for m in block.core] == [allergy.memory_id]
    assert allergy.memory_id not in {h.id for h in block.hits}
    assert block.text.count("allergic to shellfish") == 1
    assert "loves shellfish soup" in block.text.split(HITS_HEADER)[1]


def test_a_budget_too_small_for_any_memory_says_so(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.update_many([f"User visited museum number {i} in Lisbon" for i in range(3)],
                       user_id="u")  # fmt: skip
        block = mm.context("museum", user_id="u", max_tokens=10)
        assert block.hits == [] and block.left_out == 3
        assert block.text == "3 memories did not fit the token budget.\n"
        assert "nothing relevant" in mm.context("museum", user_id="nobody").text


def test_superseded_deleted_and_archived_facts_never_appear(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        gone = mm.update_memory("User is allergic to latex", user_id="u", category="safety")
        mm.delete(gone.memory_id, user_id="u")
        old = mm.update_memory("User's partner is Sam", user_id="u", metadata={"pinned": True})
        faded = mm.update_memory("User works at Acme", user_id="u")
    set_columns(db, [old.memory_id], status="superseded")
    set_columns(db, [faded.memory_id], status="archived")
    with MemoryManager(db, clock=clock) as mm:
        kept = mm.update_memory("User works at Initech", user_id="u")  # the archived one stays
        assert (
            mm.get(kept.memory_id, user_id="u").subject,
            mm.get(kept.memory_id, user_id="u").attribute,
        ) == (
            "user",
            "employer",
        )
        for query in ["hi", "latex allergy partner Sam works Acme"]:
            block = mm.context(query, user_id="u")
            assert [m.id for m in block.core] == [kept.memory_id]
            assert block.hits == []
            for text in ["latex", "Sam", "Acme"]:
                assert text not in block.text
