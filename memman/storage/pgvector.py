"""pgvector: the vector tier's nearest-neighbour search done by the PostgreSQL server.

The vectors stay what they are (REAL[], p002): pgvector is an index beside them, not a second
copy of the data, so a database searches the same rows whether pgvector is there or not, the
in-process index (vector_search "numpy") still works on it, and export, import and the change
log are untouched. pgvector's HNSW index needs one dimension per index, and the embedder's
dimension is only known once a vector is written (models are switched by reindexing, and a
database may hold two models' vectors); so each dimension gets a partial expression index,
`(vector::vector(dim)) vector_cosine_ops WHERE dim = dim`, made by the first write of a vector
of that dimension (`ensure_index`; p005 makes them for the vectors already stored). Made in
that write's transaction, on a table that holds no vector of the dimension yet, it costs one
scan of the table's rows, once.

A search asks for the k nearest rows of the scope (plus a few, for ties at the cut) with their
vectors, then scores those rows in-process exactly as the numpy index does, so the cosines,
and the order of the rows found, are numpy's to the bit. PostgreSQL's planner chooses how:
the HNSW index when sorting the scope's rows would cost more (a large scope), else a scan of
the scope's rows by its index and a sort (a small scope among many: exact). HNSW is
approximate, and the scope filter runs after the index scan: a scan yields at most
hnsw.ef_search rows, and those of other scopes are dropped, so it can return fewer rows than
asked (pgvector 0.8's iterative scans lift this; 0.6 has none). Then the scope is searched
exactly on the server.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sqlalchemy as sa

from memman.scope import Scope
from memman.storage.vector_format import decoded

# Whether pgvector is installed in this database, and whether the server offers it.
OFFERED_SQL = """
    SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'),
           EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')
"""
# Writers making a dimension's index queue on this key ('mem' 0x05), so a second one finds
# the first one's index instead of failing on its name.
INDEX_LOCK = 0x6D656D05
# hnsw.ef_search: the candidates one index scan keeps, and so also how many rows of other
# scopes it can skip. pgvector's default, 40, lost near-duplicates: a stored vector plus noise
# was found first by 20 of 30 searches among 100k random 384-dim vectors, 28 at 100, all at
# 200; MiniLM vectors of 30,913 MSC facts gave recall@10 0.96 at 40, 0.99 at 200, for a few
# ms more per search (benchmarks/RESULTS.md, "Vectors on PostgreSQL and pgvector"). So twice
# the rows asked, at least 200, at most pgvector's maximum, 1000.
EF_SEARCH_MIN, EF_SEARCH_MAX = 200, 1000
# pgvector's HNSW indexes vectors of up to 2,000 dimensions; longer ones (OpenAI's
# text-embedding-3-large: 3,072) are searched by a scan of the scope's rows.
MAX_INDEXED_DIM = 2000
# maintenance_work_mem of an index build: pgvector builds the HNSW graph in it and, once the
# graph outgrows it, goes on much slower: 100k 384-dim vectors took 154 s at the default 64 MB,
# 35 s at 256 MB and at 512 MB (benchmarks/RESULTS.md "Vectors on PostgreSQL and pgvector"), so
# 256 MB holds their graph. Safe for a server: memory of one backend for one statement, one
# build at a time (INDEX_LOCK); a parallel build's workers share it (a segment in /dev/shm,
# which a container must allow: docs/postgresql.md), they do not multiply it.
BUILD_MEMORY = "256MB"
# The session's value (returned, to set back), raised for this transaction if lower.
_RAISE_BUILD_MEMORY_SQL = f"""
    SELECT current_setting('maintenance_work_mem'),
           CASE WHEN pg_size_bytes(current_setting('maintenance_work_mem'))
                     < pg_size_bytes('{BUILD_MEMORY}')
                THEN set_config('maintenance_work_mem', '{BUILD_MEMORY}', true) END
"""
_INDEXED_DIMS_SQL = """
    SELECT substring(indexname FROM 'memory_vectors_hnsw_(\\d+)$')::int FROM pg_indexes
    WHERE tablename = 'memory_vectors' AND indexname ~ '^memory_vectors_hnsw_\\d+$'
"""
# pgvector's type holds finite floats only: a REAL[] with NaN or an infinity (memman's
# embedders refuse to write one; an old or hand-written row may hold one) is left out of the
# index and of its searches rather than failing them.
_FINITE = "NOT (vector && '{NaN,Infinity,-Infinity}'::real[])"
# The dimension is a literal, as in the index's predicate: a generic plan of `dim = $1` could
# not use the partial index.
_SCOPE_JOIN = """
    FROM memory_vectors v JOIN long_term l ON l.pk = v.memory_pk
    WHERE l.user_id = :user_id AND l.agent_id = :agent_id AND l.status = 'active'
      AND v.model = :model AND v.dim = {dim}
      AND {finite}
