"""Recall: which memories go into the prompt, in what order, and how many fit.

search() retrieves a pool larger than asked (by BM25, or with an embedder by hybrid BM25 +
cosine retrieval), ranks it by a blend of relevance, recency and importance, collapses
near-duplicate hits onto one representative and reinforces what it returns. context() gathers
a "right now" part (the active short-term facts that share a word with the query), a core part
shown whatever the query (protected categories, pinned memories, the user's single-valued
profile) and the hits, which block.py fits to a token budget and renders.

Relevance is BM25 normalised *within the retrieved pool* (as a fraction of the best hit):
raw BM25 has no meaning across scopes (near-zero IDF on a small per-user corpus), but its
proportions inside one pool do. With an embedder it is the mean of that and the cosine
(clipped at 0): both are in [0, 1], and a paraphrase found by the embedding alone ("enjoys
prawns" for "shellfish") still scores its cosine / 2 instead of nothing.
"""

from __future__ import annotations

import datetime as dt
import logging

import numpy as np

from memman.config import Settings
from memman.errors import EmbeddingError
from memman.language.reader import READER
from memman.lifecycle import shortterm
from memman.lifecycle.blend import blend
from memman.lifecycle.block import ContextBlock, render_context
from memman.models import Memory, SearchHit
from memman.scope import Scope
from memman.semantic.embed import Embedder
from memman.semantic.vectors import VectorSearch
from memman.storage.store import Store
from memman.timestamps import stamp
from memman.write.commit import reinforce_recalled
from memman.write.retrieval import Retrieved, hybrid_candidates, lexical_candidates

log = logging.getLogger(__name__)

# The pool grows with the limit only up to here: ranking more lexical hits than this costs
# time and does not change which ones come first.
MAX_POOL = 1000

# context() reads at most this many core memories: more than the core share of any sensible
# budget shows (0.3 x 4,000 tokens at ~15 tokens a fact is 80), and a bound on the read.
CORE_LIMIT = 100


def _lexical(pool: list[Retrieved]) -> dict[str, float]:
    """BM25 as a fraction of the pool's best score, in [0, 1]; 0 for a hit BM25 did not find.

    Scaling by the best keeps proportions: two hits whose BM25 differs by a hair (one word
    longer) stay near-equal, so recency and importance can still order them. Min-max would
    stretch that hair to the whole [0, 1] range. bm25() is negative, lower is better.
    """
    scores = [r.bm25 for r in pool if r.bm25 is not None]
    best = min(scores, default=0.0)
    if best >= 0:  # FTS5 clamps IDF above zero, so this is only a degenerate pool
        return {r.memory.id: 0.0 if r.bm25 is None else 1.0 for r in pool}
    return {r.memory.id: 0.0 if r.bm25 is None else max(r.bm25 / best, 0.0) for r in pool}


def rank(
    pool: list[Retrieved], *, settings: Settings, now: dt.datetime, semantic: bool = False
) -> list[tuple[Retrieved, float]]:
    """Pool members with their blended score, best first.

    `semantic`: the pool came from hybrid retrieval, so relevance is the mean of normalised
    BM25 and cosine (a memory without a vector for the model counts cosine 0).
    """
    if not pool:
        return []
    relevance = _lexical(pool)
    if semantic:
        relevance = {
            r.memory.id: (relevance[r.memory.id] + max(r.cosine or 0.0, 0.0)) / 2 for r in pool
        }
    scored = []
    for r in pool:
        m = r.memory
        touched = max(m.updated_at, m.last_accessed_at or m.updated_at)
        score = blend(
            settings, relevance=relevance[m.id], touched=touched, importance=m.importance, now=now
        )
        scored.append((r, score))
    scored.sort(key=lambda pair: pair[1], reverse=True)
    return scored


def collapse(
    ranked: list[tuple[Retrieved, float]], *, noop_jaccard: float, limit: int
) -> list[SearchHit]:
    """Load-time dedup: a hit near-identical to a better-ranked one folds into it.

    Same test as the router's lexical DUPLICATE tier (Jaccard >= noop_jaccard, no word the
    representative lacks, no roles.meaning_difference), so recall and the write path
    agree on what "the same fact" means.
    Once `limit` hits are kept, the rest of the pool is only checked against them (to list
    what folds in), never against each other: O(pool x limit) instead of O(pool^2).
    """
    kept: list[tuple[Retrieved, float, frozenset[str], list[str]]] = []
    for r, score in ranked:
        tokens = READER.content_tokens(r.memory.content)
        for rep, _, rep_tokens, collapsed in kept:
            if (
                READER.jaccard(tokens, rep_tokens) >= noop_jaccard
                and not tokens - rep_tokens  # a hit with a word of its own is not folded away
                and not READER.meaning_difference(r.memory.content, rep.memory.content)
            ):
                collapsed.append(r.memory.id)
                break
        else:
            if len(kept) < limit:
                kept.append((r, score, tokens, []))
    return [
        SearchHit(memory=r.memory, score=score, collapsed_ids=collapsed)
        for r, score, _, collapsed in kept
    ]


