"""Short-term memory's calls (MemoryManager.remember_short_term, short_term, get_short_term,
search_short_term, delete_short_term): transient facts of a session, kept until their
category's TTL (memman/lifecycle/shortterm.py); consolidate expires or promotes them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa

from memman.api.arguments import all_or_scope, check_count
from memman.api.core import Core
from memman.errors import InvalidInputError, NotFoundError
from memman.lifecycle import shortterm
from memman.lifecycle.shortterm import ShortTermFact, ShortTermHit
from memman.scope import Scope, check_encodable, check_id
from memman.write.writepath import Also


class ShortTermMemory:
    """Transient facts per scope and session, validated as update_memory's facts are."""

    def __init__(self, core: Core):
        self.core = core

    def remember(
        self,
        fact: str,
        scope: Scope,
        session_id: str,
        category: str | None,
        importance: float,
        source: str | None,
        also: Also = None,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> ShortTermFact:
        """Keep the fact (or renew it); `also` runs first in the transaction that writes the
        fact (an extraction checks there that the user was not erased meanwhile)."""
        core = self.core
        candidate = core.candidate(fact, scope, source, metadata, category, importance)
        check_id("session_id", session_id)

        def transaction(conn: sa.Connection) -> ShortTermFact:
            if also is not None:
                also(conn)
            return shortterm.remember(
                core.store,
                conn,
                candidate.scope,
                candidate.content,
                session_id=session_id,
                category=candidate.category,
                importance=importance if candidate.importance is None else candidate.importance,
                source=candidate.source,
                settings=core.settings,
                now=core.clock(),
                metadata=candidate.metadata,
            )

        return core.store.write(transaction, scope=candidate.scope)

    def active(
        self, user_id: str | None, agent_id: str | None, unexpired: bool
    ) -> list[ShortTermFact]:
        scope = all_or_scope(user_id, agent_id)
        store = self.core.store
        with store.read() as conn:
            facts = shortterm.active(store, conn, scope)
        now = self.core.clock()
        return [fact for fact in facts if fact.live(now)] if unexpired else facts

    def get(self, fact_id: int, scope: Scope | None) -> ShortTermFact:
        store = self.core.store
        with store.read() as conn:
            return shortterm.by_id(store, conn, _fact_id(fact_id), scope)

    def search(
        self, query: str, *, user_id: str, agent_id: str | None, limit: int
    ) -> list[ShortTermHit]:
        """The hits, each counted as a recall towards promotion."""
        if not isinstance(query, str):
            raise InvalidInputError("query must be a string")
        check_encodable("query", query)  # as search: else "no hits", never saying why
        check_count("limit", limit, minimum=1)
        core = self.core
        store, scope, now = core.store, Scope(user_id, agent_id), core.clock()
        with store.read() as conn:
            hits = shortterm.ranked(store, conn, scope, query, settings=core.settings, now=now)
        hits = hits[:limit]
        if hits:
            ids = [hit.fact.id for hit in hits]
            spacing = dt.timedelta(hours=core.settings.promote_recall_spacing_hours)
            store.try_write(
                lambda conn: shortterm.note_recalled(
                    store, conn, scope, ids, now=now, spacing=spacing
                ),
                "counting short-term recalls",
                scope=scope,
            )
        return hits

    def delete(self, fact_id: int, scope: Scope, reason: str) -> ShortTermFact:
        """Retire the scope's active fact; NotFoundError if it has none with this id."""
        store = self.core.store
        fact_id = _fact_id(fact_id)

        def transaction(conn: sa.Connection) -> ShortTermFact:
            fact = shortterm.by_id(store, conn, fact_id, scope)
            if fact.status != "active":
                raise NotFoundError(f"no active short-term fact with id {fact_id}")
            shortterm.retire(store, conn, scope, fact, reason, now=self.core.clock())
            return fact

        return store.write(transaction, scope=scope)


def _fact_id(value: object) -> int:
    """A short-term fact's id, or NotFoundError: no row has an id that is no positive
    64-bit integer (the database would refuse to compare one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise NotFoundError(f"no short-term fact with id {value!r}")
    return value
