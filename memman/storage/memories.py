"""Long-term memories' rows: reads by hash, topic, id and scope, and the row writers.

A mixin of `memman.storage.store.Store` (which supplies the `long_term` table); the writers are
called by Store.apply (memman/storage/events.py), which writes each change with its event.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

from memman.config import DEFAULT_CONFIDENCE
from memman.errors import (
    InvalidInputError,
    NotFoundError,
)
from memman.memo import recall
from memman.models import Event, Memory, Status, Statuses
from memman.scope import Scope
from memman.storage import sql as plain_sql
from memman.storage.busy import stored
from memman.storage.changes import NewText
from memman.storage.events import event_from_row
from memman.storage.sql import insert_many, insert_returning_id, run_sql, scope_where

log = logging.getLogger(__name__)

_HOLDS_HASH = (
    "SELECT 1 FROM long_term WHERE user_id = ? AND agent_id = ? AND content_hash = ?"
    " AND status = 'active' LIMIT 1"
)


def new_memory_id() -> str:
    return uuid.uuid4().hex


# Most rows hold the empty defaults: a new list or dict costs a tenth of json.loads, and a
# write builds ~17 memories from rows (RESULTS.md, "A single write, against mem0").
_EMPTY_JSON = {"[]": list, "{}": dict}


def _json_column(m: Any, column: str) -> Any:
    """A JSON column's value: json.loads(text), a new empty list or dict without parsing."""
    empty = _EMPTY_JSON.get(m[column])
    return empty() if empty else stored("long_term", m["id"], column, json.loads, m[column])


