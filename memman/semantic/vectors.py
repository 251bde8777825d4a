"""Stored embeddings and exact cosine search over one scope's active memories.

Vectors live in `memory_vectors`, one per (memory, model), written in the same transaction as
the memory: float32 bytes in SQLite, a REAL[] in PostgreSQL (memman/storage/vector_format.py).
They are the source of truth: a file never depends on how it is searched, so a store written
with one backend opens and searches with the other.

Two backends answer the same `VectorSearch` interface, chosen by `vector_search`:

- `numpy` (default): the scope's unit vectors are stacked into one matrix, cached per
  (scope, model) and patched when `vector_log` shows changes, by this process or another
  one; a query is one matrix-vector product.
- `sqlite-vec`: an exact KNN in SQL with the extension's `vec_distance_cosine` over the
  scope's active rows; nothing is held in memory. It needs a sqlite3 that loads extensions
  (the stdlib one if it can, else `pysqlite3`): `pip install 'memman[vec]'`.

numpy is the default because it is faster once the matrix is cached: at 100k memories in one
scope the SQL scan reads and decodes every blob on each query (about 100 ms) where the cached
product takes a few (benchmarks/RESULTS.md). sqlite-vec trades that for no resident matrix
(1.5 kB per 384-dim memory) and no load on a process's first query.

Both rank by cosine, then by pk, so equal scores come out in the same order; cosines agree
to float32 rounding (about 1e-7).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import numpy as np
import sqlalchemy as sa

from memman.errors import ConfigError
from memman.scope import Scope
from memman.storage.dialect import is_postgres
from memman.storage.sql import run_sql
from memman.storage.vector_format import chunks, decoded

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
# the memory left the matrix). At most _PATCH_LIMIT + 1 rows: more means reload. The join
# checks the scope again: after a hard purge (lifecycle/erase.py) SQLite reuses the numbers of
# the highest erased rows, so a pk logged for this scope may now be another scope's memory.
_CHANGED_SQL = """
    SELECT c.memory_pk, v.vector FROM (
        SELECT DISTINCT memory_pk FROM vector_log
        WHERE seq > ?1 AND user_id = ?2 AND agent_id = ?3 LIMIT ?4
    ) AS c
    LEFT JOIN long_term l ON l.pk = c.memory_pk AND l.status = 'active'
      AND l.user_id = ?2 AND l.agent_id = ?3
    LEFT JOIN memory_vectors v ON v.memory_pk = l.pk AND v.model = ?5
