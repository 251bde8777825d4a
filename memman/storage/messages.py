"""The statements of the chat-message buffer: observe() writes it, flush and consolidate read
and mark it.

A mixin of `memman.storage.store.Store`: observe.py calls these methods instead of writing SQL.
Messages are returned as rows (id, user_id, agent_id, session_id, role, content, created_at,
observed_at, extracted_at, the lease columns and metadata: JSON text or NULL).
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from memman.errors import LeaseLostError
from memman.scope import Scope


def _where(scope: Scope | None) -> tuple[str, dict[str, str]]:
    """The condition (and its parameters) for one scope, or none for every scope."""
    if scope is None:
        return "", {}
    return " AND user_id = :u AND agent_id = :a", {"u": scope.user_id, "a": scope.agent_key}


_INSERT = sa.text(
    "INSERT INTO message_buffer (user_id, agent_id, session_id, role, content, created_at,"
    " observed_at, metadata) VALUES (:u, :a, :s, :r, :c, :t, :o, :m)"
)
# Sessions nobody flushes: the user left, so observe() is never called again for them.
_IDLE = (
    "SELECT session_id, user_id, agent_id, count(*) AS waiting, max(created_at) AS newest_at"
    " FROM message_buffer WHERE extracted_at IS NULL{scope}"
    " GROUP BY session_id, user_id, agent_id HAVING max(created_at) <= :cutoff ORDER BY min(id)"
)
_PRESENT = sa.text(
    "SELECT count(*) FROM message_buffer WHERE id IN :ids AND user_id = :u AND agent_id = :a"
).bindparams(sa.bindparam("ids", expanding=True))
_ERASED = "the buffered messages were erased while they were extracted; nothing of them was written"
_FAILURES = sa.text(
    "SELECT source, created_at FROM events WHERE user_id = :u AND agent_id = :a"
    " AND op = 'PENDING' AND prompt_template = :t AND candidate IS NULL"
)


class MessageRows:
    """The message buffer: append, read what waits, mark extracted, prune."""

    def buffer_messages(
        self,
        conn: sa.Connection,
        scope: Scope,
        session_id: str,
        messages: list[tuple[str, str, str | None]],
        now: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Append (role, content, observed_at) messages of the session, created now, with
        the metadata the facts extracted from them will carry (None: none; stored as JSON)."""
        encoded = json.dumps(metadata) if metadata else None
        rows = [
            {
                "u": scope.user_id,
                "a": scope.agent_key,
                "s": session_id,
                "r": role,
                "c": content,
                "t": now,
                "o": when,
                "m": encoded,
            }
            for role, content, when in messages
        ]
        conn.execute(_INSERT, rows)

    def waiting_messages(
        self, conn: sa.Connection, session_id: str, scope: Scope | None
    ) -> list[sa.Row]:
        """The session's messages not yet extracted (only the scope's, if given), oldest first."""
        where, params = _where(scope)
        sql = "SELECT * FROM message_buffer WHERE session_id = :s AND extracted_at IS NULL"
        return conn.execute(sa.text(f"{sql}{where} ORDER BY id"), {**params, "s": session_id}).all()

    def idle_session_rows(
        self, conn: sa.Connection, scope: Scope | None, cutoff: str
    ) -> list[sa.Row]:
        """(session_id, user_id, agent_id, waiting, newest_at) of each session of the scope
        (every scope's if None) whose newest waiting message is at or before cutoff, oldest
        session first; a session shared by two scopes is one row for each."""
        where, params = _where(scope)
        return conn.execute(sa.text(_IDLE.format(scope=where)), {**params, "cutoff": cutoff}).all()

    def extraction_failures(
        self, conn: sa.Connection, scope: Scope, template: str
    ) -> list[tuple[str, str]]:
        """(source, created_at) of the scope's failed extractions with this prompt template."""
        params = {"u": scope.user_id, "a": scope.agent_key, "t": template}
        return [(source, at) for source, at in conn.execute(_FAILURES, params)]

    def unextracted_messages(self, conn: sa.Connection) -> list[sa.Row]:
        """(id, user_id, agent_id) of every scope's messages not yet extracted (memman stats)."""
        return conn.execute(
            sa.text("SELECT id, user_id, agent_id FROM message_buffer WHERE extracted_at IS NULL")
        ).all()

    def mark_extracted(self, conn: sa.Connection, scope: Scope, ids: list[int], now: str) -> None:
        """These messages of the scope are extracted, at now; their leases end.
        LeaseLostError (the caller's transaction, which writes what was extracted from them,
        rolls back) if one is gone: the user was erased (forget) while it was extracted."""
        marked = conn.execute(
            sa.text(
                "UPDATE message_buffer SET extracted_at = :t, lease_owner = NULL,"
                " lease_expires = NULL WHERE id IN :ids AND user_id = :u AND agent_id = :a"
            ).bindparams(sa.bindparam("ids", expanding=True)),
            {"t": now, "ids": ids, "u": scope.user_id, "a": scope.agent_key},
        )
        if marked.rowcount < len(set(ids)):
            raise LeaseLostError(_ERASED)

    def check_buffered(self, conn: sa.Connection, scope: Scope, ids: list[int]) -> None:
        """LeaseLostError (the caller's transaction rolls back) if one of these messages of
        the scope is gone: the user was erased (forget) while they were extracted, and what
        the caller writes from them (a fact, a short-term fact, a failure's audit event) must
        not outlive the erasure. Run in the transaction that writes it; mark_extracted checks
        the same. Only forget deletes a message not yet extracted (prune takes extracted ones:
        another worker wrote their facts)."""
        params = {"ids": ids, "u": scope.user_id, "a": scope.agent_key}
        if conn.execute(_PRESENT, params).scalar_one() < len(set(ids)):
            raise LeaseLostError(_ERASED)

    def prune_extracted(self, conn: sa.Connection, scope: Scope | None, before: str) -> int:
        """Delete the scope's messages (every scope's if None) extracted before `before`;
        returns how many."""
        where, params = _where(scope)
        return conn.execute(
            sa.text(f"DELETE FROM message_buffer WHERE extracted_at < :t{where}"),
            {"t": before, **params},
        ).rowcount
