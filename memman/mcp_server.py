"""`memman mcp`: memman's memory as tools for any MCP client, over stdio.

A thin layer over MemoryManager's public API, holding no state of its own: every write is
`update_memory` (the deciding path), every read is `search`, `context`, `list` or `history`.
Each tool takes an optional `user_id` (and `agent_id`); without it the scope the server was
started with (`memman mcp --user ...`) is used, so one user's memories never leak into
another's answers.

The reference MCP memory server's tool names (`add_observations`, `search_nodes`,
`read_graph`, `delete_observations`) work too, so agents configured for it find them. Its
knowledge graph maps onto the scope: an entity's name rides in the memory's metadata
(`{"entity": name}`), observations are memories, and relations are not kept (always empty).

Needs the optional `mcp` extra (`pip install 'memman[mcp]'`, the official SDK, 2.x: where
`FastMCP` became `MCPServer`). Tools are plain functions: the SDK runs them in a worker thread,
so the blocking SQLite and HTTP work stays off the event loop.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from memman.api.manager import MemoryManager
from memman.errors import ConfigError, InvalidInputError, MemmanError, NotFoundError
from memman.language.text import content_hash
from memman.models import Memory, Op, UpdateResult
from memman.scope import Scope
from memman.write.candidate import make_candidate

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError as error:  # the optional extra is missing
    raise ConfigError(
        "memman mcp needs the official MCP SDK 2.x: pip install 'memman[mcp]'"
    ) from error

# The metadata key that carries a reference-server entity name (see the module docstring).
ENTITY_KEY = "entity"
INSTRUCTIONS = (
    "Long-term memory of the user. Call `remember` with one fact at a time; memman decides "
    "whether it is new (ADD), changes a memory (UPDATE), retracts one (DELETE) or is known "
    "(NOOP) and says why. Call `recall` or `memory_context` before answering."
)

Tool = TypeVar("Tool", bound=Callable[..., dict[str, Any]])


def _explained(fn: Tool) -> Tool:
    """memman's typed errors reach the model with their message (as the CLI shows them);
    the SDK would hide any other exception's text behind "Error executing tool"."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return fn(*args, **kwargs)
        except MemmanError as error:
            raise ToolError(str(error)) from error

    return call  # type: ignore[return-value]


class Observations(BaseModel):
    """The reference server's add_observations item."""

    entityName: str = Field(description="The name of the entity to add the observations to")
    contents: list[str] = Field(description="An array of observation contents to add")


class Deletion(BaseModel):
    """The reference server's delete_observations item."""

    entityName: str = Field(description="The name of the entity containing the observations")
    observations: list[str] = Field(description="An array of observations to delete")


def _decision(result: UpdateResult) -> dict[str, Any]:
    return {
        "op": result.op.value,
        "memory_id": result.memory_id,
        "reason": result.reason,
        "tier": result.tier.value,
        "content": result.content,
        "previous_content": result.previous_content,
    }


def _memory(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "content": memory.content,
        "category": memory.category,
        "importance": memory.importance,
        "status": memory.status.value,
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "observed_at": memory.observed_at,
        "metadata": memory.metadata,
    }


def _entity(memory: Memory, user_id: str) -> str:
    """The entity a memory is an observation of: its entityName, else the user."""
    return str(memory.metadata.get(ENTITY_KEY) or user_id)


def _graph(memories: Iterator[Memory] | list[Memory], user_id: str) -> dict[str, Any]:
    """The reference server's knowledge-graph shape: one entity per name, no relations."""
    entities: dict[str, dict[str, Any]] = {}
    for memory in memories:
        name = _entity(memory, user_id)
        entity = entities.setdefault(
            name,
            {
                "name": name,
                "entityType": str(memory.metadata.get("entity_type") or "memory"),
                "observations": [],
            },
        )
        entity["observations"].append(memory.content)
    return {"entities": list(entities.values()), "relations": []}


