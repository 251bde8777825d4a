"""Erasure that can be verified: a hard purge of a user (`forget`) or of one memory (`purge`).

`delete()` is soft on purpose (the row and its history stay, so it can be restored), and even
deleted rows leave their words in the file: SQLite only marks freed pages free, FTS5's
'delete' adds a tombstone to a new segment while the words stay in the old one, and the WAL
keeps every page image written since the last checkpoint. So erasure is three steps:

1. One write transaction deletes every row of the scope (memories of every status, events,
   pending, short-term, buffered messages, vectors, the vector change log) with
   `secure_delete` on, so SQLite zeroes what it frees, and merges the FTS5 index into one
   segment ('optimize'), which drops the deleted documents' terms.
2. VACUUM rewrites the file with live pages only.
3. A TRUNCATE checkpoint copies the WAL into the file and cuts the WAL to zero bytes.

Dropping the scope's vectors writes one `vector_log` row per memory (user id, agent id and row
number, no text) through m015's trigger: that is how other processes' cached matrices learn
that those rows left. The older log rows of the scope are deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa

from memman.scope import Scope
from memman.store import Store, run_sql

# FTS5 'optimize' merges every segment into one, leaving out deleted documents' terms.
_FTS_OPTIMIZE = "INSERT INTO long_term_fts(long_term_fts) VALUES('optimize')"


@dataclass(frozen=True)
class ForgetReport:
    """Rows erased per table, and whether the WAL could be emptied."""

    memories: int = 0  # long_term rows of every status
    events: int = 0
    pending: int = 0
    short_term: int = 0
    messages: int = 0  # message_buffer rows
    vectors: int = 0  # memory_vectors rows
    vector_log: int = 0  # the scope's earlier vector_log rows
    # False: a reader still held an older snapshot, so the WAL (which may hold old page
    # images) was not emptied; forget again, or checkpoint, once readers are done.
    wal_truncated: bool = False


def forget(store: Store, user_id: str, agent_id: str | None) -> ForgetReport:
    """Erase every row of the user (of every agent, or only agent_id's scope if given)."""
    where, params = "user_id = ?", [user_id]
    if agent_id is not None:
        where, params = where + " AND agent_id = ?", [*params, Scope(user_id, agent_id).agent_key]

    def purge_rows(conn: sa.Connection) -> dict[str, int]:
        def delete(table: str, condition: str = where) -> int:
            return run_sql(conn, f"DELETE FROM {table} WHERE {condition}", params).rowcount

        return {
            "vector_log": delete("vector_log"),
            "vectors": delete(
                "memory_vectors", f"memory_pk IN (SELECT pk FROM long_term WHERE {where})"
            ),
            "events": delete("events"),
            "memories": delete("long_term"),
            "pending": delete("pending"),
            "short_term": delete("short_term"),
            "messages": delete("message_buffer"),
        }

    return _erase(store, purge_rows)


def purge(store: Store, memory_id: str, scope: Scope) -> ForgetReport:
    """Erase one memory of the scope with its events and vectors (NotFoundError if the scope
    has no such memory). A merge that copied its words into another memory is not undone."""
    pk = "(SELECT pk FROM long_term WHERE id = ?)"

    def purge_rows(conn: sa.Connection) -> dict[str, int]:
        store.get(conn, memory_id, scope)

        def delete(table: str, condition: str) -> int:
            return run_sql(conn, f"DELETE FROM {table} WHERE {condition}", (memory_id,)).rowcount

        return {
            "vector_log": delete("vector_log", f"memory_pk = {pk}"),
            "vectors": delete("memory_vectors", f"memory_pk = {pk}"),
            "events": delete("events", "memory_id = ?"),
            "memories": delete("long_term", "id = ?"),
        }

    return _erase(store, purge_rows)


def _erase(store: Store, purge_rows: Callable[[sa.Connection], dict[str, int]]) -> ForgetReport:
    """Delete in one transaction with secure_delete on and the FTS index optimised, then
    VACUUM and empty the WAL (Store.scrub)."""

    def transaction(conn: sa.Connection) -> dict[str, int]:
        run_sql(conn, "PRAGMA secure_delete = ON")
        counts = purge_rows(conn)
        run_sql(conn, _FTS_OPTIMIZE)
        run_sql(conn, "PRAGMA secure_delete = OFF")  # the pooled connection's usual setting
        return counts

    counts = store.write(transaction)
    return ForgetReport(**counts, wal_truncated=store.scrub())
