"""The inspector: server-rendered pages at /ui to see and correct what memman keeps of a user.

Pick a user (and agent): active memories grouped by topic with their dates, parked and
short-term facts, a search, the context block for a question; a memory's page shows its
history (every event's op, tier, reason, model, text before and after) and edits, deletes or
restores it with a reason, through the library's doors (update_memory, delete, restore) so the
audit trail records it like any other change. Plain forms (POST, then a redirect): no
JavaScript. Jinja2 escapes every text it inserts. Looking changes nothing: the page's search
and context block do not reinforce what they show.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from memman.api.manager import MemoryManager
from memman.errors import InvalidInputError
from memman.lifecycle.block import spoken_date, topic_label
from memman.mem0.shapes import scope_of
from memman.models import Memory, Op, Status
from memman.serve.failures import HttpProblem
from memman.serve.guard import read_body
from memman.serve.routing import call, memory_of

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("memman.serve", "templates"),
    autoescape=True,  # every memory, reason and id is user text
    undefined=jinja2.StrictUndefined,
)
# Inactive memories shown for restoring, newest first: the rest are in the export.
INACTIVE_SHOWN = 50
SCOPES_SHOWN = 200  # users listed on the start page; any other is typed in
SOURCE_PREFIX = "inspector: "  # the provenance of an edit: the person's reason follows


def _date(stamp: str | None) -> str:
    return spoken_date(dt.datetime.fromisoformat(stamp)) if stamp else ""


TEMPLATES.filters["date"] = _date


def _page(template: str, status: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(TEMPLATES.get_template(template).render(**values), status_code=status)


def _scope(values: dict[str, str]) -> tuple[str, str | None]:
    """The (user, agent) a page names: the mem0 routes' rule (agent alone: "agent:<id>")."""
    return scope_of({key: values.get(key) or None for key in ("user_id", "agent_id")})


def _link(path: str, user: str, agent: str | None, **more: str) -> str:
    values = {"user_id": user, **({"agent_id": agent} if agent else {}), **more}
    return f"{path}?{urlencode(values)}"


def _groups(memories: list[Memory]) -> list[tuple[str, list[Memory]]]:
    """Memories by topic label (those without one last, as "other"), newest first inside."""
    groups: dict[str, list[Memory]] = {}
    for memory in memories:
        groups.setdefault(topic_label(memory) or "other", []).append(memory)
    order = sorted(groups, key=lambda label: (label == "other", label))
    return [
        (label, sorted(groups[label], key=lambda m: m.observed_at or m.updated_at, reverse=True))
        for label in order
    ]


def _overview(
    manager: MemoryManager, user: str | None, agent: str | None, q: str, question: str
) -> dict[str, Any]:
    """Everything the start page shows (one thread: every read here is the store's)."""
    values: dict[str, Any] = {"user": user, "agent": agent, "q": q, "question": question}
    if user is None:  # the picker's list: the scopes with a memory, the first SCOPES_SHOWN
        with manager.store.read() as conn:
            scopes = manager.store.scopes_with_memories(conn)
        return values | {"scopes": scopes[:SCOPES_SHOWN], "more": len(scopes) - SCOPES_SHOWN}
    everything = manager.list(user_id=user, agent_id=agent, include_inactive=True)
    active = [m for m in everything if m.status is Status.ACTIVE]
    inactive = sorted(
        (m for m in everything if m.status is not Status.ACTIVE),
        key=lambda m: m.updated_at,
        reverse=True,
    )
    values |= {
        "groups": _groups(active),
        "count": len(active),
        "inactive": inactive[:INACTIVE_SHOWN],
        "pending": manager.pending(user_id=user, agent_id=agent),
        "short_term": manager.short_term(user_id=user, agent_id=agent, unexpired=True),
        "hits": (
            manager.search(q, user_id=user, agent_id=agent, limit=10, reinforce=False)
            if q.strip()
            else None
        ),
        "block": (
            manager.context(question, user_id=user, agent_id=agent, reinforce=False)
            if question.strip()
            else None
        ),
    }
    return values


