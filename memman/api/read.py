"""The reads: one memory by id, listings, search, the context block, history and events."""

from __future__ import annotations

from collections.abc import Iterator

from memman.api.arguments import all_or_scope, check_count, id_scope
from memman.api.parts import Parts
from memman.errors import InvalidInputError
from memman.lifecycle import recall
from memman.lifecycle.block import ContextBlock
from memman.models import Event, Memory, SearchHit, Status
from memman.scope import Scope, check_encodable, check_id


class ReadCalls(Parts):
    """Reads of one scope; a call by id never reaches another scope's memory."""

    # -- reads ---------------------------------------------------------------------------

    def resolve_id(
        self, prefix: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> str:
        """The full id of the scope's one memory whose id starts with prefix (CLI tables show
        8 chars); a prefix of another scope's memory is not found."""
        scope = id_scope("resolve_id", user_id, agent_id)
        with self.store.read() as conn:
            return self.store.resolve_id(conn, prefix, scope)

    def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Memory:
        """The memory with this id in the scope; NotFoundError for a missing id and for one of
        another scope alike (user_id will be required; without it any user's memory is read).
        """
        scope = id_scope("get", user_id, agent_id)
        check_id("memory_id", memory_id)
        with self.store.read() as conn:
            return self.store.get(conn, memory_id, scope)

    def list(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        include_inactive: bool = False,
    ) -> list[Memory]:
        """All active memories of a scope, oldest first (every status if include_inactive)."""
        if limit is not None:
            check_count("limit", limit, minimum=0)
        check_count("offset", offset, minimum=0)
        statuses = tuple(Status) if include_inactive else (Status.ACTIVE,)
        with self.store.read() as conn:
            return self.store.list(
                conn, Scope(user_id, agent_id), statuses=statuses, limit=limit, offset=offset
            )

    def iter_all(
        self, *, user_id: str, agent_id: str | None = None, page: int = 1000
    ) -> Iterator[Memory]:
        offset = 0
        while batch := self.list(user_id=user_id, agent_id=agent_id, limit=page, offset=offset):
            yield from batch
            offset += len(batch)

    def search(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        limit: int = 5,
        reinforce: bool = True,
    ) -> list[SearchHit]:
        """Active memories of the scope, best first, near-duplicates collapsed, reinforced.

        Ranked by a blend of relevance (BM25, and cosine when an embedder is configured),
        recency and importance (see memman/lifecycle/recall.py and the recall_* settings); every
        returned memory's access count and last access are updated, unless not `reinforce`
        (a look that changes nothing: the inspector page's).
        """
        if not isinstance(query, str):
            raise InvalidInputError("query must be a string")
        check_encodable("query", query)  # else "0 hits", never saying why
        check_count("limit", limit, minimum=1)
        return recall.search(
            self.store,
            Scope(user_id, agent_id),
            query,
            limit=limit,
            settings=self.settings,
            now=self.clock(),
            embedder=self.embedder,
            index=self.vectors,
            reinforce=reinforce,
        )

    def context(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        max_tokens: int = 500,
        limit: int = 20,
        reinforce: bool = True,
    ) -> ContextBlock:
        """A memory block for a system prompt: what to always keep in mind, then the best hits.

        Unexpired short-term facts that share a word with the query come first, as a "right
        now" part (`block.short_term`); each one shown counts a recall towards promotion.
        The core part (`block.core`) is shown whatever the query, within context_core_share of
        max_tokens: memories of the protected categories (safety, constraint), pinned ones
        (metadata {"pinned": true}) and the user's single-valued profile (name, residence,
        job...). Then the hits the core does not already show. Related memories are shown
        together, the newest first and the older ones under it marked "earlier", each dated
        when the user said it; `block.left_out` counts what did not fit the budget.
        `str(block)` is `block.text`, the part that goes into the prompt. Not `reinforce`:
        nothing recalled is counted (see search).
        """
        check_count("max_tokens", max_tokens, minimum=1)
        hits = self.search(
            query, user_id=user_id, agent_id=agent_id, limit=limit, reinforce=reinforce
        )
        return recall.context(
            self.store,
            Scope(user_id, agent_id),
            query,
            hits,
            max_tokens=max_tokens,
            settings=self.settings,
            now=self.clock(),
            reinforce=reinforce,
        )

    def history(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Event]:
        """Every event that touched a memory of the scope, oldest first: why the bot thinks
        what it thinks. NotFoundError for an unknown id or one of another scope."""
        scope = id_scope("history", user_id, agent_id)
        check_id("memory_id", memory_id)
        with self.store.read() as conn:
            self.store.get(conn, memory_id, scope)
            return self.store.events_for_memory(conn, memory_id)

    def events(
        self, *, user_id: str | None = None, agent_id: str | None = None, limit: int = 50
    ) -> list[Event]:
        check_count("limit", limit, minimum=1)
        scope = all_or_scope(user_id, agent_id)
        with self.store.read() as conn:
            return self.store.recent_events(conn, scope, limit)
