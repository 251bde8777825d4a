"""`memman serve`: an HTTP API over one store answering mem0's self-hosted REST routes (so a
client written for mem0's server works against memman), memman's own routes under /memman,
the OpenAPI document at /openapi.json and the inspector page at /ui.

Needs the serve extra (starlette, uvicorn). app.py assembles the app; guard.py holds the
security rules; failures.py maps memman's errors onto statuses; the routes live in
mem0_routes.py, memman_routes.py and page.py.
"""

from __future__ import annotations

import os

from memman.config import Settings
from memman.errors import ConfigError
from memman.storage.backends import is_postgres_url

try:  # every module of the package needs them: one message naming the extra
    import starlette  # noqa: F401
    import uvicorn
except ImportError as error:
    raise ConfigError(
        f"memman serve needs the serve extra: pip install 'memman[serve]' ({error})"
    ) from error

# What each option of `memman serve` is, for uvicorn's worker processes: they read their
# settings from the environment (app.app_from_environment).
WORKER_VARIABLES = {
    "db": "MEMMAN_DB",
    "serve_host": "MEMMAN_SERVE_HOST",
    "serve_port": "MEMMAN_SERVE_PORT",
    "serve_api_key": "MEMMAN_SERVE_API_KEY",
    "serve_max_body_bytes": "MEMMAN_SERVE_MAX_BODY_BYTES",
}


def run(settings: Settings, *, workers: int = 1) -> None:
    """Serve until interrupted: one process, or `workers` processes on a PostgreSQL store
    (SQLite's single file has one writer at a time: more processes only queue on its lock)."""
    from memman.serve.app import make_app
    from memman.serve.guard import check_bind

    check_bind(settings.serve_host, settings.serve_api_key)
    host, port = settings.serve_host, settings.serve_port
    if workers < 1:
        raise ConfigError("--workers must be 1 or more")
    if workers == 1:
        uvicorn.run(make_app(settings), host=host, port=port, log_level="info")
        return
    if not is_postgres_url(settings.db):
        raise ConfigError(
            "several workers need a PostgreSQL store: a SQLite file has one writer at a time"
        )
    for name, variable in WORKER_VARIABLES.items():
        value = getattr(settings, name)
        if value is not None:
            os.environ[variable] = str(value)
    uvicorn.run(
        "memman.serve.app:app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
    )
