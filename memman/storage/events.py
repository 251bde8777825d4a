"""Audit events, and change sets: a memory's row changes written with their event.

A mixin of `memman.storage.store.Store`. `apply` is the one way a memory changes: each change
set's rows (memman/storage/changes.py) and its event are written in the caller's transaction,
so every change has an audit event by construction (tests/test_one_door.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from memman.language.text import content_hash
from memman.models import Event, Memory
from memman.scope import Scope
from memman.storage.busy import stored
from memman.storage.changes import (
    ChangeSet,
    NewConfidence,
    NewMemory,
    NewMetadata,
    NewSalience,
    NewStatus,
    NewText,
    Reinforced,
    RowChange,
    Superseded,
)
from memman.storage.sql import insert_many, insert_returning_id, run_sql, scope_where

log = logging.getLogger(__name__)


class EventRows:
    def copy_event(self, conn: sa.Connection, event: Event, *, keep_id: bool) -> None:
        """Insert an audit event as given (its id too if keep_id: an import into a new store).
        Never folded into the memory's previous event, as insert_event folds a repeated NOOP:
        the copy keeps the source's rows and repeat counts."""
        dropped = {"user_id", "agent_id"} if keep_id else {"user_id", "agent_id", "id"}
        values = event.model_dump(exclude=dropped)
        values.update(
            op=event.op.value,
            tier=event.tier.value,
            scores=json.dumps(values.get("scores") or {}),
            before_hash=_before_hash(values),
            absorbed_hash=absorbed_hash(values),
        )
        insert_returning_id(conn, "events", Scope(event.user_id, event.agent_id), values)

    # -- change sets: a memory's row changes with their audit event -------------------------

    def apply(self, conn: sa.Connection, scope: Scope, changes: Sequence[ChangeSet]) -> list[int]:
        """Write change sets in order, each its rows then its event, then their vectors
        (after every row, so a vector finds its memory); the event ids."""
        ids: list[int] = []
        adds: list[ChangeSet] = []  # consecutive batched ones with the same event columns
        for change in changes:
            if adds and not (change.batched and adds[0].event.keys() == change.event.keys()):
                ids += self._write_additions(conn, scope, adds)
                adds = []
            if change.batched:
                adds.append(change)
                continue
            for row in change.rows:
                self._write_row(conn, scope, row)
            ids.append(self.insert_event(conn, scope, **change.event))
        ids += self._write_additions(conn, scope, adds)
        self.save_vectors(conn, [change.vector for change in changes if change.vector])
        return ids

    def _write_additions(
        self, conn: sa.Connection, scope: Scope, adds: list[ChangeSet]
    ) -> list[int]:
        """The new rows with one executemany, then the events with another."""
        rows = [row.row for change in adds for row in change.rows if isinstance(row, NewMemory)]
        if rows:
            self.insert_memories(conn, scope, rows)
        return self.insert_events(conn, scope, [change.event for change in adds])

    def _write_row(self, conn: sa.Connection, scope: Scope, row: RowChange) -> None:
        match row:
            case NewMemory():
                self.insert_memories(conn, scope, [row.row])
            case NewText():
                self.change_content(conn, row)
            case NewStatus():
                self.set_status(conn, row.memory_id, row.status, row.now)
            case Reinforced():
                self.reinforce(conn, row.memory, now=row.now, source=row.source)
            case NewSalience():
                values = {"category": row.category, "importance": row.importance}
                kept = {name: value for name, value in values.items() if value is not None}
                lt = self.long_term
                conn.execute(lt.update().where(lt.c.id == row.memory_id).values(**kept))
            case NewConfidence():
                self.set_confidence(
                    conn, scope, row.memory_id, row.confidence, now=row.now, archive=row.archive
                )
            case Superseded():
                self.supersede(conn, scope, row.memory_id, metadata=row.metadata, now=row.now)
            case NewMetadata():
                lt = self.long_term
                conn.execute(
                    lt.update()
                    .where(lt.c.id == row.memory_id)
                    .values(metadata=json.dumps(row.metadata), updated_at=row.now)
                )

    # -- audit events -----------------------------------------------------------------------

    def insert_event(self, conn: sa.Connection, scope: Scope, **values: Any) -> int:
        """Record an audit event and return its id.

        A NOOP that repeats the memory's previous event (same candidate, tier and reason) is
        folded into that row (repeat_count, last_at) instead: a fact said 50,000 times is one
        row, its first time in created_at and its last in last_at; the memory's `sources`
        keeps where the repeats came from.
        """
        values["scores"] = json.dumps(values.get("scores") or {})
        values["before_hash"] = _before_hash(values)
        values["absorbed_hash"] = absorbed_hash(values)
        if values.get("op") == "NOOP" and values.get("memory_id"):
            previous = run_sql(
                conn,
                "SELECT id, op, candidate, tier, reason FROM events WHERE memory_id = ?"
                " ORDER BY id DESC LIMIT 1",
                (values["memory_id"],),
            ).fetchone()
            same = ("NOOP", values.get("candidate"), values.get("tier"), values.get("reason"))
            if previous is not None and tuple(previous[1:]) == same:
                run_sql(
                    conn,
                    "UPDATE events SET repeat_count = repeat_count + 1, last_at = ? WHERE id = ?",
                    (values.get("created_at"), previous[0]),
                )
                return int(previous[0])
        return insert_returning_id(conn, "events", scope, values)

    def insert_events(
        self, conn: sa.Connection, scope: Scope, rows: list[dict[str, Any]]
    ) -> list[int]:
        """Record new audit events of one scope (never folded: for ADDs) with one executemany;
        their ids in order. Inside the write transaction nobody else inserts events of the scope
        (its lock; on PostgreSQL other scopes may), and ids only grow, so they are the scope's
        ids after the largest one before."""
        if not rows:
            return []
        values = [
            {
                **row,
                "scores": json.dumps(row.get("scores") or {}),
                "before_hash": _before_hash(row),
                "absorbed_hash": absorbed_hash(row),
            }
            for row in rows
        ]
        if len(values) == 1:  # update_memory's ADD: the insert gives the id, no read of events
            return [insert_returning_id(conn, "events", scope, values[0])]
        (before,) = run_sql(conn, "SELECT coalesce(max(id), 0) FROM events").fetchone()
        insert_many(conn, "events", scope, values)
        ids = run_sql(
            conn,
            "SELECT id FROM events WHERE user_id = ? AND agent_id = ? AND id > ? ORDER BY id",
            (scope.user_id, scope.agent_key, before),
        )
        return [int(event_id) for (event_id,) in ids]

    def active_absorbing(
        self, conn: sa.Connection, scope: Scope, content_hash: str
    ) -> Memory | None:
        """The scope's active memory that an event settled a text with this hash into without
        making it the memory's text (absorbed_hash: the latest such event's), or None: one
        seek of the events_absorbed_hash index."""
        key = (scope.user_id, scope.agent_key)
        row = run_sql(conn, self._absorbing_sql, (*key, content_hash, *key)).fetchone()
        return self._memory_from_values(row) if row else None

    def events_for_memory(self, conn: sa.Connection, memory_id: str) -> list[Event]:
        ev = self.events
        rows = conn.execute(sa.select(ev).where(ev.c.memory_id == memory_id).order_by(ev.c.id))
        return [event_from_row(row) for row in rows]

    def recent_events(self, conn: sa.Connection, scope: Scope | None, limit: int) -> list[Event]:
        ev = self.events
        query = sa.select(ev).order_by(ev.c.id.desc()).limit(limit)
        if scope is not None:
            query = query.where(scope_where(ev, scope))
        return [event_from_row(row) for row in conn.execute(query)]

    def event_counts(self, conn: sa.Connection, scope: Scope | None) -> dict[str, dict[str, int]]:
        ev = self.events
        # A folded NOOP row counts every repeat it stands for.
        # Cast: PostgreSQL sums integers as numeric (Decimal).
        repeats = sa.cast(sa.func.sum(ev.c.repeat_count), sa.Integer)
        query = sa.select(ev.c.op, ev.c.tier, repeats).group_by(ev.c.op, ev.c.tier)
        if scope is not None:
            query = query.where(scope_where(ev, scope))
        counts: dict[str, dict[str, int]] = {}
        for op, tier, n in conn.execute(query):
            counts.setdefault(op, {})[tier] = n
        return counts


def _before_hash(event: dict[str, Any]) -> str | None:
    """The content hash of the text an event took out of its memory (events.before_hash), so
    a replaced text said again finds the memory that replaced it (active_replacing)."""
    before = event.get("content_before")
    return content_hash(before) if before is not None else None


def absorbed_hash(event: Mapping[str, Any]) -> str | None:
    """The content hash of the text said that an event settled into its memory without making
    it the memory's text (events.absorbed_hash): a NOOP into a memory that says more, or an
    UPDATE whose new text is not the statement's. Said again, that text finds the memory by
    one index seek (active_absorbing) when retrieval's top k misses it. None for an event
    without a memory, for an ADD, and for a DELETE (its memory is no longer active)."""
    said, after = event.get("candidate"), event.get("content_after")
    if event.get("op") not in ("NOOP", "UPDATE") or not event.get("memory_id"):
        return None
    if said is None or after is None:
        return None
    digest = content_hash(said)
    return digest if digest != content_hash(after) else None


def event_from_row(row: sa.Row[Any]) -> Event:
    m = dict(row._mapping)
    m["agent_id"] = m["agent_id"] or None
    m["scores"] = stored("events", m["id"], "scores", json.loads, m["scores"])
    return Event(**m)
