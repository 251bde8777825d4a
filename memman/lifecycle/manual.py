"""Changes a user asks for by id: delete and restore, each with its audit event.

Not the write path: nothing is decided, the user said what to do. The event still records
it (tier manual), so a memory's history shows who changed it and why.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from memman.errors import InvalidInputError
from memman.language.reader import READER
from memman.models import Op, Status, Tier, UpdateResult
from memman.scope import Scope, check_id
from memman.storage.changes import ChangeSet, NewStatus
from memman.storage.store import Store
from memman.write.commit import commit


def set_status(
    store: Store,
    memory_id: str,
    only: Scope | None,
    status: Status,
    op: Op,
    reason: str,
    stamp_now: Callable[[], str],
) -> UpdateResult:
    """Move a memory of the scope to `status` with its audit event (tier manual), in one
    transaction; restoring a text that is active again, or changing a memory already in the
    asked-for state, is an InvalidInputError."""
    check_id("memory_id", memory_id)

    def change(conn: sa.Connection) -> UpdateResult:
        memory = store.get(conn, memory_id, only)
        scope = Scope(memory.user_id, memory.agent_id)
        if status is Status.ACTIVE:
            if memory.status is Status.ACTIVE:
                raise InvalidInputError(f"memory {memory_id} is already active")
            twin = store.active_by_hash(conn, scope, READER.content_hash(memory.content))
            if twin is not None:
                raise InvalidInputError(
                    f"memory {twin.id} already holds this text; nothing to restore"
                )
        elif memory.status is not Status.ACTIVE:
            raise InvalidInputError(f"memory {memory_id} is not active ({memory.status})")
        now = stamp_now()
        event = {
            "memory_id": memory_id,
            "op": op.value,
            "tier": Tier.MANUAL.value,
            "candidate": None,
            "content_before": memory.content,
            "content_after": memory.content,
            "reason": reason,
            "created_at": now,
        }
        change = ChangeSet(event, (NewStatus(memory_id, status, now),))
        (event_id,) = commit(store, conn, scope, [change])
        return UpdateResult(
            op=op,
            memory_id=memory_id,
            tier=Tier.MANUAL,
            reason=reason,
            event_id=event_id,
            content=memory.content,
        )

    return store.write(change)
