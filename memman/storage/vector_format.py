"""How a vector is stored, per backend, written (save_vector) and read back into float32 arrays.

SQLite keeps a vector as its float32 bytes (a BLOB); PostgreSQL as a float4 array (`REAL[]`,
p002), so the server can read it: check its length, cast it to pgvector's `vector` type
(docs/postgresql.md). Either way the in-process index (semantic/vectors.py) gets the same
float32 rows, and a cosine computed from them is the same on both backends.

A whole scope's vectors are read at once when the index first searches it. psycopg would turn
each REAL[] into a Python list of floats (100k x 384 objects for a 100k scope); instead the
scope is read through a binary cursor whose loader keeps each array's wire bytes, and numpy
decodes a chunk of them in one step.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
import sqlalchemy as sa

from memman.storage.dialect import driver_errors, driver_params, is_postgres
from memman.storage.sql import run_sql

FLOAT4_ARRAY_OID = 1021  # PostgreSQL's type oid of real[]
# PostgreSQL's binary array: five 4-byte words (dimensions, null flag, element type, length,
# lower bound), then per element its 4-byte length and its 4 bytes, big-endian.
_HEADER_WORDS = 5


def stored(conn: sa.Connection, vector: np.ndarray) -> bytes | list[float]:
    """The parameter a vector is written as: float32 bytes for SQLite, floats for PostgreSQL
    (sent as a float array the statement casts to real[]; float32 -> float -> real is exact)."""
    vector = np.asarray(vector, dtype=np.float32)
    return vector.tolist() if is_postgres(conn) else vector.tobytes()


def decoded(value: bytes | list[float]) -> np.ndarray:
    """A stored vector read by a statement (a BLOB's bytes, or a REAL[]'s list) as float32."""
    if isinstance(value, bytes | memoryview):
        return np.frombuffer(value, dtype=np.float32)
    return np.asarray(value, dtype=np.float32)


def chunks(
    conn: sa.Connection, sql: str, params: dict[str, Any], size: int
) -> Iterator[tuple[list[int], np.ndarray]]:
    """(pks, float32 rows) of a statement selecting (pk, vector), `size` rows at a time,
    streamed from the server; every vector of the result has one dimension."""
    if not is_postgres(conn):
        # yield_per: a server-side cursor would be needed to stream with psycopg; sqlite3's
        # cursor streams either way.
        result = conn.execute(sa.text(sql), params, execution_options={"yield_per": size})
        for chunk in result.partitions(size):
            flat = np.frombuffer(b"".join(blob for _, blob in chunk), dtype=np.float32)
            yield [pk for pk, _ in chunk], flat.reshape(len(chunk), -1)
        return
    statement, values = driver_params(sql, params)
    with driver_errors(conn, statement, values):
        raw = conn.connection.driver_connection
        with raw.cursor(name="memman_vectors", binary=True) as cursor:
            cursor.adapters.register_loader(FLOAT4_ARRAY_OID, _wire_bytes_loader())
            cursor.itersize = size
            cursor.execute(statement, values)
            while chunk := cursor.fetchmany(size):
                words = np.frombuffer(b"".join(wire for _, wire in chunk), dtype=">f4")
                rows = words.reshape(len(chunk), -1)[:, _HEADER_WORDS + 1 :: 2]
                yield [pk for pk, _ in chunk], rows


@functools.cache
def _wire_bytes_loader() -> type:
    """psycopg's Loader keeping a binary value's bytes (imported only with psycopg)."""
    from psycopg.adapt import Loader
    from psycopg.pq import Format

    class WireBytes(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> bytes:
            return bytes(data)

    return WireBytes


_SAVE_SQL = """
    INSERT OR REPLACE INTO memory_vectors (memory_pk, model, dim, vector)
    SELECT pk, ?, ?, ? FROM long_term WHERE id = ?
"""
# PostgreSQL's spelling: an upsert, whose UPDATE the change-log trigger sees as SQLite's
# REPLACE (a delete and an insert) is seen there; the floats become a REAL[].
_SAVE_SQL_POSTGRES = """
    INSERT INTO memory_vectors (memory_pk, model, dim, vector)
    SELECT pk, ?, ?, ?::real[] FROM long_term WHERE id = ?
    ON CONFLICT (memory_pk, model) DO UPDATE SET dim = excluded.dim, vector = excluded.vector
"""


def save_vector(conn: sa.Connection, memory_id: str, model: str, vector: np.ndarray) -> None:
    """Store (or replace) the memory's vector for this model, inside the caller's transaction."""
    vector = np.asarray(vector, dtype=np.float32)
    sql = _SAVE_SQL_POSTGRES if is_postgres(conn) else _SAVE_SQL
    run_sql(conn, sql, (model, vector.shape[0], stored(conn, vector), memory_id))
