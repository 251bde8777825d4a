"""Parked candidates (pending) and leases: which worker works on a parked fact or a message.

A mixin of `memman.storage.store.Store`; Leases binds a store to one worker's owner name.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from memman.errors import (
    InvalidInputError,
    LeaseLostError,
)
from memman.models import PendingFact
from memman.scope import Scope
from memman.storage import sql as plain_sql
from memman.storage.busy import stored
from memman.storage.sql import insert_returning_id, run_sql, scope_where
from memman.timestamps import stamp

log = logging.getLogger(__name__)

# The tables whose rows workers claim before working on them (Store.claim).
LEASED_TABLES = frozenset({"pending", "message_buffer"})


class PendingRows:
    # -- pending (parked) candidates ------------------------------------------------------------

    def insert_pending(self, conn: sa.Connection, scope: Scope, **values: Any) -> int:
        values["metadata"] = json.dumps(values.get("metadata") or {})
        return insert_returning_id(conn, "pending", scope, values)

    def list_pending(self, conn: sa.Connection, scope: Scope | None) -> list[PendingFact]:
        pe = self.pending
        query = sa.select(pe).order_by(pe.c.id)
        if scope is not None:
            query = query.where(scope_where(pe, scope))
        return [
            PendingFact(
                **{
                    **row._mapping,
                    "agent_id": row.agent_id or None,
                    "metadata": stored("pending", row.id, "metadata", json.loads, row.metadata),
                }
            )
            for row in conn.execute(query)
        ]

    def delete_pending(self, conn: sa.Connection, pending_id: int) -> None:
        """Remove a settled parked fact; LeaseLostError (the transaction rolls back) if another
        worker settled it first, so a fact is never applied twice."""
        deleted = conn.execute(self.pending.delete().where(self.pending.c.id == pending_id))
        if deleted.rowcount == 0:
            raise LeaseLostError(f"pending #{pending_id} was settled by another worker")

    # -- leases: which worker works on a parked fact or a buffered message ---------------------

    def claim(self, table: str, ids: list[int], owner: str, now: str, expires: str) -> set[int]:
        """Lease these rows of `table` to `owner` until `expires`, in one short write
        transaction; returns the ids it got. A row leased to another owner until after `now`
        is not taken; a lapsed lease (its worker crashed) is. Buffered messages already
        extracted are not taken either."""
        if table not in LEASED_TABLES:
            raise InvalidInputError(f"no leases on {table!r}")
        if not ids:
            return set()
        extra = " AND extracted_at IS NULL" if table == "message_buffer" else ""

        def take(conn: sa.Connection) -> set[int]:
            got: set[int] = set()
            for chunk, marks in plain_sql.in_chunks(ids):
                run_sql(
                    conn,
                    f"UPDATE {table} SET lease_owner = ?, lease_expires = ? WHERE id IN ({marks})"
                    f" AND (lease_owner IS NULL OR lease_owner = ? OR lease_expires <= ?){extra}",
                    [owner, expires, *chunk, owner, now],
                )
                rows = run_sql(
                    conn,
                    f"SELECT id FROM {table} WHERE id IN ({marks}) AND lease_owner = ?",
                    [*chunk, owner],
                )
                got.update(row[0] for row in rows)
            return got

        return self.write(take)

    def release(self, table: str, ids: list[int], owner: str) -> None:
        """Give back the rows of `table` leased to `owner` (a failed try: the next may start)."""
        if table not in LEASED_TABLES:
            raise InvalidInputError(f"no leases on {table!r}")
        if not ids:
            return

        def give(conn: sa.Connection) -> None:
            for chunk, marks in plain_sql.in_chunks(ids):
                run_sql(
                    conn,
                    f"UPDATE {table} SET lease_owner = NULL, lease_expires = NULL"
                    f" WHERE id IN ({marks}) AND lease_owner = ?",
                    [*chunk, owner],
                )

        self.write(give)

    def note_pending_failure(
        self, conn: sa.Connection, pending_id: int, error: str, now: str
    ) -> None:
        pe = self.pending
        conn.execute(
            pe.update()
            .where(pe.c.id == pending_id)
            .values(error=error, attempts=pe.c.attempts + 1, updated_at=now)
        )


@dataclass(frozen=True)
class Leases:
    """One worker's claims: Store.claim/release with its owner name and lease length, timed
    by the manager's clock (so a test moves past a crashed worker's lease without waiting)."""

    store: PendingRows
    clock: Callable[[], dt.datetime]
    seconds: float
    owner: str = field(default_factory=lambda: f"{os.getpid()}:{uuid.uuid4().hex}")

    def claim(self, table: str, ids: list[int]) -> set[int]:
        now = self.clock()
        until = now + dt.timedelta(seconds=self.seconds)
        return self.store.claim(table, ids, self.owner, stamp(now), stamp(until))

    def release(self, table: str, ids: list[int]) -> None:
        self.store.release(table, ids, self.owner)
