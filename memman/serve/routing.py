"""The route table's row type and what every JSON route does the same way: read and check
the body or the query string against a pydantic model, check that an id belongs to the scope
the request names, and run the library's (synchronous) call in a worker thread.

The table is data: the app's routes and its OpenAPI schema (openapi.py) are both read from it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from memman.errors import NotFoundError, validation_problems
from memman.mem0 import Memory
from memman.mem0.shapes import scope_of
from memman.mem0.short_term import is_short_term
from memman.serve.failures import HttpProblem
from memman.serve.guard import read_body

Model = TypeVar("Model", bound=BaseModel)
Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class Api:
    """One JSON route: what it answers, and what the schema says of it."""

    method: str
    path: str
    endpoint: Endpoint
    summary: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    tag: str = "mem0"


class Scoped(BaseModel):
    """The ids naming whose memories a call reads or changes, as mem0 gives them."""

    model_config = ConfigDict(extra="forbid")

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def scope(self) -> tuple[str, str | None]:
        """memman's (user_id, agent_id); 400 when none is given."""
        return scope_of(self.ids())

    def ids(self) -> dict[str, str | None]:
        """The three ids as the facade's calls take them."""
        return {"user_id": self.user_id, "agent_id": self.agent_id, "run_id": self.run_id}


async def body_of(request: Request, model: type[Model]) -> Model:
    """The JSON body as `model`; 400 for a body that is not JSON or not that shape."""
    raw = await read_body(request)
    try:
        data = json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise HttpProblem(400, f"the body is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise HttpProblem(400, "the body must be a JSON object")
    return checked(model, data)


def query_of(request: Request, model: type[Model]) -> Model:
    """The query string as `model` (a name given twice: 400, not the last one silently)."""
    params = request.query_params
    twice = sorted({key for key in params if len(params.getlist(key)) > 1})
    if twice:
        raise HttpProblem(400, f"query parameter given twice: {', '.join(twice)}")
    return checked(model, dict(params))


def checked(model: type[Model], data: dict[str, Any]) -> Model:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise HttpProblem(400, validation_problems(error)) from None


def memory_of(request: Request) -> Memory:
    return request.app.state.memory


async def call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The library's call in a worker thread: the event loop never waits on the store."""
    return await run_in_threadpool(function, *args, **kwargs)


def check_owner(memory: Memory, memory_id: str, scope: tuple[str, str | None]) -> None:
    """NotFoundError (404) unless the memory or short-term fact `memory_id` belongs to the
    scope, whatever its status: mem0's ids are global, memman's routes never reach another
    user's memory by id, nor tell whether it exists."""
    user, agent = scope
    if is_short_term(memory_id):
        fact = memory.short_term.fact(memory_id)
        if (fact.user_id, fact.agent_id) != (user, agent):
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return
    memory.manager.get(memory_id, user_id=user, agent_id=agent)