"""
_PATCH_LIMIT = 5000  # more changed memories than this since the last look: reload instead
_LOG_KEPT = 100_000  # vector_log rows kept by m015's prune trigger
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


def count_missing(conn: sa.Connection, model: str) -> int:
    """Active memories (all scopes) that have no vector for this model yet."""
    return int(conn.execute(_COUNT_MISSING_SQL, {"model": model}).scalar_one())


def missing_batch(
    conn: sa.Connection, model: str, *, after_pk: int, limit: int
) -> list[tuple[int, str, str]]:
    """The next (pk, id, content) of active memories lacking a vector for this model."""
    rows = conn.execute(_MISSING_SQL, {"model": model, "after": after_pk, "limit": limit}).all()
    return [(pk, memory_id, content) for pk, memory_id, content in rows]


class _Matrix:
    """One (scope, model)'s active unit vectors as rows of a contiguous float32 matrix.

    Rows live in a buffer with spare capacity, so adding a memory writes one row and dropping
    one moves the last row into its place: a write costs O(dim), not a copy of the matrix.
    """

    def __init__(self, pks: np.ndarray, rows: np.ndarray, seq: int, token: bytes | None) -> None:
        self.pks = pks
        self.rows = rows
        self.n = len(pks)
        self.position = {int(pk): i for i, pk in enumerate(pks)}
        self.seq, self.token = seq, token

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes + self.pks.nbytes

    def drop(self, pk: int) -> None:
        i = self.position.pop(pk, None)
        if i is None:
            return
        self.n -= 1
        if i != self.n:
            moved = int(self.pks[self.n])
            self.pks[i], self.rows[i] = moved, self.rows[self.n]
            self.position[moved] = i

    def add(self, pk: int, vector: np.ndarray) -> None:
        if self.n == len(self.pks):
            capacity = max(16, 2 * self.n)
            rows = np.empty((capacity, len(vector)), dtype=np.float32)
            pks = np.empty(capacity, dtype=np.int64)
            if self.n:
                rows[: self.n], pks[: self.n] = self.rows[: self.n], self.pks[: self.n]
            self.rows, self.pks = rows, pks
        self.pks[self.n], self.rows[self.n] = pk, vector
        self.position[pk] = self.n
        self.n += 1


def _load(conn: sa.Connection, params: dict[str, str], seq: int, token: bytes | None) -> _Matrix:
    """The scope's active vectors written straight into a matrix sized by a count.

    The matrix is the only full-size allocation: rows arrive a chunk at a time from the
    cursor, so the transient is one chunk, not a list of every blob plus a joined copy (at
    100k 384-dim memories each of those is another 147 MB on top of the matrix; peak RSS of a
    first search with the local model went from 666 to 384 MB, benchmarks/bench_rss.py). The
    count and the rows agree: every connection of the store reads in a transaction (the
    store's "begin" listener), so both statements see one snapshot.
    """
    count, dim = conn.execute(_SIZE_SQL, params).one()
    pks = np.empty(count, dtype=np.int64)
    rows = np.empty((count, dim or 0), dtype=np.float32)
    n = 0  # rows filled
    for chunk_pks, chunk_rows in chunks(conn, _LOAD_SQL, params, _LOAD_CHUNK):
        pks[n : n + len(chunk_pks)] = chunk_pks
        rows[n : n + len(chunk_pks)] = chunk_rows
        n += len(chunk_pks)
    return _Matrix(pks, rows, seq, token)


# Far above BLAS gemv's rounding error on unit vectors (about 1e-7), so every row that could
# be in the exact top k is rescored.
_RESCORE_MARGIN = 1e-4


def _cosines(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Dot products of unit rows with a unit query, each row computed the same way.

    einsum rather than BLAS: gemv rounds its remainder rows differently, so two equal
    vectors could score 1 ulp apart and the pk tie-break would not be deterministic. BLAS is
    about 20 % faster over a whole 100k matrix, so it only preselects (VectorIndex.top).
    """
    return np.einsum("ij,j->i", rows, np.asarray(query, dtype=np.float32))


class VectorIndex:
    """Exact cosine search per (scope, model), with the stacked matrix cached in memory.

    `vector_log` (m015) records every change to the active vectors. Each search reads the log's
    last (seq, token): unchanged means the cache is current; otherwise, if the cached seq's
    token is still in the log, only the memories changed since are reloaded and patched in,
    else (rolled back or pruned history) the scope is reloaded whole.
    """

    def __init__(self, max_bytes: int | None = None) -> None:
        """`max_bytes` bounds the cached matrices (the vector_cache_mb setting); None: no bound."""
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str, str], _Matrix] = OrderedDict()
        self.max_bytes = max_bytes
        self._bytes = 0

    @property
    def cached_bytes(self) -> int:
        """Memory held by the cached matrices (spare row capacity included)."""
        return self._bytes

    def _current(self, conn: sa.Connection, scope: Scope, model: str) -> _Matrix:
        """The scope's matrix, up to date, with the cache kept within max_bytes.

        A server sees many users; without a bound every scope it ever searched would stay
        resident (about 1.5 kB per 384-dim memory). Least recently searched scopes go first.
        The scope being searched is kept even when it alone is larger than the budget:
        dropping it would reload it on every query. Call with self._lock held.
        """
        key = (scope.user_id, scope.agent_key, model)
        before = self._cache[key].nbytes if key in self._cache else 0
        matrix = self._refreshed(conn, scope, model)
        self._bytes += matrix.nbytes - before
        self._cache.move_to_end(key)
        while self.max_bytes is not None and self._bytes > self.max_bytes and len(self._cache) > 1:
            _, evicted = self._cache.popitem(last=False)
            self._bytes -= evicted.nbytes
        return matrix

    def _refreshed(self, conn: sa.Connection, scope: Scope, model: str) -> _Matrix:
        """The cached matrix brought up to date (see _current).

        Two statements when this or another process changed the scope's vectors since the
        last look (one when nothing changed), then a reload only if the log cannot say what.
        """
        key = (scope.user_id, scope.agent_key, model)
        cached = self._cache.get(key)
        since = cached.seq if cached else 0
        if is_postgres(conn):
            last = run_sql(
                conn, _LAST_SQL_POSTGRES, (since, scope.user_id, scope.agent_key)
            ).fetchone()
        else:
            last = run_sql(conn, _LAST_SQL, (since,)).fetchone()
        seq, token, token_then = last if last else (0, None, None)
        if cached is not None and (cached.seq, cached.token) == (seq, token):
            return cached
        if (
            cached is not None
            and seq > cached.seq
            # The cache's seq is still in the log (an empty log at build time has no token:
            # then nothing may have been pruned since).
            and (seq <= _LOG_KEPT if cached.token is None else token_then == cached.token)
        ):
            changed = run_sql(
                conn,
                _CHANGED_SQL,
                (cached.seq, scope.user_id, scope.agent_key, _PATCH_LIMIT + 1, model),
            ).fetchall()
            if len(changed) <= _PATCH_LIMIT:
                for pk, vector in changed:
                    cached.drop(pk)
                    if vector is not None:
                        cached.add(pk, decoded(vector))
                cached.seq, cached.token = seq, token
                return cached
        params = {"user_id": scope.user_id, "agent_id": scope.agent_key, "model": model}
        self._cache[key] = _load(conn, params, seq, token)
        return self._cache[key]

    def forget(self, user_id: str, agent_id: str | None = None) -> None:
        """Drop the cached matrices of a user (only agent_id's scope if given): after an
        erasure, nothing of the user stays in this process's memory either."""
        with self._lock:
            for key in [k for k in self._cache if k[0] == user_id and agent_id in (None, k[1])]:
                self._bytes -= self._cache.pop(key).nbytes

    def top(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, k: int
    ) -> list[tuple[int, float]]:
        """The k active memories of the scope most similar to a unit query vector: (pk, cosine)."""
        with self._lock:
            m = self._current(conn, scope, model)
            if not m.n or k < 1:
                return []
            # BLAS finds the rows near the top fast; those are rescored row by row and ordered
            # by (cosine desc, pk), as sqlite-vec's ORDER BY does, ties at the cut included.
            fast = m.rows[: m.n] @ np.asarray(query, dtype=np.float32)
            cut = m.n - min(k, m.n)
            near = np.flatnonzero(fast >= np.partition(fast, cut)[cut] - _RESCORE_MARGIN)
            exact = _cosines(m.rows[near], query)
            best = np.lexsort((m.pks[near], -exact))[:k]
            return [(int(m.pks[near[i]]), float(exact[i])) for i in best]

    def scores(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, pks: list[int]
    ) -> dict[int, float]:
        """Cosine of the query with each given memory that has a vector (for re-ranking)."""
        with self._lock:
            m = self._current(conn, scope, model)
            wanted = [pk for pk in pks if pk in m.position]
            if not wanted:
                return {}
            scores = _cosines(m.rows[[m.position[pk] for pk in wanted]], query)
        return dict(zip(wanted, scores.tolist(), strict=True))


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