def build_server(
    mm: MemoryManager, *, user_id: str, agent_id: str | None = None, locked: bool = False
) -> MCPServer:
    """An MCPServer whose tools act on `mm`, in (user_id, agent_id) unless a call names one.

    locked: a call may not name another user (a tool error): the model a client runs cannot
    be talked into reading or writing another user's memories."""
    Scope(user_id, agent_id)  # a blank --user is refused here, not by every tool call
    server = MCPServer("memman", instructions=INSTRUCTIONS)

    def tool(fn: Tool) -> Tool:
        return server.tool()(_explained(fn))

    def scope(user: str | None, agent: str | None) -> tuple[str, str | None]:
        """The call's scope: its user (with its agent, or none), else the server's user with
        the call's agent, else the server's own scope. An agent_id is never dropped."""
        if locked and user not in (None, user_id):
            raise InvalidInputError(f"this server serves user {user_id!r} only (--lock)")
        if user is not None:
            return user, agent
        return user_id, agent if agent is not None else agent_id

    def owned(memory_id: str, user: str | None, agent: str | None) -> Memory:
        """The memory, if it belongs to the scope; another user's id is as good as unknown."""
        u, a = scope(user, agent)
        try:
            return mm.get(mm.resolve_id(memory_id, user_id=u, agent_id=a), user_id=u, agent_id=a)
        except NotFoundError:
            raise InvalidInputError(f"no memory {memory_id!r} in this user's memories") from None

    def forget_one(memory: Memory) -> UpdateResult:
        return mm.delete(
            memory.id, reason="forgotten via MCP", user_id=memory.user_id, agent_id=memory.agent_id
        )

    @tool
    def remember(
        fact: str,
        user_id: str | None = None,
        agent_id: str | None = None,
        category: str | None = None,
        importance: float | None = None,
        source: str | None = None,
    ) -> dict[str, Any]:
        """Store one fact about the user. Returns the decision (ADD, UPDATE, DELETE, NOOP or
        PENDING), the memory it touched and why."""
        u, a = scope(user_id, agent_id)
        result = mm.update_memory(
            fact, user_id=u, agent_id=a, category=category, importance=importance, source=source
        )
        return _decision(result)

    @tool
    def recall(
        query: str, user_id: str | None = None, agent_id: str | None = None, limit: int = 5
    ) -> dict[str, Any]:
        """The user's memories most relevant to a query, best first, with their scores."""
        u, a = scope(user_id, agent_id)
        hits = mm.search(query, user_id=u, agent_id=a, limit=limit)
        return {"memories": [_memory(h.memory) | {"score": h.score} for h in hits]}

    @tool
    def memory_context(
        query: str, user_id: str | None = None, agent_id: str | None = None, max_tokens: int = 500
    ) -> dict[str, Any]:
        """A memory block to put in a system prompt: what to always keep in mind, then the
        memories relevant to the query, each dated."""
        u, a = scope(user_id, agent_id)
        block = mm.context(query, user_id=u, agent_id=a, max_tokens=max_tokens)
        return {
            "text": block.text,
            "approx_tokens": block.approx_tokens,
            "left_out": block.left_out,
        }

    @tool
    def list_memories(
        user_id: str | None = None, agent_id: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        """Every active memory of the user, oldest first."""
        u, a = scope(user_id, agent_id)
        return {"memories": [_memory(m) for m in mm.list(user_id=u, agent_id=a, limit=limit)]}

    @tool
    def memory_history(
        memory_id: str, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any]:
        """Every decision that touched one of the user's memories, oldest first, with why."""
        memory = owned(memory_id, user_id, agent_id)
        events = [
            {
                "op": e.op.value,
                "tier": e.tier.value,
                "before": e.content_before,
                "after": e.content_after,
                "reason": e.reason,
                "at": e.created_at,
            }
            for e in mm.history(memory.id, user_id=memory.user_id, agent_id=memory.agent_id)
        ]
        return {"memory": _memory(memory), "events": events}

    @tool
    def forget(
        memory_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        everything: bool = False,
    ) -> dict[str, Any]:
        """Forget one of the user's memories (memory_id), or all of them (everything=true).
        Deleted memories leave recall and context; their history is kept."""
        if (memory_id is None) == (not everything):
            raise InvalidInputError("give memory_id, or everything=true to forget all")
        if memory_id is not None:
            memory = owned(memory_id, user_id, agent_id)
            return {"forgotten": [_decision(forget_one(memory))]}
        u, a = scope(user_id, agent_id)
        # Soft, on purpose: an agent's mistake must be undoable (restore); erasing a user for
        # good (MemoryManager.forget, `memman forget`) is the operator's act, not a tool's.
        return {"forgotten": [_decision(forget_one(m)) for m in mm.list(user_id=u, agent_id=a)]}

    # -- the reference MCP memory server's names ---------------------------------------------

    @tool
    def add_observations(
        observations: list[Observations], user_id: str | None = None
    ) -> dict[str, Any]:
        """Add observations ({"entityName", "contents": [...]}) about entities; each content
        goes through memman's decision (it may update or repeat a stored memory)."""
        u, a = scope(user_id, None)
        for item in observations:  # every text checked before any is stored: all or none
            for text in item.contents:
                make_candidate(text, scope=Scope(u, a), settings=mm.settings)
        results = []
        for item in observations:
            decisions = [
                mm.update_memory(
                    text, user_id=u, agent_id=a, metadata={ENTITY_KEY: item.entityName}
                )
                for text in item.contents
            ]
            results.append(
                {
                    "entityName": item.entityName,
                    "addedObservations": [
                        d.content for d in decisions if d.op in (Op.ADD, Op.UPDATE)
                    ],
                    "decisions": [_decision(d) for d in decisions],
                }
            )
        return {"results": results}

    @tool
    def search_nodes(query: str, user_id: str | None = None) -> dict[str, Any]:
        """The entities whose observations match a query (memman's recall, best first)."""
        u, a = scope(user_id, None)
        hits = mm.search(query, user_id=u, agent_id=a, limit=20)
        return _graph([h.memory for h in hits], u)

    @tool
    def read_graph(user_id: str | None = None) -> dict[str, Any]:
        """Every active memory of the user as entities with observations (no relations)."""
        u, a = scope(user_id, None)
        return _graph(mm.iter_all(user_id=u, agent_id=a), u)

    @tool
    def delete_observations(
        deletions: list[Deletion], user_id: str | None = None
    ) -> dict[str, Any]:
        """Delete observations ({"entityName", "observations": [...]}): the user's active
        memories of that entity with that text (compared as memman normalises it)."""
        u, a = scope(user_id, None)
        wanted = {
            (item.entityName, content_hash(text))
            for item in deletions
            for text in item.observations
        }
        deleted = [
            mm.delete(m.id, reason="deleted via MCP delete_observations", user_id=u, agent_id=a)
            for m in mm.list(user_id=u, agent_id=a)
            if (_entity(m, u), content_hash(m.content)) in wanted
        ]
        message = f"Deleted {len(deleted)} observations."
        return {"success": True, "message": message}

    return server


def serve(
    db: str | None, *, user_id: str, agent_id: str | None = None, locked: bool = False
) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    with MemoryManager(db) as mm:
        build_server(mm, user_id=user_id, agent_id=agent_id, locked=locked).run("stdio")
