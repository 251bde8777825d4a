"""Recall: which memories go into the prompt, in what order, and how many fit.

search() retrieves a pool larger than asked (lexically, by BM25), ranks it by a blend of
relevance, recency and importance, collapses near-duplicate hits onto one representative and
reinforces what it returns. context() renders the chosen memories with their dates through
`prompts/recall.j2` within a token budget.

Relevance is BM25 normalised *within the retrieved pool* (as a fraction of the best hit):
raw BM25 has no meaning across scopes (near-zero IDF on a small per-user corpus), but its
proportions inside one pool do.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

import sqlalchemy as sa

from memman.config import Settings
from memman.models import SearchHit
from memman.prompts import render
from memman.retrieval import Retrieved, lexical_candidates
from memman.store import Scope, Store
from memman.text import content_tokens, jaccard, polarity_or_number_differs

# Tokens are approximated as characters / 4 (the usual figure for English with OpenAI
# tokenizers); a budget is a guard against flooding the prompt, not an exact count.
CHARS_PER_TOKEN = 4

RECALL_TEMPLATE = "recall.j2"

# The pool grows with the limit only up to here: ranking more lexical hits than this costs
# time and does not change which ones come first.
MAX_POOL = 1000


def approx_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def _relevance(pool: list[Retrieved]) -> dict[str, float]:
    """BM25 as a fraction of the pool's best score, in (0, 1].

    Scaling by the best keeps proportions: two hits whose BM25 differs by a hair (one word
    longer) stay near-equal, so recency and importance can still order them. Min-max would
    stretch that hair to the whole [0, 1] range. bm25() is negative, lower is better.
    """
    best = min(r.bm25 for r in pool)
    if best >= 0:  # FTS5 clamps IDF above zero, so this is only a degenerate pool
        return {r.memory.id: 1.0 for r in pool}
    return {r.memory.id: max(r.bm25 / best, 0.0) for r in pool}


def _age_days(stamp: str, now: dt.datetime) -> float:
    return max((now - dt.datetime.fromisoformat(stamp)).total_seconds() / 86400, 0.0)


def rank(
    pool: list[Retrieved],
    *,
    settings: Settings,
    now: dt.datetime,
    cosine: Mapping[str, float] | None = None,
) -> list[tuple[Retrieved, float]]:
    """Pool members with their blended score, best first.

    `cosine` (memory id -> similarity in [0, 1]) is the hook for the semantic tier: when
    given, relevance is the mean of normalised BM25 and cosine.
    """
    if not pool:
        return []
    relevance = _relevance(pool)
    if cosine is not None:
        relevance = {i: (v + cosine.get(i, 0.0)) / 2 for i, v in relevance.items()}
    scored = []
    for r in pool:
        m = r.memory
        touched = max(m.updated_at, m.last_accessed_at or m.updated_at)
        recency = 0.5 ** (_age_days(touched, now) / settings.recall_half_life_days)
        score = (
            settings.recall_weight_relevance * relevance[m.id]
            + settings.recall_weight_recency * recency
            + settings.recall_weight_importance * m.importance / 10
        )
        scored.append((r, score))
    scored.sort(key=lambda pair: pair[1], reverse=True)
    return scored


def collapse(ranked: list[tuple[Retrieved, float]], *, noop_jaccard: float) -> list[SearchHit]:
    """Load-time dedup: a hit near-identical to a better-ranked one folds into it.

    Same test as the router's DUPLICATE tier (Jaccard >= noop_jaccard and no negation or
    number difference), so recall and the write path agree on what "the same fact" means.
    """
    kept: list[tuple[Retrieved, float, frozenset[str], list[str]]] = []
    for r, score in ranked:
        tokens = content_tokens(r.memory.content)
        for rep, _, rep_tokens, collapsed in kept:
            if jaccard(tokens, rep_tokens) >= noop_jaccard and not polarity_or_number_differs(
                r.memory.content, rep.memory.content
            ):
                collapsed.append(r.memory.id)
                break
        else:
            kept.append((r, score, tokens, []))
    return [
        SearchHit(memory=r.memory, score=score, collapsed_ids=collapsed)
        for r, score, _, collapsed in kept
    ]


def search(
    store: Store, scope: Scope, query: str, *, limit: int, settings: Settings, now: dt.datetime
) -> list[SearchHit]:
    """Rank a lexical pool of recall_pool_factor x limit, dedup, reinforce the returned hits."""
    with store.read() as conn:
        size = max(limit, min(limit * settings.recall_pool_factor, MAX_POOL))
        pool = lexical_candidates(store, conn, scope, query, size)
    hits = collapse(rank(pool, settings=settings, now=now), noop_jaccard=settings.noop_jaccard)[
        :limit
    ]
    if hits:
        stamp = now.astimezone(dt.UTC).isoformat(timespec="milliseconds")
        store.write(lambda conn: _reinforce(store, conn, [h.id for h in hits], stamp))
    return hits


def _reinforce(store: Store, conn: sa.Connection, ids: list[str], stamp: str) -> None:
    """One UPDATE for every returned memory: recalled facts decay slower and rank higher."""
    lt = store.long_term
    conn.execute(
        lt.update()
        .where(lt.c.id.in_(ids))
        .values(access_count=lt.c.access_count + 1, last_accessed_at=stamp)
    )


@dataclass(frozen=True)
class ContextBlock:
    """A rendered memory block for a system prompt, and what went into it."""

    text: str
    hits: list[SearchHit]
    approx_tokens: int


def render_context(
    hits: list[SearchHit], *, max_tokens: int, prompts_dir: str | None
) -> ContextBlock:
    """The best hits that fit max_tokens (approx. chars/4), rendered with their dates."""
    chosen: list[SearchHit] = []
    text = _render(chosen, prompts_dir)
    for hit in hits:
        attempt = _render([*chosen, hit], prompts_dir)
        if approx_tokens(attempt) > max_tokens:
            break
        chosen.append(hit)
        text = attempt
    return ContextBlock(text=text, hits=chosen, approx_tokens=approx_tokens(text))


def _render(hits: list[SearchHit], prompts_dir: str | None) -> str:
    memories = [{"content": h.memory.content, "date": h.memory.updated_at[:10]} for h in hits]
    return render(RECALL_TEMPLATE, {"memories": memories}, directory=prompts_dir).text
