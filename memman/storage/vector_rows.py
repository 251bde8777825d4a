"""The statements of the vector tier: a scope's vectors for the in-process index, the change
log that keeps it current, the memories still lacking a vector, and sqlite-vec's KNN.

semantic/vectors.py holds the index (numpy) and asks these; they run inside the caller's
transaction and name the scope they read (tests/test_scope_predicate.py). How a vector is
stored per backend is vector_format.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa

from memman.scope import Scope
from memman.storage.changes import NewVector
from memman.storage.dialect import is_postgres
from memman.storage.sql import run_sql
from memman.storage.vector_format import chunks, decoded, save_vector

# The per-fact statements run through store.run_sql (plain DBAPI, see there); the rest are
# SQLAlchemy text.
_SCOPE_JOIN = """
    FROM memory_vectors v JOIN long_term l ON l.pk = v.memory_pk
    WHERE l.user_id = :user_id AND l.agent_id = :agent_id AND l.status = 'active'
      AND v.model = :model
"""
_LOAD_SQL = "SELECT v.memory_pk, v.vector" + _SCOPE_JOIN
_SIZE_SQL = sa.text("SELECT count(*), max(v.dim)" + _SCOPE_JOIN)
_LOAD_CHUNK = 1024  # rows fetched and copied at a time (1.5 MB of 384-dim vectors)
# The log's last (seq, token), and the token now at the seq the cache was built at.
_LAST_SQL = """
    SELECT seq, token, (SELECT token FROM vector_log WHERE seq = ?)
    FROM vector_log ORDER BY seq DESC LIMIT 1
"""
# PostgreSQL's writers of different scopes commit in any order, so a seq of another scope can
# become visible after a higher one; within a scope (one lock) seq order is commit order, so
# the cache's position is the scope's last row (the index of postgres_schema's p004).
_LAST_SQL_POSTGRES = """
    SELECT seq, token, (SELECT token FROM vector_log WHERE seq = ?1)
    FROM vector_log WHERE user_id = ?2 AND agent_id = ?3 ORDER BY seq DESC LIMIT 1
"""
# The scope's memories changed after a seq, with their vector if it is active now (NULL:
# the memory left the matrix). The join checks the scope again: after a hard purge
# (lifecycle/erase.py) SQLite reuses the numbers of the highest erased rows, so a pk logged
# for this scope may now be another scope's memory.
_CHANGED_SQL = """
    SELECT c.memory_pk, v.vector FROM (
        SELECT DISTINCT memory_pk FROM vector_log
        WHERE seq > ?1 AND user_id = ?2 AND agent_id = ?3 LIMIT ?4
    ) AS c
    LEFT JOIN long_term l ON l.pk = c.memory_pk AND l.status = 'active'
      AND l.user_id = ?2 AND l.agent_id = ?3
    LEFT JOIN memory_vectors v ON v.memory_pk = l.pk AND v.model = ?5
