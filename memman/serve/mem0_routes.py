"""mem0's self-hosted REST routes (its server/main.py) over the mem0 facade, which gives the
shapes: a client written for mem0's server sends the same requests and reads the same JSON.

Where memman differs, on purpose:
- A call by id (GET, PUT, DELETE /memories/{id}, its history) names the scope in the query
  string (`?user_id=alice`, as GET /memories does): mem0's server reads any memory by id,
  memman's answers 404 for another scope's memory, as for a missing one.
- GET /memories without an id is 400 (mem0's lists every user's memories to an admin).
- An unknown id is 404 (mem0's server answers GET with `null`).
- POST /configure is 501: the server's settings are memman's (memman.toml, MEMMAN_*
  variables, `memman serve` options), read when it starts. GET /configure shows them,
  keys masked.
- POST /reset soft-deletes every active memory of every scope (MemoryManager.restore brings
  one back; the audit trail stays), as the facade's reset.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse

from memman.serve.failures import HttpProblem
from memman.serve.routing import (
    Api,
    Scoped,
    body_of,
    call,
    check_owner,
    memory_of,
    query_of,
)


class Message(BaseModel):
    role: str = Field(description="Role of the message (user or assistant).")
    content: str | list[dict[str, Any]] | None = Field(
        description="Message content: text, or OpenAI content parts."
    )


class MemoryCreate(Scoped):
    messages: list[Message] = Field(description="List of messages to store.")
    metadata: dict[str, Any] | None = None
    infer: bool | None = Field(None, description="Extract facts from the messages (default).")
    expiration_date: str | None = Field(None, description="Not supported: must be null.")
    memory_type: str | None = Field(None, description="Not supported: must be null.")
    prompt: str | None = Field(None, description="Not supported: must be null.")


class MemoryUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(None, description="New content to update the memory with.")
    metadata: dict[str, Any] | None = Field(None, description="Metadata to update.")
    expiration_date: str | None = Field(None, description="Not supported: must be null.")


class SearchRequest(Scoped):
    query: str = Field(description="Search query.")
    filters: dict[str, Any] | None = None
    top_k: int | None = Field(None, description="Maximum number of results to return.")
    threshold: float | None = Field(None, description="Minimum score for results.")
    explain: bool | None = Field(None, description="Not supported: must be null or false.")
    show_expired: bool | None = Field(
        None, description="Accepted: long-term memories do not expire."
    )


class ListQuery(Scoped):
    top_k: int | None = Field(None, ge=0, le=1000)
    show_expired: bool = False


def _no_expiration(value: str | None) -> None:
    if value is not None:
        raise HttpProblem(400, "expiration_date: memman's long-term memories do not expire")


async def add_memories(request: Request) -> JSONResponse:
    """Store new memories: each fact extracted from the messages decided (ADD, UPDATE,
    DELETE, NONE) with its reason."""
    body = await body_of(request, MemoryCreate)
    _no_expiration(body.expiration_date)
    body.scope()
    result = await call(
        memory_of(request).add,
        [m.model_dump() for m in body.messages],
        **body.ids(),
        metadata=body.metadata,
        infer=True if body.infer is None else body.infer,
        memory_type=body.memory_type,
        prompt=body.prompt,
    )
    return JSONResponse(result)


async def list_memories(request: Request) -> JSONResponse:
    """The scope's active memories, oldest first, then its unexpired short-term facts."""
    query = query_of(request, ListQuery)
    query.scope()
    result = await call(memory_of(request).get_all, **query.ids(), top_k=query.top_k)
    return JSONResponse(result)


async def _owned(request: Request) -> str:
    """The path's memory id, 404 unless it belongs to the scope the query string names."""
    memory_id = request.path_params["memory_id"]
    scope = query_of(request, Scoped).scope()
    await call(check_owner, memory_of(request), memory_id, scope)
    return memory_id


