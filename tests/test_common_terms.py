"""In a large scope, query words most memories hold only re-rank the memories holding a rarer
word (fts.COMMON_TERM_ROWS): same memories, same order, same bm25 as the plain OR
query gives them, less the memories that hold common words only."""

from __future__ import annotations

import pytest

from memman import MemoryManager
from memman.models import Op
from memman.storage import fts
from memman.storage.store import Scope
from memman.write.retrieval import lexical_candidates
from tests.test_bulk_ingest import snapshot

FACTS = [
    "User plays guitar with Ann on Mondays",
    "User tunes the guitar before every gig",
    "User bought a red guitar in Porto",
    "User's guitar teacher lives in Lyon",
    "User broke a guitar string yesterday",
    "User keeps the guitar in a hard case",
    "User learned guitar from YouTube videos",
    "User wants a twelve string guitar",
    "User plays the banjo at weddings",
    "User plays banjo and guitar at O'Neill's pub",
    "User met O'Neill at the guitar shop",
    "User likes the sound of a banjo",
    "User drinks coffee with oat milk",
]
# Patched threshold: guitar (10 memories) is common; plays (3), banjo (3), O'Neill (2) are rare.
COMMON = 4


@pytest.fixture
def mm(tmp_path):
    with MemoryManager(str(tmp_path / "memory.db")) as manager:
        for fact in FACTS:
            manager.update_memory(fact, user_id="alice")
        manager.update_memory("User plays guitar too", user_id="bob")
        yield manager


def _ranked(mm: MemoryManager, query: str, k: int) -> list[tuple[str, float]]:
    with mm.store.read() as read:
        found = lexical_candidates(mm.store, read, Scope("alice"), query, k)
    return [(r.memory.content, r.bm25) for r in found]


def _holds(content: str, words: list[str]) -> bool:
    plain = content.lower().replace("'", " ")
    return any(word in plain for word in words)


@pytest.mark.parametrize(
    ("query", "rare"),
    [
        ("banjo guitar", ["banjo"]),
        ("I want to play the banjo with my guitar", ["banjo", "want", "play"]),
        ("O'Neill guitar", ["o neill"]),
    ],
)
def test_common_words_rerank_the_memories_holding_a_rare_one(mm, monkeypatch, query, rare):
    plain = _ranked(mm, query, len(FACTS))  # 13 rows: too few for common words
    assert sum("guitar" in content for content, _ in plain) > COMMON  # the premise
    monkeypatch.setattr(fts, "COMMON_TERM_ROWS", COMMON)
    for k in (2, 5, len(FACTS)):
        expected = [row for row in plain if _holds(row[0], rare)][:k]
        found = _ranked(mm, query, k)
        assert [content for content, _ in found] == [content for content, _ in expected]
        assert [bm25 for _, bm25 in found] == pytest.approx([bm25 for _, bm25 in expected])


def test_a_query_of_one_common_word_is_the_plain_query(mm, monkeypatch):
    plain = _ranked(mm, "my guitar", 5)
    monkeypatch.setattr(fts, "COMMON_TERM_ROWS", COMMON)
    assert _ranked(mm, "my guitar", 5) == plain


def test_when_every_word_is_common_the_rarest_leads(mm, monkeypatch):
    """guitar (10 rows) and string (2) both above a threshold of 1: string leads."""
    plain = _ranked(mm, "guitar string", len(FACTS))
    monkeypatch.setattr(fts, "COMMON_TERM_ROWS", 1)
    found = _ranked(mm, "guitar string", 5)
    expected = [row for row in plain if "string" in row[0]]
    assert [content for content, _ in found] == [content for content, _ in expected]
    assert [bm25 for _, bm25 in found] == pytest.approx([bm25 for _, bm25 in expected])


def test_the_write_path_finds_a_restated_memory_among_common_words(mm, monkeypatch):
    monkeypatch.setattr(fts, "COMMON_TERM_ROWS", COMMON)
    result = mm.update_memory("User plays the banjo at weddings!", user_id="alice")
    assert result.op.value == "NOOP"
    assert mm.get(result.memory_id, user_id="alice").content == "User plays the banjo at weddings"


