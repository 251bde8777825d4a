"""The apply layer's door to storage: every memory change and every audit event goes through
here, whoever makes it (the write path, delete and restore, merge, decay, LangGraph).

A change is handed over as `ChangeSet`s (memman/storage/changes.py): the audit event with the
row changes it records and the vector of the text they wrote. Storage writes them in one
call, so a memory cannot change without its event, nor its text without its vector. No
module outside memman/storage/ but this one calls the store's row or event writers
(tests/test_one_door.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from memman.scope import Scope
from memman.storage.changes import ChangeSet
from memman.storage.store import Store


def commit(
    store: Store, conn: sa.Connection, scope: Scope, changes: Sequence[ChangeSet]
) -> list[int]:
    """Write change sets of one scope (with their vectors) in the caller's transaction; the
    event ids, one per change set."""
    return store.apply(conn, scope, changes)


def record_event(store: Store, conn: sa.Connection, scope: Scope, **event: Any) -> int:
    """An audit event that changes no memory (a parked fact, a failed extraction, a verdict
    to keep memories separate, an expired short-term fact); its id."""
    (event_id,) = store.apply(conn, scope, [ChangeSet(event)])
    return event_id


def reinforce_recalled(
    store: Store, conn: sa.Connection, scope: Scope, memory_ids: list[str], now: str
) -> None:
    """Recall's reinforcement: access_count + 1 and last_accessed_at for the hits. Usage
    counters, not a change of what a memory says or whether it holds: no event (one per
    search hit would outgrow the memories it describes)."""
    store.note_accessed(conn, scope, memory_ids, now)
