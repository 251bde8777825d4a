"""Lexical candidates on PostgreSQL: the generated `fts` tsvector, its GIN index, ts_rank_cd.

The terms are retrieval.fts_terms's (stopwords dropped, each term its tokens, letters and
digits only), so both backends search the same words. Each becomes a quoted lexeme, a
term of several tokens ("o neill") a phrase (`<->`), and the terms are ORed: user text never
reaches tsquery syntax, and to_tsquery stems each lexeme as the document side was stemmed.
"""

from __future__ import annotations

import sqlalchemy as sa

from memman.scope import Scope

# ts_rank_cd (cover density) rewards terms found close together, which suits short facts;
# normalisation 1 divides by 1 + log(words), so of two memories holding the terms the shorter
# ranks first, as BM25's length normalisation ranks them in SQLite (recall folds a hit into
# a better-ranked one with more words, so the order matters). Negated: lower is better, as
# with FTS5's bm25() (recall.py normalises by the best).
RANK = "ts_rank_cd(fts, q, 1)"
_RANKED_SQL = f"""
    SELECT pk, -{RANK} AS rank
    FROM long_term, to_tsquery('memman_english', :query) AS q
    WHERE user_id = :user_id AND agent_id = :agent_id AND status = 'active' AND fts @@ q
    ORDER BY rank, pk
    LIMIT :limit
    """
# Every row of a scope holding a term, unranked (merge's posting lists).
_POSTINGS_SQL = """
    SELECT pk FROM long_term
    WHERE user_id = :user_id AND agent_id = :agent_id
      AND fts @@ to_tsquery('memman_english', :query)
    """


def tsquery(terms: list[str]) -> str:
    """The tsquery text ORing terms (each of letters, digits and single spaces only)."""
    return " | ".join(
        "(" + " <-> ".join(f"'{token}'" for token in term.split()) + ")" for term in terms
    )


def ranked_by_tsquery(
    conn: sa.Connection, scope: Scope, terms: list[str], k: int
) -> list[tuple[int, float]]:
    """(pk, -ts_rank_cd) of the scope's top-k active memories holding any term, best first.

    The scope, the status and the match are one statement: the planner combines the GIN
    index with the scope index, so another scope's rows are never ranked."""
    if not terms or k < 1:
        return []
    params = {
        "query": tsquery(terms),
        "user_id": scope.user_id,
        "agent_id": scope.agent_key,
        "limit": k,
    }
    return [(pk, rank) for pk, rank in conn.execute(sa.text(_RANKED_SQL), params)]


def postings(conn: sa.Connection, scope: Scope, terms: list[str]) -> list[int]:
    """pks of the scope's memories holding any of the terms (any status)."""
    if not terms:
        return []
    params = {"user_id": scope.user_id, "agent_id": scope.agent_key, "query": tsquery(terms)}
    return [pk for (pk,) in conn.execute(sa.text(_POSTINGS_SQL), params)]
