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

from dataclasses import dataclass

import sqlalchemy as sa

from memman.scope import Scope
from memman.storage.store import Store


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
    agent_key = None if agent_id is None else Scope(user_id, agent_id).agent_key
    counts = store.write(lambda conn: store.forget_rows(conn, user_id, agent_key))
    return ForgetReport(**counts, wal_truncated=store.scrub())


def purge(store: Store, memory_id: str, scope: Scope) -> ForgetReport:
    """Erase one memory of the scope with its events and vectors (NotFoundError if the scope
    has no such memory). A merge that copied its words into another memory is not undone."""

    def transaction(conn: sa.Connection) -> dict[str, int]:
        store.get(conn, memory_id, scope)
        return store.purge_rows(conn, memory_id)

    counts = store.write(transaction)
    # VACUUM and an emptied WAL (Store.scrub) take the deleted rows' bytes out of the files.
    return ForgetReport(**counts, wal_truncated=store.scrub())
