"""The server's app: the route tables of mem0's routes, memman's own and the inspector page,
behind the guard (key, host, origin, body size), over one mem0 facade and its MemoryManager.

`make_app(settings)` for one process (tests run it in a thread); `app_from_environment` is
the factory each of uvicorn's worker processes calls (several workers: PostgreSQL only).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from importlib.metadata import version

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from memman.api.manager import MemoryManager
from memman.config import Settings, load_settings
from memman.errors import MemmanError
from memman.mem0 import Memory
from memman.serve import mem0_routes, memman_routes, page
from memman.serve.failures import response_for
from memman.serve.guard import Guard, check_bind, is_loopback
from memman.serve.openapi import document

API_ROUTES = (*mem0_routes.ROUTES, *memman_routes.ROUTES)


def make_app(settings: Settings | None = None, *, memory: Memory | None = None) -> Starlette:
    """The app over `memory` (else a facade over the store settings.db names, closed when the
    app stops). ConfigError for a bind that needs an API key and has none."""
    settings = settings or (memory.manager.settings if memory else load_settings())
    check_bind(settings.serve_host, settings.serve_api_key)
    owned = memory is None
    memory = memory or Memory(manager=MemoryManager(settings.db, settings=settings))
    schema = document(API_ROUTES, version=version("memman"), keyed=bool(settings.serve_api_key))

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(schema)

    async def home(request: Request) -> Response:
        return RedirectResponse("/ui", status_code=307)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if owned:
                memory.close()

    app = Starlette(
        routes=[
            *(Route(api.path, api.endpoint, methods=[api.method]) for api in API_ROUTES),
            Route("/openapi.json", openapi, methods=["GET"]),
            Route("/", home, methods=["GET"]),
            *page.routes(),
        ],
        middleware=[
            Middleware(
                Guard,
                api_key=settings.serve_api_key,
                loopback=is_loopback(settings.serve_host),
                max_body_bytes=settings.serve_max_body_bytes,
            )
        ],
        exception_handlers={
            MemmanError: _memman_error,
            HTTPException: _http_error,
            Exception: _server_error,
        },
        lifespan=lifespan,
    )
    app.state.memory = memory
    app.state.max_body_bytes = settings.serve_max_body_bytes
    return app


def app_from_environment() -> Starlette:
    """The app of one uvicorn worker: settings from memman.toml and MEMMAN_* variables, which
    `memman serve` sets for its options before starting the workers."""
    return make_app(load_settings())


async def _memman_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, MemmanError)
    return response_for(error, request.url.path)


async def _http_error(request: Request, error: Exception) -> Response:
    """Starlette's own refusals (no such route, a method the route has not) as JSON."""
    assert isinstance(error, HTTPException)
    return JSONResponse(
        {"detail": error.detail}, status_code=error.status_code, headers=error.headers
    )


async def _server_error(request: Request, error: Exception) -> Response:
    """Anything else: a 500 naming no more than the error's type (the log has the rest)."""
    return JSONResponse(
        {"detail": f"{type(error).__name__}: the server could not do this (see its log)"},
        status_code=500,
    )
