"""The reads (MemoryManager.get, list, search, context, history, events ...); a read by id
never reaches another scope's memory.
"""

from __future__ import annotations

import builtins  # annotations below `def list` name the type as builtins.list
from collections.abc import Iterator

from memman.api.arguments import all_or_scope, check_count
from memman.api.core import Core
from memman.errors import InvalidInputError
from memman.lifecycle import recall
from memman.lifecycle.block import ContextBlock
from memman.models import Event, Memory, SearchHit, Status
from memman.scope import Scope, check_encodable, check_id


class Reads:
    """Memories, hits, the context block and the audit trail of a scope."""

    def __init__(self, core: Core):
        self.core = core

    def resolve_id(self, prefix: str, scope: Scope | None) -> str:
        store = self.core.store
        with store.read() as conn:
            return store.resolve_id(conn, prefix, scope)

    def get(self, memory_id: str, scope: Scope | None) -> Memory:
        check_id("memory_id", memory_id)
        store = self.core.store
        with store.read() as conn:
            return store.get(conn, memory_id, scope)

    def list(
        self,
        *,
        user_id: str,
        agent_id: str | None,
        limit: int | None,
        offset: int,
        include_inactive: bool,
    ) -> list[Memory]:
        if limit is not None:
            check_count("limit", limit, minimum=0)
        check_count("offset", offset, minimum=0)
        statuses = tuple(Status) if include_inactive else (Status.ACTIVE,)
        store = self.core.store
        with store.read() as conn:
            return store.list(
                conn, Scope(user_id, agent_id), statuses=statuses, limit=limit, offset=offset
            )

    def iter_all(self, user_id: str, agent_id: str | None, page: int) -> Iterator[Memory]:
        offset = 0
        while batch := self.list(
            user_id=user_id, agent_id=agent_id, limit=page, offset=offset, include_inactive=False
        ):
            yield from batch
            offset += len(batch)

    def search(
        self, query: str, *, user_id: str, agent_id: str | None, limit: int, reinforce: bool
    ) -> builtins.list[SearchHit]:
        if not isinstance(query, str):
            raise InvalidInputError("query must be a string")
        check_encodable("query", query)  # else "0 hits", never saying why
        check_count("limit", limit, minimum=1)
        return recall.search(
            self.core.store,
            Scope(user_id, agent_id),
            query,
            limit=limit,
            settings=self.core.settings,
            now=self.core.clock(),
            embedder=self.core.embedder,
            index=self.core.vectors,
            reinforce=reinforce,
        )

    def context(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None,
        max_tokens: int,
        limit: int,
        reinforce: bool,
    ) -> ContextBlock:
        check_count("max_tokens", max_tokens, minimum=1)
        hits = self.search(
            query, user_id=user_id, agent_id=agent_id, limit=limit, reinforce=reinforce
        )
        return recall.context(
            self.core.store,
            Scope(user_id, agent_id),
            query,
            hits,
            max_tokens=max_tokens,
            settings=self.core.settings,
            now=self.core.clock(),
            reinforce=reinforce,
        )

    def history(self, memory_id: str, scope: Scope | None) -> builtins.list[Event]:
        check_id("memory_id", memory_id)
        store = self.core.store
        with store.read() as conn:
            store.get(conn, memory_id, scope)
            return store.events_for_memory(conn, memory_id)

    def events(self, user_id: str | None, agent_id: str | None, limit: int) -> builtins.list[Event]:
        check_count("limit", limit, minimum=1)
        scope = all_or_scope(user_id, agent_id)
        with self.core.store.read() as conn:
            return self.core.store.recent_events(conn, scope, limit)