"""


def index_name(dim: int) -> str:
    return f"memory_vectors_hnsw_{int(dim)}"


def _as_vector(dim: int) -> str:
    """The indexed expression; a search must spell it exactly so for the planner to use it."""
    return f"(v.vector::vector({int(dim)}))"


def indexed_dims(conn: sa.Connection) -> set[int]:
    """The dimensions that have an HNSW index."""
    return set(conn.exec_driver_sql(_INDEXED_DIMS_SQL).scalars())


def ensure_index(conn: sa.Connection, dim: int) -> None:
    """The dimension's HNSW index, made in the caller's write transaction if missing (it
    holds a SHARE lock on memory_vectors until the commit: writers of vectors wait), with
    maintenance_work_mem raised to BUILD_MEMORY for the build only (set back before the
    caller's next statement; a server configured higher keeps its own). None for a dimension
    HNSW cannot index."""
    if dim > MAX_INDEXED_DIM:
        return
    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({INDEX_LOCK})")
    before = conn.exec_driver_sql(_RAISE_BUILD_MEMORY_SQL).scalar_one()
    conn.exec_driver_sql(
        f"CREATE INDEX IF NOT EXISTS {index_name(dim)} ON memory_vectors"
        f" USING hnsw ((vector::vector({int(dim)})) vector_cosine_ops)"
        f" WHERE dim = {int(dim)} AND {_FINITE}"
    )
    conn.execute(
        sa.text("SELECT set_config('maintenance_work_mem', :before, true)"), {"before": before}
    )


def create_extension(conn: sa.Connection) -> bool:
    """CREATE EXTENSION vector if the server offers it and this role may (pgvector 0.6 is not
    a trusted extension: a superuser, or one who installed it, must); whether it is installed.
    A refusal rolls back only its savepoint."""
    installed, available = conn.exec_driver_sql(OFFERED_SQL).one()
    if installed or not available:
        return bool(installed)
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION vector")
    except sa.exc.DBAPIError:  # insufficient_privilege; a catalog that was wrong
        return False
    return True


def _params(scope: Scope, model: str, dim: int) -> dict[str, Any]:
    return {"user_id": scope.user_id, "agent_id": scope.agent_key, "model": model, "dim": dim}


def _scope_join(dim: int) -> str:
    return _SCOPE_JOIN.format(dim=int(dim), finite=_FINITE)  # `vector` is only v's column


def _rows(conn: sa.Connection, sql: str, params: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(pks, float32 rows) of a statement selecting (pk, vector): a few rows (k and a few),
    read by a plain statement rather than vector_format's server-side cursor, which the
    planner plans for the first rows, so it would take the HNSW index even for a scope of
    100 memories among 30,000; planned for the whole result, it scans such a scope's rows
    (one statement, 2 ms, instead of a short index scan then that scan: 7 ms)."""
    found = conn.execute(sa.text(sql), params).all()
    pks = np.array([pk for pk, _ in found], dtype=np.int64)
    rows = [decoded(vector) for _, vector in found]
    return pks, np.vstack(rows) if rows else np.empty((0, params["dim"]), dtype=np.float32)


def nearest(
    conn: sa.Connection, scope: Scope, model: str, query: np.ndarray, n: int, *, exact: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(pks, float32 rows) of up to n of the scope's active vectors nearest the query, by the
    dimension's HNSW index (approximate: see the module docstring), or by a scan of the
    scope's rows if `exact` (ordered as numpy orders, a zero vector scoring 0)."""
    dim = len(query)
    params = {**_params(scope, model, dim), "query": np.asarray(query, np.float32).tolist()}
    distance = f"{_as_vector(dim)} <=> CAST(:query AS real[])::vector({dim})"
    if exact or dim > MAX_INDEXED_DIM:
        # Not the index's expression, so the planner scans the scope's rows (its index).
        order = f"coalesce(nullif(1 - ({distance}), 'NaN'), 0) DESC, v.memory_pk"
    else:
        ef_search = min(EF_SEARCH_MAX, max(EF_SEARCH_MIN, 2 * n))
        conn.exec_driver_sql(f"SELECT set_config('hnsw.ef_search', '{ef_search}', true)")
        order = distance
    sql = f"SELECT v.memory_pk, v.vector {_scope_join(dim)} ORDER BY {order} LIMIT {int(n)}"
    return _rows(conn, sql, params)


def vectors_of(
    conn: sa.Connection, scope: Scope, model: str, dim: int, pks: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """(pks, float32 rows) of those of the given memories that have an active vector."""
    sql = f"SELECT v.memory_pk, v.vector {_scope_join(dim)} AND v.memory_pk = ANY(:pks)"
    return _rows(conn, sql, {**_params(scope, model, dim), "pks": pks})