def test_a_small_scope_counts_no_terms(mm, monkeypatch):
    """Bob's one memory: the scope is not large, so no term is counted (and none dropped)."""
    monkeypatch.setattr(fts, "COMMON_TERM_ROWS", COMMON)
    counted = []
    monkeypatch.setattr(fts, "_rerank_match", lambda conn, p: counted.append(p) or "")
    with mm.store.read() as read:
        found = lexical_candidates(mm.store, read, Scope("bob"), "banjo guitar", 5)
    assert [r.memory.content for r in found] == ["User plays guitar too"]
    assert counted == []


# "work" is common from the start (threshold 2); "violin" and "nights" become common in the
# batch, so later facts are decided by the re-rank with words an earlier ADD of the chunk holds.
WORKERS = [
    "I work at Google",
    "My sister works at a hospital",
    "My brother works in sales",
    "I worked in Paris before",
]
BATCH = [
    "I work with a violin teacher",
    "My violin teacher works nights",
    "I play violin at work",
    "i play violin at work!",
    "My violin is old",
    "I work nights at the hospital",
    "My sister works nights too",
    "I sold my old violin",
    "My brother works in marketing now",
    "I no longer work at Google",
    "Nights are quiet at work",
    "I take violin lessons on Mondays",
]


@pytest.mark.parametrize("chunk_size", [6, 500])
def test_update_many_decides_as_one_at_a_time_with_common_words(
    tmp_path, clock, monkeypatch, chunk_size
):
    """Every ADD is written before the next fact is decided, so term counts, and the scope's
    size below the threshold, read the same in both ways; counts kept
    from earlier in a chunk's transaction (fts_counts) say what counting again would."""
    monkeypatch.setattr(fts, "COMMON_TERM_ROWS", 2)
    reranked = []
    matches: dict[str, list[str]] = {}
    landed = fts._rerank_match

    def counted(*args):
        match = landed(*args)
        reranked.append(" NOT " in match)
        matches.setdefault(name, []).append(match)
        return match

    monkeypatch.setattr(fts, "_rerank_match", counted)
    stores, decisions = [], []
    for name, bulk in (("single.db", False), ("bulk.db", True)):
        with MemoryManager(str(tmp_path / name), decider="offline", clock=clock) as mm:
            for fact in WORKERS:
                mm.update_memory(fact, user_id="u")
            if bulk:
                results = mm.update_many(BATCH, user_id="u", chunk_size=chunk_size)
            else:
                results = [mm.update_memory(fact, user_id="u") for fact in BATCH]
            decisions.append([(r.op, r.tier) for r in results])
            stores.append(snapshot(mm))
    assert stores[0] == stores[1]
    assert decisions[0] == decisions[1]
    assert matches["bulk.db"] == matches["single.db"]  # each fact's words ranked alike
    assert sum(reranked) >= 10  # the re-rank decided most of the batch, both ways


# Novel facts sharing one word: each is held, written when the next fact's query finds it, and
# decided in the same chunk transaction, while "violin" goes from rare to common (threshold 2).
VIOLINS = [
    "I tune my violin in Oslo",
    "Lena gave me a violin bow",
    "The violin case is blue",
    "A violin concert in Rome thrilled me",
    "Violin strings snapped during Bach",
    "Grandpa carved a violin from maple",
]


def test_counts_kept_in_a_chunk_follow_its_own_writes(tmp_path, clock, monkeypatch):
    """A term counted early in a chunk's transaction turns common after the chunk's own ADDs:
    update_many builds each fact's query as one at a time does."""
    monkeypatch.setattr(fts, "COMMON_TERM_ROWS", 2)
    matches: dict[str, list[str]] = {}
    landed = fts._rerank_match

    def kept(*args):
        matches.setdefault(name, []).append(landed(*args))
        return matches[name][-1]

    monkeypatch.setattr(fts, "_rerank_match", kept)
    for name, bulk in (("single.db", False), ("bulk.db", True)):
        with MemoryManager(str(tmp_path / name), decider="offline", clock=clock) as mm:
            for fact in WORKERS:
                mm.update_memory(fact, user_id="u")
            if bulk:
                results = mm.update_many(VIOLINS, user_id="u")
            else:
                results = [mm.update_memory(fact, user_id="u") for fact in VIOLINS]
            assert [r.op for r in results] == [Op.ADD] * len(VIOLINS)
    assert matches["bulk.db"] == matches["single.db"]
    assert sum('NOT ("q' in m and "violin" in m.split("NOT")[1] for m in matches["bulk.db"]) >= 2
