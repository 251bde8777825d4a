"""The statements that bring stored topics up to the current reader, and the store's record of
which reader version last labelled it (`store_state`, m029 / p010).

A memory's subject and attribute are written with its text: the caller's labels, else the
LLM's, else what `about()` read then. A memory stored when the reader could not read its
phrasing keeps NULL labels, so a newer fact about the same thing never meets it by topic; these
statements find such memories and fill their labels, never touching a label that is set (who
set it, a caller, an LLM or the reader, is not recorded). A mixin of
`memman.storage.store.Store`; memman/lifecycle/relabel.py walks the store with them.
"""

from __future__ import annotations

import sqlalchemy as sa

from memman.language.topic import about
from memman.models import Memory, Status
from memman.scope import Scope
from memman.storage.sql import run_sql

# The store's own state by key: a small table, so a later setting of the store as a whole
# needs no migration of its own. Values are text; each key's reader parses its own.
STATE_TABLE = "CREATE TABLE store_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
READER_KEY = "reader_version"
# The version recorded for memories labelled by a reader of unknown age (a store made before
# versions were recorded, memories copied from an export): no reader's version.
UNKNOWN_READER = "0"

_READ_STATE = "SELECT value FROM store_state WHERE key = ?"
_KEEP_STATE = "INSERT INTO store_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"
_WRITE_STATE = (
    "INSERT INTO store_state (key, value) VALUES (?, ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
# Active memories without an attribute: the ones a newer reader may read. Parked facts are
# not among them: a parked fact's NULL labels are read by the reader of the day it is
# retried, while labels filled in now would reach the write path as the caller's.
_UNLABELLED = "status = 'active' AND attribute IS NULL"
# A subject stands when set (a caller gave a subject without an attribute: the write path
# pairs it with the reader's attribute too, write/candidate._topic); the attribute is filled
# only where it is still NULL and the text is the one read, so neither a label nor a text
# written since the batch was read is labelled over.
_FILL = (
    "UPDATE long_term SET subject = COALESCE(subject, ?), attribute = ?"
    " WHERE pk = ? AND content_hash = ? AND attribute IS NULL"
)


def relabel_would_label(memory: Memory) -> bool:
    """Whether `relabel` would label a memory: active, without a topic, and read as having one
    now. Many facts have none ("Big fan of jazz"), and those ask for no relabel."""
    active = memory.status is Status.ACTIVE and memory.attribute is None
    return active and about(memory.content) is not None


def first_reader_version(holds_memories: bool, current: str) -> str:
    """The reader version a store records when versions start being recorded (m029 / p010): a
    store with memories was labelled by a reader of unknown age, a new one by the current."""
    return UNKNOWN_READER if holds_memories else current


def _scoped(scope: Scope | None) -> tuple[str, list[str]]:
    if scope is None:
        return "", []
    return " AND user_id = ? AND agent_id = ?", [scope.user_id, scope.agent_key]


class LabelRows:
    """The reader version on record, and the memories it left without a topic."""

    def reader_version(self, conn: sa.Connection) -> str:
        """The reader version that last labelled the store (UNKNOWN_READER if none is on
        record)."""
        row = run_sql(conn, _READ_STATE, (READER_KEY,)).fetchone()
        return UNKNOWN_READER if row is None else str(row[0])

    def set_reader_version(self, conn: sa.Connection, version: str) -> None:
        """Record the reader version that labelled the store."""
        run_sql(conn, _WRITE_STATE, (READER_KEY, version))

    def state(self, conn: sa.Connection, key: str) -> str | None:
        """The store's own state under key (store_state), None if nothing is on record."""
        row = run_sql(conn, _READ_STATE, (key,)).fetchone()
        return None if row is None else str(row[0])

    def keep_state(self, conn: sa.Connection, key: str, value: str) -> str:
        """Record value under key unless a value is on record already; the value on record
        (the first writer's, when two race)."""
        run_sql(conn, _KEEP_STATE, (key, value))
        return str(run_sql(conn, _READ_STATE, (key,)).fetchone()[0])

    def count_unlabelled(self, conn: sa.Connection, scope: Scope | None) -> int:
        """Active memories of the scope (every scope's if None) without an attribute."""
        where, params = _scoped(scope)
        sql = f"SELECT count(*) FROM long_term WHERE {_UNLABELLED}{where}"
        return int(run_sql(conn, sql, params).fetchone()[0])

    def unlabelled(
        self, conn: sa.Connection, scope: Scope | None, *, after_pk: int, limit: int
    ) -> list[tuple[int, str, str]]:
        """(pk, content, content_hash) of up to `limit` active memories of the scope (every
        scope's if None) without an attribute, after after_pk, in pk order."""
        where, params = _scoped(scope)
        sql = (
            f"SELECT pk, content, content_hash FROM long_term WHERE {_UNLABELLED}{where}"
            " AND pk > ? ORDER BY pk LIMIT ?"
        )
        return [tuple(row) for row in run_sql(conn, sql, [*params, after_pk, limit])]

    def fill_labels(self, conn: sa.Connection, labels: list[tuple[str, str, int, str]]) -> int:
        """Give each (subject, attribute, pk, content_hash) memory that attribute, and that
        subject where it has none, unless its attribute is set or its text changed by now;
        returns how many memories were labelled."""
        return sum(run_sql(conn, _FILL, label).rowcount for label in labels)