class SqliteVecIndex:
    """Exact cosine search in SQL with sqlite-vec, on a connection that has it loaded.

    Scans the scope's active vectors on every query: no cache, so nothing to invalidate and
    nothing held in memory, at the price of reading every blob each time.
    """

    def forget(self, user_id: str, agent_id: str | None = None) -> None:
        """Nothing cached, nothing to drop."""

    def top(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, k: int
    ) -> list[tuple[int, float]]:
        """The k active memories of the scope most similar to a unit query vector: (pk, cosine)."""
        params = {**_params(scope, model, query), "k": max(k, 0)}
        return [(pk, float(cosine)) for pk, cosine in conn.execute(_KNN_SQL, params)]

    def scores(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, pks: list[int]
    ) -> dict[int, float]:
        """Cosine of the query with each given memory that has a vector (for re-ranking)."""
        if not pks:
            return {}
        rows = conn.execute(_SCORES_SQL, {**_params(scope, model, query), "pks": pks})
        return {pk: float(cosine) for pk, cosine in rows}


def _params(scope: Scope, model: str, query: np.ndarray) -> dict[str, Any]:
    vector = np.asarray(query, dtype=np.float32).tobytes()
    return {"user_id": scope.user_id, "agent_id": scope.agent_key, "model": model, "query": vector}


