"""Words with apostrophes are found: FTS5 indexes "O'Neill" as "o" + "neill", not "oneill"."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from tests.test_pair_rules import assert_lexical_noop

MANAGER = "User's manager is Pat O'Neill"


@pytest.fixture
def mm(db):
    with MemoryManager(db) as manager:
        manager.update_many(
            [MANAGER, "User prefers flat white coffee", "User is learning Rust"], user_id="alice"
        )
        yield manager


@pytest.mark.parametrize(
    "query", ["O'Neill", "O’Neill", "o'neill", "Who is O'Neill?", "O'Neill's team"]
)
def test_search_finds_a_name_with_an_apostrophe(mm, query):
    assert [h.content for h in mm.search(query, user_id="alice")] == [MANAGER]


def test_search_finds_a_typographic_apostrophe_by_an_ascii_one(mm):
    # Passed before the fix too, by luck: porter stems both "macys" and "macy" to "maci".
    stored = mm.update_memory("User shops at Macy’s on Fridays", user_id="alice")
    assert [h.id for h in mm.search("Macy's", user_id="alice")] == [stored.memory_id]


def test_search_finds_a_contraction(mm):
    stored = mm.update_memory("User doesn't drink alcohol", user_id="alice")
    assert [h.id for h in mm.search("doesn't", user_id="alice")] == [stored.memory_id]


def test_apostrophe_word_alone_makes_a_memory_a_candidate(mm):
    """The only content word shared is "O'Neill": without it the fact would look novel."""
    manager = mm.search("manager", user_id="alice")[0]
    r = mm.update_memory("O’Neill approved the budget", user_id="alice")
    # No LLM is configured, so the related case is added and flagged offline, not NOVEL.
    assert (r.op, r.tier, r.offline) == (Op.ADD, Tier.OFFLINE, True)
    assert f"related to memory {manager.id[:8]} (Jaccard 0.20)" in r.reason
    event = mm.history(r.memory_id, user_id="alice")[-1]
    assert set(event.scores) == {manager.id}  # {manager, pat, oneill} vs {oneill, approved, budget}
    assert event.scores[manager.id]["jaccard"] == 0.2
    assert "bm25" in event.scores[manager.id]


def test_a_shared_contraction_of_stopwords_does_not_make_facts_related(mm):
    """I'm is "I am": the index is not asked for it, because content_tokens still counts "im"
    and finding it would send every pair of "I'm ..." facts to the decider."""
    mm.update_memory("I'm a nurse at the city hospital", user_id="alice")
    r = mm.update_memory("I'm a big fan of jazz", user_id="alice")
    assert (r.op, r.tier, r.reason) == (Op.ADD, Tier.NOVEL, "no similar memory")


def test_a_contraction_of_stopwords_is_the_same_fact_as_its_long_form(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_lexical_noop(
            mm, "I am a nurse at the city hospital", "I'm a nurse at the city hospital"
        )
        assert len(mm.list(user_id="u")) == 1
