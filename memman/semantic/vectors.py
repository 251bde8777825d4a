"""Stored embeddings and exact cosine search over one scope's active memories.

Vectors live in `memory_vectors`, one per (memory, model), written in the same transaction as
the memory: float32 bytes in SQLite, a REAL[] in PostgreSQL (memman/storage/vector_format.py).
They are the source of truth: a file never depends on how it is searched, so a store written
with one backend opens and searches with the other. The statements that read them (a scope's
rows, the change log, sqlite-vec's KNN) are memman/storage/vector_rows.py's; this module holds
the search itself.

Three backends answer the same `VectorSearch` interface, chosen by `vector_search`:

- `numpy` (the default off pgvector): the scope's unit vectors are stacked into one matrix,
  cached per (scope, model) and patched when `vector_log` shows changes, by this process or
  another one; a query is one matrix-vector product.
- `sqlite-vec`: an exact KNN in SQL with the extension's `vec_distance_cosine` over the
  scope's active rows; nothing is held in memory. It needs a sqlite3 that loads extensions
  (the stdlib one if it can, else `pysqlite3`): `pip install 'memman[vec]'`.

- `pgvector` (PostgreSQL with the vector extension installed): the server's HNSW index finds
  the nearest rows, scored here as numpy scores them (`PgvectorIndex`); nothing is held in
  memory, and the result is approximate (memman/storage/pgvector.py).

`auto` (the default) is pgvector where the database has it, numpy elsewhere.

Off pgvector, numpy is chosen because it is faster once the matrix is cached: at 100k
memories in one scope the SQL scan reads and decodes every blob on each query (about 100 ms)
where the cached product takes a few (benchmarks/RESULTS.md). sqlite-vec trades that for no
resident matrix (1.5 kB per 384-dim memory) and no load on a process's first query.

Both rank by cosine, then by pk, so equal scores come out in the same order; cosines agree
to float32 rounding (about 1e-7).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import sqlalchemy as sa

from memman.errors import ConfigError
from memman.scope import Scope
from memman.storage import pgvector, vector_rows
from memman.storage.sqlite_driver import SqliteDriver, driver_with_sqlite_vec

_PATCH_LIMIT = 5000  # more changed memories than this since the last look: reload instead
_LOG_KEPT = 100_000  # vector_log rows kept by m015's prune trigger


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


def _best(pks: np.ndarray, rows: np.ndarray, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k rows of best cosine with the query, (pk, cosine), by (cosine desc, pk): the order
    sqlite-vec's ORDER BY gives, ties included."""
    exact = _cosines(rows, query)
    best = np.lexsort((pks, -exact))[:k]
    return [(int(pks[i]), float(exact[i])) for i in best]


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
        seq, token, token_then = vector_rows.log_position(conn, scope, since)
        if cached is not None and (cached.seq, cached.token) == (seq, token):
            return cached
        if (
            cached is not None
            and seq > cached.seq
            # The cache's seq is still in the log (an empty log at build time has no token:
            # then nothing may have been pruned since).
            and (seq <= _LOG_KEPT if cached.token is None else token_then == cached.token)
        ):
            changed = vector_rows.changed_since(conn, scope, model, cached.seq, _PATCH_LIMIT + 1)
            if len(changed) <= _PATCH_LIMIT:
                for pk, vector in changed:
                    cached.drop(pk)
                    if vector is not None:
                        cached.add(pk, vector)
                cached.seq, cached.token = seq, token
                return cached
        self._cache[key] = _Matrix(*vector_rows.scope_vectors(conn, scope, model), seq, token)
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
            return _best(m.pks[near], m.rows[near], query, k)

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
        return vector_rows.knn(conn, scope, model, query, k)

    def scores(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, pks: list[int]
    ) -> dict[int, float]:
        """Cosine of the query with each given memory that has a vector (for re-ranking)."""
        return vector_rows.cosines_of(conn, scope, model, query, pks)


# Rows asked of pgvector beyond k: equal vectors at the cut come out in pk order, as numpy's,
# when there are at most this many more of them.
_TIE_EXTRA = 8


class PgvectorIndex:
    """Nearest neighbours found by PostgreSQL's HNSW index (pgvector), scored here as numpy
    scores them (memman/storage/pgvector.py): nothing is loaded into this process.

    HNSW is approximate (recall below 1 at 100k vectors: benchmarks/RESULTS.md, "Vectors on
    PostgreSQL and pgvector"); when the search finds fewer rows than asked (an index scan
    whose candidates were mostly other scopes', or fewer memories than k), the scope is
    searched exactly on the server instead.
    """

    def forget(self, user_id: str, agent_id: str | None = None) -> None:
        """Nothing cached, nothing to drop."""

    def top(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, k: int
    ) -> list[tuple[int, float]]:
        """The k active memories of the scope most similar to a unit query vector: (pk, cosine)."""
        if k < 1:
            return []
        wanted = k + _TIE_EXTRA
        # A zero query is at no distance from anything to pgvector (NaN): every memory scores
        # 0, and the first k by pk are the answer, found exactly.
        pks, rows = pgvector.nearest(conn, scope, model, query, wanted, exact=not query.any())
        if len(pks) < wanted:
            pks, rows = pgvector.nearest(conn, scope, model, query, wanted, exact=True)
        return _best(pks, rows, query, k)

    def scores(
        self, conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, pks: list[int]
    ) -> dict[int, float]:
        """Cosine of the query with each given memory that has a vector (for re-ranking)."""
        found, rows = pgvector.vectors_of(conn, scope, model, len(query), pks)
        return dict(zip(found.tolist(), _cosines(rows, query).tolist(), strict=True))


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
    driver: SqliteDriver = field(default_factory=SqliteDriver)  # how a SQLite store connects


def _numpy_backend(cache_bytes: int) -> VectorBackend:
    return VectorBackend(VectorIndex(cache_bytes))


def _sqlite_vec_backend(cache_bytes: int) -> VectorBackend:
    """sqlite-vec (storage/sqlite_driver.py loads it); it caches nothing, so the cache budget
    does not apply."""
    return VectorBackend(SqliteVecIndex(), driver_with_sqlite_vec())


VECTOR_BACKENDS: dict[str, Callable[[int], VectorBackend]] = {
    # numpy until the store says whether its server searches (chosen_search).
    "auto": _numpy_backend,
    "numpy": _numpy_backend,
    "sqlite-vec": _sqlite_vec_backend,
    "pgvector": lambda cache_bytes: VectorBackend(PgvectorIndex()),
}


def chosen_search(
    name: str, backend: VectorBackend, server_search: bool
) -> tuple[str, VectorSearch]:
    """The search a manager uses and its name (memman stats), once the store is open: "auto"
    is pgvector where the database has it installed (the store's server_vector_search), else
    numpy. ConfigError for "pgvector" where it is not installed."""
    if name == "pgvector" and not server_search:
        raise ConfigError(
            "vector_search 'pgvector' needs a PostgreSQL database with the vector extension"
            " installed (memman stats says whether the server offers it); use 'auto' or 'numpy'"
        )
    if name == "auto":
        return ("pgvector", PgvectorIndex()) if server_search else ("numpy", backend.index)
    return name, backend.index


def make_vector_backend(name: str, *, cache_mb: float) -> VectorBackend:
    """The backend named by the `vector_search` setting; numpy's cache holds up to cache_mb."""
    try:
        factory = VECTOR_BACKENDS[name]
    except KeyError:
        raise ConfigError(
            f"unknown vector_search {name!r}; choose one of {', '.join(VECTOR_BACKENDS)}"
        ) from None
    return factory(int(cache_mb * 2**20))
