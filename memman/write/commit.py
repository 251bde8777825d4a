"""The apply layer's door to storage: every memory change and every audit event goes through
here, whoever makes it (the write path, delete and restore, merge, decay, LangGraph).

A change is handed over as `ChangeSet`s (memman/storage/changes.py): the audit event with the
row changes it records. Storage writes both in one call, so a memory cannot change without
its event; the vectors of new text follow in the same transaction (the vector statements
are memman/semantic/vectors.py's). No module outside memman/storage/ but this one calls the
store's row or event writers (tests/test_one_door.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa

from memman.scope import Scope
from memman.storage.changes import ChangeSet
from memman.storage.store import Store
from memman.storage.vector_format import save_vector

# (memory id, embedding model, vector): a vector for text a change set of the same call wrote.
Vector = tuple[str, str, np.ndarray]


def commit(
    store: Store,
    conn: sa.Connection,
    scope: Scope,
    changes: Sequence[ChangeSet],
    vectors: Sequence[Vector] = (),
) -> list[int]:
    """Write change sets of one scope and their vectors in the caller's transaction; the
    event ids, one per change set."""
    ids = store.apply(conn, scope, changes)
    for memory_id, model, vector in vectors:
        save_vector(conn, memory_id, model, vector)
    return ids


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