def _query_vector(embedder: Embedder | None, query: str) -> np.ndarray | None:
    """The query embedded once, or None (no embedder, or it failed: recall goes lexical).

    A read may degrade where a write may not: an embedding outage costs recall its
    paraphrases for a while, but nothing is written or lost.
    """
    if embedder is None:
        return None
    try:
        return embedder.embed([query])[0]
    except EmbeddingError as error:
        log.warning("query embedding failed, recall falls back to BM25 only: %s", error)
        return None


def search(
    store: Store,
    scope: Scope,
    query: str,
    *,
    limit: int,
    settings: Settings,
    now: dt.datetime,
    embedder: Embedder | None = None,
    index: VectorSearch | None = None,
    reinforce: bool = True,
) -> list[SearchHit]:
    """Rank a pool of recall_pool_factor x limit, dedup, reinforce the returned hits (unless
    not `reinforce`: a look that must not change what it looks at, as the inspector's).

    With an embedder (and its vector index) the pool is hybrid (BM25 and cosine fused by
    reciprocal rank), so a memory that shares no word with the query can still be recalled.
    """
    size = max(limit, min(limit * settings.recall_pool_factor, MAX_POOL))
    vector = _query_vector(embedder, query) if index is not None else None
    with store.read() as conn:
        if vector is not None:
            assert embedder is not None and index is not None
            found = hybrid_candidates(
                store, conn, scope, query, size, index=index, model=embedder.name, vector=vector
            )
            floor = settings.recall_min_cosine
            pool = [r for r in found if r.bm25 is not None or (r.cosine or 0.0) >= floor]
        else:
            pool = lexical_candidates(store, conn, scope, query, size)
    ranked = rank(pool, settings=settings, now=now, semantic=vector is not None)
    hits = collapse(ranked, noop_jaccard=settings.noop_jaccard, limit=limit)
    if hits and reinforce:
        when = stamp(now)
        ids = [h.id for h in hits]
        # Recalled facts decay slower and rank higher (one UPDATE for every hit).
        store.try_write(
            lambda conn: reinforce_recalled(store, conn, scope, ids, when),
            "reinforcing recalls",
            scope=scope,
        )
    return hits


def context(
    store: Store,
    scope: Scope,
    query: str,
    hits: list[SearchHit],
    *,
    max_tokens: int,
    settings: Settings,
    now: dt.datetime,
    reinforce: bool = True,
) -> ContextBlock:
    """The core memories, the scope's unexpired short-term facts relevant to the query, `hits`.

    The core (protected categories and safety attributes, pinned memories, the user's
    single-valued profile) is
    read with one bounded query, so "hi" still gets the user's name and allergies.
    Each short-term fact that made it into the block counts one recall, unless its last
    counted recall is under promote_recall_spacing_hours ago: recalled on enough occasions
    (promote_min_recalls), consolidate promotes it to long-term memory. Not `reinforce`: none
    is counted.
    """
    with store.read() as conn:
        current = shortterm.relevant(store, conn, scope, query, now=now)
        core = store.core_memories(
            conn,
            scope,
            categories=settings.protected_categories,
            safety=frozenset(settings.safety_attributes),
            attributes=frozenset(settings.single_valued_attributes),
            limit=CORE_LIMIT,
        )
    block = render_context(
        hits,
        max_tokens=max_tokens,
        prompts_dir=settings.prompts_dir,
        short_term=current,
        core=core,
        core_share=settings.context_core_share,
        safety_first=bool(core) and _protected(core[0], settings),
    )
    if block.short_term and reinforce:
        ids = [f.id for f in block.short_term]
        spacing = dt.timedelta(hours=settings.promote_recall_spacing_hours)
        store.try_write(
            lambda conn: shortterm.note_recalled(store, conn, scope, ids, now=now, spacing=spacing),
            "counting short-term recalls",
            scope=scope,
        )
    return block


def _protected(memory: Memory, settings: Settings) -> bool:
    """A safety or constraint fact: of a protected category, or of a safety attribute."""
    return (
        memory.category in settings.protected_categories
        or memory.attribute in settings.safety_attributes
    )
