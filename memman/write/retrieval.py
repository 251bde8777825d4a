"""Candidate retrieval: which stored memories might a new fact duplicate, refine or contradict.

The lexical retriever turns the fact into terms (fts_terms) and asks storage for the top-k
active memories of the same scope holding them (Store.lexical_ranked: BM25 over FTS5 on
SQLite, storage/fts.py; ts_rank_cd on PostgreSQL), then scores each with a stopword-aware
token Jaccard. BM25 only orders: on a small per-user
corpus its IDF is near zero, so a raw BM25 threshold would mean different things in every
scope. The router thresholds Jaccard, which does not depend on the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sqlalchemy as sa

from memman.language.reader import READER
from memman.models import Memory
from memman.semantic.vectors import VectorSearch
from memman.storage.fts import FTS_TOKEN, quoted
from memman.storage.store import Scope, Store

# Long paragraphs would make an OR query of hundreds of terms: slow and no better at recall.
MAX_QUERY_TERMS = 32


def _fts_parts(written: str) -> list[str]:
    """The tokens FTS5 made of a word, less a final "s": "O'Neill's" finds "O'Neill" too.

    content_tokens stems "oneills" to "oneill" as well, so the router already counts them as
    one word; the phrase "o neill" matches both in the index, "o neill s" only the possessive.
    """
    parts = FTS_TOKEN.findall(written)
    return parts[:-1] if len(parts) > 1 and parts[-1] == "s" else parts


def _is_stopword(parts: list[str]) -> bool:
    """A stopword, or a contraction led by one ("I'm", "they're", "that's") but no negation.

    Matching "I'm" would make any two "I'm ..." facts related and send them to the decider.
    STOPWORDS lists the common contractions ("im", "ive", "thats"); this rule also covers the
    rest ("you'll", "we'd"). Negations stay terms, as "not" does: "can't", "don't".
    """
    word = "".join(parts)
    read = READER
    return read.is_stopword(word) or (read.is_stopword(parts[0]) and not read.is_negation(word))


def fts_query(text: str) -> str | None:
    """Turn any user text into a safe FTS5 MATCH expression, or None if nothing is searchable.

    Every term is double-quoted (inner quotes doubled) so FTS5 never sees syntax: AND, NEAR(,
    -, :, * and quotes are plain words. A word is quoted as FTS5's tokenizer split it in the
    stored text: it cuts at apostrophes, so "O'Neill" and "O’Neill" become the phrase "o neill"
    (the adjacent tokens), never "oneill", which the index does not hold. Stopwords are dropped
    because keeping them turns an OR query into a scan of most of the index (about 25x slower
    at 100k rows); if a text has only stopwords they are used after all, so "Who am I" still
    finds something.
    """
    terms = fts_terms(text)
    if not terms:
        return None
    return " OR ".join(quoted(term) for term in terms)


def fts_terms(text: str) -> list[str]:
    """The terms fts_query ORs, each its tokens joined by spaces (letters and digits only),
    at most MAX_QUERY_TERMS: the same words for every backend's full-text query."""
    spelled = [_fts_parts(written) for written in READER.written_words(text)]
    kept = [parts for parts in spelled if not _is_stopword(parts)] or spelled
    return list(dict.fromkeys(" ".join(parts) for parts in kept))[:MAX_QUERY_TERMS]


@dataclass(frozen=True)
class Retrieved:
    """A stored memory that may relate to the candidate, with the scores that found it."""

    memory: Memory
    bm25: float | None  # None: found by the embedding only
    jaccard: float
    cosine: float | None = None  # None: no embedder configured


def _retrieved(
    store: Store,
    conn: sa.Connection,
    text: str,
    pks: list[int],
    *,
    bm25: dict[int, float] | None = None,
    cosine: dict[int, float] | None = None,
) -> list[Retrieved]:
    """These memories in this order, each with its token Jaccard to the text and the scores
    a retriever gave it (None where it gave none); a memory gone meanwhile is left out."""
    memories = store.memories_by_pk(conn, pks)
    tokens = READER.content_tokens(text)
    return [
        Retrieved(
            memory=memories[pk],
            bm25=(bm25 or {}).get(pk),
            jaccard=READER.jaccard(tokens, READER.content_tokens(memories[pk].content)),
            cosine=(cosine or {}).get(pk),
        )
        for pk in pks
        if pk in memories
    ]


def lexical_candidates(
    store: Store, conn: sa.Connection, scope: Scope, text: str, k: int
) -> list[Retrieved]:
    """Top-k active memories of the scope by BM25, best first, each with its token Jaccard."""
    ranked = store.lexical_ranked(conn, scope, fts_terms(text), k)
    return _retrieved(store, conn, text, [pk for pk, _ in ranked], bm25=dict(ranked))


def semantic_candidates(
    store: Store,
    conn: sa.Connection,
    scope: Scope,
    text: str,
    k: int,
    *,
    index: VectorSearch,
    model: str,
    vector: np.ndarray,
) -> list[Retrieved]:
    """Top-k active memories of the scope by cosine, best first, each with its Jaccard."""
    ranked = index.top(conn, scope, model, vector, k)
    return _retrieved(store, conn, text, [pk for pk, _ in ranked], cosine=dict(ranked))


# Reciprocal rank fusion constant (Cormack et al. 2009): 60 damps the head of each list so a
# memory ranked well by both retrievers beats one ranked first by only one of them.
RRF_K = 60


def hybrid_candidates(
    store: Store,
    conn: sa.Connection,
    scope: Scope,
    text: str,
    k: int,
    *,
    index: VectorSearch,
    model: str,
    vector: np.ndarray,
) -> list[Retrieved]:
    """Top-k by reciprocal rank fusion of BM25 and cosine, each with its Jaccard and cosine.

    The embedding finds paraphrases that share no word ("loves shellfish" / "enjoys
    prawns"); BM25 keeps exact names and numbers that embeddings blur. Ranks are fused, not
    scores, because BM25 and cosine live on unrelated scales.
    """
    lexical = store.lexical_ranked(conn, scope, fts_terms(text), k)
    semantic = index.top(conn, scope, model, vector, k)
    fused: dict[int, float] = {}
    for ranking in ([pk for pk, _ in lexical], [pk for pk, _ in semantic]):
        for rank, pk in enumerate(ranking):
            fused[pk] = fused.get(pk, 0.0) + 1.0 / (RRF_K + rank + 1)
    best = sorted(fused, key=lambda pk: fused[pk], reverse=True)[:k]
    cosines = index.scores(conn, scope, model, vector, best)
    return _retrieved(store, conn, text, best, bm25=dict(lexical), cosine=cosines)
