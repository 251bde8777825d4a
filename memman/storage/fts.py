"""Lexical candidates on SQLite: the FTS5 index of long_term, keyed by scope (m021), by BM25.

retrieval.py turns a fact into terms (retrieval.fts_terms) and leaves the statements to
`Store.lexical_ranked` (these), as PostgresStore leaves them to its tsvector search. BM25 only
orders: on a small per-user corpus its IDF is near zero, so the router thresholds Jaccard.
"""

from __future__ import annotations

import re

import sqlalchemy as sa

from memman.scope import Scope
from memman.storage.fts_counts import KeptCounts
from memman.storage.migrations.fts import scope_key
from memman.storage.sql import run_sql

# How the FTS5 tokenizer (unicode61, see migrations.FTS_TOKENIZE) cuts a word: runs of letters
# and digits, split at anything else, apostrophes included.
FTS_TOKEN = re.compile(r"[^\W_]+")

# bm25() is lower-is-better; ORDER BY rank uses it directly. Each term is keyed by the scope
# (migrations.m021), so its IDF counts the rows holding it in the scope only; the row total and
# average length stay the file's (FTS5 has no per-query N), which flattens IDF a little in a
# file of many users (RESULTS.md, "Candidate quality": recall@1 -0.6 .. +0.1 points).
RANK = "bm25(long_term_fts)"
# The MATCH names the scope's keyed terms only, so FTS5 ranks only the scope's rows; the join
# checks the scope again, so even an index that drifted from the table (a write that bypassed
# the triggers) never returns another user's memory. FTS5 first keeps its best rows alone,
# over-fetched: joining every matching row before the LIMIT cost 5.5 ms against 2.4 ms in a
# scope of 100k rows. When the join leaves fewer than k of a full over-fetch (many retired
# memories), the whole match is joined instead (_CANDIDATES_SQL).
OVERFETCH = 4
_TOP_THEN_FILTER_SQL = f"""
    SELECT long_term.pk, f.bm25, f.fetched FROM (
        SELECT rowid, bm25, count(*) OVER () AS fetched FROM (
            SELECT rowid, {RANK} AS bm25 FROM long_term_fts
            WHERE long_term_fts MATCH :query ORDER BY bm25 LIMIT :overfetch
        )
    ) AS f JOIN long_term ON long_term.pk = f.rowid
    WHERE long_term.user_id = :user_id AND long_term.agent_id = :agent_id
      AND long_term.status = 'active'
    ORDER BY f.bm25
    LIMIT :limit
    """
_CANDIDATES_SQL = (  # run_sql: once or twice per fact written (see store.run_sql)
    f"""
    SELECT long_term.pk, {RANK} AS bm25
    FROM long_term_fts JOIN long_term ON long_term.pk = long_term_fts.rowid
    WHERE long_term_fts MATCH :query
      AND long_term.user_id = :user_id AND long_term.agent_id = :agent_id
      AND long_term.status = 'active'
    ORDER BY bm25
    LIMIT :limit
    """
)
# A query term held by more than COMMON_TERM_ROWS of the scope's rows ("like" in a scope of
# 100k persona facts: 15k rows) makes FTS5 score every such row: FTS5 has no top-k pruning.
# In a scope that large, such terms only re-rank the rows holding a rarer term of the query
# (_rerank_match); at 100k this cut the candidate query from 2.4 to 1.2 ms CPU (median) and
# kept the top 5 of 394 in 400 queries (RESULTS.md, "FTS candidate query"). A scope of at
# most this many rows (any status, as the index holds them) cannot hold a common term, so it
# pays nothing.
COMMON_TERM_ROWS = 2000
# When every term is common, how far each is counted to find the rarest: a bounded walk of its
# posting list (~25 ns a row), far cheaper than scoring the rows of all of them.
RAREST_ROWS = 16 * COMMON_TERM_ROWS
# The scope's index key, its row count up to :rows (one seek of long_term_scope that reads at
# most that many entries) and total_changes() for fts_counts.
_SCOPE_SQL = """
    SELECT id, (SELECT count(*) FROM (
        SELECT 1 FROM long_term WHERE user_id = :user_id AND agent_id = :agent_id LIMIT :rows
    ) AS scope_rows), total_changes() FROM fts_scopes
    WHERE user_id = :user_id AND agent_id = :agent_id
    """
# The key alone (merge's scoped queries), on both backends: PostgreSQL numbers its scopes the
# same way (p001) but has no total_changes().
_KEY_SQL = "SELECT id FROM fts_scopes WHERE user_id = :user_id AND agent_id = :agent_id"
_TERM_ROWS_SQL = (
    "SELECT count(*) FROM (SELECT 1 FROM long_term_fts WHERE long_term_fts MATCH :phrase"
    " LIMIT :rows) AS term_rows"
)
_PHRASE = re.compile(r'"((?:[^"]|"")*)"')


def quoted(term: str) -> str:
    """term as one FTS5 phrase: double-quoted, inner quotes doubled, so it is never syntax."""
    return '"' + term.replace('"', '""') + '"'