async def start(request: Request) -> Response:
    """The user picker, and the picked user's memories."""
    params = request.query_params
    user = agent = None
    if params.get("user_id") or params.get("agent_id"):
        user, agent = _scope(dict(params))
    values = await call(
        _overview,
        memory_of(request).manager,
        user,
        agent,
        params.get("q", ""),
        params.get("question", ""),
    )
    return _page("index.html", **values, link=_link, note=params.get("note"))


def _detail(manager: MemoryManager, memory_id: str, user: str, agent: str | None) -> dict:
    memory = manager.get(memory_id, user_id=user, agent_id=agent)
    events = manager.history(memory_id, user_id=user, agent_id=agent)
    return {"memory": memory, "events": list(reversed(events)), "user": user, "agent": agent}


async def memory_page(request: Request) -> Response:
    """One memory: what it says, where it came from, every event that touched it."""
    user, agent = _scope(dict(request.query_params))
    values = await call(
        _detail, memory_of(request).manager, request.path_params["memory_id"], user, agent
    )
    return _page(
        "memory.html",
        **values,
        link=_link,
        label=topic_label(values["memory"]),
        note=request.query_params.get("note"),
    )


def edit(
    manager: MemoryManager, memory_id: str, user: str, agent: str | None, text: str, reason: str
) -> tuple[str, str]:
    """A person's new text for a memory, through update_memory (decided like any fact; the
    event's source says "inspector: <reason>"). When the decision keeps the text in another
    memory, this one is deleted with the reason, as the mem0 facade's update does. (memory id
    to show next, what happened)."""
    memory = manager.get(memory_id, user_id=user, agent_id=agent)
    if memory.status is not Status.ACTIVE:
        raise InvalidInputError("only an active memory can be edited: restore it first")
    result = manager.update_memory(
        text, user_id=user, agent_id=agent, source=SOURCE_PREFIX + reason, metadata=memory.metadata
    )
    if result.op is Op.PENDING:
        return memory_id, f"parked: {result.reason} (see pending facts)"
    if result.memory_id != memory_id and result.memory_id is not None:
        manager.delete(
            memory_id,
            user_id=user,
            agent_id=agent,
            reason=f"{reason} (edited in the inspector: the text is now {result.memory_id})",
        )
    return result.memory_id or memory_id, f"{result.op.value}: {result.reason}"


def delete(
    manager: MemoryManager, memory_id: str, user: str, agent: str | None, text: str, reason: str
) -> tuple[str, str]:
    result = manager.delete(memory_id, user_id=user, agent_id=agent, reason=reason)
    return memory_id, f"deleted: {result.reason}"


def restore(
    manager: MemoryManager, memory_id: str, user: str, agent: str | None, text: str, reason: str
) -> tuple[str, str]:
    result = manager.restore(memory_id, user_id=user, agent_id=agent, reason=reason)
    return memory_id, f"restored: {result.reason}"


# What a form's POST does: (memory id to show next, what happened).
ACTIONS: dict[str, Callable[..., tuple[str, str]]] = {
    "edit": edit,
    "delete": delete,
    "restore": restore,
}


async def change(request: Request) -> Response:
    """A form's edit, delete or restore, then back to the memory's page (303)."""
    form = {
        key: values[-1]
        for key, values in parse_qs(
            (await read_body(request)).decode("utf-8", "replace"), keep_blank_values=True
        ).items()
    }
    user, agent = _scope(form)
    reason = form.get("reason", "").strip()
    if not reason:
        raise HttpProblem(400, "say why: the reason goes into the memory's history")
    action = ACTIONS.get(request.path_params["action"])
    if action is None:
        raise HttpProblem(404, "no such action: edit, delete or restore")
    shown, note = await call(
        action,
        memory_of(request).manager,
        request.path_params["memory_id"],
        user,
        agent,
        form.get("text", ""),
        reason,
    )
    return RedirectResponse(_link(f"/ui/memory/{shown}", user, agent, note=note), status_code=303)


def routes() -> list[Route]:
    return [
        Route("/ui", start, methods=["GET"]),
        Route("/ui/memory/{memory_id}", memory_page, methods=["GET"]),
        Route("/ui/memory/{memory_id}/{action:str}", change, methods=["POST"]),
    ]
