"""memman's typed errors as HTTP statuses, in one table: every route answers a failure as
`{"detail": "<one line>"}` with the status its type maps to, never a traceback.
"""

from __future__ import annotations

import html
import logging

from starlette.responses import HTMLResponse, JSONResponse, Response

from memman.errors import (
    ConfigError,
    DecisionError,
    InvalidInputError,
    LeaseLostError,
    MemmanError,
    NotFoundError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)

log = logging.getLogger(__name__)

# First match wins, so a subclass comes before its base (StoreFullError before StoreError).
STATUSES: tuple[tuple[type[MemmanError], int], ...] = (
    (NotFoundError, 404),
    (InvalidInputError, 400),  # BadLineError too
    # Another worker settled the fact first: the client's request is moot, not wrong.
    (LeaseLostError, 409),
    # The LLM or the embedder failed: the messages stay buffered, try again later.
    (DecisionError, 503),
    (StoreBusyError, 503),  # other writers held the lock past busy_patience_s
    (StoreFullError, 507),
    (StoreReadOnlyError, 503),
    (StoreCorruptError, 500),
    (StoreError, 500),
    (ConfigError, 500),  # a setting the server started with cannot serve this call
)


class HttpProblem(MemmanError):
    """A request the server refuses before any library call (no key, a body too large, bad
    JSON): its own status, answered like the library's errors."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status = status
        self.headers = headers or {}


def status_of(error: MemmanError) -> int:
    if isinstance(error, HttpProblem):
        return error.status
    for kind, status in STATUSES:
        if isinstance(error, kind):
            return status
    return 500


def detail_of(error: MemmanError) -> str:
    """The error's one line (an internal error's type only: its text may name the file)."""
    if status_of(error) == 500:
        log.error("memman serve: %s", error, exc_info=error)
        return f"{type(error).__name__}: the server could not do this (see its log)"
    return " ".join(str(error).split())[:1000]


def response_for(error: MemmanError, path: str) -> Response:
    """The error as the client of `path` reads it: `{"detail": ...}`, or a short HTML page
    on the inspector's paths (a browser shows it)."""
    status, detail = status_of(error), detail_of(error)
    headers = error.headers if isinstance(error, HttpProblem) else None
    if path == "/ui" or path.startswith("/ui/"):
        page = (
            '<!doctype html><meta name="viewport" content="width=device-width">'
            f"<title>{status}</title><h1>{status}</h1><p>{html.escape(detail)}</p>"
            '<p><a href="/ui">back to the inspector</a></p>'
        )
        return HTMLResponse(page, status_code=status, headers=headers)
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)