def _scope_params(scope: Scope) -> dict[str, str]:
    return {"user_id": scope.user_id, "agent_id": scope.agent_key}


def _read_scope(conn: sa.Connection, scope: Scope, bound: int) -> tuple[str, int, int] | None:
    """The prefix of the scope's tokens in the FTS index, its rows counted up to bound and
    total_changes(); None if the scope never had a row."""
    row = run_sql(conn, _SCOPE_SQL, {**_scope_params(scope), "rows": bound}).fetchone()
    return None if row is None else (scope_key(row[0]), row[1], row[2])


def index_key(conn: sa.Connection, scope: Scope) -> str | None:
    """The prefix of the scope's tokens in the FTS index, None if the scope never had a row."""
    row = run_sql(conn, _KEY_SQL, _scope_params(scope)).fetchone()
    return None if row is None else scope_key(row[0])


def scoped_match(key: str, query: str) -> str:
    """query (quoted phrases, as retrieval.fts_query writes them) for the tokens of one
    scope's rows.

    Each word of each phrase gets the scope's key, as m021 indexed it, so FTS5 walks only
    that scope's posting lists: the cost of a query does not grow with the other scopes.
    """
    return _PHRASE.sub(
        lambda phrase: '"' + " ".join(key + t for t in FTS_TOKEN.findall(phrase[1])) + '"',
        query,
    )


def bm25_ranked(
    conn: sa.Connection, scope: Scope, terms: list[str], k: int
) -> list[tuple[int, float]]:
    """(pk, bm25) of the scope's top-k active memories holding any term, best first."""
    if not terms:
        return []
    counts = KeptCounts(conn, scope, COMMON_TERM_ROWS)
    found = counts.scope_index(lambda bound: _read_scope(conn, scope, bound))
    if found is None:
        return []
    key, large = found
    phrases = [scoped_match(key, quoted(term)) for term in terms]
    params = {
        **_scope_params(scope),
        "limit": k,
        "overfetch": k * OVERFETCH,
        "query": _rerank_match(conn, phrases, counts) if large else " OR ".join(phrases),
    }
    top = run_sql(conn, _TOP_THEN_FILTER_SQL, params).fetchall()
    if len(top) == k or (top and top[0][2] < k * OVERFETCH):
        return [(pk, bm25) for pk, bm25, _ in top]
    return [(pk, bm25) for pk, bm25 in run_sql(conn, _CANDIDATES_SQL, params).fetchall()]


def _rerank_match(conn: sa.Connection, phrases: list[str], counts: KeptCounts) -> str:
    """The MATCH for a large scope: rows holding a rare phrase, scored as the OR of all.

    A phrase held by more than COMMON_TERM_ROWS rows of the scope (a bounded count each) is
    common. `(R NOT C) OR (C AND R)` matches only rows holding a rare phrase (R), and bm25
    gives each the score the OR of every phrase would give it: FTS5 clears the phrases of a
    branch that does not match the row, so each phrase the row holds counts once. What is
    lost are the rows holding common phrases only. If every phrase is common, the rarest
    (counted again, up to RAREST_ROWS) is R: in a scope of a million rows most words of a
    fact are held by thousands. One phrase is ranked alone. The first counts may be kept from
    earlier in the transaction (fts_counts); the rarest is always counted now.
    """
    held = counts.term_rows(phrases, lambda phrase, bound: _rows_holding(conn, [phrase], bound)[0])
    if len(phrases) > 1 and min(held) > COMMON_TERM_ROWS:
        held = _rows_holding(conn, phrases, RAREST_ROWS)
        held[held.index(min(held))] = 0
    rare = " OR ".join(p for p, n in zip(phrases, held, strict=True) if n <= COMMON_TERM_ROWS)
    common = " OR ".join(p for p, n in zip(phrases, held, strict=True) if n > COMMON_TERM_ROWS)
    if not rare or not common:  # one phrase, or no common one
        return " OR ".join(phrases)
    return f"(({rare}) NOT ({common})) OR (({common}) AND ({rare}))"


def _rows_holding(conn: sa.Connection, phrases: list[str], bound: int) -> list[int]:
    """How many of the scope's rows hold each phrase, each count stopped at bound."""
    return [
        run_sql(conn, _TERM_ROWS_SQL, {"rows": bound, "phrase": phrase}).fetchone()[0]
        for phrase in phrases
    ]


class LexicalRows:
    """Store's lexical search (a mixin): PostgresStore replaces lexical_ranked."""

    def lexical_ranked(
        self, conn: sa.Connection, scope: Scope, terms: list[str], k: int
    ) -> list[tuple[int, float]]:
        """(pk, score) of the scope's top-k active memories holding any of the terms (from
        retrieval.fts_terms), best first; the score is lower-is-better (bm25 here)."""
        return bm25_ranked(conn, scope, terms, k)

    def fts_index_key(self, conn: sa.Connection, scope: Scope) -> str | None:
        """The prefix of the scope's tokens in the full-text index (for scoped_match), None
        if the scope never had a row."""
        return index_key(conn, scope)
