"""memman's own routes, under /memman: what mem0's server has no route for. Each names its
scope as the mem0 routes do (user_id, agent_id, run_id) and calls one MemoryManager method."""

from __future__ import annotations

import dataclasses

from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memman.serve.routing import Api, Scoped, body_of, call, check_owner, memory_of, query_of


class ContextRequest(Scoped):
    query: str = Field(description="The user's message the block is for.")
    max_tokens: int = Field(500, ge=1, description="The block's budget (about 4 chars each).")
    limit: int = Field(20, ge=1, le=1000, description="Search hits to consider.")


class ExportQuery(Scoped):
    include_inactive: bool = False
    events: bool = Field(False, description="Add the audit trail's events after the rows.")


async def context_block(request: Request) -> JSONResponse:
    """The memory block for a system prompt: core facts, short-term facts, the best hits."""
    body = await body_of(request, ContextRequest)
    user, agent = body.scope()
    block = await call(
        memory_of(request).manager.context,
        body.query,
        user_id=user,
        agent_id=agent,
        max_tokens=body.max_tokens,
        limit=body.limit,
    )
    return JSONResponse(
        {
            "context": block.text,
            "approx_tokens": block.approx_tokens,
            "left_out": block.left_out,
            "memory_ids": [m.id for m in block.core] + [h.id for h in block.hits],
        }
    )


async def pending_facts(request: Request) -> JSONResponse:
    """Facts the decider could not settle yet (the LLM failed): parked for retry."""
    user, agent = query_of(request, Scoped).scope()
    facts = await call(memory_of(request).manager.pending, user_id=user, agent_id=agent)
    return JSONResponse({"results": [fact.model_dump(mode="json") for fact in facts]})


async def retry_pending(request: Request) -> JSONResponse:
    """Decide the scope's parked facts again; each leaves pending once applied."""
    user, agent = (await body_of(request, Scoped)).scope()
    results = await call(memory_of(request).manager.retry_pending, user_id=user, agent_id=agent)
    return JSONResponse({"results": [r.model_dump(mode="json") for r in results]})


async def export_lines(request: Request) -> Response:
    """The scope's lossless export as JSON lines (`memman import` reads it back)."""
    query = query_of(request, ExportQuery)
    user, agent = query.scope()

    def lines() -> list[str]:  # one read snapshot, in one thread
        return list(
            memory_of(request).manager.export_jsonl(
                user_id=user,
                agent_id=agent,
                include_inactive=query.include_inactive,
                events=query.events,
            )
        )

    text = "".join(line + "\n" for line in await call(lines))
    return Response(text, media_type="application/x-ndjson")


async def forget_scope(request: Request) -> JSONResponse:
    """Erase the scope for good (user_id alone: every agent of the user): every memory, its
    history, pending and short-term facts, messages and vectors. Rows erased per table."""
    user, agent = (await body_of(request, Scoped)).scope()
    report = await call(memory_of(request).manager.forget, user, agent)
    return JSONResponse({"forgotten": dataclasses.asdict(report)})


async def memory_events(request: Request) -> JSONResponse:
    """The full audit trail of one memory of the scope: each event's op, tier, reason,
    model, scores and text before and after."""
    memory_id = request.path_params["memory_id"]
    user, agent = query_of(request, Scoped).scope()
    manager = memory_of(request).manager
    await call(check_owner, memory_of(request), memory_id, (user, agent))
    events = await call(manager.history, memory_id, user_id=user, agent_id=agent)
    return JSONResponse({"results": [event.model_dump(mode="json") for event in events]})


ROUTES = (
    Api("POST", "/memman/context", context_block, "Context block", ContextRequest, tag="memman"),
    Api("GET", "/memman/pending", pending_facts, "Pending facts", query=Scoped, tag="memman"),
    Api("POST", "/memman/retry", retry_pending, "Retry pending facts", Scoped, tag="memman"),
    Api("GET", "/memman/export", export_lines, "Export", query=ExportQuery, tag="memman"),
    Api("POST", "/memman/forget", forget_scope, "Forget a scope", Scoped, tag="memman"),
    Api(
        "GET",
        "/memman/memories/{memory_id}/events",
        memory_events,
        "A memory's audit trail",
        query=Scoped,
        tag="memman",
    ),
)