"""
_MISSING_SQL = sa.text(
    """
    SELECT l.pk, l.id, l.content FROM long_term l
    WHERE l.status = 'active' AND l.pk > :after AND NOT EXISTS (
        SELECT 1 FROM memory_vectors v WHERE v.memory_pk = l.pk AND v.model = :model)
    ORDER BY l.pk LIMIT :limit
    """
)
_COUNT_MISSING_SQL = sa.text(
    """
    SELECT count(*) FROM long_term l WHERE l.status = 'active' AND NOT EXISTS (
        SELECT 1 FROM memory_vectors v WHERE v.memory_pk = l.pk AND v.model = :model)
    """
)
# coalesce: vec_distance_cosine is NULL for a zero vector, whose dot product numpy scores 0.
_COSINE = "coalesce(1.0 - vec_distance_cosine(v.vector, :query), 0.0)"
_KNN_SQL = sa.text(
    f"SELECT v.memory_pk, {_COSINE} AS cosine"
    + _SCOPE_JOIN
    + " ORDER BY cosine DESC, v.memory_pk LIMIT :k"
)
_SCORES_SQL = sa.text(
    f"SELECT v.memory_pk, {_COSINE}" + _SCOPE_JOIN + " AND v.memory_pk IN :pks"
).bindparams(sa.bindparam("pks", expanding=True))


def _params(scope: Scope, model: str) -> dict[str, str]:
    return {"user_id": scope.user_id, "agent_id": scope.agent_key, "model": model}


def scope_vectors(conn: sa.Connection, scope: Scope, model: str) -> tuple[np.ndarray, np.ndarray]:
    """(pks, float32 rows) of the scope's active vectors, written straight into arrays
    sized by a count.

    The rows array is the only full-size allocation: rows arrive a chunk at a time from the
    cursor, so the transient is one chunk, not a list of every blob plus a joined copy (at
    100k 384-dim memories each of those is another 147 MB on top of the matrix; peak RSS of a
    first search with the local model went from 666 to 384 MB, benchmarks/bench_rss.py). The
    count and the rows agree: every connection of the store reads in a transaction (the
    store's "begin" listener), so both statements see one snapshot.
    """
    params = _params(scope, model)
    count, dim = conn.execute(_SIZE_SQL, params).one()
    pks = np.empty(count, dtype=np.int64)
    rows = np.empty((count, dim or 0), dtype=np.float32)
    n = 0  # rows filled
    for chunk_pks, chunk_rows in chunks(conn, _LOAD_SQL, params, _LOAD_CHUNK):
        pks[n : n + len(chunk_pks)] = chunk_pks
        rows[n : n + len(chunk_pks)] = chunk_rows
        n += len(chunk_pks)
    return pks, rows


def log_position(
    conn: sa.Connection, scope: Scope, since: int
) -> tuple[int, bytes | None, bytes | None]:
    """The vector log's last (seq, token) as the scope's cache sees it, and the token now at
    seq `since` (None if pruned or rolled back); (0, None, None) for an empty log."""
    if is_postgres(conn):
        params: tuple[Any, ...] = (since, scope.user_id, scope.agent_key)
        last = run_sql(conn, _LAST_SQL_POSTGRES, params).fetchone()
    else:
        last = run_sql(conn, _LAST_SQL, (since,)).fetchone()
    return tuple(last) if last else (0, None, None)


def changed_since(
    conn: sa.Connection, scope: Scope, model: str, seq: int, limit: int
) -> list[tuple[int, np.ndarray | None]]:
    """(pk, vector) of up to `limit` of the scope's memories changed after seq, the vector
    None when the memory is no longer active or has none for this model."""
    params = (seq, scope.user_id, scope.agent_key, limit, model)
    return [
        (pk, None if vector is None else decoded(vector))
        for pk, vector in run_sql(conn, _CHANGED_SQL, params).fetchall()
    ]


def _query_params(scope: Scope, model: str, query: np.ndarray) -> dict[str, Any]:
    vector = np.asarray(query, dtype=np.float32).tobytes()
    return {**_params(scope, model), "query": vector}


def knn(
    conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, k: int
) -> list[tuple[int, float]]:
    """sqlite-vec: (pk, cosine) of the scope's k active memories nearest a unit query."""
    params = {**_query_params(scope, model, query), "k": max(k, 0)}
    return [(pk, float(cosine)) for pk, cosine in conn.execute(_KNN_SQL, params)]


def cosines_of(
    conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, pks: list[int]
) -> dict[int, float]:
    """sqlite-vec: the query's cosine with each of these memories that has a vector."""
    if not pks:
        return {}
    rows = conn.execute(_SCORES_SQL, {**_query_params(scope, model, query), "pks": pks})
    return {pk: float(cosine) for pk, cosine in rows}


class VectorRows:
    """Store's vector writes and reindex's reads (a mixin; the index's reads are the module's
    functions above, called with the index's connection)."""

    def save_vectors(self, conn: sa.Connection, vectors: Sequence[NewVector]) -> None:
        """Store (or replace) each memory's vector for its model, in order. A vector of no
        memory (an id not in long_term) writes nothing."""
        for new in vectors:
            save_vector(conn, new.memory_id, new.model, new.vector)

    def count_missing_vectors(self, conn: sa.Connection, model: str) -> int:
        """Active memories (all scopes) that have no vector for this model yet."""
        return int(conn.execute(_COUNT_MISSING_SQL, {"model": model}).scalar_one())

    def missing_vectors(
        self, conn: sa.Connection, model: str, *, after_pk: int, limit: int
    ) -> list[tuple[int, str, str]]:
        """The next (pk, id, content), in pk order after after_pk, of active memories
        lacking a vector for this model (reindex's batches)."""
        params = {"model": model, "after": after_pk, "limit": limit}
        return [
            (pk, memory_id, content)
            for pk, memory_id, content in conn.execute(_MISSING_SQL, params)
        ]
