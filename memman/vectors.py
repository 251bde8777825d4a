"""Stored embeddings and exact cosine search over one scope's active memories.

Vectors live in `memory_vectors`, one float32 blob per (memory, model), written in the same
transaction as the memory. Search is exact: the scope's unit vectors are stacked into one
numpy matrix and a query is one matrix-vector product. The matrix is cached per
(scope, model) and rebuilt when the scope's fingerprint (count and rowids of its active
vectors) changes, which also catches writes by other processes.

sqlite-vec is not used: it needs `sqlite3.enable_load_extension`, which the Python builds
memman targets often lack, and at per-user scale the numpy product is already fast.
"""

from __future__ import annotations

import threading

import numpy as np
import sqlalchemy as sa

from memman.store import Scope

_SAVE_SQL = sa.text(
    """
    INSERT OR REPLACE INTO memory_vectors (memory_pk, model, dim, vector)
    SELECT pk, :model, :dim, :vector FROM long_term WHERE id = :memory_id
    """
)
_SCOPE_JOIN = """
    FROM memory_vectors v JOIN long_term l ON l.pk = v.memory_pk
    WHERE l.user_id = :user_id AND l.agent_id = :agent_id AND l.status = 'active'
      AND v.model = :model
"""
_FINGERPRINT_SQL = sa.text(
    "SELECT count(*), coalesce(sum(v.rowid), 0), coalesce(max(v.rowid), 0)" + _SCOPE_JOIN
)
_LOAD_SQL = sa.text("SELECT v.memory_pk, v.vector" + _SCOPE_JOIN)
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


def save_vector(conn: sa.Connection, memory_id: str, model: str, vector: np.ndarray) -> None:
    """Store (or replace) the memory's vector for this model, inside the caller's transaction."""
    vector = np.asarray(vector, dtype=np.float32)
    params = {"model": model, "dim": vector.shape[0], "vector": vector.tobytes()}
    conn.execute(_SAVE_SQL, {**params, "memory_id": memory_id})


def count_missing(conn: sa.Connection, model: str) -> int:
    """Active memories (all scopes) that have no vector for this model yet."""
    return int(conn.execute(_COUNT_MISSING_SQL, {"model": model}).scalar_one())


def missing_batch(
    conn: sa.Connection, model: str, *, after_pk: int, limit: int
) -> list[tuple[int, str, str]]:
    """The next (pk, id, content) of active memories lacking a vector for this model."""
    rows = conn.execute(_MISSING_SQL, {"model": model, "after": after_pk, "limit": limit}).all()
    return [(pk, memory_id, content) for pk, memory_id, content in rows]


class VectorIndex:
    """Exact cosine search per (scope, model), with the stacked matrix cached in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str, str], tuple[tuple, np.ndarray, np.ndarray]] = {}

    def _matrix(
        self, conn: sa.Connection, scope: Scope, model: str
    ) -> tuple[np.ndarray, np.ndarray]:
        params = {"user_id": scope.user_id, "agent_id": scope.agent_key, "model": model}
        fingerprint = tuple(conn.execute(_FINGERPRINT_SQL, params).one())
        key = (scope.user_id, scope.agent_key, model)
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and cached[0] == fingerprint:
            return cached[1], cached[2]
        rows = conn.execute(_LOAD_SQL, params).all()
        pks = np.array([pk for pk, _ in rows], dtype=np.int64)
        if rows:
            matrix = np.vstack([np.frombuffer(blob, dtype=np.float32) for _, blob in rows])
        else:
            matrix = np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            self._cache[key] = (fingerprint, pks, matrix)
        return pks, matrix

    def top(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, k: int
    ) -> list[tuple[int, float]]:
        """The k active memories of the scope most similar to a unit query vector: (pk, cosine)."""
        pks, matrix = self._matrix(conn, scope, model)
        if not len(pks):
            return []
        scores = matrix @ np.asarray(query, dtype=np.float32)
        k = min(k, len(pks))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(pks[i]), float(scores[i])) for i in best]

    def scores(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, pks: list[int]
    ) -> dict[int, float]:
        """Cosine of the query with each given memory that has a vector (for re-ranking)."""
        all_pks, matrix = self._matrix(conn, scope, model)
        if not len(all_pks):
            return {}
        position = {int(pk): i for i, pk in enumerate(all_pks)}
        wanted = [pk for pk in pks if pk in position]
        if not wanted:
            return {}
        rows = matrix[[position[pk] for pk in wanted]]
        return dict(zip(wanted, (rows @ np.asarray(query, dtype=np.float32)).tolist(), strict=True))