async def get_memory(request: Request) -> JSONResponse:
    """One active memory of the scope."""
    memory_id = await _owned(request)
    item = await call(memory_of(request).get, memory_id)
    if item is None:
        raise HttpProblem(404, f"Memory with id {memory_id} not found")
    return JSONResponse(item)


async def update_memory(request: Request) -> JSONResponse:
    """Replace a memory's text (and metadata), through memman's write path."""
    memory_id = await _owned(request)
    body = await body_of(request, MemoryUpdate)
    _no_expiration(body.expiration_date)
    memory = memory_of(request)
    if await call(memory.get, memory_id) is None:
        raise HttpProblem(404, f"Memory with id {memory_id} not found")
    result = await call(memory.update, memory_id, body.text, metadata=body.metadata)
    return JSONResponse(result)


async def delete_memory(request: Request) -> JSONResponse:
    """Soft-delete one memory of the scope (its history stays)."""
    memory_id = await _owned(request)
    memory = memory_of(request)
    if await call(memory.get, memory_id) is None:
        raise HttpProblem(404, f"Memory with id {memory_id} not found")
    await call(memory.delete, memory_id)
    return JSONResponse({"message": "Memory deleted successfully"})


async def delete_all_memories(request: Request) -> JSONResponse:
    """Soft-delete every active memory the ids match (user_id alone: every agent's)."""
    query = query_of(request, Scoped)
    query.scope()
    await call(memory_of(request).delete_all, **query.ids())
    return JSONResponse({"message": "All relevant memories deleted"})


async def search_memories(request: Request) -> JSONResponse:
    """The best memories for a query, best first, with memman's recall score."""
    body = await body_of(request, SearchRequest)
    if body.explain:
        raise HttpProblem(400, "explain: memman's search has no score breakdown to show")
    result = await call(
        memory_of(request).search,
        body.query,
        **body.ids(),
        filters=body.filters,
        top_k=body.top_k,
        threshold=body.threshold,
    )
    return JSONResponse(result)


async def memory_history(request: Request) -> JSONResponse:
    """Every change of a memory of the scope, oldest first, with memman's reason and tier."""
    memory_id = await _owned(request)
    return JSONResponse(await call(memory_of(request).history, memory_id))


async def reset_memories(request: Request) -> JSONResponse:
    """Soft-delete every active memory of every scope (the audit trail stays)."""
    await call(memory_of(request).reset)
    return JSONResponse({"message": "All memories reset"})


async def get_configuration(request: Request) -> JSONResponse:
    """The server's memman settings, keys and passwords masked."""
    return JSONResponse(memory_of(request).manager.settings.redacted())


async def set_configuration(request: Request) -> JSONResponse:
    """Not supported: memman serve reads its settings when it starts."""
    raise HttpProblem(
        501,
        "memman serve is configured when it starts (memman.toml, MEMMAN_* variables, its "
        "options): set the settings there and restart it",
    )


ROUTES = (
    Api("POST", "/memories", add_memories, "Create memories", body=MemoryCreate),
    Api("GET", "/memories", list_memories, "Get memories", query=ListQuery),
    Api("DELETE", "/memories", delete_all_memories, "Delete all memories", query=Scoped),
    Api("GET", "/memories/{memory_id}", get_memory, "Get a memory", query=Scoped),
    Api("PUT", "/memories/{memory_id}", update_memory, "Update a memory", MemoryUpdate, Scoped),
    Api("DELETE", "/memories/{memory_id}", delete_memory, "Delete a memory", query=Scoped),
    Api("GET", "/memories/{memory_id}/history", memory_history, "Get memory history", query=Scoped),
    Api("POST", "/search", search_memories, "Search memories", body=SearchRequest),
    Api("POST", "/reset", reset_memories, "Reset all memories"),
    Api("GET", "/configure", get_configuration, "Get the server's configuration"),
    Api("POST", "/configure", set_configuration, "Configure (not supported: 501)"),
)