class VectorSearch(Protocol):
    """What candidate retrieval asks of a vector backend."""

    def top(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, k: int
    ) -> list[tuple[int, float]]: ...

    def scores(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, pks: list[int]
    ) -> dict[int, float]: ...

    def forget(self, user_id: str, agent_id: str | None = None) -> None: ...


@dataclass(frozen=True)
class VectorBackend:
    """A search implementation and how the store must connect for it to work."""

    index: VectorSearch
    dbapi: ModuleType = sqlite3  # the sqlite3 DB-API module the store connects with
    prepare: Callable[[Any], None] | None = None  # run on every new DB-API connection


def _numpy_backend(cache_bytes: int) -> VectorBackend:
    return VectorBackend(VectorIndex(cache_bytes))


def _sqlite_vec_backend(cache_bytes: int) -> VectorBackend:
    """sqlite-vec on the stdlib sqlite3 if it can load extensions, else on pysqlite3.

    It caches nothing, so the cache budget does not apply.

    Loaded and tried once here, so a missing or broken install is a ConfigError when the
    manager is made, not an error in the middle of a write.
    """
    try:
        import sqlite_vec

        dbapi: ModuleType = sqlite3
        if not hasattr(sqlite3.Connection, "enable_load_extension"):
            import pysqlite3.dbapi2 as dbapi
    except ImportError as error:
        raise ConfigError(
            f"vector_search 'sqlite-vec' needs the vec extra ({error.name} is missing): "
            "pip install 'memman[vec]'"
        ) from None

    def prepare(connection: Any) -> None:
        connection.enable_load_extension(True)
        try:
            sqlite_vec.load(connection)
        finally:
            connection.enable_load_extension(False)

    probe = dbapi.connect(":memory:")
    try:
        prepare(probe)
    except dbapi.Error as error:
        raise ConfigError(f"cannot load sqlite-vec: {error}") from error
    finally:
        probe.close()
    return VectorBackend(SqliteVecIndex(), dbapi, prepare)


VECTOR_BACKENDS: dict[str, Callable[[int], VectorBackend]] = {
    "numpy": _numpy_backend,
    "sqlite-vec": _sqlite_vec_backend,
}


def make_vector_backend(name: str, *, cache_mb: float) -> VectorBackend:
    """The backend named by the `vector_search` setting; numpy's cache holds up to cache_mb."""
    try:
        factory = VECTOR_BACKENDS[name]
    except KeyError:
        raise ConfigError(
            f"unknown vector_search {name!r}; choose one of {', '.join(VECTOR_BACKENDS)}"
        ) from None
    return factory(int(cache_mb * 2**20))