class MemoryRows:
    # -- long-term memories ---------------------------------------------------------------

    def memory_from_row(self, row: sa.Row[Any]) -> Memory:
        return self._memory(row._mapping)

    def _memory_from_values(self, values: tuple) -> Memory:
        """A memory from a run_sql row of the columns in self._memory_columns (built once per
        row in a batch: the same memories are read for fact after fact, see memman/memo.py)."""
        return recall(
            (Memory, *values),
            lambda: self._memory(dict(zip(self._memory_columns, values, strict=True))),
        )

    @staticmethod
    def _memory(m: Any) -> Memory:
        return Memory(
            id=m["id"],
            user_id=m["user_id"],
            agent_id=m["agent_id"] or None,
            content=m["content"],
            category=m["category"],
            importance=m["importance"],
            confidence=m["confidence"],
            repetition_count=m["repetition_count"],
            access_count=m["access_count"],
            last_accessed_at=m["last_accessed_at"],
            created_at=m["created_at"],
            updated_at=m["updated_at"],
            status=stored("long_term", m["id"], "status", Status, m["status"]),
            sources=_json_column(m, "sources"),
            metadata=_json_column(m, "metadata"),
            subject=m["subject"],
            attribute=m["attribute"],
            observed_at=m["observed_at"],
            decayed_at=m["decayed_at"],
        )

    def active_by_hash(self, conn: sa.Connection, scope: Scope, content_hash: str) -> Memory | None:
        row = run_sql(
            conn, self._active_by_hash_sql, (scope.user_id, scope.agent_key, content_hash)
        ).fetchone()
        return self._memory_from_values(row) if row else None

    def active_hashes(self, conn: sa.Connection, scope: Scope, hashes: list[str]) -> set[str]:
        """Which of these content hashes an active memory of the scope holds: one seek of the
        active-hash index each. (With an IN list SQLite's planner read the scope's whole
        long_term_scope index instead: 29 ms against 2.3 for 500 hashes at 100k rows.)"""
        scoped = (scope.user_id, scope.agent_key)
        return {h for h in set(hashes) if run_sql(conn, _HOLDS_HASH, (*scoped, h)).fetchone()}

    def active_by_topic(
        self, conn: sa.Connection, scope: Scope, subject: str, attribute: str, limit: int
    ) -> list[Memory]:
        """The scope's active memories about this subject and attribute, newest observed
        first, the later written first among equal times (the long_term_topic index: one
        seek that stops after limit rows, whatever the store's size)."""
        rows = run_sql(
            conn, self._by_topic_sql, (scope.user_id, scope.agent_key, subject, attribute, limit)
        )
        return [self._memory_from_values(row) for row in rows]

    def active_unlabelled(self, conn: sa.Connection, scope: Scope, limit: int) -> list[Memory]:
        """The scope's active memories no reader labelled (no attribute), newest observed
        first, at most limit."""
        rows = run_sql(conn, self._unlabelled_sql, (scope.user_id, scope.agent_key, limit))
        return [self._memory_from_values(row) for row in rows]

    def active_replacing(
        self, conn: sa.Connection, scope: Scope, content_hash: str
    ) -> Memory | None:
        """The scope's active memory that an UPDATE took a text with this hash out of (the
        latest such UPDATE's), or None: one seek of the events_before_hash index."""
        key = (scope.user_id, scope.agent_key)
        row = run_sql(conn, self._replacing_sql, (*key, content_hash, *key)).fetchone()
        return self._memory_from_values(row) if row else None

    def get(self, conn: sa.Connection, memory_id: str, scope: Scope | None = None) -> Memory:
        """The memory with this id; NotFoundError if there is none or (scope given) it belongs
        to another scope: the same error, so an id never tells whether another user has it."""
        row = run_sql(conn, self._by_id_sql, (memory_id,)).fetchone()
        memory = self._memory_from_values(row) if row else None
        if memory is None or (
            scope is not None and Scope(memory.user_id, memory.agent_id) != scope
        ):
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return memory

    def resolve_id(self, conn: sa.Connection, prefix: str, scope: Scope | None = None) -> str:
        """The one id starting with prefix (of the scope's memories, if given)."""
        lt = self.long_term
        if not isinstance(prefix, str) or len(prefix) < 4 or not prefix.isalnum():
            raise InvalidInputError("give a memory id or at least its first 4 characters")
        query = sa.select(lt.c.id).where(lt.c.id.startswith(prefix))
        if scope is not None:
            query = query.where(scope_where(lt, scope))
        rows = conn.execute(query.limit(2)).all()
        if not rows:
            raise NotFoundError(f"no memory with id {prefix!r}")
        if len(rows) > 1:
            raise InvalidInputError(f"id prefix {prefix!r} is ambiguous; give more characters")
        return rows[0][0]

    def memories_by_pk(self, conn: sa.Connection, pks: list[int]) -> dict[int, Memory]:
        """Memories by primary key, in statements of at most PKS_PER_STATEMENT variables.

        Usually the retrievers' top k; a search with a huge limit can ask for more keys than
        SQLite binds in one statement (32,766 by default), hence the chunks.
        """
        pk = self._memory_columns.index("pk")
        found = {}
        for chunk, marks in plain_sql.in_chunks(pks):
            sql = self._by_pk_sql.format(marks)
            found.update(
                (row[pk], self._memory_from_values(row)) for row in run_sql(conn, sql, chunk)
            )
        return found

    def list(
        self,
        conn: sa.Connection,
        scope: Scope,
        *,
        statuses: tuple[Status, ...] = (Status.ACTIVE,),
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Memory]:
        query = self._memories_query(scope, statuses).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        return [self.memory_from_row(row) for row in conn.execute(query)]

    def iter_memories(
        self, conn: sa.Connection, scope: Scope | None, *, statuses: Statuses
    ) -> Iterator[Memory]:
        """Memories of one scope (every scope if None), of any status if None, oldest first."""
        query = self._memories_query(scope, statuses)
        for row in conn.execute(query, execution_options={"yield_per": plain_sql.STREAM_ROWS}):
            yield self.memory_from_row(row)

    def core_memories(
        self,
        conn: sa.Connection,
        scope: Scope,
        *,
        categories: list[str],
        safety: frozenset[str],
        attributes: frozenset[str],
        limit: int,
    ) -> list[Memory]:
        """The scope's active memories every context block starts with, at most `limit`.

        Those of `categories` (safety, constraints) or of a `safety` attribute (anyone's
        allergy) first, then pinned ones (metadata
        {"pinned": true}), then the user's own facts of `attributes` (subject "user": the
        profile); newest observed first within each. One statement on the scope index
        (user_id, agent_id, status), which reads the scope's active rows, not the table: a
        few ms for 10k of them, about 40 ms for 100k.
        """
        lt = self.long_term
        protected = sa.or_(lt.c.category.in_(categories), lt.c.attribute.in_(safety))
        pinned = self._pinned()
        profile = sa.and_(lt.c.subject == "user", lt.c.attribute.in_(attributes))
        tiers = [(protected, 0), (pinned, 1), (profile, 2)]
        newest = sa.func.coalesce(lt.c.observed_at, lt.c.updated_at)
        query = (
            sa.select(lt)
            .where(
                scope_where(lt, scope),
                lt.c.status == Status.ACTIVE.value,
                sa.or_(*(condition for condition, _ in tiers)),
            )
            .order_by(sa.case(*tiers), newest.desc(), lt.c.pk.desc())
            .limit(limit)
        )
        return [self.memory_from_row(row) for row in conn.execute(query)]

    def _pinned(self) -> sa.ColumnElement[bool]:
        """Metadata saying {"pinned": true}; none that SQLite cannot parse (json_extract would
        fail the context block), and "{}" is not parsed (RESULTS.md, "Trust pass")."""
        metadata = self.long_term.c.metadata
        pinned = (sa.func.json_valid(metadata), sa.func.json_extract(metadata, "$.pinned"))
        return sa.case((metadata == "{}", None), pinned) == sa.true()

    def _memories_query(self, scope: Scope | None, statuses: Statuses) -> sa.Select:
        lt = self.long_term
        kept = sa.true() if statuses is None else lt.c.status.in_([s.value for s in statuses])
        query = sa.select(lt).where(kept)
        if scope is not None:
            query = query.where(scope_where(lt, scope))
        return query.order_by(lt.c.pk)

    def iter_events(self, conn: sa.Connection, scope: Scope | None) -> Iterator[Event]:
        """Audit events of one scope (every scope if None), oldest first."""
        ev = self.events
        query = sa.select(ev).order_by(ev.c.id)
        if scope is not None:
            query = query.where(scope_where(ev, scope))
        for row in conn.execute(query, execution_options={"yield_per": plain_sql.STREAM_ROWS}):
            yield event_from_row(row)

    def count_by_status(self, conn: sa.Connection, scope: Scope | None) -> dict[str, int]:
        lt = self.long_term
        query = sa.select(lt.c.status, sa.func.count()).group_by(lt.c.status)
        if scope is not None:
            query = query.where(scope_where(lt, scope))
        return {status: n for status, n in conn.execute(query)}

    def insert_memory(self, conn: sa.Connection, scope: Scope, **fields: Any) -> str:
        """Insert one new active memory of memory_row's fields (insert_memories with one row;
        a new memory_id unless given) and return its id."""
        row = memory_row(**{**fields, "memory_id": fields.get("memory_id") or new_memory_id()})
        self.insert_memories(conn, scope, [row])
        return row["id"]

    def insert_memories(
        self, conn: sa.Connection, scope: Scope, rows: list[dict[str, Any]]
    ) -> None:
        """Insert memory_row()s of one scope with one executemany (the FTS and vector-log
        triggers fire per row as for a single insert)."""
        insert_many(conn, "long_term", scope, rows)

    def change_content(self, conn: sa.Connection, change: NewText) -> None:
        """New text for a memory, with what it is about and when it was stated (each kept as
        it was when None). Through run_sql, as the write path's other per-fact statements."""
        memory = change.memory
        sources = json.dumps(_with_source(memory.sources, change.source))
        about = (change.subject or memory.subject, change.attribute or memory.attribute)
        stated = change.observed_at or memory.observed_at
        values = (change.content, change.content_hash, change.now, sources, *about, stated)
        run_sql(
            conn,
            "UPDATE long_term SET content = ?, content_hash = ?, updated_at = ?, sources = ?,"
            " subject = ?, attribute = ?, observed_at = ? WHERE id = ?",
            (*values, memory.id),
        )

    def set_status(self, conn: sa.Connection, memory_id: str, status: Status, now: str) -> None:
        run_sql(
            conn,
            "UPDATE long_term SET status = ?, updated_at = ? WHERE id = ?",
            (status.value, now, memory_id),
        )

    def reinforce(
        self, conn: sa.Connection, memory: Memory, *, now: str, source: str | None
    ) -> None:
        """A repeated fact makes the existing memory stronger instead of creating a copy."""
        run_sql(
            conn,
            "UPDATE long_term SET repetition_count = repetition_count + 1,"
            " last_accessed_at = ?, sources = ? WHERE id = ?",
            (now, json.dumps(_with_source(memory.sources, source)), memory.id),
        )

    def copy_memory(self, conn: sa.Connection, memory: Memory, content_hash: str) -> None:
        """Insert a memory exactly as given: id, status, counters and stamps (an import)."""
        values = memory.model_dump(exclude={"user_id", "agent_id"})
        values.update(
            status=memory.status.value,
            content_hash=content_hash,
            sources=json.dumps(memory.sources),
            metadata=json.dumps(memory.metadata),
        )
        insert_returning_id(conn, "long_term", Scope(memory.user_id, memory.agent_id), values)

    def existing_memory_ids(self, conn: sa.Connection, ids: list[str]) -> set[str]:
        """Which of these memory ids the store already holds, in any status."""
        lt = self.long_term
        return set(conn.execute(sa.select(lt.c.id).where(lt.c.id.in_(ids))).scalars())


def memory_row(
    *,
    memory_id: str,
    content: str,
    content_hash: str,
    now: str,
    source: str | None,
    metadata: dict[str, Any],
    confidence: float = DEFAULT_CONFIDENCE,
    category: str | None = None,
    importance: float = 5.0,
    subject: str | None = None,
    attribute: str | None = None,
    observed_at: str | None = None,
) -> dict[str, Any]:
    """The long_term values of a new active memory, for Store.insert_memories."""
    return {
        "id": memory_id,
        "category": category,
        "content": content,
        "content_hash": content_hash,
        "importance": importance,
        "confidence": confidence,
        "created_at": now,
        "updated_at": now,
        "sources": json.dumps([source] if source else []),
        "metadata": json.dumps(metadata),
        "subject": subject,
        "attribute": attribute,
        "observed_at": observed_at or now,
    }


# Provenance kept per memory: a fact repeated in every session must not grow its row forever.
MAX_SOURCES = 50


def _with_source(sources: list[str], source: str | None) -> list[str]:
    """Append a source, keeping the first (where the fact came from) and the latest ones."""
    kept = [*sources, source] if source else list(sources)
    return kept if len(kept) <= MAX_SOURCES else [kept[0], *kept[-(MAX_SOURCES - 1) :]]
